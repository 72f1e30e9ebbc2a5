'use strict'
// R-AUD-7: the audit log rotates by size (rotifer.json "audit": { maxSize, keep }), safely across
// processes: two writers, a small maxSize, and every line is read back through the real
// `rotifer agent memory log`, in order, none lost, at most keep + 1 files.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { rotifer, json, makeProject, addGene, PROBE, createAgent } = require('./cli-harness')
const { memory, geneId } = require('./helpers')

const WRITER = `
const memory = require(process.argv[1])
const [root, agentId, gene, prefix, n] = process.argv.slice(2)
const m = new memory.GeneMemoryAccess({ agentId, geneId: gene, domain: 'test.probe', root })
for (let i = 0; i < Number(n); i++) m.writeMemory(prefix + String(i).padStart(4, '0'), Buffer.from('v' + i), 'PREFERENCE')
`

function writer(root, agentId, prefix, n) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', WRITER, path.join(__dirname, '..', 'index.js'), root, agentId, geneId(prefix), prefix, String(n)], { stdio: ['ignore', 'inherit', 'inherit'] })
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${prefix} exited ${code}`))))
  })
}

function auditFiles(root) {
  return fs.readdirSync(path.join(root, '.rotifer')).filter((f) => /^audit(\.\d+)?\.jsonl$/.test(f))
}

function project(t, audit) {
  const root = makeProject(t)
  fs.writeFileSync(path.join(root, 'rotifer.json'), JSON.stringify({ name: 'p', audit }))
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'a1', ['probe'])
  memory.createAgentMemory({ agentId: agent.id, root })
  return { root, agent }
}

test('R-AUD-7: two processes writing through rotations: every line in order, none lost, at most keep + 1 files', async (t) => {
  const { root, agent } = project(t, { maxSize: '8KB', keep: 60 })
  const N = 250
  await Promise.all([writer(root, agent.id, 'a', N), writer(root, agent.id, 'b', N)])
  const files = auditFiles(root)
  assert.ok(files.length > 10, `it rotated: ${files}`)
  assert.ok(files.length <= 61, `${files.length} files`)
  for (const f of files) assert.equal(fs.statSync(path.join(root, '.rotifer', f)).mode & 0o777, 0o600, f)
  const lines = json(rotifer(root, 'agent', 'memory', 'log', 'a1', '--json'))
  for (const p of ['a', 'b']) {
    const keys = lines.filter((l) => l.key.startsWith(p)).map((l) => l.key)
    assert.deepEqual(keys, Array.from({ length: N }, (_, i) => p + String(i).padStart(4, '0')), `every line of writer ${p}, in order`)
  }
  assert.ok(lines.every((l) => l.committed === true))
  // Transactions never go back across files: the log view reads them oldest first.
  const txs = lines.map((l) => l.tx)
  assert.deepEqual(txs, [...txs].sort((x, y) => x - y))
})

test('R-AUD-7: past keep rotated files the oldest is dropped but for the agent\'s latest keepPerAgent bytes; the rest stays readable', async (t) => {
  const { root, agent } = project(t, { maxSize: '2KB', keep: 2, keepPerAgent: '1KB' })
  await writer(root, agent.id, 'a', 120)
  assert.deepEqual(auditFiles(root).sort(), ['audit.1.jsonl', 'audit.2.jsonl', 'audit.jsonl'])
  const keys = json(rotifer(root, 'agent', 'memory', 'log', 'a1', '--json')).map((l) => l.key)
  assert.ok(keys.length > 5 && keys.length < 120, `${keys.length} lines kept`)
  // What is kept is the newest lines, with none missing in between: the files' and, before
  // them, at most 1 KB of the agent's lines from the files that went.
  const first = Number(keys[0].slice(1))
  assert.deepEqual(keys, Array.from({ length: 120 - first }, (_, i) => 'a' + String(first + i).padStart(4, '0')))
  const kept = fs.readFileSync(path.join(root, '.rotifer', 'audit.kept.jsonl'), 'utf8').split('\n').slice(1).filter(Boolean)
  assert.ok(kept.length >= 1 && Buffer.byteLength(kept.join('\n')) <= 1024, `${kept.length} kept lines`)
  assert.equal(JSON.parse(kept.at(-1)).key, keys[kept.length - 1], 'the kept lines come first')
})

test('R-AUD-7: a bad "audit" setting in rotifer.json names the file and the field', (t) => {
  const { root, agent } = project(t, { maxSize: '64 parsecs' })
  const m = new memory.GeneMemoryAccess({ agentId: agent.id, geneId: geneId('x'), domain: 'test.probe', root })
  assert.throws(() => m.writeMemory('k', Buffer.from('v'), 'PREFERENCE'), (e) => {
    assert.equal(e.code, 'MEMORY_STORAGE_ERROR')
    assert.ok(e.message.includes(path.join(root, 'rotifer.json')), e.message)
    assert.match(e.message, /"audit\.maxSize" "64 parsecs" has an unknown unit/)
    return true
  })
})
