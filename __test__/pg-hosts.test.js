'use strict'
// One agent served from two hosts (R-BIND-2/3/5): four processes, two per simulated host (a
// project folder, an application name and a clock of their own: one host an hour ahead, the other
// an hour behind, through an LD_PRELOAD shim), write, update and delete one agent near its quota
// over TCP, in rounds. After every round the server's rows are checked: bytes used = the sum of
// the entries' sizes ≤ the quota; the audit's transaction numbers have no gap; replaying the
// audit gives exactly the stored entries, and every eviction took the lowest category present,
// oldest first; no time went backwards, and every time is the server's, not a host's.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawn, spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const readline = require('node:readline')
const { unavailable, ok, database } = require('./pg/server')

const skip = unavailable() || false
const INDEX = path.join(__dirname, '..', 'index.js')
const QUOTA = 40 * 1024
const ROUNDS = 6
const OPS = 60
const HOUR_S = 3600

// A clock shifted by ROTIFER_TEST_CLOCK_SKEW_S seconds, for every reader of the wall clock
// through libc (Node's Date, Rust's SystemTime).
const SHIM = `
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
static long skew(void) {
  static long s; static int read;
  if (!read) { const char *e = getenv("ROTIFER_TEST_CLOCK_SKEW_S"); s = e ? atol(e) : 0; read = 1; }
  return s;
}
int clock_gettime(clockid_t id, struct timespec *ts) {
  static int (*real)(clockid_t, struct timespec *);
  if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  int r = real(id, ts);
  if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) ts->tv_sec += skew();
  return r;
}
int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
  static int (*real)(struct timeval *, void *);
  if (!real) real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
  int r = real(tv, tz);
  if (r == 0 && tv) tv->tv_sec += skew();
  return r;
}
time_t time(time_t *t) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (t) *t = ts.tv_sec;
  return ts.tv_sec;
}
`

// One process of a host: reads "round <seed>" lines, makes OPS calls, answers "done <json>".
const WORKER = `
const memory = require(process.env.INDEX)
const m = new memory.GeneMemoryAccess({ agentId: process.env.AGENT, root: process.env.ROOT, url: process.env.URL,
  geneId: 'v2:' + 'c'.repeat(64), domain: 'test.hosts' })
let x = Number(process.env.SEED)
const rand = (n) => { x = (x * 1103515245 + 12345) % 2147483648; return x % n }
const CATEGORIES = ['CACHE', 'CACHE', 'CACHE', 'CACHE', 'PATTERN', 'PATTERN', 'CONTEXT', 'CONTEXT', 'CONTEXT', 'PREFERENCE']
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const counts = { written: 0, deleted: 0, refused: {}, clock: Date.now() }
  for (let i = 0; i < ${OPS}; i++) {
    const key = 'k/' + rand(150)
    try {
      if (rand(10) === 0) { m.deleteMemory(key); counts.deleted++; continue }
      const category = CATEGORIES[rand(CATEGORIES.length)]
      const size = category === 'PREFERENCE' ? 20 + rand(60) : 50 + rand(1500)
      m.writeMemory(key, Buffer.alloc(size, 97 + rand(26)), category)
      counts.written++
    } catch (e) {
      counts.refused[e.code] = (counts.refused[e.code] || 0) + 1
    }
  }
  process.stdout.write('done ' + JSON.stringify(counts) + '\\n')
})
`

const RANK = { CACHE: 0, PATTERN: 1, CONTEXT: 2 }

/** The audit replayed: the entries it leaves, every eviction checked against the state it met. */
function replay(rows) {
  const state = new Map()
  const byTx = new Map()
  for (const r of rows) {
    if (r.tx === null) {
      assert.ok(['memory.quota_reject', 'memory.access_denied'].includes(r.action), `a row without tx is a refusal: ${JSON.stringify(r)}`)
      continue
    }
    if (!byTx.has(r.tx)) byTx.set(r.tx, [])
    byTx.get(r.tx).push(r)
  }
  for (const [tx, group] of [...byTx].sort((a, b) => a[0] - b[0])) {
    const change = group[group.length - 1]
    for (const r of group) {
      if (r.action === 'memory.evict') {
        const victim = state.get(r.key)
        assert.ok(victim, `tx ${tx} evicts ${r.key}, which is not stored`)
        const others = [...state].filter(([k, e]) => k !== change.key && e.category in RANK)
        const lowest = Math.min(...others.map(([, e]) => RANK[e.category]))
        assert.equal(RANK[victim.category], lowest, `tx ${tx} evicts a ${victim.category} entry while a lower category is stored`)
        const oldest = Math.min(...others.filter(([, e]) => e.category === victim.category).map(([, e]) => e.tx))
        assert.equal(victim.tx, oldest, `tx ${tx} evicts ${r.key}, not the oldest ${victim.category} entry`)
        assert.equal(victim.size, r.size)
        state.delete(r.key)
      } else if (r.action === 'memory.create') {
        assert.equal(state.has(r.key), false, `tx ${tx} creates ${r.key}, which is stored`)
        state.set(r.key, { category: r.category, size: r.size, tx })
      } else if (r.action === 'memory.update') {
        assert.ok(state.has(r.key), `tx ${tx} updates ${r.key}, which is not stored`)
        state.set(r.key, { category: r.category, size: r.size, tx })
      } else if (r.action === 'memory.delete') {
        assert.ok(state.delete(r.key), `tx ${tx} deletes ${r.key}, which is not stored`)
      } else {
        assert.fail(`unexpected audit row ${JSON.stringify(r)}`)
      }
    }
  }
  return state
}

test('four processes on two hosts with clocks an hour apart share one agent near its quota', { skip }, async (t) => {
  const { admin, roles } = database(t, ['fleet'], { testClock: false })
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-hosts-'))
  t.after(() => fs.rmSync(work, { recursive: true, force: true }))
  fs.writeFileSync(path.join(work, 'skew.c'), SHIM)
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-O2', '-o', path.join(work, 'skew.so'), path.join(work, 'skew.c'), '-ldl'], { encoding: 'utf8' })
  assert.equal(cc.status, 0, `the clock shim compiles: ${cc.stderr}`)

  const role = new URL(roles.fleet)
  const url = (host) => `postgresql://${role.username}:${role.password}@127.0.0.1:${process.env.ROTIFER_TEST_PG_PORT}${role.pathname}?sslmode=disable&application_name=${host}`
  const agent = 'shared-' + crypto.randomBytes(4).toString('hex')
  const memory = require('../index.js')
  const hosts = [{ name: 'host-a', skew: HOUR_S }, { name: 'host-b', skew: -HOUR_S }]
  for (const h of hosts) {
    h.root = path.join(work, h.name)
    fs.mkdirSync(h.root)
    fs.writeFileSync(path.join(h.root, 'rotifer.json'), '{}\n')
  }
  memory.createAgentMemory({ agentId: agent, root: hosts[0].root, url: url('setup'), quota: QUOTA })
  const started = Date.now()

  const workers = []
  for (const h of hosts) {
    for (let n = 0; n < 2; n++) {
      const child = spawn(process.execPath, ['-e', WORKER], {
        env: { ...process.env, INDEX, AGENT: agent, ROOT: h.root, URL: url(h.name), SEED: String(1 + workers.length * 7919), LD_PRELOAD: path.join(work, 'skew.so'), ROTIFER_TEST_CLOCK_SKEW_S: String(h.skew) },
        stdio: ['pipe', 'pipe', 'inherit'],
      })
      t.after(() => child.kill('SIGKILL'))
      const answers = []
      const waiting = []
      readline.createInterface({ input: child.stdout }).on('line', (l) => {
        const a = JSON.parse(l.replace(/^done /, ''))
        if (waiting.length) waiting.shift()(a)
        else answers.push(a)
      })
      workers.push({ host: h, child, next: () => (answers.length ? Promise.resolve(answers.shift()) : new Promise((r) => waiting.push(r))) })
    }
  }

  const totals = { written: 0, deleted: 0, refused: {} }
  for (let round = 0; round < ROUNDS; round++) {
    for (const w of workers) w.child.stdin.write(`round ${round}\n`)
    const answers = await Promise.all(workers.map((w) => w.next()))
    answers.forEach((a, i) => {
      // The shim moves each host's clock: the test proves the hosts disagree by two hours.
      const offset = a.clock - Date.now()
      assert.ok(Math.abs(offset - workers[i].host.skew * 1000) < 60_000, `${workers[i].host.name}'s clock is ${offset} ms off`)
      totals.written += a.written
      totals.deleted += a.deleted
      for (const [code, n] of Object.entries(a.refused)) totals.refused[code] = (totals.refused[code] || 0) + n
    })

    const agentRow = ok(admin, `SELECT used_bytes || ',' || quota || ',' || last_tx FROM rotifer.agents WHERE agent_id = '${agent}'`).split(',').map(Number)
    const [used, quota, lastTx] = agentRow
    const entries = ok(admin, `SELECT key || ' ' || category || ' ' || size || ' ' || created_at || ' ' || updated_at FROM rotifer.entries WHERE agent_id = '${agent}' ORDER BY key`)
      .split('\n').filter(Boolean).map((l) => { const [key, category, size, createdAt, updatedAt] = l.split(' '); return { key, category, size: Number(size), createdAt: Number(createdAt), updatedAt: Number(updatedAt) } })
    assert.equal(used, entries.reduce((s, e) => s + e.size, 0), `round ${round}: bytes used = the sum of the sizes`)
    assert.ok(used <= quota, `round ${round}: ${used} bytes used of ${quota}`)

    const rows = ok(admin, `SELECT json_build_object('id', id, 'ts', ts, 'tx', tx, 'action', action, 'key', key, 'category', category, 'size', size) FROM rotifer.audit WHERE agent_id = '${agent}' ORDER BY id`)
      .split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const txs = [...new Set(rows.filter((r) => r.tx !== null).map((r) => r.tx))].sort((a, b) => a - b)
    assert.deepEqual(txs, Array.from({ length: lastTx }, (_, i) => i + 1), `round ${round}: transaction numbers 1..${lastTx} without a gap`)
    const replayed = replay(rows)
    assert.deepEqual([...replayed].map(([k, e]) => `${k} ${e.category} ${e.size}`).sort(), entries.map((e) => `${e.key} ${e.category} ${e.size}`).sort(), `round ${round}: the audit replays to the stored entries`)

    // Time: never backwards along the audit, every time the server's (within this run, not an hour off).
    for (let i = 1; i < rows.length; i++) assert.ok(rows[i].ts >= rows[i - 1].ts, `audit row ${rows[i].id} is earlier than the one before`)
    for (const r of rows) assert.ok(r.ts >= started - 5000 && r.ts <= Date.now() + 5000, `audit row ${r.id} at ${r.ts}: a host's clock, not the server's`)
    for (const e of entries) assert.ok(e.updatedAt >= e.createdAt && e.updatedAt <= Date.now() + 5000, `${e.key}: ${e.createdAt}..${e.updatedAt}`)
  }
  const evictions = Number(ok(admin, `SELECT count(*) FROM rotifer.audit WHERE agent_id = '${agent}' AND action = 'memory.evict'`))
  assert.ok(evictions >= 50, `the agent was kept near its quota: ${evictions} evictions`)
  assert.ok(totals.written >= ROUNDS * OPS * 4 * 0.7, JSON.stringify(totals))
  assert.deepEqual(Object.keys(totals.refused).filter((c) => c !== 'MEMORY_NOT_FOUND' && c !== 'MEMORY_QUOTA_EXCEEDED'), [], JSON.stringify(totals.refused))
  t.diagnostic(`${totals.written} writes, ${totals.deleted} deletes, ${evictions} evictions, refused ${JSON.stringify(totals.refused)}`)
  for (const w of workers) w.child.stdin.end()
})
