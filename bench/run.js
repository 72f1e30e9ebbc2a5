#!/usr/bin/env node
'use strict'
// Benchmark of the Agent Memory API against the stores a user would hand-roll with
// better-sqlite3 (see bench/stores.js and docs/benchmarks.md): the lean one, which every ratio
// and verdict is against, and one that copies our schema, for reference.
//
//   node bench/run.js [--quick] [--out FILE] [--only SECTION,…] [--clock wall|cpu] [--charts DIR|none] [--before DIR]
//
// One process runs ours and the baselines in alternating rounds after a warm-up, prints a table
// with every target, its ratio and whether it is met, writes the results as JSON
// (bench/results.json; bench/results-quick.json with --quick) and draws SVG charts from them
// (into docs/ after a full run; with --quick only where --charts says). Sections: main, evict,
// open, growth, wal, concurrency, memory, gene (bench/gene-start.js), startup (bench/startup.js),
// sandbox (bench/sandbox.js),
// testmem (bench/test-memory.js), cli (bench/cli-scale.js), pg (bench/pg.js: the PostgreSQL
// binding against a hand-written PostgreSQL store), and with --before DIR (a
// built checkout of an earlier version) before (bench/before.js). Exits 0 whether targets
// are met or not; non-zero only if the benchmark itself failed.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const memory = require('../index.js')
const { settle, startTimer, useClock, median, interleave, alternate, merge, growth, picks } = require('./measure')
const S = require('./stores')
const R = require('./rows')
const charts = require('./charts')
const { geneSection } = require('./gene-start')
const { startupSection } = require('./startup')
const { sandboxSection } = require('./sandbox')
const { beforeSection } = require('./before')
const { testMemorySection } = require('./test-memory')
const { cliSection } = require('./cli-scale')
const { pgSection } = require('./pg')

const MiB = 1024 * 1024
const BIG_QUOTA = 1024 * MiB
const CATEGORY = 'CONTEXT'
const VALUE_SPEC = { bytes: 100, fill: 0x61 }
const VALUE = Buffer.alloc(VALUE_SPEC.bytes, VALUE_SPEC.fill)

const FULL = {
  mode: 'full',
  entries: 10_000,
  rounds: 31,
  warmup: 2,
  batch: { hit: 2000, miss: 2000, update: 200, create: 200, query: 100 },
  evict: { entries: 10_000, rounds: 9 },
  open: { rounds: 15, perRound: 10 },
  growth: { sizes: [1_000, 100_000, 1_000_000], rounds: 12, batch: { hit: 1000, update: 100, query: 50 } },
  wal: { walCount: 100, count: 1000 },
  concurrency: { writers: [1, 2, 4], rounds: 5, warmup: 1, writes: 400 },
  memory: { runs: 5, entries: 64, valueBytes: 65_000 },
}

const QUICK = {
  mode: 'quick',
  entries: 1_000,
  rounds: 3,
  warmup: 1,
  batch: { hit: 200, miss: 200, update: 20, create: 20, query: 10 },
  evict: { entries: 1_000, rounds: 2 },
  open: { rounds: 3, perRound: 2 },
  growth: { sizes: [1_000, 10_000, 30_000], rounds: 2, batch: { hit: 100, update: 10, query: 5 } },
  wal: { walCount: 20, count: 50 },
  concurrency: { writers: [1, 2, 4], rounds: 1, warmup: 0, writes: 30 },
  memory: { runs: 1, entries: 64, valueBytes: 65_000 },
}

const SECTIONS = ['main', 'evict', 'open', 'growth', 'wal', 'concurrency', 'memory', 'gene', 'startup', 'sandbox', 'testmem', 'cli', 'pg', 'before']

function parseArgs(argv) {
  const o = { quick: false, out: null, only: SECTIONS, clock: 'wall', charts: undefined, before: null }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--quick') o.quick = true
    else if (a === '--out') o.out = argv[++i]
    else if (a === '--only') o.only = argv[++i].split(',')
    else if (a === '--clock') o.clock = argv[++i]
    else if (a === '--charts') o.charts = argv[++i]
    else if (a === '--before') o.before = argv[++i]
    else if (a === '--help' || a === '-h') {
      process.stdout.write(`usage: node bench/run.js [--quick] [--out FILE] [--only ${SECTIONS.join(',')}] [--clock wall|cpu] [--charts DIR|none] [--before DIR]\n`)
      process.exit(0)
    } else {
      throw new Error(`unknown argument ${a}; see --help`)
    }
  }
  for (const s of o.only) if (!SECTIONS.includes(s)) throw new Error(`unknown section ${s}; sections: ${SECTIONS.join(', ')}`)
  o.out ??= path.join(__dirname, o.quick ? 'results-quick.json' : 'results.json')
  // Charts of a quick run would replace the documented ones with noise: only where asked.
  if (o.charts === undefined) o.charts = o.quick ? 'none' : path.join(__dirname, '..', 'docs')
  if (o.charts === 'none') o.charts = null
  return o
}

const started = Date.now()
function progress(text) {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}\n`)
}

const fmtN = (n) => n.toLocaleString('en-US')

/** A timed batch over `items`: `call(item)` answers whether the result was the expected one. */
function batch(items, call, what) {
  let bad = 0
  const stop = startTimer()
  for (const it of items) if (!call(it)) bad++
  const t = stop()
  if (bad) throw new Error(`${what}: ${bad} of ${items.length} calls returned an unexpected result`)
  return { ...t, calls: items.length }
}

/** Waits until no descriptor of this process points at `file` (its store was collected). */
async function waitClosed(file) {
  for (let i = 0; i < 50; i++) {
    await settle()
    const n = S.openDescriptors(file)
    if (n === null || n === 0) return true
  }
  return false
}

function verdict(value, limit) {
  if (limit == null) return 'info'
  return value <= limit ? 'met' : 'MISSED'
}

// ---------------------------------------------------------------------------------------------
// Sections

/** Builds an agent of `n` entries in the three stores under `dir`. */
function build(dir, agentId, n, quota = BIG_QUOTA) {
  const ours = new S.Ours(path.join(dir, 'ours'), agentId, quota)
  ours.template(CATEGORY)
  const base = new S.Lean(path.join(dir, 'lean'), ours)
  const copy = new S.SchemaCopy(path.join(dir, 'copy'), ours)
  if (n > 0) {
    const t = Date.now()
    ours.fill(CATEGORY, n, 'group', VALUE_SPEC)
    base.fill(CATEGORY, n, 'group', VALUE_SPEC)
    copy.fill(CATEGORY, n, 'group', VALUE_SPEC)
    if (n >= 100_000) progress(`  built ${fmtN(n)} entries in the three stores in ${((Date.now() - t) / 1000).toFixed(1)} s`)
  }
  return { ours, base, copy }
}

/** readMemory hit/miss, queryMemory prefix and newest, writeMemory update/create. */
async function mainSection(cfg, tmp, out) {
  const n = cfg.entries
  progress(`main: ${fmtN(n)} entries`)
  const { ours, base, copy } = build(path.join(tmp, 'main'), 'bench-main', n)
  const mem = ours.mem
  const groups = R.groupCount(n)
  const expected = Math.min(100, n, R.GROUP)
  const common = { rounds: cfg.rounds, warmup: cfg.warmup }
  const hitKeys = (r) => picks(1000 + r, cfg.batch.hit, n).map(R.KEYS.group)
  const missKeys = (r) => picks(2000 + r, cfg.batch.miss, n).map(R.KEYS.missing)
  const updKeys = (r) => picks(3000 + r, cfg.batch.update, n).map(R.KEYS.group)
  const newKeys = (r) => Array.from({ length: cfg.batch.create }, (_, i) => `n/${r}/${R.pad(i, 6)}`)
  const prefixes = (r) => picks(4000 + r, cfg.batch.query, groups).map(R.groupPrefix)

  // [id, label, target, items, ours, a call on a hand-rolled store `s`]
  const ops = [
    ['read-hit', `readMemory hit (100-byte value, ${fmtN(n)} entries)`, 1.0, hitKeys, (k) => mem.readMemory(k) !== null, (s, k) => s.read(k) !== undefined],
    ['read-miss', `readMemory miss (${fmtN(n)} entries)`, 1.2, missKeys, (k) => mem.readMemory(k) === null, (s, k) => s.read(k) === undefined],
    ['query-prefix', 'queryMemory keyPrefix, limit 100 (100 of 200 matching)', 1.0, prefixes,
      (p) => mem.queryMemory({ keyPrefix: p, limit: 100 }).length === expected, (s, p) => s.query(p, 100).length === expected],
    // No target: schema version 2 serves recency over all categories by merging the category
    // index's runs, where the lean store walks a recency index of its own (docs/benchmarks.md).
    ['query-newest', 'queryMemory limit 100, no filter (the newest 100)', null, (r) => Array.from({ length: cfg.batch.query }, () => r),
      () => mem.queryMemory({ limit: 100 }).length === expected, (s) => s.newest(100).length === expected],
    ['write-update', 'writeMemory update (100 bytes)', 1.1, updKeys,
      (k) => mem.writeMemory(k, VALUE, CATEGORY) !== null, (s, k) => (s.write(k, VALUE, CATEGORY, true), true)],
    ['write-create', 'writeMemory create (100 bytes)', 1.1, newKeys,
      (k) => mem.writeMemory(k, VALUE, CATEGORY) !== null, (s, k) => (s.write(k, VALUE, CATEGORY, false), true)],
  ]
  for (const [id, label, limit, items, oursCall, baseCall] of ops) {
    progress(`  ${label}`)
    const m = await alternate({
      ...common,
      ours: async (r) => batch(items(r), oursCall, `ours ${id}`),
      baseline: async (r) => batch(items(r), (x) => baseCall(base, x), `lean ${id}`),
      copy: async (r) => batch(items(r), (x) => baseCall(copy, x), `schema copy ${id}`),
    })
    out.rows.push(timeRow(id, label, m, limit))
    out.details[id] = m
  }
  base.close()
  copy.close()
}

/** A write that must evict `entries` CACHE entries. */
async function evictSection(cfg, tmp, out) {
  const n = cfg.evict.entries
  progress(`evict: a write that evicts ${fmtN(n)} CACHE entries`)
  // Every CACHE entry is 40 bytes (9-byte key, 31-byte value), the quota is exactly their sum,
  // and the write brings a new entry of that same size: all of them, and no fewer, must go.
  const value = { bytes: 31, fill: 0x63 }
  const quota = n * 40
  const blob = Buffer.alloc(quota - 'blob'.length, 0x62)
  const ours = new S.Ours(path.join(tmp, 'evict', 'ours'), 'bench-evict', quota)
  ours.template('CACHE')
  ours.template(CATEGORY)
  const base = new S.Lean(path.join(tmp, 'evict', 'lean'), ours)
  const copy = new S.SchemaCopy(path.join(tmp, 'evict', 'copy'), ours)
  let oursBlob = false
  const blobIn = new Set()
  const handRolled = (s, name) => async () => {
    if (blobIn.has(s)) s.remove('blob')
    s.fill('CACHE', n, 'evict', value)
    await settle()
    const stop = startTimer()
    const evicted = s.evictAndWrite('blob', blob, CATEGORY, 'CACHE', n)
    const t = stop()
    blobIn.add(s)
    if (evicted !== n || s.count('CACHE') !== 0) throw new Error(`${name} evict: evicted ${evicted} of ${n}`)
    return { ...t, calls: 1 }
  }
  const m = await alternate({
    rounds: cfg.evict.rounds,
    warmup: 1,
    ours: async () => {
      if (oursBlob) ours.mem.deleteMemory('blob')
      ours.fill('CACHE', n, 'evict', value)
      await settle()
      const stop = startTimer()
      ours.mem.writeMemory('blob', blob, CATEGORY)
      const t = stop()
      oursBlob = true
      if (ours.has('CACHE')) throw new Error('ours evict: CACHE entries left')
      return { ...t, calls: 1 }
    },
    baseline: handRolled(base, 'lean'),
    copy: handRolled(copy, 'schema copy'),
  })
  const label = `write that evicts ${fmtN(n)} CACHE entries`
  out.rows.push(timeRow('evict', label, m, 1.5))
  out.details.evict = m
  base.close()
  copy.close()
}

/** A side of the open row for a hand-rolled store: open, pragmas, one read. */
const openAndRead = (dbPath, keys, name) => async (r) => {
  const sum = { wall: 0, cpu: 0, calls: 0 }
  for (const k of keys(r)) {
    const stop = startTimer()
    const { db, row } = S.HandRolled.openAndRead(dbPath, k)
    const t = stop()
    sum.wall += t.wall
    sum.cpu += t.cpu
    sum.calls++
    db.close()
    if (row === undefined) throw new Error(`${name} open: first read missed`)
    await settle()
  }
  return sum
}

/** Opening a GeneMemoryAccess on an existing agent plus its first read. */
async function openSection(cfg, tmp, out) {
  const n = cfg.entries
  progress(`open: GeneMemoryAccess on an agent of ${fmtN(n)} entries + first read`)
  const { ours, base, copy } = build(path.join(tmp, 'open'), 'bench-open', n)
  base.close()
  copy.close()
  ours.mem = null
  let reused = !(await waitClosed(ours.dbPath))
  const keys = (r) => picks(5000 + r, cfg.open.perRound, n).map(R.KEYS.group)
  const m = await alternate({
    rounds: cfg.open.rounds,
    warmup: 1,
    ours: async (r) => {
      const sum = { wall: 0, cpu: 0, calls: cfg.open.perRound }
      for (const k of keys(r)) {
        const stop = startTimer()
        let h = ours.open()
        const e = h.readMemory(k)
        const t = stop()
        sum.wall += t.wall
        sum.cpu += t.cpu
        if (e === null) throw new Error('ours open: first read missed')
        h = null
        if (!(await waitClosed(ours.dbPath))) reused = true
      }
      return sum
    },
    baseline: openAndRead(base.dbPath, keys, 'lean'),
    copy: openAndRead(copy.dbPath, keys, 'schema copy'),
  })
  // If a store could not be collected between opens, a later open reused its connection.
  m.connectionReused = reused
  out.rows.push(timeRow('open', `open GeneMemoryAccess + first read (${fmtN(n)} entries)`, m, 2))
  out.details.open = m
}

/**
 * How the per-call cost of read hit, update and prefix query grows with the agent's size. All
 * sizes are built first; then each operation is measured size by size, in ascending and then
 * descending order (half of the rounds each), so that a drift of the machine's speed during
 * the run does not pass for growth. Sizes are not mixed within a round: reading a large agent
 * between the batches of a small one makes the small one's calls slower (caches of the process
 * and of the machine), which would measure the mix, not the size.
 */
async function growthSection(cfg, tmp, out) {
  const g = cfg.growth
  const stores = []
  for (const n of g.sizes) {
    progress(`growth: building ${fmtN(n)} entries`)
    stores.push({ n, ...build(path.join(tmp, `growth-${n}`), 'bench-growth', n) })
  }
  const half = Math.ceil(g.rounds / 2)
  const bySize = async (makeCase) => {
    const parts = stores.map(() => [])
    const order = [...stores.keys(), ...[...stores.keys()].reverse()]
    for (const i of order) {
      const [m] = await interleave({ rounds: half, warmup: 1, cases: [makeCase(stores[i])] })
      parts[i].push(m)
    }
    return parts.map(merge)
  }
  progress('growth: readMemory hit')
  // Each operation as a case of `interleave`: ours, then the same call on each hand-rolled store.
  const sides = (items, oursCall, handCall, what) => ({ ours, base, copy }) => ({
    ours: async (r) => batch(items(r), (x) => oursCall(ours, x), `ours ${what}`),
    baseline: async (r) => batch(items(r), (x) => handCall(base, x), `lean ${what}`),
    copy: async (r) => batch(items(r), (x) => handCall(copy, x), `schema copy ${what}`),
  })
  progress('growth: readMemory hit')
  const readHit = await bySize((st) =>
    sides((r) => picks(6000 + r, g.batch.hit, st.n).map(R.KEYS.group), (o, k) => o.mem.readMemory(k) !== null, (h, k) => h.read(k) !== undefined, 'growth read')(st),
  )
  progress('growth: writeMemory update')
  const update = await bySize((st) =>
    sides(
      (r) => picks(7000 + r, g.batch.update, st.n).map(R.KEYS.group),
      (o, k) => o.mem.writeMemory(k, VALUE, CATEGORY) !== null,
      (h, k) => (h.write(k, VALUE, CATEGORY, true), true),
      'growth update',
    )(st),
  )
  progress('growth: queryMemory prefix')
  const query = await bySize((st) => {
    const expected = Math.min(100, st.n, R.GROUP)
    return sides(
      (r) => picks(8000 + r, g.batch.query, R.groupCount(st.n)).map(R.groupPrefix),
      (o, p) => o.mem.queryMemory({ keyPrefix: p, limit: 100 }).length === expected,
      (h, p) => h.query(p, 100).length === expected,
      'growth query',
    )(st)
  })
  for (const st of stores) {
    st.base.close()
    st.copy.close()
    st.ours.mem = null
  }
  out.growth = stores.map((st, i) => ({ entries: st.n, readHit: pick(readHit[i]), update: pick(update[i]), query: pick(query[i]) }))
  out.details.growth = { sizes: g.sizes, readHit, update, query }
  const last = stores.length - 1
  const span = `${fmtN(g.sizes[0])} → ${fmtN(g.sizes[last])} entries`
  for (const [id, m, name] of [
    ['growth-read-hit', readHit, 'readMemory hit'],
    ['growth-update', update, 'writeMemory update'],
    ['growth-query', query, 'queryMemory prefix'],
  ]) {
    const gr = growth(m[0], m[last])
    out.rows.push({
      id,
      label: `per-call growth ${span}: ${name}`,
      kind: 'growth',
      ours: gr.ours,
      baseline: gr.baseline,
      copy: gr.copy,
      ratio: gr.ours,
      otherClock: { clock: m[0].alt.clock, ratio: growth(m[0].alt, m[last].alt).ours },
      limit: 2,
      target: '≤ 2×',
      verdict: verdict(gr.ours, 2),
    })
  }
}

const pick = (m) => ({ oursUs: m.oursUs, baselineUs: m.baselineUs, ratio: m.ratio, copyUs: m.copyUs, copyRatio: m.copyRatio })

/** Builds an agent for the sections that write from child processes, and closes it here. */
async function buildForChildren(dir, agentId, n) {
  const { ours, base, copy } = build(dir, agentId, n)
  base.close()
  copy.close()
  ours.mem = null
  await waitClosed(ours.dbPath)
  const args = (side) => ({
    side,
    root: ours.root,
    agentId,
    dir: side === 'lean' ? base.dir : copy.dir,
    quota: ours.quota,
    templates: { [CATEGORY]: R.encodeRow(ours.template(CATEGORY)) },
    entries: n,
  })
  return { ours, args }
}

const WRITER = path.join(__dirname, 'writer-child.js')
const MARK = '/rotifer-bench-mark'

/** Whether `strace` runs here (it is optional: without it the system-call row is left out). */
function haveStrace() {
  const p = spawnSync('strace', ['-qq', '-o', '/dev/null', 'true'], { encoding: 'utf8' })
  return p.status === 0
}

/** The system calls of every thread between the two marks of writer-child.js, by name. */
function countSyscalls(traceFile) {
  const lines = fs.readFileSync(traceFile, 'utf8').split('\n')
  const b = lines.findIndex((l) => l.includes(`${MARK}/begin`))
  const e = lines.findIndex((l) => l.includes(`${MARK}/end`))
  if (b < 0 || e < b) throw new Error(`no marks in the strace output ${traceFile}`)
  const byName = {}
  let total = 0
  for (const l of lines.slice(b + 1, e)) {
    // A call interrupted by another thread's shows twice: "<unfinished ...>", then "resumed>".
    if (l.includes(' resumed>')) continue
    const m = /^\d+\s+([a-z0-9_]+)\(/.exec(l)
    if (!m) continue
    byName[m[1]] = (byName[m[1]] ?? 0) + 1
    total++
  }
  return { total, byName }
}

/** WAL bytes and system calls per 100-byte update, each store in a process of its own. */
async function walSection(cfg, tmp, out) {
  const n = cfg.entries
  const w = cfg.wal
  const strace = haveStrace()
  progress(`wal: WAL bytes${strace ? ' and system calls' : ''} per update (${fmtN(n)} entries)`)
  const { args } = await buildForChildren(path.join(tmp, 'wal'), 'bench-wal', n)
  const res = {}
  for (const side of ['ours', 'lean', 'copy']) {
    const json = JSON.stringify({ ...args(side), mode: 'updates', walCount: w.walCount, count: w.count, seed: 9000 })
    const trace = path.join(tmp, `strace-${side}.txt`)
    const p = strace
      ? spawnSync('strace', ['-f', '-qq', '-o', trace, process.execPath, WRITER, json], { encoding: 'utf8' })
      : spawnSync(process.execPath, [WRITER, json], { encoding: 'utf8' })
    if (p.status !== 0) throw new Error(`writer child (${side}, updates) failed: ${p.stderr}`)
    res[side] = JSON.parse(p.stdout)
    if (strace) {
      const c = countSyscalls(trace)
      res[side].syscalls = { perUpdate: c.total / w.count, byName: Object.fromEntries(Object.entries(c.byName).map(([k, v]) => [k, v / w.count])) }
    }
  }
  out.details.wal = { strace, ...w, stores: res }
  out.rows.push({
    id: 'wal-bytes',
    label: 'WAL written per writeMemory update (100 bytes)',
    kind: 'bytes',
    ours: res.ours.walBytes,
    baseline: res.lean.walBytes,
    copy: res.copy.walBytes,
    ratio: res.ours.walBytes / res.lean.walBytes,
    copyRatio: res.ours.walBytes / res.copy.walBytes,
    otherClock: null,
    limit: null,
    target: 'none',
    verdict: 'info',
  })
  if (strace) {
    out.rows.push({
      id: 'syscalls',
      label: 'system calls per writeMemory update (strace -f)',
      kind: 'count',
      ours: res.ours.syscalls.perUpdate,
      baseline: res.lean.syscalls.perUpdate,
      copy: res.copy.syscalls.perUpdate,
      ratio: res.ours.syscalls.perUpdate / res.lean.syscalls.perUpdate,
      copyRatio: res.ours.syscalls.perUpdate / res.copy.syscalls.perUpdate,
      otherClock: null,
      limit: null,
      target: 'none',
      verdict: 'info',
    })
  }
}

/** Starts `count` writer processes, lets them go together, answers their writes per second. */
async function runWriters(args, count, writes, seed) {
  const kids = []
  for (let i = 0; i < count; i++) {
    const json = JSON.stringify({ ...args, mode: 'writers', count: writes, seed: seed + i })
    const child = spawn(process.execPath, [WRITER, json], { stdio: ['pipe', 'pipe', 'pipe'] })
    const k = { child, stdout: '', stderr: '' }
    k.ready = new Promise((resolve) => {
      child.stdout.on('data', (d) => {
        k.stdout += d
        if (k.stdout.includes('ready\n')) resolve()
      })
    })
    child.stderr.on('data', (d) => (k.stderr += d))
    k.done = new Promise((resolve) => child.on('close', (code) => resolve(code)))
    kids.push(k)
  }
  const failed = (k) => new Error(`writer child (${args.side}) failed: ${k.stderr}`)
  const results = []
  try {
    await Promise.all(kids.map((k) => Promise.race([k.ready, k.done.then(() => Promise.reject(failed(k)))])))
    for (const k of kids) k.child.stdin.end('go\n')
    for (const k of kids) {
      if ((await k.done) !== 0) throw failed(k)
      results.push(JSON.parse(k.stdout.slice(k.stdout.indexOf('ready\n') + 6)))
    }
  } catch (e) {
    // The others would wait for "go" forever and keep this process alive.
    for (const k of kids) if (k.child.exitCode === null) k.child.kill()
    throw e
  }
  const start = Math.min(...results.map((r) => r.start))
  const end = Math.max(...results.map((r) => r.end))
  const total = results.reduce((a, r) => a + r.writes, 0)
  return (total * 1000) / (end - start)
}

/** N processes (N = 1, 2, 4) updating entries of one agent at the same time: writes per second. */
async function concurrencySection(cfg, tmp, out) {
  const c = cfg.concurrency
  progress(`concurrency: ${c.writers.join(', ')} processes writing one agent (${fmtN(cfg.entries)} entries)`)
  const { args } = await buildForChildren(path.join(tmp, 'concurrency'), 'bench-concurrency', cfg.entries)
  out.concurrency = []
  for (const w of c.writers) {
    const rates = { ours: [], baseline: [] }
    for (let r = -c.warmup; r < c.rounds; r++) {
      const o = await runWriters(args('ours'), w, c.writes, 100 * r)
      const b = await runWriters(args('lean'), w, c.writes, 100 * r)
      if (r < 0) continue
      rates.ours.push(o)
      rates.baseline.push(b)
    }
    // Cost per write, ours ÷ baseline: the baseline's rate ÷ ours, paired by round.
    const ratio = median(rates.ours.map((o, i) => rates.baseline[i] / o))
    const ours = median(rates.ours)
    const baseline = median(rates.baseline)
    out.concurrency.push({ writers: w, ours, baseline, ratio, rates })
    out.rows.push({
      id: `concurrency-${w}`,
      label: `${w} process${w > 1 ? 'es' : ''} updating one agent: writes/s (ratio: time per write)`,
      kind: 'rate',
      ours,
      baseline,
      ratio,
      otherClock: null,
      limit: null,
      target: 'none',
      verdict: 'info',
    })
  }
}

/** Peak RSS rise of one query that returns about 4 MiB, each in a fresh child process. */
async function memorySection(cfg, tmp, out) {
  const mc = cfg.memory
  progress(`memory: a query returning ${mc.entries} entries of ${fmtN(mc.valueBytes)} bytes, in child processes`)
  const key = R.KEYS.big
  const value = R.values({ bytes: mc.valueBytes, byIndex: true })
  const ours = new S.Ours(path.join(tmp, 'memory', 'ours'), 'bench-memory', 64 * MiB)
  for (let i = 0; i < mc.entries; i++) ours.mem.writeMemory(key(i), value(i), 'CACHE')
  const base = new S.Lean(path.join(tmp, 'memory', 'lean'), ours)
  base.fill('CACHE', mc.entries, 'big', { bytes: mc.valueBytes, byIndex: true })
  base.close()
  ours.mem = null
  await waitClosed(ours.dbPath)
  const child = path.join(__dirname, 'memory-child.js')
  const runs = { ours: [], baseline: [] }
  for (let r = 0; r < mc.runs; r++) {
    for (const side of ['ours', 'baseline']) {
      const args = {
        side,
        root: ours.root,
        agentId: ours.agentId,
        geneId: S.GENE_ID,
        domain: S.DOMAIN,
        dbPath: base.dbPath,
        prefix: 'big/',
        limit: 100,
      }
      const p = spawnSync(process.execPath, ['--expose-gc', child, JSON.stringify(args)], { encoding: 'utf8' })
      if (p.status !== 0) throw new Error(`memory child (${side}) failed: ${p.stderr}`)
      const res = JSON.parse(p.stdout)
      if (res.entries !== mc.entries) throw new Error(`memory child (${side}) returned ${res.entries} entries`)
      runs[side].push(res)
    }
  }
  const resultBytes = runs.ours[0].resultBytes
  const o = median(runs.ours.map((x) => x.peakRise))
  const b = median(runs.baseline.map((x) => x.peakRise))
  out.rows.push({
    id: 'memory-query',
    label: `queryMemory returning ${(resultBytes / MiB).toFixed(2)} MiB: peak RSS rise`,
    kind: 'memory',
    ours: o,
    baseline: b,
    ratio: o / resultBytes,
    otherClock: null,
    limit: 3,
    target: '≤ 3 × result',
    verdict: verdict(o / resultBytes, 3),
  })
  out.details.memory = { resultBytes, runs }
}

function timeRow(id, label, m, limit) {
  return {
    id,
    label,
    kind: 'time',
    ours: m.oursUs,
    baseline: m.baselineUs,
    ratio: m.ratio,
    otherClock: { clock: m.alt.clock, ratio: m.alt.ratio },
    copy: m.copyUs,
    copyRatio: m.copyRatio,
    limit,
    target: limit == null ? 'none' : `≤ ${limit}`,
    verdict: verdict(m.ratio, limit),
  }
}

// ---------------------------------------------------------------------------------------------
// Output

function fmtUs(us) {
  if (us >= 1000) return `${(us / 1000).toFixed(2)} ms`
  return `${us.toFixed(us < 10 ? 2 : 1)} µs`
}

function fmtCell(row, v) {
  if (v == null) return '—'
  if (row.kind === 'time') return fmtUs(v)
  if (row.kind === 'growth') return `×${v.toFixed(2)}`
  if (row.kind === 'bytes') return `${fmtN(Math.round(v))} B`
  if (row.kind === 'count') return v.toFixed(1)
  if (row.kind === 'rate') return `${fmtN(Math.round(v))}/s`
  return `+${(v / MiB).toFixed(1)} MiB`
}

function table(headers, lines) {
  const widths = headers.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)))
  const row = (cells) => '| ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ') + ' |'
  const rule = '|' + widths.map((w, i) => (i === 0 ? ':' + '-'.repeat(w + 1) : '-'.repeat(w + 1) + ':')).join('|') + '|'
  return [row(headers), rule, ...lines.map(row)].join('\n')
}

function report(out) {
  const other = out.clock === 'cpu' ? 'wall' : 'cpu'
  const lines = out.rows.map((r) => [
    r.label,
    fmtCell(r, r.ours),
    fmtCell(r, r.baseline),
    r.ratio.toFixed(2),
    r.otherClock ? r.otherClock.ratio.toFixed(2) : '—',
    fmtCell(r, r.copy),
    r.copyRatio != null ? r.copyRatio.toFixed(2) : '—',
    r.target,
    r.verdict,
  ])
  let text =
    `Ratios are ours ÷ the lean hand-rolled store ("lean"); "ratio vs copy": ours ÷ the store that copies our schema.\n` +
    `Times and ratios on ${out.clock === 'cpu' ? 'CPU' : 'wall'} time; "ratio (${other})": the same ratio on ${other === 'cpu' ? 'CPU' : 'wall'} time.\n\n`
  text += table(['operation', 'ours', 'lean', 'ratio', `ratio (${other})`, 'schema copy', 'ratio vs copy', 'target', 'verdict'], lines) + '\n'
  // One note per row, or per group of rows that share one (`noteGroup`).
  const noted = new Set()
  for (const r of out.rows.filter((x) => x.baselineIs || x.copyIs)) {
    const name = r.noteGroup || r.label
    if (noted.has(name)) continue
    noted.add(name)
    const parts = [r.baselineIs && `the "lean" column holds ${r.baselineIs}`, r.copyIs && `the "schema copy" column holds ${r.copyIs}`].filter(Boolean)
    text += `\n${name}: ${parts.join('; ')}.\n`
  }
  if (out.growth) {
    const g = []
    for (const p of out.growth) {
      for (const [op, name] of [['readHit', 'readMemory hit'], ['update', 'writeMemory update'], ['query', 'queryMemory prefix']]) {
        const x = p[op]
        g.push([`${fmtN(p.entries)} entries: ${name}`, fmtUs(x.oursUs), fmtUs(x.baselineUs), x.ratio.toFixed(2), fmtUs(x.copyUs), x.copyRatio.toFixed(2)])
      }
    }
    text += '\nPer-call cost by agent size:\n\n' + table(['size and operation', 'ours', 'lean', 'ratio', 'schema copy', 'ratio vs copy'], g) + '\n'
  }
  const wal = out.details.wal
  if (wal?.strace) {
    const st = wal.stores
    const names = new Set()
    for (const side of ['ours', 'lean', 'copy']) for (const [k, v] of Object.entries(st[side].syscalls.byName)) if (v >= 0.5) names.add(k)
    const per = (side, k) => (st[side].syscalls.byName[k] ?? 0).toFixed(1)
    const rows = [...names]
      .sort((a, b) => (st.ours.syscalls.byName[b] ?? 0) - (st.ours.syscalls.byName[a] ?? 0))
      .map((k) => [k, per('ours', k), per('lean', k), per('copy', k)])
    text += `\nSystem calls per update, by name (at least 0.5 per update on one side; ${fmtN(wal.count)} updates, checkpoints included):\n\n`
    text += table(['system call', 'ours', 'lean', 'schema copy'], rows) + '\n'
  }
  if (out.pg?.skipped) text += `\nPostgreSQL rows skipped: ${out.pg.skipped}.\n`
  if (out.pg?.perCall) {
    const rows = out.pg.perCall.map((p) => [p.op, fmtUs(p.sqliteUs), fmtUs(p.pgUs), fmtUs(p.plainUs)])
    text += `\nWhat a call costs on each binding (wall time per call; ${out.pg.server}, loopback TCP):\n\n`
    text += table(['call', 'SQLite binding', 'PostgreSQL binding', 'hand-written PostgreSQL'], rows) + '\n'
  }
  const met = out.rows.filter((r) => r.verdict === 'met').length
  const missed = out.rows.filter((r) => r.verdict === 'MISSED').map((r) => r.id)
  text += `\n${met} of ${out.rows.filter((r) => r.verdict !== 'info').length} targets met` + (missed.length ? `; missed: ${missed.join(', ')}` : '') + '\n'
  if (out.mode === 'quick') text += 'Quick mode: small sizes and few rounds; the numbers prove that the benchmark runs, not how fast.\n'
  return text
}

// ---------------------------------------------------------------------------------------------

/** The commit the benchmark ran on, and whether the working tree had changes. */
function sourceState() {
  const git = (...args) => spawnSync('git', args, { cwd: path.join(__dirname, '..'), encoding: 'utf8' })
  const head = git('rev-parse', '--short', 'HEAD')
  if (head.status !== 0) return null
  const dirty = git('status', '--porcelain', '--untracked-files=no')
  return { commit: head.stdout.trim(), modified: dirty.status === 0 && dirty.stdout.trim() !== '' }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  if (!memory.nativeBindingLoaded) {
    process.stderr.write('The native binding is not built: run `npm run build` first (or `npm run bench`, which builds it).\n')
    process.exit(2)
  }
  const cfg = opts.quick ? QUICK : FULL
  useClock(opts.clock)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-bench-'))
  const cleanup = () => fs.rmSync(tmp, { recursive: true, force: true })
  process.once('SIGINT', () => {
    cleanup()
    process.exit(130)
  })
  const Database = require('better-sqlite3')
  const probe = new Database(':memory:')
  const out = {
    mode: cfg.mode,
    startedAt: new Date(started).toISOString(),
    machine: {
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cpus: os.cpus().length,
      memoryGiB: +(os.totalmem() / 1024 ** 3).toFixed(1),
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      node: process.version,
      betterSqlite3: require('better-sqlite3/package.json').version,
      baselineSqlite: probe.prepare('SELECT sqlite_version() AS v').get().v,
      baselineCacheSize: probe.pragma('cache_size', { simple: true }),
    },
    source: sourceState(),
    charts: [],
    clock: opts.clock,
    config: cfg,
    sections: opts.only,
    rows: [],
    details: {},
  }
  probe.close()
  try {
    // The SQLite our store is built with, from the header of a database it created.
    const probeOurs = new S.Ours(path.join(tmp, 'probe'), 'bench-probe', MiB)
    out.machine.oursSqlite = probeOurs.sqliteVersion
    probeOurs.mem = null
    if (opts.only.includes('main')) await mainSection(cfg, tmp, out)
    if (opts.only.includes('evict')) await evictSection(cfg, tmp, out)
    if (opts.only.includes('open')) await openSection(cfg, tmp, out)
    if (opts.only.includes('growth')) await growthSection(cfg, tmp, out)
    if (opts.only.includes('wal')) await walSection(cfg, tmp, out)
    if (opts.only.includes('concurrency')) await concurrencySection(cfg, tmp, out)
    if (opts.only.includes('memory')) await memorySection(cfg, tmp, out)
    if (opts.only.includes('gene')) geneSection(cfg, tmp, out, progress)
    if (opts.only.includes('startup')) await startupSection(cfg, tmp, out, progress)
    if (opts.only.includes('sandbox')) await sandboxSection(cfg, tmp, out, progress)
    if (opts.only.includes('testmem')) await testMemorySection(cfg, tmp, out, { progress, timeRow })
    if (opts.only.includes('cli')) await cliSection(cfg, tmp, out, progress)
    if (opts.only.includes('pg')) await pgSection(cfg, tmp, out, { progress, timeRow })
    if (opts.only.includes('before') && opts.before) await beforeSection(cfg, tmp, out, opts.before, progress, timeRow)
  } finally {
    cleanup()
  }
  out.durationS = +((Date.now() - started) / 1000).toFixed(1)
  if (opts.charts) out.charts = charts.write(out, opts.charts)
  fs.writeFileSync(opts.out, JSON.stringify(out, null, 2) + '\n')
  process.stdout.write('\n' + report(out))
  const shown = path.relative(process.cwd(), opts.out)
  process.stdout.write(`\nResults written to ${shown.startsWith('..') ? opts.out : shown} (${out.durationS} s).\n`)
  for (const c of out.charts) process.stdout.write(`Chart: ${c}\n`)
}

main().catch((e) => {
  process.stderr.write(`benchmark failed: ${e.stack || e}\n`)
  process.exitCode = 1
})
