'use strict'
// The benchmark runs (quick mode) and reports every target with a ratio and a verdict.
// Nothing here looks at a time: CI only proves that the benchmark works.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const RUN = path.join(__dirname, '..', 'bench', 'run.js')

const EXPECTED_ROWS = [
  'read-hit',
  'read-miss',
  'query-prefix',
  'write-update',
  'write-create',
  'evict',
  'open',
  'growth-read-hit',
  'growth-update',
  'growth-query',
  'memory-query',
  'gene-start',
]

test('bench/run.js --quick prints every row with a ratio and a verdict and writes valid JSON', { timeout: 180_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-bench-test-'))
  try {
    const out = path.join(dir, 'results.json')
    const p = spawnSync(process.execPath, [RUN, '--quick', '--out', out], { encoding: 'utf8', timeout: 170_000 })
    assert.equal(p.status, 0, `bench exited with ${p.status}:\n${p.stderr}`)

    const results = JSON.parse(fs.readFileSync(out, 'utf8'))
    assert.equal(results.mode, 'quick')
    assert.deepEqual(results.rows.map((r) => r.id), EXPECTED_ROWS)

    const lines = p.stdout.split('\n')
    const cellsOf = (line) => line.split('|').slice(1, -1).map((c) => c.trim())
    const header = cellsOf(lines.find((l) => l.startsWith('| operation ')) ?? '')
    const col = (name) => header.indexOf(name)
    assert.ok(col('ratio') > 0 && col('verdict') > 0, `no table header:\n${p.stdout}`)
    for (const row of results.rows) {
      assert.ok(Number.isFinite(row.ratio) && row.ratio > 0, `${row.id}: ratio ${row.ratio}`)
      assert.ok(['met', 'MISSED', 'info'].includes(row.verdict), `${row.id}: verdict ${row.verdict}`)
      assert.equal(row.verdict === 'info', row.limit == null, `${row.id}: only a row without a target is info`)
      if (row.limit != null) assert.equal(row.verdict, row.ratio <= row.limit ? 'met' : 'MISSED', `${row.id}: verdict follows the ratio`)
      const line = lines.find((l) => l.startsWith(`| ${row.label} `))
      assert.ok(line, `no table line for ${row.label}:\n${p.stdout}`)
      const cells = cellsOf(line)
      assert.equal(cells[col('ratio')], row.ratio.toFixed(2), `${row.id}: printed ratio`)
      assert.equal(cells[col('verdict')], row.verdict, `${row.id}: printed verdict`)
    }
    assert.match(p.stdout, /targets met/)
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
