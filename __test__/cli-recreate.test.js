'use strict'
// R-HOST-1 through the real `rotifer` bin: a memory database deleted by hand (a reset, a fresh
// clone where .rotifer/agents/ is committed and the databases are not) comes back with the
// agent record's quota and data policy, whichever command opens the agent's memory first.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, json, makeProject, addGene, PROBE, steps, createAgent } = require('./cli-harness')

const NOTE = /note: agent "capped" had no memory database; created an empty one with the quota and data policy of its record/

function deleteDatabase(root, id) {
  const dir = path.join(root, '.rotifer', 'memory')
  const files = fs.readdirSync(dir).filter((f) => f.startsWith(`${id}.db`))
  assert.ok(files.includes(`${id}.db`))
  for (const f of files) fs.rmSync(path.join(dir, f))
}

/** A 200 KB write, a 30-day entry and an anonymized share: what the record's limits decide. */
const PROBES = steps([
  { write: 'big', size: 200 * 1024 },
  { write: 'month', value: 'v', retentionPolicy: { maxRetentionDays: 30, autoDeleteOnTermination: false, anonymizationSupported: true } },
  { write: 'shared', value: 'v', accessPolicy: { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'ANONYMIZED_SHARE' } },
  { write: 'week', value: 'v', retentionPolicy: { maxRetentionDays: 7, autoDeleteOnTermination: false, anonymizationSupported: true } },
])
// 64 KB quota: the 200 KB write is refused; at most 7 days: the 30-day entry is refused;
// anonymization supported: the share is written (the defaults would give the opposite three).
const LIMITED = [[{ error: 'MEMORY_QUOTA_EXCEEDED' }, { error: 'MEMORY_ACCESS_DENIED' }, { wrote: 'shared' }, { wrote: 'week' }]]

function setUp(t) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'capped', ['probe'], '--memory-quota=64KB', '--allow-anonymization', '--max-retention-days=7')
  return { root, agent }
}

test('R-HOST-1 agent run recreates a deleted database with the record\'s quota and data policy', (t) => {
  const { root, agent } = setUp(t)
  const run = () => rotifer(root, 'agent', 'run', 'capped', '--input', PROBES)
  assert.deepEqual(json(run()).results, LIMITED, 'the limits hold before the deletion')
  deleteDatabase(root, agent.id)
  const r = run()
  assert.deepEqual(json(r).results, LIMITED, 'and after it')
  assert.match(r.stderr, NOTE)
  // The next run finds the database: no note, and what the last run wrote is still there.
  const again = rotifer(root, 'agent', 'run', 'capped', '--input', steps([{ read: 'week' }]))
  assert.deepEqual(json(again).results, [[{ value: 'v' }]])
  assert.doesNotMatch(again.stderr, /note:/)
})

for (const [what, args, stdout] of [
  ['agent memory list', ['agent', 'memory', 'list', 'capped'], /^0 entries, 0 bytes/m],
  ['agent memory delete', ['agent', 'memory', 'delete', 'capped', '--category', 'CACHE', '--yes'], /Deleted 0 entries/],
]) {
  test(`R-HOST-1 ${what} recreates a deleted database with the record's quota and data policy`, (t) => {
    const { root, agent } = setUp(t)
    deleteDatabase(root, agent.id)
    const r = rotifer(root, ...args)
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, stdout)
    assert.match(r.stderr, NOTE)
    assert.ok(fs.existsSync(path.join(root, '.rotifer', 'memory', `${agent.id}.db`)), `${what} created the database`)
    // `agent run` now finds a database and leaves it as it is: the limits are the ones it was made with.
    const run = rotifer(root, 'agent', 'run', 'capped', '--input', PROBES)
    assert.deepEqual(json(run).results, LIMITED)
    assert.doesNotMatch(run.stderr, /note:/)
  })
}

test('R-HOST-1 an existing database is never reconfigured from the record', (t) => {
  const { root, agent } = setUp(t)
  // The deployer raised the quota through the API; the record still says 64 KB.
  require('./helpers').memory.createAgentMemory({ agentId: agent.id, root, quota: '1MB', dataPolicy: agent.dataPolicy })
  const r = rotifer(root, 'agent', 'run', 'capped', '--input', steps([{ write: 'big', size: 200 * 1024 }]))
  assert.deepEqual(json(r).results, [[{ wrote: 'big' }]])
  assert.doesNotMatch(r.stderr, /note:/)
})

test('R-HOST-1 a record with an invalid quota is reported, and no database is created', (t) => {
  const { root, agent } = setUp(t)
  deleteDatabase(root, agent.id)
  const file = path.join(root, '.rotifer', 'agents', `${agent.id}.json`)
  fs.writeFileSync(file, JSON.stringify({ ...agent, memoryQuota: -5 }))
  const r = rotifer(root, 'agent', 'run', 'capped', '--input', '{}')
  assert.notEqual(r.status, 0)
  assert.match(r.stderr, /agent record .*\.json: "memoryQuota" must be a whole number of bytes greater than 0 \(got -5\)/)
  assert.equal(fs.existsSync(path.join(root, '.rotifer', 'memory', `${agent.id}.db`)), false)
})

test('R-HOST-1 a damaged database is not recreated: it is left as it is, and calls report it', (t) => {
  const { root, agent } = setUp(t)
  deleteDatabase(root, agent.id)
  const db = path.join(root, '.rotifer', 'memory', `${agent.id}.db`)
  fs.writeFileSync(db, 'not a database, but maybe the only copy of something', { mode: 0o600 })
  const r = rotifer(root, 'agent', 'run', 'capped', '--input', steps([{ write: 'k', value: 'v' }]))
  assert.deepEqual(json(r).results, [[{ error: 'MEMORY_STORAGE_ERROR' }]])
  assert.doesNotMatch(r.stderr, /note:/)
  assert.equal(fs.readFileSync(db, 'utf8'), 'not a database, but maybe the only copy of something')
})
