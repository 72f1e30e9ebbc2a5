'use strict'
// Concurrency (R-HOST-5): several processes make mixed calls on one agent under a small quota.
// Only documented error codes come back (never a storage error, never SQLITE_BUSY); the quota
// holds at every commit (replayed from the audit log, which is appended under the write lock
// and so in commit order) and in every snapshot taken while the processes run; and the audit
// adds up: creates − evicts − deletes − expires = live entries.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const Database = require('better-sqlite3')
const { memory, tempRoot, auditLines, runNode } = require('./helpers')

const PROCESSES = Number(process.env.CONCURRENCY_PROCESSES || 5)
const CALLS = Number(process.env.CONCURRENCY_CALLS || 1500)
const SEED = Number(process.env.CONCURRENCY_SEED || Date.now() % 1e9)
const WORKER = path.join(__dirname, 'workers', 'mixed-worker.js')
const AGENT = 'shared-agent'
const QUOTA = 24 * 1024

function run(root, id, startMs) {
  return runNode(WORKER, [root, AGENT, id, SEED + id, CALLS, startMs])
}

test(`${PROCESSES} processes × ${CALLS} mixed calls on one agent under a ${QUOTA}-byte quota (seed ${SEED})`, async (t) => {
  assert.ok(PROCESSES >= 4)
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: AGENT, root, quota: QUOTA })
  const dbPath = path.join(root, '.rotifer', 'memory', `${AGENT}.db`)
  const start = Date.parse('2026-11-30T00:00:00.000Z')

  // Snapshots while the processes run: a reader sees a consistent total that never exceeds the quota.
  const reader = new Database(dbPath, { fileMustExist: true })
  const snapshot = reader.transaction(() => [
    reader.prepare('SELECT used_bytes AS used FROM agent').get().used,
    reader.prepare('SELECT COALESCE(SUM(size), 0) AS total FROM entries').get().total,
  ])
  const snapshots = []
  let running = true
  const sample = () => {
    if (!running || snapshots.length >= 500) return
    snapshots.push(snapshot())
    setTimeout(sample, 5)
  }
  sample()
  const results = await Promise.all(Array.from({ length: PROCESSES }, (_, id) => run(root, id, start)))
  running = false

  const outcomes = {}
  for (const r of results) {
    assert.equal(r.code, 0, `a worker exited ${r.code} ${r.signal}: ${r.err}`)
    const { outcomes: o, unexpected } = JSON.parse(r.out)
    assert.deepEqual(unexpected, [], 'only documented, expected error codes; no storage error; no SQLITE_BUSY')
    for (const [k, v] of Object.entries(o)) outcomes[k] = (outcomes[k] || 0) + v
  }
  t.diagnostic(JSON.stringify(outcomes))
  for (const k of ['write:ok', 'write:MEMORY_QUOTA_EXCEEDED', 'read:ok', 'read:MEMORY_ACCESS_DENIED', 'query:ok', 'delete:ok', 'list:ok', 'deployerDelete:ok', 'invalid:MEMORY_INVALID_INPUT']) {
    assert.ok(outcomes[k] > 0, `the load included ${k}`)
  }

  assert.ok(snapshots.length > 0)
  for (const [used, total] of snapshots) {
    assert.equal(used, total, 'a snapshot: byte total = sum of sizes')
    assert.ok(used <= QUOTA, `a snapshot within the quota: ${used}`)
  }

  // Replay the audit log in commit order: the quota holds after every line.
  const lines = auditLines(root).filter((l) => l.agentId === AGENT)
  const live = new Map()
  let total = 0
  let peak = 0
  const count = {}
  for (const l of lines) {
    count[l.action] = (count[l.action] || 0) + 1
    if (l.action === 'memory.create' || l.action === 'memory.update') {
      assert.equal(l.action === 'memory.update', live.has(l.key), `${l.action} of ${l.key} matches the replayed state`)
      total += l.size - (live.get(l.key) || 0)
      live.set(l.key, l.size)
    } else if (['memory.delete', 'memory.evict', 'memory.expire'].includes(l.action)) {
      assert.ok(live.has(l.key), `${l.action} of ${l.key}, which the replay holds`)
      total -= live.get(l.key)
      live.delete(l.key)
    }
    peak = Math.max(peak, total)
    assert.ok(total <= QUOTA, `the quota holds at every commit (${total} after ${l.action} ${l.key})`)
  }
  for (const a of ['memory.create', 'memory.update', 'memory.evict', 'memory.expire', 'memory.delete', 'memory.quota_reject', 'memory.access_denied']) {
    assert.ok(count[a] > 0, `the audit shows ${a}`)
  }
  const n = (a) => count[a] || 0

  const db = new Database(dbPath, { fileMustExist: true })
  try {
    assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }])
    const rows = db.prepare('SELECT key, size FROM entries').all()
    const { used } = db.prepare('SELECT used_bytes AS used FROM agent').get()
    assert.equal(used, rows.reduce((s, r) => s + r.size, 0), 'byte total = sum of sizes')
    assert.equal(used, total, 'byte total = the replayed audit')
    assert.equal(n('memory.create') - n('memory.evict') - n('memory.delete') - n('memory.expire'), rows.length, 'creates − evicts − deletes − expires = live entries')
    assert.deepEqual(new Map(rows.map((r) => [r.key.toString(), r.size])), live, 'the audit replays to exactly the stored entries')
  } finally {
    db.close()
    reader.close()
  }
  t.diagnostic(`${lines.length} audit lines, peak ${peak} of ${QUOTA} bytes, ${snapshots.length} snapshots`)
})

// Worker threads (R-HOST-5): several threads of one process opening one agent at the same moment
// must leave the process holding its SQLite locks (closing any descriptor of a file drops every
// POSIX lock the process holds on it). Otherwise another process that opens and closes the agent
// believes it is the last user, checkpoints and deletes the -wal, and acknowledged writes vanish.
// The long form: scripts/worker-race-long.sh.
const { round: workerRace } = require('./workers/worker-race')
const RACE_ROUNDS = Number(process.env.WORKER_RACE_ROUNDS || 4)

test(`4 worker threads open one agent at once (${RACE_ROUNDS} rounds): the locks stay, every acknowledged write is on disk`, async (t) => {
  for (let i = 0; i < RACE_ROUNDS; i++) {
    const r = await workerRace(tempRoot(t))
    assert.deepEqual(r.errors, [], `round ${i}: every write succeeds`)
    assert.ok(r.locks > 0, `round ${i}: the process still holds a POSIX lock on the database after the race`)
    assert.equal(r.otherStatus, 0, r.otherErr)
    assert.ok(r.onDisk, r.readErr)
    assert.deepEqual([...r.onDisk].sort(), [...r.acked].sort(), `round ${i}: the entries on disk are exactly the acknowledged writes`)
  }
})
