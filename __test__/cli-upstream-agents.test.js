'use strict'
// The fixture project __test__/fixtures/upstream-agents/: agent records exactly as upstream's
// `rotifer agent create` writes them (no memory fields), one per composition type, each run
// twice through the real bin with memory (R-RUN-7, R-HOST-1's defaults). The compiled genes
// evaluate with upstream's algebra; the Par holding a source gene falls back to a sequence.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { compileWat } = require('../scripts/wat')
const { REPO, rotifer, json } = require('./cli-harness')

const FIXTURE = path.join(REPO, '__test__', 'fixtures', 'upstream-agents')

/** A fresh copy of the fixture, each gene.wat compiled to gene.ir.wasm. */
async function fixtureProject(t) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-upstream-agents-')))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.cpSync(FIXTURE, root, { recursive: true })
  // A checkout under umask 002 makes files group-writable, which agent records may never be.
  const agents = path.join(root, '.rotifer', 'agents')
  for (const p of [path.join(root, '.rotifer'), agents, ...fs.readdirSync(agents).map((f) => path.join(agents, f))]) {
    fs.chmodSync(p, fs.statSync(p).mode & 0o755)
  }
  for (const gene of ['counter-ir', 'refuse-ir', 'echo-ir']) {
    const dir = path.join(root, 'genes', gene)
    fs.writeFileSync(path.join(dir, 'gene.ir.wasm'), await compileWat(fs.readFileSync(path.join(dir, 'gene.wat'), 'utf8'), `${gene}.wat`))
  }
  return root
}

const records = (root) => Object.fromEntries(fs.readdirSync(path.join(root, '.rotifer', 'agents'))
  .filter((f) => f.endsWith('.json') && !f.endsWith('.fitness.json'))
  .map((f) => [f, fs.readFileSync(path.join(root, '.rotifer', 'agents', f), 'utf8')]))

test('every composition type of the fixture runs twice with memory, as upstream wrote it', async (t) => {
  const root = await fixtureProject(t)
  const before = records(root)
  const input = { type: 'primary', n: 5 }
  const refused = { code: 'REFUSED', message: 'this gene never answers', retryable: false, details: { gene: 'refuse-ir' } }
  const expected = {
    single: (k) => ({ ...input, runs: k }),
    seq: (k) => ({ ...input, tally: k, runs: k }),
    'par-first': (k) => ({ ...input, runs: k }),
    'par-concat': (k) => ({ branch_0: { ...input, runs: k }, branch_1: input }),
    cond: (k) => ({ ...input, runs: k }),
    'cond-op': (k) => ({ ...input, runs: k }),
    try: (k) => ({ error: refused, original_input: input, runs: k }),
    pool: (k) => ({ 'agent.usage': { ...input, runs: k }, 'util.echo': input }),
    mixed: (k) => ({ ...input, tally: k, runs: k }),
  }
  for (const [agent, output] of Object.entries(expected)) {
    for (const k of [1, 2]) {
      const r = rotifer(root, 'agent', 'run', agent, '--input', JSON.stringify(input))
      assert.deepEqual(json(r), output(k), `${agent}, run ${k}`)
      const fallback = /falling back to sequential execution/.test(r.stderr)
      assert.equal(fallback, agent === 'mixed', `${agent}: the sequential fallback only where a gene is not compiled`)
    }
    // Upstream's records have no memory fields: the default limits.
    const shown = json(rotifer(root, 'agent', 'show', agent, '--json'))
    assert.equal(shown.memory.quota, 10 * 1024 * 1024, agent)
    assert.deepEqual(shown.memory.dataPolicy, { anonymizationSupported: false, maxRetentionDays: null }, agent)
  }
  // The other branch of each Cond.
  assert.deepEqual(json(rotifer(root, 'agent', 'run', 'cond')), { name: 'world' }, 'default input: "type" is not "primary"')
  assert.deepEqual(json(rotifer(root, 'agent', 'run', 'cond-op', '--input', '{"n":3}')), { n: 3 })
  assert.deepEqual(records(root), before, 'no record is rewritten')
  // TryPool kept upstream's fitness state: refuse-ir failed twice, counter-ir took over.
  const fitness = JSON.parse(fs.readFileSync(path.join(root, '.rotifer', 'agents', 'pool.fitness.json'), 'utf8'))
  assert.deepEqual(fitness, {
    'refuse-ir': { fitness: 0.35, successes: 0, failures: 1 },
    'counter-ir': { fitness: 0.6, successes: 2, failures: 0 },
    'echo-ir': { fitness: 0.6, successes: 2, failures: 0 },
  })
})

test('agent list shows the fixture agents with their compositions', async (t) => {
  const root = await fixtureProject(t)
  const rows = json(rotifer(root, 'agent', 'list', '--json'))
  assert.deepEqual(rows.map((r) => r.name), ['single', 'seq', 'par-first', 'par-concat', 'cond', 'cond-op', 'try', 'pool', 'mixed'])
  const text = rotifer(root, 'agent', 'list').stdout
  assert.match(text, /par-first .*Par\/FirstSuccess\(refuse-ir, counter-ir\)/)
  assert.match(text, /pool .*TryPool\(refuse-ir, counter-ir, echo-ir\)/)
})
