'use strict'
// R-AUD-6: `rotifer agent memory log` (the real bin) tells a change written ahead whose commit
// failed or never came from a committed one: on a real full disk (a small tmpfs mounted on
// .rotifer/memory, so the audit line is appended and the commit fails), and after a SIGKILL.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync, spawn } = require('node:child_process')
const { rotifer, json, addGene, PROBE, createAgent } = require('./cli-harness')
const { memory, geneId } = require('./helpers')

/** A project whose .rotifer/memory is a tmpfs of `size`, or null where mount is not allowed. */
function projectOnSmallDisk(t, size) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-audit-commit-')))
  fs.writeFileSync(path.join(root, 'rotifer.json'), '{}\n')
  const mem = path.join(root, '.rotifer', 'memory')
  fs.mkdirSync(mem, { recursive: true, mode: 0o700 })
  fs.chmodSync(path.join(root, '.rotifer'), 0o700)
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', mem], { encoding: 'utf8' })
  t.after(() => {
    if (m.status === 0) spawnSync('umount', ['-l', mem]) // lazily: this process still holds the database open
    fs.rmSync(root, { recursive: true, force: true })
  })
  return m.status === 0 ? { root, mem } : null
}

/** Fills the file system of `dir` to its last byte; returns the filler's path. */
function fill(dir) {
  const filler = path.join(dir, 'filler')
  const fd = fs.openSync(filler, 'w')
  const chunk = Buffer.alloc(64 * 1024, 1)
  try {
    for (;;) fs.writeSync(fd, chunk)
  } catch (e) {
    assert.equal(e.code, 'ENOSPC')
  }
  for (;;) {
    try {
      fs.writeSync(fd, Buffer.alloc(1))
    } catch (e) {
      assert.equal(e.code, 'ENOSPC')
      break
    }
  }
  fs.closeSync(fd)
  return filler
}

function logJson(root, name) {
  return json(rotifer(root, 'agent', 'memory', 'log', name, '--json'))
}

test('R-AUD-6: on a full disk, memory log --json marks each line committed exactly as the writes succeeded', (t) => {
  const p = projectOnSmallDisk(t, '2m')
  if (p === null) return t.skip('mount is not allowed here (needs root)')
  const { root, mem } = p
  addGene(p.root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'a1', ['probe'])
  const m = new memory.GeneMemoryAccess({ agentId: agent.id, geneId: geneId('writer'), domain: 'test.probe', root })
  m.writeMemory('k1', Buffer.alloc(100, 1), 'PREFERENCE')
  const filler = fill(mem)
  const outcomes = []
  for (const key of ['k2', 'k2', 'k3']) {
    try {
      m.writeMemory(key, Buffer.alloc(200 * 1024, 2), 'PREFERENCE')
      outcomes.push([key, true])
    } catch (e) {
      assert.equal(e.code, 'MEMORY_STORAGE_ERROR')
      assert.match(e.message, /the disk is full/, e.message)
      outcomes.push([key, false])
    }
  }
  assert.deepEqual(outcomes, [['k2', false], ['k2', false], ['k3', false]], 'every write on the full disk failed at its commit')
  fs.rmSync(filler)
  m.writeMemory('k3', Buffer.alloc(100, 3), 'PREFERENCE')
  outcomes.push(['k3', true])
  m.deleteMemory('k1')
  outcomes.push(['k1', true])

  const lines = logJson(root, 'a1')
  const changes = lines.filter((l) => l.tx !== undefined)
  assert.deepEqual(changes.map((l) => [l.key, l.committed]), [['k1', true], ...outcomes])
  // The failed attempts and the retry that committed share one transaction number.
  assert.equal(new Set(changes.slice(1, 5).map((l) => l.tx)).size, 1, JSON.stringify(changes))
  assert.ok(lines.every((l) => typeof l.committed === 'boolean'))
  // What the database holds is what the lines judged committed say.
  assert.deepEqual(memory.listAgentMemory({ agentId: agent.id, root }).map((e) => e.key), ['k3'])

  const human = rotifer(root, 'agent', 'memory', 'log', 'a1')
  assert.equal(human.status, 0, human.stderr)
  // At 80 columns the detail "not committed" goes on a line of its own under its row.
  assert.equal(human.stdout.match(/ create [^\n]*\n {4}not committed\n/g).length, 3, human.stdout)
})

const KILL_WORKER = `
const memory = require(process.argv[1])
const [root, agentId, gene, prefix] = process.argv.slice(2)
const m = new memory.GeneMemoryAccess({ agentId, geneId: gene, domain: 'test.probe', root })
const big = Buffer.alloc(512 * 1024, 7)
for (let i = 0; ; i++) {
  m.writeMemory(prefix + i, big, 'CACHE')
  if (i === 0) process.stdout.write('ready\\n')
  if (i % 4 === 3) m.deleteMemory(prefix + (i - 1))
}
`

test('R-AUD-6: after a SIGKILL, every line is judged committed exactly when its change is in the database', async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-audit-kill-')))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.writeFileSync(path.join(root, 'rotifer.json'), '{}\n')
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'a1', ['probe'])
  memory.createAgentMemory({ agentId: agent.id, root, quota: '1GB' })
  let caught = 0
  for (let trial = 0; trial < 8; trial++) {
    await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', KILL_WORKER, path.join(__dirname, '..', 'index.js'), root, agent.id, geneId('killer'), `t${trial}-`], { stdio: ['ignore', 'pipe', 'inherit'] })
      child.stdout.once('data', () => setTimeout(() => child.kill('SIGKILL'), 5 + trial * 7))
      child.on('error', reject)
      child.on('exit', resolve)
    })
    const stored = new Set(memory.listAgentMemory({ agentId: agent.id, root }).map((e) => e.key))
    const lines = logJson(root, 'a1').filter((l) => l.tx !== undefined && l.key.startsWith(`t${trial}-`))
    // Replaying the lines judged committed gives exactly the entries stored.
    const replayed = new Set()
    for (const l of lines) {
      if (!l.committed) continue
      if (l.action === 'memory.create' || l.action === 'memory.update') replayed.add(l.key)
      else replayed.delete(l.key)
    }
    assert.deepEqual([...replayed].sort(), [...stored].filter((k) => k.startsWith(`t${trial}-`)).sort(), `trial ${trial}`)
    const notCommitted = lines.filter((l) => !l.committed)
    assert.ok(notCommitted.length <= 1, `at most the killed call's line: ${JSON.stringify(notCommitted)}`)
    if (notCommitted.length === 1) {
      assert.equal(notCommitted[0], lines[lines.length - 1], 'the killed call was the last')
      assert.ok(!stored.has(notCommitted[0].key) || notCommitted[0].action === 'memory.delete')
      caught++
    }
  }
  t.diagnostic(`${caught} of 8 kills landed between an audit line and its commit`)
})
