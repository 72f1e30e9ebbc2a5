'use strict'
// `rotifer agent memory backup` and `restore` (R-HOST-1b) through the real bin, while another
// process keeps writing to the agent: the backup is one consistent snapshot, the restore one
// change that the writing process sees at its next call, audited with actor "deployer".

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const Database = require('better-sqlite3')
const memory = require('../index.js')
const { rotifer, json, makeProject, addGene, PROBE, createAgent, oneErrorLine } = require('./cli-harness')

const GENE = 'v2:' + 'c'.repeat(64)
const INDEX = JSON.stringify(path.join(__dirname, '..', 'index.js'))

/**
 * A process that writes `n/<i>` (i = 0, 1, …) to the agent without pause, each followed by a
 * call that sets `count` to i + 1: in one snapshot, `count` is the number of `n/` keys or one
 * less. On stdin `stop`, it prints what it saw last and exits.
 */
function writer(t, root, agentId) {
  const script = `
    const memory = require(${INDEX})
    const m = new memory.GeneMemoryAccess({ agentId: ${JSON.stringify(agentId)}, geneId: ${JSON.stringify(GENE)}, domain: 'd', root: ${JSON.stringify(root)} })
    let i = 0, stop = false, errors = []
    process.stdin.on('data', () => { stop = true })
    const step = () => {
      for (let k = 0; k < 20 && !stop; k++, i++) {
        try {
          m.writeMemory('n/' + i, new Uint8Array(50), 'CONTEXT')
          m.writeMemory('count', new TextEncoder().encode(String(i + 1)), 'PREFERENCE')
        } catch (e) { errors.push(e.code) }
      }
      if (i === 20) process.stdout.write('started\\n')
      if (stop) {
        // Through this process's own store (a query would stop at 1,000 entries).
        const seen = memory.listAgentMemory({ agentId: ${JSON.stringify(agentId)}, root: ${JSON.stringify(root)}, keyPrefix: 'n/' }).length
        process.stdout.write(JSON.stringify({ i, errors, seen }) + '\\n')
        process.exit(0)
      }
      setImmediate(step)
    }
    step()`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.after(() => child.kill('SIGKILL')) // a failed assertion must not leave it writing
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  const started = new Promise((resolve, reject) => {
    child.stdout.on('data', () => out.includes('started') && resolve())
    child.on('exit', (code) => reject(new Error(`the writer exited (${code}): ${out}`)))
  })
  const stop = () => new Promise((resolve) => {
    child.on('exit', () => resolve(JSON.parse(out.trim().split('\n').pop())))
    child.stdin.write('stop\n')
  })
  return { started, stop }
}

/** A backup file's entries: key → value text, as SQLite reads the file alone. */
function backupContents(file) {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    return new Map(db.prepare('SELECT CAST(key AS TEXT) AS k, CAST(value AS TEXT) AS v FROM entries').all().map((r) => [r.k, r.v]))
  } finally {
    db.close()
  }
}

test('backup while another process writes is one consistent snapshot; restore is one change that process sees (R-HOST-1b)', async (t) => {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'busy', ['probe'], '--memory-quota=4MB')
  const w = writer(t, root, agent.id)
  await w.started

  const file = path.join(root, 'busy.backup.db')
  const b = json(rotifer(root, 'agent', 'memory', 'backup', 'busy', file, '--json'))
  assert.ok(b.entries > 1)
  const mode = fs.statSync(file).mode & 0o777
  assert.equal(mode, 0o600)
  assert.ok(!fs.existsSync(file + '-wal'), 'a standalone file')
  const snap = backupContents(file)
  const n = [...snap.keys()].filter((k) => k.startsWith('n/')).length
  // The writer bumps the counter in the call after each key: one snapshot has count n or n - 1.
  const count = Number(snap.get('count'))
  assert.ok(count === n || count === n - 1, `the counter (${count}) and the keys (${n}) come from one snapshot`)
  assert.equal(b.entries, n + 1)
  const check = new Database(file, { readonly: true, fileMustExist: true })
  assert.equal(check.pragma('integrity_check', { simple: true }), 'ok')
  check.close()
  // A second backup to the same file is refused: it never replaces a file.
  const again = rotifer(root, 'agent', 'memory', 'backup', 'busy', file)
  assert.equal(again.status, 1)
  assert.match(oneErrorLine(again), /exists already/)

  const r = json(rotifer(root, 'agent', 'memory', 'restore', 'busy', file, '--yes', '--json'))
  assert.equal(r.entries, n + 1)
  assert.ok(r.replaced >= n + 1, 'the writer had gone on')
  const seen = await w.stop()
  assert.deepEqual(seen.errors, [], 'the writer never failed: the restore was an ordinary commit to it')
  // What the writer saw at its last call: the restored keys plus what it wrote after the restore.
  const after = memory.listAgentMemory({ agentId: agent.id, root }).filter((e) => e.key.startsWith('n/')).length
  assert.equal(seen.seen, after)
  assert.ok(after < seen.i, 'the writes made before the restore and after the backup are gone')
  const restoredKeys = [...snap.keys()].filter((k) => k.startsWith('n/'))
  const now = new Set(memory.listAgentMemory({ agentId: agent.id, root }).map((e) => e.key))
  for (const k of restoredKeys) assert.ok(now.has(k), `${k} is back`)

  const lines = fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  const restoreLines = lines.filter((l) => l.action === 'memory.restore')
  assert.equal(restoreLines.length, 1)
  assert.equal(restoreLines[0].actor, 'deployer')
  assert.equal(restoreLines[0].agentId, agent.id)
  // The log view shows it, committed, with what it did.
  const logged = json(rotifer(root, 'agent', 'memory', 'log', 'busy', '--action', 'restore', '--json'))
  assert.equal(logged.length, 1)
  assert.equal(logged[0].committed, true)
  assert.match(logged[0].reason, /restored from .*busy\.backup\.db by the deployer/)
  // At 80 columns the reason goes on a line of its own under its row.
  assert.match(rotifer(root, 'agent', 'memory', 'log', 'busy', '--action', 'restore').stdout, /restore +deployer[^\n]*\n {4}restored from/)
  // The agent's quota is the database's, not the backup's: kept.
  assert.equal(memory.inspectAgentMemory({ agentId: agent.id, root }).quota, 4 * 1024 * 1024)
})

test('restore refuses, changing nothing: another agent\'s backup, a file that is not one, a missing file (R-HOST-1b)', (t) => {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const one = createAgent(root, 'one', ['probe'])
  const two = createAgent(root, 'two', ['probe'])
  new memory.GeneMemoryAccess({ agentId: one.id, geneId: GENE, root }).writeMemory('k', new Uint8Array(1), 'CONTEXT')
  new memory.GeneMemoryAccess({ agentId: two.id, geneId: GENE, root }).writeMemory('other', new Uint8Array(1), 'CONTEXT')
  const file = path.join(root, 'one.db')
  assert.equal(rotifer(root, 'agent', 'memory', 'backup', 'one', file).status, 0)
  const refused = (args, re) => {
    const r = rotifer(root, 'agent', 'memory', 'restore', 'two', ...args, '--yes')
    assert.equal(r.status, 1, r.stderr)
    assert.match(oneErrorLine(r), re)
    assert.deepEqual(memory.listAgentMemory({ agentId: two.id, root }).map((e) => e.key), ['other'])
  }
  // Both agents by name and id, as the CLI names agents.
  refused([file], new RegExp(`is of agent "one" \\(${one.id}\\), not agent "two" \\(${two.id}\\): restore it into agent "one" \\(${one.id}\\).*nothing was restored`))
  fs.writeFileSync(path.join(root, 'junk.db'), 'junk')
  refused([path.join(root, 'junk.db')], /is not a SQLite database/)
  refused([path.join(root, 'none.db')], /cannot be read/)
  assert.equal(rotifer(root, 'agent', 'memory', 'restore', 'two').status, 2, 'the file is required')
})

test('restore refuses a backup holding what no write stores, changing nothing: sequence, times, retention, booleans, domain (R-HOST-1b)', (t) => {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const one = createAgent(root, 'one', ['probe'])
  const m = new memory.GeneMemoryAccess({ agentId: one.id, geneId: GENE, domain: 'd', root })
  m.writeMemory('k', new Uint8Array(1), 'CONTEXT', undefined, { maxRetentionDays: 30, autoDeleteOnTermination: false, anonymizationSupported: false })
  const good = path.join(root, 'one.db')
  assert.equal(rotifer(root, 'agent', 'memory', 'backup', 'one', good).status, 0)
  m.writeMemory('after', new Uint8Array(1), 'CONTEXT')
  const lines = () => memory.readAgentAuditLog({ agentId: one.id, root }).lines.length
  const before = lines()
  const cases = [
    ['UPDATE agent SET last_seq = 9223372036854775000', /last_seq/],
    ['UPDATE entries SET updated_at = 9000000000000000000', /updated_at/],
    ['UPDATE entries SET ret_days = -1', /ret_days/],
    ['UPDATE entries SET ret_auto_delete = 7', /ret_auto_delete/],
    ['UPDATE entries SET ret_anonymization = 9', /ret_anonymization/],
    ["UPDATE entries SET creator_domain = '../../etc'", /creator_domain/],
  ]
  for (const [i, [sql, re]] of cases.entries()) {
    const file = path.join(root, `bad-${i}.db`)
    fs.copyFileSync(good, file)
    const db = new Database(file)
    db.exec(sql)
    db.close()
    const r = rotifer(root, 'agent', 'memory', 'restore', 'one', file, '--yes')
    assert.equal(r.status, 1, `${sql}: ${r.stderr}`)
    const line = oneErrorLine(r)
    assert.match(line, re, sql)
    assert.match(line, /nothing was restored/, sql)
    assert.deepEqual(memory.listAgentMemory({ agentId: one.id, root }).map((e) => e.key), ['after', 'k'], sql)
    assert.equal(lines(), before, `${sql}: nothing audited`)
  }
  // The untouched backup restores, and the next write's tx follows the restore's.
  assert.equal(rotifer(root, 'agent', 'memory', 'restore', 'one', good, '--yes').status, 0)
  m.writeMemory('next', new Uint8Array(1), 'CONTEXT')
  const txs = memory.readAgentAuditLog({ agentId: one.id, root }).lines.map((l) => l.tx)
  assert.ok(txs.every((tx) => Number.isSafeInteger(tx)))
  assert.equal(txs.at(-1), txs.at(-2) + 1)
})
