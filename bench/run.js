#!/usr/bin/env node
'use strict'
// Benchmark of the Agent Memory API against the store a user would hand-roll with
// better-sqlite3 (see bench/stores.js and docs/benchmarks.md).
//
//   node bench/run.js [--quick] [--out FILE] [--only SECTION,…] [--clock wall|cpu]
//
// One process runs ours and the baseline in alternating rounds after a warm-up, prints a table
// with every target, its ratio and whether it is met, and writes the results as JSON
// (bench/results.json; bench/results-quick.json with --quick). Sections: main, evict, open,
// growth, memory, gene (bench/gene-start.js). Exits 0 whether targets are met or not; non-zero only if the benchmark itself
// failed.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const memory = require('../index.js')
const { settle, startTimer, useClock, median, interleave, alternate, merge, growth, picks } = require('./measure')
const S = require('./stores')
const R = require('./rows')
const { geneSection } = require('./gene-start')

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
  memory: { runs: 1, entries: 64, valueBytes: 65_000 },
}

const SECTIONS = ['main', 'evict', 'open', 'growth', 'memory', 'gene']

function parseArgs(argv) {
  const o = { quick: false, out: null, only: SECTIONS, clock: 'wall' }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--quick') o.quick = true
    else if (a === '--out') o.out = argv[++i]
    else if (a === '--only') o.only = argv[++i].split(',')
    else if (a === '--clock') o.clock = argv[++i]
    else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: node bench/run.js [--quick] [--out FILE] [--only main,evict,open,growth,memory,gene] [--clock wall|cpu]\n')
      process.exit(0)
    } else {
      throw new Error(`unknown argument ${a}; see --help`)
    }
  }
  for (const s of o.only) if (!SECTIONS.includes(s)) throw new Error(`unknown section ${s}; sections: ${SECTIONS.join(', ')}`)
  o.out ??= path.join(__dirname, o.quick ? 'results-quick.json' : 'results.json')
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

/** Builds an agent of `n` entries in both stores under `dir`. */
function build(dir, agentId, n, quota = BIG_QUOTA) {
  const ours = new S.Ours(path.join(dir, 'ours'), agentId, quota)
  ours.template(CATEGORY)
  const base = new S.Baseline(path.join(dir, 'baseline'), ours)
  if (n > 0) {
    const t = Date.now()
    ours.fill(CATEGORY, n, 'group', VALUE_SPEC)
    base.fill(CATEGORY, n, 'group', VALUE_SPEC)
    if (n >= 100_000) progress(`  built ${fmtN(n)} entries in both stores in ${((Date.now() - t) / 1000).toFixed(1)} s`)
  }
  return { ours, base }
}

/** readMemory hit/miss, writeMemory update/create, queryMemory prefix. */
async function mainSection(cfg, tmp, out) {
  const n = cfg.entries
  progress(`main: ${fmtN(n)} entries`)
  const { ours, base } = build(path.join(tmp, 'main'), 'bench-main', n)
  const mem = ours.mem
  const groups = R.groupCount(n)
  const expected = Math.min(100, n, R.GROUP)
  const common = { rounds: cfg.rounds, warmup: cfg.warmup }
  const hitKeys = (r) => picks(1000 + r, cfg.batch.hit, n).map(R.KEYS.group)
  const missKeys = (r) => picks(2000 + r, cfg.batch.miss, n).map(R.KEYS.missing)
  const updKeys = (r) => picks(3000 + r, cfg.batch.update, n).map(R.KEYS.group)
  const newKeys = (r) => Array.from({ length: cfg.batch.create }, (_, i) => `n/${r}/${R.pad(i, 6)}`)
  const prefixes = (r) => picks(4000 + r, cfg.batch.query, groups).map(R.groupPrefix)

  const ops = [
    ['read-hit', `readMemory hit (100-byte value, ${fmtN(n)} entries)`, 1.2, hitKeys, (k) => mem.readMemory(k) !== null, (k) => base.read(k) !== undefined],
    ['read-miss', `readMemory miss (${fmtN(n)} entries)`, 1.2, missKeys, (k) => mem.readMemory(k) === null, (k) => base.read(k) === undefined],
    ['query-prefix', 'queryMemory keyPrefix, limit 100 (100 of 200 matching)', 1.5, prefixes,
      (p) => mem.queryMemory({ keyPrefix: p, limit: 100 }).length === expected, (p) => base.query(p, 100).length === expected],
    ['write-update', 'writeMemory update (100 bytes)', 1.3, updKeys,
      (k) => mem.writeMemory(k, VALUE, CATEGORY) !== null, (k) => (base.write(k, VALUE, CATEGORY, true), true)],
    ['write-create', 'writeMemory create (100 bytes)', null, newKeys,
      (k) => mem.writeMemory(k, VALUE, CATEGORY) !== null, (k) => (base.write(k, VALUE, CATEGORY, false), true)],
  ]
  for (const [id, label, limit, items, oursCall, baseCall] of ops) {
    progress(`  ${label}`)
    const m = await alternate({
      ...common,
      ours: async (r) => batch(items(r), oursCall, `ours ${id}`),
      baseline: async (r) => batch(items(r), baseCall, `baseline ${id}`),
    })
    out.rows.push(timeRow(id, label, m, limit))
    out.details[id] = m
  }
  base.close()
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
  const base = new S.Baseline(path.join(tmp, 'evict', 'baseline'), ours)
  let oursBlob = false
  let baseBlob = false
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
    baseline: async () => {
      if (baseBlob) base.remove('blob')
      base.fill('CACHE', n, 'evict', value)
      await settle()
      const stop = startTimer()
      const evicted = base.evictAndWrite('blob', blob, CATEGORY, 'CACHE', n)
      const t = stop()
      baseBlob = true
      if (evicted !== n || base.count('CACHE') !== 0) throw new Error(`baseline evict: evicted ${evicted} of ${n}`)
      return { ...t, calls: 1 }
    },
  })
  const label = `write that evicts ${fmtN(n)} CACHE entries`
  out.rows.push(timeRow('evict', label, m, 2))
  out.details.evict = m
  base.close()
}

/** Opening a GeneMemoryAccess on an existing agent plus its first read. */
async function openSection(cfg, tmp, out) {
  const n = cfg.entries
  progress(`open: GeneMemoryAccess on an agent of ${fmtN(n)} entries + first read`)
  const { ours, base } = build(path.join(tmp, 'open'), 'bench-open', n)
  base.close()
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
    baseline: async (r) => {
      const sum = { wall: 0, cpu: 0, calls: cfg.open.perRound }
      for (const k of keys(r)) {
        const stop = startTimer()
        const { db, row } = S.Baseline.openAndRead(base.dbPath, k)
        const t = stop()
        sum.wall += t.wall
        sum.cpu += t.cpu
        db.close()
        if (row === undefined) throw new Error('baseline open: first read missed')
        await settle()
      }
      return sum
    },
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
  const readHit = await bySize(({ n, ours, base }) => ({
    ours: async (r) => batch(picks(6000 + r, g.batch.hit, n).map(R.KEYS.group), (k) => ours.mem.readMemory(k) !== null, 'ours growth read'),
    baseline: async (r) => batch(picks(6000 + r, g.batch.hit, n).map(R.KEYS.group), (k) => base.read(k) !== undefined, 'baseline growth read'),
  }))
  progress('growth: writeMemory update')
  const update = await bySize(({ n, ours, base }) => ({
    ours: async (r) => batch(picks(7000 + r, g.batch.update, n).map(R.KEYS.group), (k) => ours.mem.writeMemory(k, VALUE, CATEGORY) !== null, 'ours growth update'),
    baseline: async (r) => batch(picks(7000 + r, g.batch.update, n).map(R.KEYS.group), (k) => (base.write(k, VALUE, CATEGORY, true), true), 'baseline growth update'),
  }))
  progress('growth: queryMemory prefix')
  const query = await bySize(({ n, ours, base }) => {
    const groups = R.groupCount(n)
    const expected = Math.min(100, n, R.GROUP)
    return {
      ours: async (r) => batch(picks(8000 + r, g.batch.query, groups).map(R.groupPrefix), (p) => ours.mem.queryMemory({ keyPrefix: p, limit: 100 }).length === expected, 'ours growth query'),
      baseline: async (r) => batch(picks(8000 + r, g.batch.query, groups).map(R.groupPrefix), (p) => base.query(p, 100).length === expected, 'baseline growth query'),
    }
  })
  for (const st of stores) {
    st.base.close()
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
      ratio: gr.ours,
      otherClock: { clock: m[0].alt.clock, ratio: growth(m[0].alt, m[last].alt).ours },
      limit: 2,
      target: '≤ 2×',
      verdict: verdict(gr.ours, 2),
    })
  }
}

const pick = (m) => ({ oursUs: m.oursUs, baselineUs: m.baselineUs, ratio: m.ratio })

/** Peak RSS rise of one query that returns about 4 MiB, each in a fresh child process. */
async function memorySection(cfg, tmp, out) {
  const mc = cfg.memory
  progress(`memory: a query returning ${mc.entries} entries of ${fmtN(mc.valueBytes)} bytes, in child processes`)
  const key = R.KEYS.big
  const value = R.values({ bytes: mc.valueBytes, byIndex: true })
  const ours = new S.Ours(path.join(tmp, 'memory', 'ours'), 'bench-memory', 64 * MiB)
  for (let i = 0; i < mc.entries; i++) ours.mem.writeMemory(key(i), value(i), 'CACHE')
  const base = new S.Baseline(path.join(tmp, 'memory', 'baseline'), ours)
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
  if (row.kind === 'time') return fmtUs(v)
  if (row.kind === 'growth') return `×${v.toFixed(2)}`
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
    r.target,
    r.verdict,
  ])
  let text = `Times and ratios on ${out.clock === 'cpu' ? 'CPU' : 'wall'} time; "ratio (${other})": the same ratio on ${other === 'cpu' ? 'CPU' : 'wall'} time.\n\n`
  text += table(['operation', 'ours', 'better-sqlite3', 'ratio', `ratio (${other})`, 'target', 'verdict'], lines) + '\n'
  if (out.growth) {
    const g = []
    for (const p of out.growth) {
      for (const [op, name] of [['readHit', 'readMemory hit'], ['update', 'writeMemory update'], ['query', 'queryMemory prefix']]) {
        g.push([`${fmtN(p.entries)} entries: ${name}`, fmtUs(p[op].oursUs), fmtUs(p[op].baselineUs), p[op].ratio.toFixed(2)])
      }
    }
    text += '\nPer-call cost by agent size:\n\n' + table(['size and operation', 'ours', 'better-sqlite3', 'ratio'], g) + '\n'
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
    if (opts.only.includes('memory')) await memorySection(cfg, tmp, out)
    if (opts.only.includes('gene')) geneSection(cfg, tmp, out, progress)
  } finally {
    cleanup()
  }
  out.durationS = +((Date.now() - started) / 1000).toFixed(1)
  fs.writeFileSync(opts.out, JSON.stringify(out, null, 2) + '\n')
  process.stdout.write('\n' + report(out))
  const shown = path.relative(process.cwd(), opts.out)
  process.stdout.write(`\nResults written to ${shown.startsWith('..') ? opts.out : shown} (${out.durationS} s).\n`)
}

main().catch((e) => {
  process.stderr.write(`benchmark failed: ${e.stack || e}\n`)
  process.exitCode = 1
})
