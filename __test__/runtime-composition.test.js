'use strict'
// Composition evaluation (lib/runtime/composition.js, R-RUN-4, R-RUN-5) with stand-in genes:
// which gene gets which input, merges, Cond ops, Try's fallback input and the mixed rule.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { evaluate } = require('../lib/runtime/composition')
const { parseComposition, leaves, CompositionError } = require('../lib/formats/composition')
const { geneFailure, GeneTimeout } = require('../lib/runtime/failures')

const gene = (name) => ({ type: 'Gene', name })

/**
 * An env whose genes are functions of their input (`throw` a string to fail with that code), all
 * WASM unless named in `node`; it records every call and every notice.
 */
function envOf(genes, { node = [] } = {}) {
  const calls = []
  const notices = []
  return {
    calls,
    notices,
    deadline: Date.now() + 60000,
    isWasm: (name) => !node.includes(name),
    notice: (line) => notices.push(line),
    async runGene(name, input) {
      calls.push([name, input])
      try {
        return genes[name](input)
      } catch (code) {
        throw geneFailure({ name, id: 'v2:x' }, { code, message: `${name} says ${code}`, text: `${code}: ${name} says ${code}`, where: null })
      }
    },
  }
}

const run = (expr, input, env) => evaluate(parseComposition(expr), input, env)

test('Seq feeds each output to the next gene', async () => {
  const env = envOf({ inc: (x) => x + 1, dbl: (x) => x * 2 })
  assert.equal(await run({ type: 'Seq', steps: [gene('inc'), gene('dbl'), gene('inc')] }, 1, env), 5)
})

test('Par gives every branch the same input; merges', async () => {
  const genes = { a: (x) => ({ a: x }), b: (x) => ({ b: x }), no: () => { throw 'NO' } }
  const par = (merge, ...names) => ({ type: 'Par', merge, branches: names.map(gene) })
  let env = envOf(genes)
  assert.deepEqual(await run(par('WaitAll', 'a', 'b'), 7, env), { branch_0: { a: 7 }, branch_1: { b: 7 } })
  assert.deepEqual(env.calls, [['a', 7], ['b', 7]])
  await assert.rejects(run(par('WaitAll', 'a', 'no', 'b'), 7, (env = envOf(genes))), { code: 'NO' })
  assert.equal(env.calls.length, 3, 'every branch ran')
  assert.deepEqual(await run(par('FirstSuccess', 'no', 'b', 'a'), 1, envOf(genes)), { b: 1 })
  await assert.rejects(run(par('FirstSuccess', 'no', 'no'), 1, envOf(genes)), { code: 'PAR_NO_SUCCESS' })
  assert.deepEqual(await run(par('Majority', 'no', 'a', 'b'), 1, envOf(genes)), { a: 1 })
  await assert.rejects(run(par('Majority', 'no', 'a'), 1, envOf(genes)), { code: 'PAR_NO_MAJORITY' }, 'half is not a majority')
  assert.deepEqual(await run({ type: 'Par', branches: [gene('no'), gene('a')] }, 1, envOf(genes)), { a: 1 }, 'first (FirstSuccess) by default, as upstream')
  const legacy = parseComposition({ type: 'Par', branches: [gene('a')] }, { legacy: true })
  assert.deepEqual(await evaluate(legacy, 1, envOf(genes)), { branch_0: { a: 1 } }, 'WaitAll in a record written by an earlier version')
  // Upstream's merge names: first = FirstSuccess, concat and merge = WaitAll.
  for (const [merge, out] of [['first', { b: 2 }], ['concat', { branch_0: { b: 2 }, branch_1: { a: 2 } }], ['merge', { branch_0: { b: 2 }, branch_1: { a: 2 } }]]) {
    assert.deepEqual(await run({ type: 'Par', branches: ['b', 'a'], merge }, 2, envOf(genes)), out, merge)
  }
})

test('Cond compares the top-level field with each op', async () => {
  const genes = { yes: () => 'yes', no: () => 'no' }
  const cond = (op, value, input) => run({ type: 'Cond', predicate: { field: 'f', op, value }, then: gene('yes'), else: gene('no') }, input, envOf(genes))
  const cases = [
    ['Eq', { x: [1] }, { f: { x: [1] } }, 'yes'], ['Eq', 1, { f: '1' }, 'no'], ['Eq', null, {}, 'no'],
    ['Neq', 1, { f: 2 }, 'yes'], ['Neq', 1, {}, 'yes'],
    ['Gt', 3, { f: 4 }, 'yes'], ['Gt', 3, { f: 3 }, 'no'], ['Gte', 3, { f: 3 }, 'yes'],
    ['Lt', 'b', { f: 'a' }, 'yes'], ['Lte', 'a', { f: 'a' }, 'yes'], ['Lt', 3, { f: '1' }, 'no'],
    ['Contains', 'ell', { f: 'hello' }, 'yes'], ['Contains', { k: 1 }, { f: [{ k: 1 }] }, 'yes'],
    ['Contains', 1, { f: 'a1' }, 'no'], ['Contains', 'a', 'a', 'no'],
  ]
  for (const [op, value, input, expected] of cases) {
    assert.equal(await cond(op, value, input), expected, `${op} ${JSON.stringify(value)} on ${JSON.stringify(input)}`)
  }
})

test('Try gives the fallback the error and the original input', async () => {
  const env = envOf({ bad: () => { throw 'BAD' }, echo: (x) => x })
  const out = await run({ type: 'Try', primary: { type: 'Seq', steps: [gene('echo'), gene('bad')] }, fallback: gene('echo') }, { q: 1 }, env)
  assert.deepEqual(out, { error: { code: 'BAD', message: 'bad says BAD', retryable: false, details: { gene: 'bad' } }, original_input: { q: 1 } })
})

test('a run timeout is never caught by Try or Par', async () => {
  const env = envOf({ echo: (x) => x })
  env.runGene = async (name) => { throw new GeneTimeout({ name }, 1) }
  await assert.rejects(run({ type: 'Try', primary: gene('slow'), fallback: gene('echo') }, 1, env), GeneTimeout)
  await assert.rejects(run({ type: 'Par', merge: 'FirstSuccess', branches: [gene('slow'), gene('echo')] }, 1, env), GeneTimeout)
})

test('R-RUN-5: a Par, Cond or Try holding a non-WASM gene runs all its genes in written order', async () => {
  const genes = { ts: (x) => [...x, 'ts'], w1: (x) => [...x, 'w1'], w2: (x) => [...x, 'w2'], bad: () => { throw 'BAD' }, code: (x) => x.error.code }
  const expr = { type: 'Seq', steps: [
    gene('w1'),
    { type: 'Cond', predicate: { field: 'f', op: 'Eq', value: 1 }, then: { type: 'Par', branches: [gene('w2'), gene('ts')] }, else: gene('w1') },
  ] }
  const env = envOf(genes, { node: ['ts'] })
  assert.deepEqual(await run(expr, [], env), ['w1', 'w2', 'ts', 'w1'])
  assert.equal(env.notices.length, 1)
  assert.match(env.notices[0], /^note: Cond of w2, ts, w1 holds genes that are not compiled \(ts\); falling back to sequential execution/)
  // All WASM: the semantics hold, and nothing is said.
  const wasm = envOf(genes)
  assert.equal(await run({ type: 'Try', primary: gene('bad'), fallback: gene('code') }, [], wasm), 'BAD')
  assert.deepEqual(wasm.notices, [])
})

test('parseComposition checks every node and names the bad one', () => {
  const bad = [
    [null, /^composition: must be a gene name or an object/],
    [{ type: 'Loop' }, /"type" must be one of/],
    [{ type: 'Seq', steps: [] }, /"steps" must be a non-empty array/],
    [{ type: 'Par', branches: [gene('a')], deadline: '0s' }, /"deadline" must be a duration/],
    [{ type: 'Par', branches: [gene('a')], deadline: 5 }, /"deadline" must be a duration/],
    [{ type: 'Cond', predicate: { field: 'f', op: 'Eq' }, then: gene('a'), else: gene('b') }, /needs a "value"/],
    [{ type: 'Cond', predicate: { field: 'f', op: 'Eq', value: 1, extra: 2 }, then: gene('a'), else: gene('b') }, /unknown field "extra" in the predicate/],
    [{ type: 'Try', primary: gene('a'), fallback: { type: 'Gene', name: '../x' } }, /^composition\.fallback\.name: must be a gene name/],
  ]
  for (const [expr, message] of bad) assert.throws(() => parseComposition(expr), (e) => e instanceof CompositionError && message.test(e.message), JSON.stringify(expr))
  let deep = gene('a')
  for (let i = 0; i < 100; i++) deep = { type: 'Seq', steps: [deep] }
  assert.throws(() => parseComposition(deep), /nested more than 64 levels/)
  assert.equal(parseComposition({ type: 'Par', branches: [gene('a')], deadline: '1.5s' }).deadlineMs, 1500)
  assert.deepEqual(leaves(parseComposition({ type: 'Try', primary: gene('a'), fallback: { type: 'Par', branches: [gene('b'), gene('a')] } })), ['a', 'b', 'a'])
})

test("upstream's record shape: gene names, thenBranch/elseBranch, equals, and the genome's defaults", async () => {
  const genome = ['yes', 'no']
  const genes = { yes: (x) => ({ ...x, by: 'yes' }), no: (x) => ({ ...x, by: 'no' }), bad: () => { throw 'BAD' } }
  const plan = (c, g = genome) => parseComposition(c, { genome: g })
  // What upstream's agent create writes for --composition Cond.
  const cond = plan({ type: 'Cond', predicate: { field: 'type', equals: 'primary' }, thenBranch: 'yes', elseBranch: 'no' })
  assert.deepEqual(cond.predicate, { field: 'type', op: 'Eq', value: 'primary' })
  assert.deepEqual(await evaluate(cond, { type: 'primary' }, envOf(genes)), { type: 'primary', by: 'yes' })
  assert.deepEqual(await evaluate(cond, { name: 'world' }, envOf(genes)), { name: 'world', by: 'no' })
  // {field, op, value}: value wins over equals; op defaults to Eq.
  assert.deepEqual(plan({ type: 'Cond', predicate: { field: 'n', op: 'Gt', value: 3 } }).predicate, { field: 'n', op: 'Gt', value: 3 })
  assert.deepEqual(plan({ type: 'Cond', predicate: { field: 'n', value: 3 } }).then, { type: 'Gene', name: 'yes' }, 'branches default to genes 1 and 2')
  // Single and Seq run the genome; Par without branches runs it too.
  assert.deepEqual(leaves(plan({ type: 'Single' }, ['yes'])), ['yes'])
  assert.deepEqual(leaves(plan({ type: 'Seq' })), genome)
  assert.deepEqual(leaves(plan('Seq')), genome, 'records of earlier versions say "Seq"')
  assert.deepEqual(plan({ type: 'Par' }).branches.map((b) => b.name), genome)
  const tryPlan = plan({ type: 'Try', primary: 'bad', fallback: 'no' }, ['bad', 'no'])
  assert.deepEqual(await evaluate(tryPlan, { q: 1 }, envOf(genes)), { error: { code: 'BAD', message: 'bad says BAD', retryable: false, details: { gene: 'bad' } }, original_input: { q: 1 }, by: 'no' })
  assert.deepEqual(plan({ type: 'TryPool' }), { type: 'TryPool', genes: genome })
  const bad = [
    [{ type: 'Par', branches: ['yes', 'maybe'] }, /^composition\.branches\[1\]: gene "maybe" is not in the agent's genome \(yes, no\)/],
    [{ type: 'Par', merge: 'all' }, /"merge" must be one of first, concat, merge, WaitAll, FirstSuccess, Majority, not "all"/],
    [{ type: 'Seq', steps: [{ type: 'TryPool' }] }, /TryPool .* never a branch/],
    [{ type: 'Cond', predicate: { field: 'type' } }, /needs a "value" \(or "equals"\)/],
    [{ type: 'Cond', predicate: { field: 'f', equals: 1 }, thenBranch: 'yes', then: 'no' }, /"thenBranch" or "then", not both/],
  ]
  for (const [expr, message] of bad) assert.throws(() => plan(expr), (e) => e instanceof CompositionError && message.test(e.message), JSON.stringify(expr))
  assert.throws(() => parseComposition({ type: 'Try' }, { genome: ['one'] }), /Try needs "fallback" \(upstream's default, gene 2 of the genome, is missing\)/)
})
