'use strict'
// R-RUN-7 through the real bin: agent records in upstream's shape (read and written), records
// upstream wrote (no memory fields: the default limits, also when R-HOST-1 recreates a database),
// records written by earlier versions (migrated on read, never rewritten), upstream's agent create
// and agent run flags, and TryPool's domain failover with its fitness state.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, json, makeProject, addGene, createAgent, oneErrorLine } = require('./cli-harness')
const { WAT, addWasmGene } = require('./wasm-genes')

/** Counts its runs in memory (key `<name>`), adds `{ <name>: n }`; fails when the input has `fail: <name>`. */
function counter(name) {
  return `
export function express(input, ctx) {
  if (input.fail === ${JSON.stringify(name)} || (Array.isArray(input.fail) && input.fail.includes(${JSON.stringify(name)}))) {
    return { __rotifer_error: { code: 'REFUSED', message: ${JSON.stringify(name)} + ' was told to fail' } }
  }
  const previous = ctx.memory.readMemory(${JSON.stringify(name)})
  const n = previous ? Number(Buffer.from(previous.value).toString()) + 1 : 1
  ctx.memory.writeMemory(${JSON.stringify(name)}, Buffer.from(String(n)), 'PATTERN')
  return { ...input, ${JSON.stringify(name)}: n }
}
`
}

function addCounterGene(root, name, domain = 'test.count') {
  addGene(root, name, { 'index.mjs': counter(name) }, { domain })
}

/** Writes a record by hand, as upstream (or an older version of this project) wrote it. */
function writeRecord(root, record) {
  const dir = path.join(root, '.rotifer', 'agents')
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  fs.chmodSync(path.join(root, '.rotifer'), 0o700)
  fs.chmodSync(dir, 0o700)
  const file = path.join(dir, `${record.id}.json`)
  fs.writeFileSync(file, JSON.stringify(record, null, 2) + '\n', { mode: 0o600 })
  return file
}

const UPSTREAM_ID = '3f2b8c1e-5d4a-4b6f-9e7d-1a2b3c4d5e6f'
const upstreamRecord = (fields) => ({
  id: UPSTREAM_ID, name: 'up', state: 'Active', genome: ['a', 'b'], composition: { type: 'Seq' },
  strategy: 'manual', createdAt: '2026-03-01T10:00:00.000Z', reputation: 0, ...fields,
})

describe('records upstream wrote', () => {
  test('run unchanged with the default quota and data policy, also when the database is recreated', (t) => {
    const root = makeProject(t)
    addCounterGene(root, 'a')
    addCounterGene(root, 'b')
    const file = writeRecord(root, upstreamRecord())
    const text = fs.readFileSync(file, 'utf8')
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'up', '--input', '{"x":1}')), { x: 1, a: 1, b: 1 })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', UPSTREAM_ID, '--input', '{"x":1}')), { x: 1, a: 2, b: 2 }, 'remembers across runs')
    const shown = json(rotifer(root, 'agent', 'show', 'up', '--json'))
    assert.equal(shown.memory.quota, 10 * 1024 * 1024)
    assert.deepEqual(shown.memory.dataPolicy, { anonymizationSupported: false, maxRetentionDays: null })
    assert.deepEqual(shown.agent, { ...upstreamRecord(), memoryQuota: 10 * 1024 * 1024, dataPolicy: { anonymizationSupported: false, maxRetentionDays: null } })
    assert.equal(fs.readFileSync(file, 'utf8'), text, 'the record is never rewritten')
    // R-HOST-1: a deleted database comes back with those defaults.
    for (const f of fs.readdirSync(path.join(root, '.rotifer', 'memory'))) {
      if (f.startsWith(UPSTREAM_ID)) fs.rmSync(path.join(root, '.rotifer', 'memory', f))
    }
    const again = rotifer(root, 'agent', 'run', 'up', '--input', '{}')
    assert.deepEqual(json(again), { a: 1, b: 1 })
    assert.match(again.stderr, /note: agent "up" had no memory database; created an empty one with the quota and data policy of its record/)
    assert.equal(json(rotifer(root, 'agent', 'show', 'up', '--json')).memory.quota, 10 * 1024 * 1024)
  })

  test('each composition type upstream writes', (t) => {
    const root = makeProject(t)
    for (const g of ['a', 'b']) addCounterGene(root, g)
    const cases = [
      { genome: ['a'], composition: { type: 'Single' } },
      { composition: { type: 'Seq' } },
      { composition: { type: 'Par', branches: ['a', 'b'], merge: 'first' } },
      { composition: { type: 'Cond', predicate: { field: 'type', equals: 'primary' }, thenBranch: 'a', elseBranch: 'b' } },
      { composition: { type: 'Try', primary: 'a', fallback: 'b' } },
    ]
    // Every gene is a Node gene: Par, Cond and Try fall back to a sequence (upstream's rule), in
    // which every gene runs once and uses memory (the fixture test runs them compiled).
    for (const [i, fields] of cases.entries()) {
      const id = `3f2b8c1e-5d4a-4b6f-9e7d-00000000000${i}`
      writeRecord(root, upstreamRecord({ id, name: `c${i}`, ...fields }))
      const type = fields.composition.type
      for (const n of [1, 2]) {
        const r = rotifer(root, 'agent', 'run', `c${i}`)
        assert.deepEqual(json(r), type === 'Single' ? { name: 'world', a: n } : { name: 'world', a: n, b: n }, type)
        if (['Par', 'Cond', 'Try'].includes(type)) assert.match(r.stderr, new RegExp(`note: ${type} of a, b holds genes that are not compiled \\(a, b\\); falling back to sequential execution`))
        else assert.doesNotMatch(r.stderr, /falling back/)
      }
    }
  })

  test('a record with a wrong field is an error naming the file and the field; other agents still run', (t) => {
    const root = makeProject(t)
    addCounterGene(root, 'a')
    addCounterGene(root, 'b')
    const bad = writeRecord(root, upstreamRecord({ composition: { type: 'Par', branches: ['a', 'c'], merge: 'first' } }))
    writeRecord(root, upstreamRecord({ id: '3f2b8c1e-5d4a-4b6f-9e7d-111111111111', name: 'fine' }))
    const r = rotifer(root, 'agent', 'run', 'up', '--input', '{}')
    assert.equal(r.status, 1)
    assert.equal(r.stdout, '')
    assert.equal(oneErrorLine(r), `error: agent record ${bad}: composition.branches[1]: gene "c" is not in the agent's genome (a, b); add it to "genome" or fix the name; fix the composition or create the agent again`)
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'fine', '--input', '{}')), { a: 1, b: 1 })
    writeRecord(root, upstreamRecord({ memoryQuota: '10MB' }))
    assert.match(oneErrorLine(rotifer(root, 'agent', 'run', 'up', '--input', '{}')), /"memoryQuota" must be a whole number of bytes greater than 0 \(got "10MB"\); fix it, or remove it for the default/)
    writeRecord(root, upstreamRecord({ composition: { type: 'Par', merge: 'fastest' } }))
    assert.match(oneErrorLine(rotifer(root, 'agent', 'show', 'up')), /composition: "merge" must be one of first, concat, merge/)
  })
})

describe('records written by earlier versions', () => {
  test('"Seq" and nested expressions are migrated on read: a Par without merge is still WaitAll', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'x', WAT.constant({ x: 1 }))
    await addWasmGene(root, 'y', WAT.constant({ y: 2 }))
    const old = (id, name, genome, composition) => ({
      id, name, genome, composition, memoryQuota: 1024 * 1024,
      dataPolicy: { anonymizationSupported: true, maxRetentionDays: 7 }, createdAt: '2026-01-01T00:00:00.000Z',
    })
    const seq = writeRecord(root, old('aaaaaaaa-0000-4000-8000-000000000001', 'seq', ['x', 'y'], 'Seq'))
    const par = writeRecord(root, old('aaaaaaaa-0000-4000-8000-000000000002', 'par', ['x', 'y'], { type: 'Par', branches: [{ type: 'Gene', name: 'x' }, { type: 'Gene', name: 'y' }] }))
    const before = [seq, par].map((f) => fs.readFileSync(f, 'utf8'))
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'seq', '--input', '{}')), { y: 2 })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'par', '--input', '{}')), { branch_0: { x: 1 }, branch_1: { y: 2 } })
    assert.deepEqual([seq, par].map((f) => fs.readFileSync(f, 'utf8')), before, 'never rewritten')
    const shown = json(rotifer(root, 'agent', 'show', 'par', '--json'))
    assert.equal(shown.memory.quota, 1024 * 1024, "the record's own limits")
    assert.equal(shown.agent.state, 'Active')
    // The same Par in a record of today's shape means upstream's default, first.
    writeRecord(root, { ...old('aaaaaaaa-0000-4000-8000-000000000003', 'new', ['x', 'y'], { type: 'Par' }), state: 'Active' })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'new', '--input', '{}')), { x: 1 })
  })
})

describe('agent create as upstream', () => {
  test('writes upstream\'s shape for every --composition, with -g, --par-merge and --strategy', async (t) => {
    const root = makeProject(t)
    for (const g of ['a', 'b', 'c']) addCounterGene(root, g)
    const made = (name, ...args) => createAgent(root, name, ...args)
    const one = made('one', ['a'])
    assert.deepEqual(
      { ...one, id: undefined, createdAt: undefined },
      { id: undefined, name: 'one', state: 'Active', genome: ['a'], composition: { type: 'Single' }, strategy: 'manual', createdAt: undefined, reputation: 0, memoryQuota: 10 * 1024 * 1024, dataPolicy: { anonymizationSupported: false, maxRetentionDays: null } },
    )
    assert.deepEqual(Object.keys(one), ['id', 'name', 'state', 'genome', 'composition', 'strategy', 'createdAt', 'reputation', 'memoryQuota', 'dataPolicy'])
    assert.deepEqual(made('seq', ['a', 'b']).composition, { type: 'Seq' })
    assert.deepEqual(made('par', ['a', 'b'], '--composition', 'Par').composition, { type: 'Par', branches: ['a', 'b'], merge: 'first' })
    assert.deepEqual(made('parc', ['a', 'b'], '--composition', 'Par', '--par-merge', 'concat').composition, { type: 'Par', branches: ['a', 'b'], merge: 'concat' })
    assert.deepEqual(made('cond', ['a', 'b'], '--composition', 'Cond').composition, { type: 'Cond', predicate: { field: 'type', equals: 'primary' }, thenBranch: 'a', elseBranch: 'b' })
    assert.deepEqual(made('try', ['a', 'b'], '--composition', 'Try').composition, { type: 'Try', primary: 'a', fallback: 'b' })
    assert.deepEqual(made('try3', ['a', 'b', 'c'], '--composition', 'Try').composition, { type: 'Try', primary: 'a', fallback: { type: 'Try', primary: 'b', fallback: 'c' } })
    assert.deepEqual(made('pool', ['a', 'b'], '--composition', 'TryPool').composition, { type: 'TryPool' })
    assert.equal(made('greedy', ['a'], '--strategy', 'greedy').strategy, 'greedy')
    const short = rotifer(root, 'agent', 'create', 'short', '-g', 'a', 'b', '--memory-quota=1MB')
    assert.equal(short.status, 0, short.stderr)
    assert.match(short.stdout, /composition {3}Seq\(a, b\)/)
  })
})

describe('agent run as upstream', () => {
  test('default input {"name":"world"}, --verbose on stderr only, --no-sandbox, and rotifer run', async (t) => {
    const root = makeProject(t)
    addCounterGene(root, 'a')
    // A compiled gene with a source beside it: --no-sandbox runs the source.
    const dir = await addWasmGene(root, 'w', WAT.constant({ from: 'wasm' }))
    fs.renameSync(path.join(dir, 'gene.wasm'), path.join(dir, 'gene.ir.wasm'))
    fs.writeFileSync(path.join(dir, 'index.js'), 'exports.express = (input) => ({ ...input, from: "source" })')
    createAgent(root, 'plain', ['a'])
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'plain')), { name: 'world', a: 1 })
    assert.deepEqual(json(rotifer(root, 'run', 'w', '--no-sandbox')), { name: 'world', from: 'source' })

    createAgent(root, 'seq', ['a', 'w'])
    const verbose = rotifer(root, 'agent', 'run', 'seq', '--verbose')
    assert.deepEqual(json(verbose), { from: 'wasm' }, 'stdout is the result only')
    assert.match(verbose.stderr, /^\[1\] a \(node\) ok in \d+ ms\n {4}input: {2}\{"name":"world"\}\n {4}output: \{"name":"world","a":1\}$/m)
    assert.match(verbose.stderr, /^\[2\] w \(direct\) ok in \d+ ms$/m)
    assert.doesNotMatch(rotifer(root, 'agent', 'run', 'seq').stderr, /\[1\]/, 'no step log without --verbose')

    const dir2 = await addWasmGene(root, 'v', WAT.constant({ v: 'wasm' }))
    fs.renameSync(path.join(dir2, 'gene.wasm'), path.join(dir2, 'gene.ir.wasm'))
    fs.writeFileSync(path.join(dir2, 'index.js'), 'exports.express = (input) => ({ ...input, v: "source" })')
    createAgent(root, 'par', ['w', 'v'], '--composition', 'Par', '--par-merge', 'concat')
    const sandboxed = rotifer(root, 'agent', 'run', 'par', '--input', '{}')
    assert.deepEqual(json(sandboxed), { branch_0: { from: 'wasm' }, branch_1: { v: 'wasm' } })
    assert.doesNotMatch(sandboxed.stderr, /note:/)
    // --no-sandbox: the sources run, so the Par falls back to a sequence, as upstream's without its binding.
    const unsandboxed = rotifer(root, 'agent', 'run', 'par', '--no-sandbox', '--input', '{}')
    assert.deepEqual(json(unsandboxed), { from: 'source', v: 'source' })
    assert.match(unsandboxed.stderr, /^note: Par of w, v holds genes that are not compiled \(w, v\); falling back to sequential execution/m)
  })
})

describe('TryPool (upstream\'s domain failover)', () => {
  test('per domain: the active gene, failover to the fittest other, the fitness state saved and used', (t) => {
    const root = makeProject(t)
    addCounterGene(root, 'p1', 'text.primary')
    addCounterGene(root, 'p2', 'text.primary')
    addCounterGene(root, 's1', 'text.second')
    createAgent(root, 'pool', ['p1', 'p2', 's1'], '--composition', 'TryPool')
    const fitness = () => JSON.parse(fs.readFileSync(path.join(root, '.rotifer', 'agents', 'pool.fitness.json'), 'utf8'))

    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'pool', '--input', '{}')), { 'text.primary': { p1: 1 }, 'text.second': { s1: 1 } })
    assert.deepEqual(fitness(), { p1: { fitness: 0.55, successes: 1, failures: 0 }, p2: { fitness: 0.5, successes: 0, failures: 0 }, s1: { fitness: 0.55, successes: 1, failures: 0 } })
    const mode = fs.statSync(path.join(root, '.rotifer', 'agents', 'pool.fitness.json')).mode & 0o777
    assert.equal(mode, 0o600)

    // p1 fails: p2 takes over, and stays the fittest of its domain.
    const failover = rotifer(root, 'agent', 'run', 'pool', '--input', '{"fail":"p1"}', '--verbose')
    assert.deepEqual(json(failover), { 'text.primary': { fail: 'p1', p2: 1 }, 'text.second': { fail: 'p1', s1: 2 } })
    assert.match(failover.stderr, /TryPool text\.primary: p2 succeeded \(switched from p1\)/)
    assert.deepEqual(fitness().p1, { fitness: 0.4, successes: 1, failures: 1 })
    assert.deepEqual(fitness().p2, { fitness: 0.55, successes: 1, failures: 0 })
    // Next run: p2 is active (the fittest), p1 is not tried.
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'pool', '--input', '{}')), { 'text.primary': { p2: 2 }, 'text.second': { s1: 3 } })
    assert.equal(fitness().p1.successes, 1)

    // Every gene of a domain fails: exit 1 naming it, nothing on stdout, the state still saved.
    const down = rotifer(root, 'agent', 'run', 'pool', '--input', '{"fail":["p1","p2"]}')
    assert.equal(down.status, 1)
    assert.equal(down.stdout, '')
    assert.match(oneErrorLine(down), /^error: TryPool: every gene of domain text\.primary \(p2: REFUSED: p2 was told to fail; p1: REFUSED: p1 was told to fail\) failed$/)
    assert.equal(fitness().p2.failures, 1)
    assert.equal(fitness().s1.successes, 4)

    // A damaged state: the pool starts afresh, and stderr says so.
    fs.writeFileSync(path.join(root, '.rotifer', 'agents', 'pool.fitness.json'), '{not json')
    const fresh = rotifer(root, 'agent', 'run', 'pool', '--input', '{}')
    assert.deepEqual(json(fresh), { 'text.primary': { p1: 2 }, 'text.second': { s1: 5 } })
    assert.match(fresh.stderr, /note: the fitness state .*pool\.fitness\.json was partly or wholly left out: it is not valid JSON/)
    // agent list is not confused by the state file.
    assert.deepEqual(json(rotifer(root, 'agent', 'list', '--json')).map((a) => a.name), ['pool'])
  })

  test('a record whose name would put the fitness state outside .rotifer/agents is refused', (t) => {
    const root = makeProject(t)
    addCounterGene(root, 'a')
    addCounterGene(root, 'b')
    writeRecord(root, upstreamRecord({ name: '../../escape', composition: { type: 'TryPool' } }))
    const r = rotifer(root, 'agent', 'run', UPSTREAM_ID)
    assert.equal(r.status, 1)
    assert.match(r.stderr, /^error: agent "\.\.\/\.\.\/escape": a TryPool keeps .*this name would put it outside that folder; rename the agent in its record/m)
    assert.equal(fs.existsSync(path.join(root, '..', 'escape.fitness.json')), false)
    assert.equal(fs.existsSync(path.join(root, '.rotifer', 'escape.fitness.json')), false)
  })
})
