'use strict'
// The PostgreSQL rows of the benchmark: the binding against the store a user would hand-write on
// the same server with the same client crate (bench/pg/main.rs has both; docs/benchmarks.md,
// "PostgreSQL", says what each does). Both sides run in one Rust program, `pg-bench` (an example
// of the core crate, built here if needed), driven over its stdin: this process only alternates
// the rounds and keeps the medians, as for the other rows. Beside them, the same calls on the
// SQLite binding through the public API, as absolute per-call times.
//
// The server: the one ROTIFER_TEST_PG_ADMIN_URL and ROTIFER_TEST_PG_PORT name if they are set,
// else a throwaway cluster of its own (scripts/pg-cluster.js). Without PostgreSQL's binaries, or
// without cargo and a built program, the rows are skipped with one line.

const fs = require('node:fs')
const path = require('node:path')
const readline = require('node:readline')
const { spawn, spawnSync } = require('node:child_process')
const { startTimer, settle, median, alternate, picks } = require('./measure')
const S = require('./stores')
const R = require('./rows')

const ROOT = path.join(__dirname, '..')
const PROGRAM = path.join(ROOT, 'target', 'release', 'examples', 'pg-bench')
const CATEGORY = 'CONTEXT'
const VALUE = Buffer.alloc(100, 0x61)
const MAIN_AGENT = 'bench-main'

const CONFIG = {
  full: {
    entries: 10_000,
    rounds: 15,
    warmup: 2,
    batch: { hit: 500, miss: 500, update: 200, create: 200, query: 50 },
    concurrency: { writers: [1, 4, 16], rounds: 3, warmup: 1, writes: 300, entries: 1000 },
  },
  quick: {
    entries: 1_000,
    rounds: 3,
    warmup: 1,
    batch: { hit: 50, miss: 50, update: 20, create: 20, query: 10 },
    concurrency: { writers: [1, 4, 16], rounds: 1, warmup: 0, writes: 20, entries: 100 },
  },
}

/** The targets: ours ÷ the hand-written store, per call. */
const LIMITS = { 'pg-read-hit': 1.2, 'pg-read-miss': 1.2, 'pg-query-prefix': 1.3, 'pg-write-update': 2, 'pg-write-create': 2 }

/** Builds the program (a no-op when it is up to date); null if it is there, else why not. */
function buildProgram(progress) {
  progress('pg: building bench/pg (cargo build --release --example pg-bench)')
  const p = spawnSync('cargo', ['build', '--release', '-q', '-p', 'rotifer-memory-core', '--example', 'pg-bench'], { cwd: ROOT, encoding: 'utf8' })
  if (p.error?.code === 'ENOENT') return fs.existsSync(PROGRAM) ? null : 'cargo is not installed and bench/pg is not built'
  if (p.status !== 0) throw new Error(`building bench/pg failed:\n${p.stderr}`)
  return null
}

/** The server: the environment's, or a cluster of our own; null if there is none. */
async function server() {
  const env = process.env
  if (env.ROTIFER_TEST_PG_ADMIN_URL && env.ROTIFER_TEST_PG_PORT) {
    return { admin: env.ROTIFER_TEST_PG_ADMIN_URL, port: Number(env.ROTIFER_TEST_PG_PORT), stop: () => {} }
  }
  const cluster = await require('../scripts/pg-cluster.js').start()
  if (!cluster) return null
  return { admin: cluster.env.ROTIFER_TEST_PG_ADMIN_URL, port: Number(cluster.env.ROTIFER_TEST_PG_PORT), stop: cluster.stop }
}

/** The program in `serve` mode: `send(command)` answers its answer line, parsed. */
function serveProgram() {
  const child = spawn(PROGRAM, ['serve'], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const lines = readline.createInterface({ input: child.stdout })
  const waiting = []
  lines.on('line', (l) => waiting.shift()?.resolve(JSON.parse(l)))
  const closed = new Promise((resolve) => child.on('close', resolve))
  closed.then((code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`bench/pg exited (${code}): ${stderr.trim()}`))
  })
  return {
    send: (cmd) =>
      new Promise((resolve, reject) => {
        waiting.push({ resolve, reject })
        child.stdin.write(JSON.stringify(cmd) + '\n')
      }),
    close: async () => {
      child.stdin.end()
      const code = await closed
      if (code !== 0) throw new Error(`bench/pg exited with ${code}: ${stderr.trim()}`)
    },
  }
}

/** `count` writer processes on agents bench-w-0…, let go together: their writes per second. */
async function runWriters(base, count, writes, seed) {
  const kids = []
  for (let i = 0; i < count; i++) {
    const json = JSON.stringify({ ...base, agent: `bench-w-${i}`, count: writes, seed: seed + i })
    const child = spawn(PROGRAM, ['writer', json], { stdio: ['pipe', 'pipe', 'pipe'] })
    const k = { child, stdout: '', stderr: '' }
    k.ready = new Promise((resolve) => {
      child.stdout.on('data', (d) => {
        k.stdout += d
        if (k.stdout.includes('ready\n')) resolve()
      })
    })
    child.stderr.on('data', (d) => (k.stderr += d))
    k.done = new Promise((resolve) => child.on('close', resolve))
    kids.push(k)
  }
  const failed = (k) => new Error(`bench/pg writer (${base.side}) failed: ${k.stderr}`)
  const results = []
  try {
    await Promise.all(kids.map((k) => Promise.race([k.ready, k.done.then(() => Promise.reject(failed(k)))])))
    for (const k of kids) k.child.stdin.end('go\n')
    for (const k of kids) {
      if ((await k.done) !== 0) throw failed(k)
      results.push(JSON.parse(k.stdout.slice(k.stdout.indexOf('ready\n') + 6)))
    }
  } catch (e) {
    for (const k of kids) if (k.child.exitCode === null) k.child.kill()
    throw e
  }
  const start = Math.min(...results.map((r) => r.start))
  const end = Math.max(...results.map((r) => r.end))
  return (results.reduce((a, r) => a + r.writes, 0) * 1000) / (end - start)
}

/** Per-call microseconds (median of rounds) of the SQLite binding's calls, public API. */
async function sqliteFigures(c, tmp, sets) {
  const ours = new S.Ours(path.join(tmp, 'pg-sqlite'), 'bench-pg-sqlite', 1024 * 1024 * 1024)
  ours.template(CATEGORY)
  ours.fill(CATEGORY, c.entries, 'group', { bytes: 100, fill: 0x61 })
  const mem = ours.mem
  const calls = {
    'read-hit': (k) => mem.readMemory(k) !== null,
    'read-miss': (k) => mem.readMemory(k) === null,
    query: (p) => mem.queryMemory({ keyPrefix: p, limit: 100 }).length === sets.expected,
    update: (k) => mem.writeMemory(k, VALUE, CATEGORY) !== null,
    create: (k) => mem.writeMemory(k, VALUE, CATEGORY) !== null,
  }
  const figures = {}
  for (const [op, call] of Object.entries(calls)) {
    const per = []
    for (let r = -c.warmup; r < c.rounds; r++) {
      const keys = sets[op](r, 'sqlite')
      await settle()
      const stop = startTimer()
      for (const k of keys) if (!call(k)) throw new Error(`SQLite binding ${op}: unexpected answer`)
      const t = stop()
      if (r >= 0) per.push(t.wall / keys.length / 1e3)
    }
    figures[op] = median(per)
  }
  ours.mem = null
  return figures
}

/** The PostgreSQL rows (see the top of this file). */
async function pgSection(cfg, tmp, out, { progress, timeRow }) {
  const c = CONFIG[cfg.mode]
  const skip = (why) => {
    out.pg = { skipped: why }
    progress(`pg: PostgreSQL rows skipped: ${why}`)
  }
  const why = buildProgram(progress)
  if (why) return skip(why)
  const srv = await server()
  if (!srv) return skip('initdb and pg_ctl not found on PATH or under /usr/lib/postgresql')
  let prog = null
  try {
    prog = serveProgram()
    const conc = c.concurrency
    const writers = Math.max(...conc.writers)
    progress(`pg: a database on the server, ${c.entries} entries in both stores, ${writers} writer agents of ${conc.entries}`)
    const ready = await prog.send({ cmd: 'setup', admin: srv.admin, port: srv.port, entries: c.entries, writers, writerEntries: conc.entries })
    const n = c.entries
    const expected = Math.min(100, n, R.GROUP)
    // Each op's keys by round; `tag` keeps the keys each store creates apart from the others'.
    const sets = {
      expected,
      'read-hit': (r) => picks(11000 + r, c.batch.hit, n).map(R.KEYS.group),
      'read-miss': (r) => picks(12000 + r, c.batch.miss, n).map(R.KEYS.missing),
      update: (r) => picks(13000 + r, c.batch.update, n).map(R.KEYS.group),
      create: (r, tag = 'pg') => Array.from({ length: c.batch.create }, (_, i) => `n/${tag}/${r}/${R.pad(i, 6)}`),
      query: (r) => picks(14000 + r, c.batch.query, R.groupCount(n)).map(R.groupPrefix),
    }
    const ops = [
      ['pg-read-hit', 'read-hit', `PostgreSQL readMemory hit (100-byte value, ${n.toLocaleString('en-US')} entries)`],
      ['pg-read-miss', 'read-miss', `PostgreSQL readMemory miss (${n.toLocaleString('en-US')} entries)`],
      ['pg-query-prefix', 'query', 'PostgreSQL queryMemory keyPrefix, limit 100 (100 of 200 matching)'],
      ['pg-write-update', 'update', 'PostgreSQL writeMemory update (100 bytes)'],
      ['pg-write-create', 'create', 'PostgreSQL writeMemory create (100 bytes)'],
    ]
    const note = {
      noteGroup: 'PostgreSQL rows',
      baselineIs:
        'the store a user would hand-write on the same server (one table keyed by (agent, key), prepared statements, one upsert, one select, one range query, no contract); ' +
        '"ours" is the binding\'s calls in Rust (postgres::calls), both sides driven by bench/pg over loopback TCP; the ratios are on wall time (the CPU clock leaves out the server\'s work)',
    }
    const details = {}
    for (const [id, op, label] of ops) {
      progress(`  ${label}`)
      const batch = (side) => async (r) => prog.send({ cmd: 'batch', side, op, keys: sets[op](r), expect: expected })
      const m = await alternate({ rounds: c.rounds, warmup: c.warmup, ours: batch('ours'), baseline: batch('base') })
      // Wall time is what counts here: the server's work is on no clock of this machine's processes.
      out.rows.push({ ...timeRow(id, label, wallOf(m), LIMITS[id]), ...note })
      details[id] = m
    }
    progress(`pg: ${conc.writers.join(', ')} processes, each updating an agent of its own`)
    const concurrency = []
    for (const w of conc.writers) {
      const rates = { ours: [], baseline: [] }
      for (let r = -conc.warmup; r < conc.rounds; r++) {
        const args = { url: ready.url, entries: conc.entries }
        const o = await runWriters({ ...args, side: 'ours' }, w, conc.writes, 1000 * (r + 2))
        const b = await runWriters({ ...args, side: 'base' }, w, conc.writes, 1000 * (r + 2))
        if (r < 0) continue
        rates.ours.push(o)
        rates.baseline.push(b)
      }
      const ratio = median(rates.ours.map((o, i) => rates.baseline[i] / o))
      const row = { writers: w, ours: median(rates.ours), baseline: median(rates.baseline), ratio, rates }
      concurrency.push(row)
      out.rows.push({
        id: `pg-concurrency-${w}`,
        label: `PostgreSQL: ${w} process${w > 1 ? 'es' : ''} × ${w} agent${w > 1 ? 's' : ''} updating: writes/s in all (ratio: time per write)`,
        kind: 'rate',
        ours: row.ours,
        baseline: row.baseline,
        ratio,
        otherClock: null,
        limit: null,
        target: 'none',
        verdict: 'info',
        ...note,
      })
    }
    await prog.send({ cmd: 'teardown' })
    await prog.close()
    prog = null
    progress('pg: the same calls on the SQLite binding (public API)')
    const sqlite = await sqliteFigures(c, tmp, sets)
    const perCall = ops.map(([id, op, label]) => ({
      id,
      op: label.replace(/^PostgreSQL /, ''),
      sqliteUs: sqlite[op],
      pgUs: wallOf(details[id]).oursUs,
      plainUs: wallOf(details[id]).baselineUs,
    }))
    out.pg = { server: ready.server, fillSeconds: ready.fillSeconds, level: 'rust', perCall, concurrency, details }
  } finally {
    if (prog) await prog.close().catch(() => {})
    srv.stop()
  }
}

/** An `alternate` result with wall time as its primary clock, whichever clock the run uses. */
function wallOf(m) {
  if (m.clock === 'wall') return m
  const { samples, ...alt } = m.alt
  const { alt: _, samples: primary, clock, ...rest } = m
  return { ...alt, samples, alt: { clock, ...rest, samples: primary } }
}

module.exports = { pgSection, LIMITS }
