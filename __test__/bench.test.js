'use strict'
// The benchmark runs (quick mode) and reports every target with a ratio and a verdict, against
// the lean hand-rolled store and the schema copy, and draws its charts from its results.
// Nothing here looks at a time: CI only proves that the benchmark works.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const RUN = path.join(__dirname, '..', 'bench', 'run.js')

/** Whether strace runs here: the system-call row is only there when it does. */
const STRACE = spawnSync('strace', ['-qq', '-o', '/dev/null', 'true']).status === 0

/** Whether PostgreSQL's binaries are here: the bench then measures the PostgreSQL binding too. */
const PG = Boolean(require('../scripts/pg-cluster.js').findBinary('initdb') && require('../scripts/pg-cluster.js').findBinary('pg_ctl'))
const EXPECTED_ROWS = [
  'read-hit',
  'read-miss',
  'query-prefix',
  'query-newest',
  'write-update',
  'write-create',
  'evict',
  'open',
  'growth-read-hit',
  'growth-update',
  'growth-query',
  'wal-bytes',
  ...(STRACE ? ['syscalls'] : []),
  'concurrency-1',
  'concurrency-2',
  'concurrency-4',
  'memory-query',
  'gene-start',
  'startup-agent-run-ts',
  'startup-agent-run-wasm',
  'startup-help',
  'sandbox-run-cold',
  'sandbox-run-warm',
  'sandbox-reads',
  'sandbox-cpu',
  'sandbox-fuel-iovecs',
  'sandbox-fuel-queries',
  'test-memory',
  'cli-list-first',
  'cli-list-whole',
  'cli-log-first',
  'cli-log-whole',
  // The PostgreSQL rows, when this machine has a server to start (bench/pg.js, R-BIND-7).
  ...(PG ? ['pg-read-hit', 'pg-read-miss', 'pg-query-prefix', 'pg-write-update', 'pg-write-create', 'pg-concurrency-1', 'pg-concurrency-4', 'pg-concurrency-16'] : []),
]

/** Whether the sqlite3 command-line tool runs here: the cli rows compare with it only then. */
const SQLITE3 = spawnSync('sqlite3', ['-version']).status === 0
/** The cli rows: targets in seconds (first screen, whole output), not ratios. */
const SECONDS = { 'cli-list-first': 0.3, 'cli-list-whole': 1, 'cli-log-first': 0.3, 'cli-log-whole': 1 }

/** Rows measured on the schema copy too (a ratio against it, as well as against the lean store). */
const COPY_ROWS = ['read-hit', 'read-miss', 'query-prefix', 'query-newest', 'write-update', 'write-create', 'evict', 'open', 'wal-bytes', ...(STRACE ? ['syscalls'] : [])]

/** The targets against the lean store (ratios of ours ÷ lean). */
const LIMITS = { 'read-hit': 1, 'read-miss': 1.2, 'query-prefix': 1, 'write-update': 1.1, 'write-create': 1.1, evict: 1.5, open: 2, 'growth-read-hit': 2, 'growth-update': 2, 'growth-query': 2 }

test('bench/run.js --quick prints every row with a ratio and a verdict and writes valid JSON', { timeout: 360_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-bench-test-'))
  try {
    const out = path.join(dir, 'results.json')
    const chartDir = path.join(dir, 'charts')
    const p = spawnSync(process.execPath, [RUN, '--quick', '--out', out, '--charts', chartDir], { encoding: 'utf8', timeout: 350_000 })
    assert.equal(p.status, 0, `bench exited with ${p.status}:\n${p.stderr}`)

    const results = JSON.parse(fs.readFileSync(out, 'utf8'))
    assert.equal(results.mode, 'quick')
    assert.deepEqual(results.rows.map((r) => r.id), EXPECTED_ROWS)

    const lines = p.stdout.split('\n')
    const cellsOf = (line) => line.split('|').slice(1, -1).map((c) => c.trim())
    const header = cellsOf(lines.find((l) => l.startsWith('| operation ')) ?? '')
    const col = (name) => header.indexOf(name)
    assert.ok(col('ratio') > 0 && col('verdict') > 0, `no table header:\n${p.stdout}`)
    assert.ok(col('lean') > 0 && col('schema copy') > 0 && col('ratio vs copy') > 0, `both baselines in the header:\n${p.stdout}`)
    for (const [id, limit] of Object.entries(LIMITS)) assert.equal(results.rows.find((r) => r.id === id).limit, limit, `${id}: target`)
    for (const id of COPY_ROWS) {
      const row = results.rows.find((r) => r.id === id)
      assert.ok(Number.isFinite(row.copyRatio) && row.copyRatio > 0, `${id}: ratio against the schema copy ${row.copyRatio}`)
    }
    // The start-up rows: a whole rotifer process against node -e 0.
    for (const [id, limit] of Object.entries({ 'startup-agent-run-ts': 1.5, 'startup-agent-run-wasm': 1.5, 'startup-help': 1.2 })) {
      const row = results.rows.find((r) => r.id === id)
      assert.equal(row.limit, limit, `${id}: target`)
      assert.match(row.baselineIs, /^node -e 0/)
    }
    // The test memory's target is 1 ms, as a ratio to the fresh better-sqlite3 database's time.
    const tm = results.rows.find((r) => r.id === 'test-memory')
    assert.ok(Math.abs(tm.limit - 1000 / tm.baseline) < 0.001 + tm.limit * 0.001, `test-memory: limit ${tm.limit} for a baseline of ${tm.baseline} µs`)
    const wal = results.rows.find((r) => r.id === 'wal-bytes')
    // Every commit appends at least one page (4,096 bytes + a 24-byte frame header) to the WAL.
    for (const side of ['ours', 'baseline', 'copy']) assert.ok(wal[side] >= 4120, `WAL bytes per update (${side}): ${wal[side]}`)
    for (const n of [1, 2, 4]) {
      const c = results.concurrency.find((x) => x.writers === n)
      assert.ok(c && c.ours > 0 && c.baseline > 0, `writes per second with ${n} processes`)
    }
    for (const row of results.rows) {
      assert.ok(Number.isFinite(row.ratio) && row.ratio > 0, `${row.id}: ratio ${row.ratio}`)
      assert.ok(['met', 'MISSED', 'info'].includes(row.verdict), `${row.id}: verdict ${row.verdict}`)
      assert.equal(row.verdict === 'info', row.limit == null, `${row.id}: only a row without a target is info`)
      if (row.limit != null && row.limitIn === 'seconds') {
        assert.equal(row.verdict, row.ours / 1e6 <= row.limit ? 'met' : 'MISSED', `${row.id}: verdict follows the time`)
      } else if (row.limit != null) {
        assert.equal(row.verdict, row.ratio <= row.limit ? 'met' : 'MISSED', `${row.id}: verdict follows the ratio`)
      }
      const line = lines.find((l) => l.startsWith(`| ${row.label} `))
      assert.ok(line, `no table line for ${row.label}:\n${p.stdout}`)
      const cells = cellsOf(line)
      assert.equal(cells[col('ratio')], row.ratio.toFixed(2), `${row.id}: printed ratio`)
      assert.equal(cells[col('verdict')], row.verdict, `${row.id}: printed verdict`)
    }
    assert.match(p.stdout, /targets met/)
    // The cli rows: a time target each, the library call as baseline, sqlite3 when it is here.
    for (const [id, limit] of Object.entries(SECONDS)) {
      const row = results.rows.find((r) => r.id === id)
      assert.equal(row.limit, limit, `${id}: target`)
      assert.equal(row.target, `≤ ${limit} s`)
      assert.match(row.baselineIs, /^the library call (listAgentMemory|readAgentAuditLog) /)
      if (SQLITE3) {
        assert.ok(Number.isFinite(row.copyRatio) && row.copyRatio > 0, `${id}: ratio against sqlite3`)
        assert.match(row.copyIs, /sqlite3 command-line tool/)
      } else {
        assert.equal(row.copy, null)
        assert.match(row.copyIs, /sqlite3 command-line tool is not installed/)
      }
    }
    assert.match(p.stdout, /rotifer agent memory list rows: the "lean" column holds the library call listAgentMemory/)

    // Charts drawn from these results: the cost by size has a line per store and a point per size.
    assert.deepEqual(fs.readdirSync(chartDir).sort(), ['bench-concurrency.svg', 'bench-cost-by-size.svg', 'bench-ratios.svg'])
    assert.deepEqual(results.charts.map((c) => path.basename(c)).sort(), fs.readdirSync(chartDir).sort())
    const bySize = fs.readFileSync(path.join(chartDir, 'bench-cost-by-size.svg'), 'utf8')
    assert.match(bySize, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"[\s\S]*<\/svg>\n$/)
    assert.equal((bySize.match(/<polyline /g) ?? []).length, 3 * 3, 'three operations × three stores')
    assert.equal((bySize.match(/<circle /g) ?? []).length, 3 * 3 * results.growth.length)
    const conc = fs.readFileSync(path.join(chartDir, 'bench-concurrency.svg'), 'utf8')
    assert.equal((conc.match(/<rect x=/g) ?? []).length, 2 * 3, 'ours and the lean store for 1, 2 and 4 processes')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('bench/bundle.js prints export and import rows and writes valid JSON', { timeout: 120_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-bench-test-'))
  try {
    const out = path.join(dir, 'bundle.json')
    const script = path.join(__dirname, '..', 'bench', 'bundle.js')
    const p = spawnSync(process.execPath, [script, '--quick', '--entries', '200', '--out', out], { encoding: 'utf8', timeout: 110_000 })
    assert.equal(p.status, 0, `bench/bundle.js exited with ${p.status}:\n${p.stderr}`)
    assert.match(p.stdout, /^200 entries, 100-byte values, bundle [\d.]+ MiB, median of 3 rounds/)
    for (const row of ['exportAgentMemory to a Buffer', 'exportAgentMemory to a file', 'importAgentMemory into an empty agent']) {
      assert.match(p.stdout, new RegExp(`\\| ${row}.* \\| [\\d.]+ ms \\| [\\d.]+ µs \\|`), row)
    }
    const results = JSON.parse(fs.readFileSync(out, 'utf8'))
    assert.equal(results.entries, 200)
    assert.deepEqual(Object.keys(results.medianMs), ['export', 'exportFile', 'import'])
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
