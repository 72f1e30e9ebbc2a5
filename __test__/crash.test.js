'use strict'
// Crash consistency: a child under heavy write/evict load is killed with SIGKILL at random
// moments, again and again on the same memory. After every kill the database passes
// PRAGMA integrity_check, the stored byte total equals the sum of live entry sizes, no value is
// torn (each carries its own checksum), and the audit log accounts for every committed change:
// replaying it gives exactly the stored entries — all of its lines, or all but the last call's
// lines (written ahead, then killed before the commit).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { createHash } = require('node:crypto')
const Database = require('better-sqlite3')
const { memory, tempRoot, geneId } = require('./helpers')

const TRIALS = Number(process.env.CRASH_TRIALS || 24)
const WORKER = path.join(__dirname, 'workers', 'crash-worker.js')
const AGENT = 'crash'
const QUOTA = 48 * 1024
const SEED = Number(process.env.CRASH_SEED || Date.now() % 1e9)

let s = SEED >>> 0
const rand = () => {
  s = (s * 1103515245 + 12345) >>> 0
  return s / 4294967296
}

/** Runs the worker until it is in its loop, then kills it after a random delay. */
function runAndKill(root, startMs, seed) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, root, AGENT, String(startMs), String(seed), String(QUOTA)], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    let killed = false
    child.stderr.on('data', (d) => (stderr += d))
    child.stdout.on('data', (d) => {
      if (!killed && String(d).includes('ready')) {
        killed = true
        setTimeout(() => child.kill('SIGKILL'), 1 + Math.floor(rand() * 150))
      }
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }))
  })
}

/** The audit lines of the agent; a torn last line (killed mid-append) is reported apart. */
function readAudit(root) {
  const text = fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'), 'utf8')
  const parts = text.split('\n')
  const tail = parts.pop() // '' when the file ends with a whole line
  const lines = []
  for (const p of parts) {
    if (p === '') continue
    try {
      lines.push(JSON.parse(p))
    } catch {
      // a line cut short by an earlier kill; the next append started on a new line
    }
  }
  return { lines: lines.filter((l) => l.agentId === AGENT), tail }
}

/** key → { size, category, updatedAt } after replaying `lines`. */
function replay(lines) {
  const live = new Map()
  for (const l of lines) {
    if (l.action === 'memory.create' || l.action === 'memory.update') live.set(l.key, { size: l.size, category: l.category, updatedAt: Date.parse(l.ts) })
    else if (['memory.delete', 'memory.evict', 'memory.expire'].includes(l.action)) live.delete(l.key)
  }
  return live
}

// As the store numbers them: CACHE 0, PATTERN 1, CONTEXT 2, PREFERENCE 3.
const CATEGORIES = ['CACHE', 'PATTERN', 'CONTEXT', 'PREFERENCE']

/** Checks the database after a kill; returns its live entries. */
function checkDatabase(dbPath, label) {
  const db = new Database(dbPath, { fileMustExist: true })
  try {
    assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }], `${label}: integrity_check`)
    const { used } = db.prepare('SELECT used_bytes AS used FROM agent').get()
    const { total } = db.prepare('SELECT COALESCE(SUM(size), 0) AS total FROM entries').get()
    assert.equal(used, total, `${label}: stored byte total = sum of live entry sizes`)
    assert.ok(used <= QUOTA, `${label}: quota held (${used})`)
    const live = new Map()
    for (const row of db.prepare('SELECT key, category, value, size, updated_at FROM entries').iterate()) {
      const key = row.key.toString('utf8')
      const v = row.value
      assert.equal(row.size, row.key.length + v.length, `${label}: size of ${key}`)
      if (v.length < 40) assert.fail(`${label}: value of ${key} is torn (${v.length} bytes)`)
      const len = v.readUInt32LE(0)
      assert.equal(v.length, 8 + len + 32, `${label}: value of ${key} has its full length`)
      const sum = createHash('sha256').update(key).update(v.subarray(4, 8 + len)).digest()
      assert.ok(sum.equals(v.subarray(8 + len)), `${label}: value of ${key} is not torn (checksum)`)
      live.set(key, { size: row.size, category: CATEGORIES[row.category], updatedAt: row.updated_at })
    }
    return live
  } finally {
    db.close()
  }
}

test(`SIGKILL under heavy write/evict load, ${TRIALS} times: the database, the byte total, every value and the audit stay consistent (seed ${SEED})`, async (t) => {
  const root = tempRoot(t)
  const dbPath = path.join(root, '.rotifer', 'memory', `${AGENT}.db`)
  const phantoms = new Set() // ts of calls whose audit lines were written but which never committed
  let start = Date.parse('2026-11-30T00:00:00.000Z')
  let lastLive = new Map()
  let committedCalls = 0
  for (let trial = 0; trial < TRIALS; trial++) {
    const label = `trial ${trial} (seed ${SEED})`
    const r = await runAndKill(root, start, SEED + trial)
    assert.equal(r.signal, 'SIGKILL', `${label}: the worker ran until killed (exit ${r.code}): ${r.stderr}`)
    const live = checkDatabase(dbPath, label)
    const { lines, tail } = readAudit(root)
    const kept = lines.filter((l) => !phantoms.has(l.ts))
    const lastTs = kept.length ? kept[kept.length - 1].ts : null
    // Which calls may not have committed: none, or the last one. A line cut short by the kill
    // (its call cannot have committed) names its call by its leading "ts", when that was written.
    const tornTs = tail === '' ? undefined : (/^\{"ts":"([^"]+)"/.exec(tail) || [])[1]
    const candidates = tail === '' ? [[], [lastTs]] : tornTs ? [[tornTs]] : [[], [lastTs]]
    const sameAs = (m) => m.size === live.size && [...m].every(([k, v]) => live.has(k) && JSON.stringify(live.get(k)) === JSON.stringify(v))
    const match = candidates.find((drop) => sameAs(replay(kept.filter((l) => !drop.includes(l.ts)))))
    if (match) {
      for (const ts of match) phantoms.add(ts) // killed after its write-ahead audit lines, before its commit
    } else {
      const all = replay(kept)
      const diff = [...new Set([...all.keys(), ...live.keys()])].filter((k) => JSON.stringify(all.get(k)) !== JSON.stringify(live.get(k)))
      assert.fail(`${label}: the audit log does not account for the stored entries; differing keys: ${diff.slice(0, 10).map((k) => `${k}: audit ${JSON.stringify(all.get(k))} db ${JSON.stringify(live.get(k))}`).join('; ')}`)
    }
    committedCalls = new Set(kept.map((l) => l.ts)).size
    lastLive = live
    start = Date.parse(lines[lines.length - 1].ts) + 1000
  }
  assert.ok(committedCalls > TRIALS * 20, `the workers did real work (${committedCalls} audited calls)`)
  t.diagnostic(`${committedCalls} audited calls; ${phantoms.size} kills fell between a call's audit append and its commit`)
  const actions = new Set(readAudit(root).lines.map((l) => l.action))
  for (const a of ['memory.create', 'memory.update', 'memory.evict', 'memory.delete']) assert.ok(actions.has(a), `the load included ${a}`)

  // After all the kills the memory still works, and shows what the database holds.
  const list = memory.listAgentMemory({ agentId: AGENT, root, now: () => start })
  const m = new memory.GeneMemoryAccess({ agentId: AGENT, geneId: geneId('after'), domain: 'load', root, now: () => start + 1 })
  m.writeMemory('after-the-crashes', new Uint8Array(10), 'PREFERENCE')
  assert.equal(m.readMemory('after-the-crashes').key, 'after-the-crashes')
  assert.ok(list.length <= lastLive.size, 'the deployer lists the live entries (some may have expired since)')
  for (const l of list) assert.equal(l.size, lastLive.get(l.key).size)
})
