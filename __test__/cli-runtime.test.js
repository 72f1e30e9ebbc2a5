'use strict'
// The gene runtime through the real bin (R-RUN): WASM genes, compositions, the mixed rule,
// deadlines, and stdout kept for the command's result.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, json, makeProject, addGene, addFormatter, createAgent, oneErrorLine } = require('./cli-harness')
const { WAT, addWasmGene, addCounter } = require('./wasm-genes')

/** `rotifer agent memory list <agent> --json`. */
function entries(root, agent) {
  return json(rotifer(root, 'agent', 'memory', 'list', agent, '--json'))
}

/** Writes `composition` to a file of the project and creates agent `name` from it. */
function createComposed(root, name, composition) {
  const file = path.join(root, `${name}.json`)
  fs.writeFileSync(file, JSON.stringify(composition))
  const r = rotifer(root, 'agent', 'create', name, '--composition', file)
  assert.equal(r.status, 0, r.stderr)
  return r
}

const gene = (name) => ({ type: 'Gene', name })

describe('WASM genes (R-RUN-2, R-RUN-3)', () => {
  test('a WASM gene remembers across two agent runs, with its own v2 id', async (t) => {
    const root = makeProject(t)
    await addCounter(root)
    const agent = createAgent(root, 'counting', ['counter'])
    const first = rotifer(root, 'agent', 'run', 'counting', '--input', '{"x":1}')
    assert.deepEqual(json(first), { x: 1, runs: 1 })
    assert.match(first.stderr, /^\[counter\] info: run 1$/m, 'rotifer.log goes to stderr, prefixed by the gene')
    assert.deepEqual(json(rotifer(root, 'agent', 'run', agent.id, '--input', '{}')), { runs: 2 })
    const [entry] = entries(root, 'counting')
    assert.equal(entry.key, 'counter/runs')
    assert.equal(entry.createdByGene, 'counter')
  })

  test('rotifer run: every memory call is denied, and the gene reports MEMORY_ACCESS_DENIED', async (t) => {
    const root = makeProject(t)
    await addCounter(root)
    const r = rotifer(root, 'run', 'counter', '--input', '{}')
    assert.equal(r.status, 1)
    assert.equal(r.stdout, '')
    assert.match(r.stderr, /^error: gene "counter" \(v2:[0-9a-f]{64}\) failed: MEMORY_ACCESS_DENIED: memory works only inside an agent/m)
    // Only the compiled-module cache is written: no memory, no agent, no log.
    assert.deepEqual(fs.readdirSync(path.join(root, '.rotifer')), ['cache'])
  })

  test('rotifer test runs a WASM gene on the test memory, with expectedError', async (t) => {
    const root = makeProject(t)
    await addCounter(root)
    const r = rotifer(root, 'test', 'counter')
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /ok {4}case 2: the count persists in memory/)
    assert.match(r.stdout, /ok {4}case 3: an input that is not an object is rejected/)
    assert.match(r.stdout, /3 passed, 0 failed/)
  })

  test('an output envelope and a negative return are gene failures with their code', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'picky', WAT.reject('TOO_LONG', 'the text is over 10 characters'))
    await addWasmGene(root, 'minus', WAT.negative(-7))
    const picky = rotifer(root, 'run', 'picky', '--input', '{}')
    assert.equal(picky.status, 1)
    assert.match(oneErrorLine(picky), /^error: gene "picky" \(v2:[0-9a-f]{64}\) failed: TOO_LONG: the text is over 10 characters$/)
    const minus = rotifer(root, 'run', 'minus', '--input', '{}')
    assert.equal(minus.status, 1)
    assert.match(oneErrorLine(minus), /gene "minus" .* failed: express returned -7$/)
  })

  test('an import the host does not provide fails before any gene runs, naming it', async (t) => {
    const root = makeProject(t)
    await addCounter(root)
    await addWasmGene(root, 'clocked', WAT.unknownImport())
    createAgent(root, 'a', ['counter', 'clocked'])
    const r = rotifer(root, 'agent', 'run', 'a', '--input', '{}')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /gene "clocked" .*gene\.wasm imports "env"\."clock" \(function\), which the sandbox does not provide; a WASM gene may import only the functions rotifer\.readMemory, .*rotifer\.logicalTimestamp/)
    assert.deepEqual(entries(root, 'a'), [], 'the counter before it did not run')
  })

  test('a WASI command (TypeScript compiled to WASM) runs on stdin/stdout without memory', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'wasi', WAT.wasiEcho())
    await addWasmGene(root, 'wasi-mem', WAT.wasiEcho({ memory: true }))
    const input = { text: 'héllo', n: [1, 2] }
    const r = rotifer(root, 'run', 'wasi', '--input', JSON.stringify(input))
    assert.deepEqual(json(r), input)
    assert.doesNotMatch(r.stderr, /ExperimentalWarning/)
    const denied = rotifer(root, 'run', 'wasi-mem', '--input', '{}')
    assert.equal(denied.status, 1)
    assert.match(oneErrorLine(denied), /is a WASI command \(a TypeScript gene compiled to WASM\) and imports rotifer\.readMemory; compiled TypeScript genes cannot use memory: run the gene as TypeScript/)
  })

  test('gene.ir.wasm is the compiled gene and runs; gene.wasm beside a source does not; --no-sandbox runs the source', async (t) => {
    const root = makeProject(t)
    const dir = await addWasmGene(root, 'both', WAT.constant({ from: 'wasm' }))
    fs.writeFileSync(path.join(dir, 'index.js'), 'exports.express = () => ({ from: "js" })')
    // gene.wasm is what `rotifer compile` turns into gene.ir.wasm: beside a source, the source runs.
    assert.deepEqual(json(rotifer(root, 'run', 'both', '--input', '{}')), { from: 'js' })
    // Compiled (gene.ir.wasm; one without IR sections still counts): it runs as WASM.
    fs.renameSync(path.join(dir, 'gene.wasm'), path.join(dir, 'gene.ir.wasm'))
    assert.deepEqual(json(rotifer(root, 'run', 'both', '--input', '{}')), { from: 'wasm' })
    assert.deepEqual(json(rotifer(root, 'run', 'both', '--input', '{}', '--no-sandbox')), { from: 'js' })
    const [listed] = json(rotifer(root, 'list', '--json'))
    assert.deepEqual([listed.kind, listed.compiled, listed.files], ['wasm', true, ['index.js', 'gene.ir.wasm']])
    // Without a source, --no-sandbox has nothing to run.
    fs.rmSync(path.join(dir, 'index.js'))
    const none = rotifer(root, 'run', 'both', '--input', '{}', '--no-sandbox')
    assert.equal(none.status, 1)
    assert.match(oneErrorLine(none), /^error: gene "both" has no source to run without the sandbox: .*leave out --no-sandbox$/)
  })
})

describe('compositions (R-RUN-4)', () => {
  async function constants(root) {
    await addWasmGene(root, 'a', WAT.constant({ a: 1 }))
    await addWasmGene(root, 'b', WAT.constant({ b: 2 }))
    await addWasmGene(root, 'fail', WAT.reject('BAD', 'no'))
    await addWasmGene(root, 'fail2', WAT.reject('WORSE', 'never'))
    await addWasmGene(root, 'echo', WAT.echo())
  }
  const par = (merge, ...names) => ({ type: 'Par', branches: names.map(gene), merge })

  test('Par of WASM genes with each merge', async (t) => {
    const root = makeProject(t)
    await constants(root)
    createComposed(root, 'all', par('WaitAll', 'a', 'b'))
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'all', '--input', '{}')), { branch_0: { a: 1 }, branch_1: { b: 2 } })
    createComposed(root, 'all-fail', par('WaitAll', 'a', 'fail'))
    const allFail = rotifer(root, 'agent', 'run', 'all-fail', '--input', '{}')
    assert.equal(allFail.status, 1)
    assert.match(oneErrorLine(allFail), /gene "fail" .* failed: BAD: no$/)

    createComposed(root, 'first', par('FirstSuccess', 'fail', 'b', 'a'))
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'first', '--input', '{}')), { b: 2 })
    createComposed(root, 'first-none', par('FirstSuccess', 'fail', 'fail2'))
    const none = rotifer(root, 'agent', 'run', 'first-none', '--input', '{}')
    assert.equal(none.status, 1)
    assert.match(oneErrorLine(none), /Par \(FirstSuccess\): no branch succeeded \(branch_0: .*BAD: no; branch_1: .*WORSE: never\)/)

    createComposed(root, 'most', par('Majority', 'fail', 'a', 'b'))
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'most', '--input', '{}')), { a: 1 })
    createComposed(root, 'few', par('Majority', 'fail', 'fail2', 'a'))
    const few = rotifer(root, 'agent', 'run', 'few', '--input', '{}')
    assert.equal(few.status, 1)
    assert.match(oneErrorLine(few), /Par \(Majority\): 1 of 3 branches succeeded, not more than half/)

    // --composition Par over --genes: upstream's default merge "first" (FirstSuccess); concat and
    // merge are WaitAll.
    const byFlag = createAgent(root, 'by-flag', ['fail', 'b', 'a'], '--composition', 'Par')
    assert.deepEqual(byFlag.composition, { type: 'Par', branches: ['fail', 'b', 'a'], merge: 'first' })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'by-flag', '--input', '{}')), { b: 2 })
    for (const merge of ['concat', 'merge']) {
      assert.equal(createAgent(root, `by-${merge}`, ['b', 'a'], '--composition', 'Par', '--par-merge', merge).composition.merge, merge)
      assert.deepEqual(json(rotifer(root, 'agent', 'run', `by-${merge}`, '--input', '{}')), { branch_0: { b: 2 }, branch_1: { a: 1 } })
    }
  })

  test('every Par branch gets the same input and writes memory with its own id', async (t) => {
    const root = makeProject(t)
    await addCounter(root)
    await addWasmGene(root, 'echo', WAT.echo())
    createAgent(root, 'p', ['counter', 'echo'], '--composition', 'Par', '--par-merge', 'concat')
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'p', '--input', '{"k":"v"}')), { branch_0: { k: 'v', runs: 1 }, branch_1: { k: 'v' } })
    assert.deepEqual(entries(root, 'p').map((e) => [e.key, e.createdByGene]), [['counter/runs', 'counter']])
  })

  test('a Par deadline stops a branch that overruns it; the merge decides', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'spin', WAT.loop())
    await addWasmGene(root, 'a', WAT.constant({ a: 1 }))
    createComposed(root, 'p', { type: 'Par', branches: [gene('spin'), gene('a')], merge: 'FirstSuccess', deadline: '1s' })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'p', '--input', '{}')), { a: 1 })
  })

  test('Cond both ways, on the top-level field of its input', async (t) => {
    const root = makeProject(t)
    await constants(root)
    const cond = (op, value) => ({ type: 'Cond', predicate: { field: 'lang', op, value }, then: gene('a'), else: gene('b') })
    createComposed(root, 'eq', cond('Eq', 'ts'))
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'eq', '--input', '{"lang":"ts"}')), { a: 1 })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'eq', '--input', '{"lang":"rust"}')), { b: 2 })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'eq', '--input', '{}')), { b: 2 }, 'a missing field is not equal')
    createComposed(root, 'gt', { ...cond('Gt', 3), predicate: { field: 'n', op: 'Gt', value: 3 } })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'gt', '--input', '{"n":4}')), { a: 1 })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'gt', '--input', '{"n":3}')), { b: 2 })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'gt', '--input', '{"n":"4"}')), { b: 2 }, 'a string is not greater than a number')
    createComposed(root, 'has', { ...cond('Contains', 'x'), predicate: { field: 'tags', op: 'Contains', value: 'x' } })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'has', '--input', '{"tags":["y","x"]}')), { a: 1 })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'has', '--input', '{"tags":"xyz"}')), { a: 1 })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'has', '--input', '{"tags":["y"]}')), { b: 2 })
  })

  test('Try runs the fallback on failure, with the error and the original input', async (t) => {
    const root = makeProject(t)
    await constants(root)
    await addWasmGene(root, 'minus', WAT.negative(-7))
    createAgent(root, 't', ['fail', 'echo'], '--composition', 'Try')
    const input = { text: 'abc' }
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 't', '--input', JSON.stringify(input))), {
      error: { code: 'BAD', message: 'no', retryable: false, details: { gene: 'fail' } },
      original_input: input,
    })
    // Try of the first with the rest as fallbacks in order: fail, then minus, then echo.
    createAgent(root, 't3', ['fail', 'minus', 'echo'], '--composition', 'Try')
    const out = json(rotifer(root, 'agent', 'run', 't3', '--input', '{}'))
    assert.equal(out.error.code, '-7')
    assert.equal(out.original_input.error.code, 'BAD')
    // A primary that succeeds: no fallback.
    createAgent(root, 'ok', ['a', 'fail'], '--composition', 'Try')
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'ok', '--input', '{}')), { a: 1 })
  })

  test('a composition is checked whole before anything is created', async (t) => {
    const root = makeProject(t)
    await constants(root)
    const bad = [
      [{ type: 'Seq', steps: [gene('a'), { type: 'Par', branches: [gene('b')], merge: 'Most' }] }, /composition\.steps\[1\]: "merge" must be one of first, concat, merge, WaitAll, FirstSuccess, Majority, not "Most"/],
      [{ type: 'Cond', predicate: { field: 'x', op: 'Like', value: 1 }, then: gene('a'), else: gene('b') }, /predicate "op" must be one of Eq, Neq, Gt, Lt, Gte, Lte, Contains/],
      [{ type: 'Try', primary: gene('a') }, /Try needs "fallback"/],
      [{ type: 'Par', branches: [gene('a')], deadline: 'soon' }, /"deadline" must be a duration/],
      [{ type: 'Gene', name: 'a', extra: 1 }, /unknown field "extra" in Gene/],
      [{ type: 'Seq', steps: [gene('a'), gene('missing')] }, /gene "missing" not found/],
    ]
    for (const [composition, message] of bad) {
      const file = path.join(root, 'bad.json')
      fs.writeFileSync(file, JSON.stringify(composition))
      const r = rotifer(root, 'agent', 'create', 'x', '--composition', file)
      assert.equal(r.status, 1, JSON.stringify(composition))
      assert.match(oneErrorLine(r), message)
    }
    const usage = [
      [['--genes', 'a', '--composition', 'Cond'], /--composition Cond needs two genes/],
      [['--genes', 'a', '--composition', 'Try'], /Try needs at least two genes/],
      [['--genes', 'a', '--composition', 'bad.json'], /give it without --genes/],
      [[], /--genes is required \(or --composition <file\.json>\)/],
    ]
    for (const [args, message] of usage) {
      const r = rotifer(root, 'agent', 'create', 'x', ...args)
      assert.equal(r.status, 2, args.join(' '))
      assert.match(oneErrorLine(r), message)
    }
    assert.equal(fs.existsSync(path.join(root, '.rotifer')), false, 'nothing was created')
  })

  test('the record keeps the expression; "Seq" records still run', async (t) => {
    const root = makeProject(t)
    await constants(root)
    const composition = { type: 'Try', primary: gene('fail'), fallback: { type: 'Seq', steps: [gene('a'), gene('echo')] } }
    const created = createComposed(root, 'r', composition)
    const id = /id\s+([0-9a-f-]{36})/.exec(created.stdout)[1]
    const record = JSON.parse(fs.readFileSync(path.join(root, '.rotifer', 'agents', `${id}.json`), 'utf8'))
    assert.deepEqual(record.composition, composition)
    assert.deepEqual(record.genome, ['fail', 'a', 'echo'])
    assert.deepEqual(createAgent(root, 's', ['a', 'echo']).composition, { type: 'Seq' })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 's', '--input', '{}')), { a: 1 })
  })
})

describe('the mixed-composition rule (R-RUN-5)', () => {
  test('a Par holding a TypeScript gene runs its genes in order, as a sequence, and both write memory', async (t) => {
    const root = makeProject(t)
    addFormatter(root)
    await addCounter(root)
    createAgent(root, 'mixed', ['formatter', 'counter'], '--composition', 'Par')
    const r = rotifer(root, 'agent', 'run', 'mixed', '--input', JSON.stringify({ code: 'a\n  b', indent: 4 }))
    assert.deepEqual(json(r), { formatted: 'a\n    b', indent: 4, runs: 1 })
    const notes = r.stderr.split('\n').filter((l) => l.startsWith('note:'))
    assert.equal(notes.length, 1)
    assert.match(notes[0], /^note: Par of formatter, counter holds genes that are not compiled \(formatter\); falling back to sequential execution, .*in written order, as a sequence, and every one uses memory$/)
    // The second run: the formatter reads the indent it remembered, the counter counts on.
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'mixed', '--input', JSON.stringify({ code: 'a\n  b' }))), { formatted: 'a\n    b', indent: 4, runs: 2 })
    assert.deepEqual(entries(root, 'mixed').map((e) => [e.key, e.createdByGene]), [['counter/runs', 'counter'], ['formatter/indent', 'formatter']])
  })

  test('Cond and Try with a TypeScript gene run every gene too', async (t) => {
    const root = makeProject(t)
    addGene(root, 'tag', { 'index.js': 'exports.express = (input) => ({ ...input, tagged: true })' })
    await addWasmGene(root, 'echo', WAT.echo())
    createComposed(root, 'c', { type: 'Cond', predicate: { field: 'x', op: 'Eq', value: 1 }, then: { type: 'Gene', name: 'tag' }, else: { type: 'Gene', name: 'echo' } })
    const r = rotifer(root, 'agent', 'run', 'c', '--input', '{"x":2}')
    assert.deepEqual(json(r), { x: 2, tagged: true }, 'both branches ran, in written order')
    assert.match(r.stderr, /^note: Cond of tag, echo/m)
  })
})

describe('deadlines (R-RUN-6)', () => {
  const HANG = 'exports.express = () => new Promise(() => {})'

  test('a promise that never settles is stopped at --timeout: exit 1, named', (t) => {
    const root = makeProject(t)
    addGene(root, 'hang', { 'index.js': HANG })
    createAgent(root, 'h', ['hang'])
    const started = Date.now()
    const r = rotifer(root, 'agent', 'run', 'h', '--input', '{}', '--timeout', '1')
    assert.equal(r.status, 1)
    assert.equal(r.stdout, '')
    assert.equal(oneErrorLine(r), 'error: gene "hang" timed out after 1 s')
    assert.ok(Date.now() - started < 20000, 'it did not wait for the gene')
    const alone = rotifer(root, 'run', 'hang', '--input', '{}', '--timeout', '1')
    assert.equal(alone.status, 1)
    assert.equal(oneErrorLine(alone), 'error: gene "hang" timed out after 1 s')
  })

  test('a WASM loop that never calls the host is stopped at --timeout (before its fuel runs out)', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'spin', WAT.loop())
    const started = Date.now()
    // 0.05 s: well before 500,000,000 units of fuel are spent (that takes a few tenths of a second).
    const r = rotifer(root, 'run', 'spin', '--input', '{}', '--timeout', '0.05')
    assert.equal(r.status, 1)
    assert.equal(oneErrorLine(r), 'error: gene "spin" timed out after 0.05 s')
    assert.ok(Date.now() - started < 20000, 'it did not wait for the gene')
    createAgent(root, 's', ['spin'])
    assert.equal(oneErrorLine(rotifer(root, 'agent', 'run', 's', '--input', '{}', '--timeout', '0.05')), 'error: gene "spin" timed out after 0.05 s')
  })

  test('a gene that calls process.exit fails instead of ending the command: nothing after the call runs', (t) => {
    const root = makeProject(t)
    addGene(root, 'quit', { 'index.js': 'exports.express = () => { process.exit(0); console.log("after the exit") }' })
    // `run` and `agent run` run genes on the main thread: the exit fails the gene, not the CLI.
    for (const args of [['run', 'quit'], ['agent', 'run', 'q']]) {
      if (args[0] === 'agent') createAgent(root, 'q', ['quit'])
      const r = rotifer(root, ...args, '--input', '{}')
      assert.equal(r.status, 1, args.join(' '))
      assert.equal(r.stdout, '')
      assert.match(oneErrorLine(r), /gene "quit" .* failed: it called process\.exit\(0\) before returning/)
      assert.doesNotMatch(r.stderr, /after the exit/)
    }
    // `rotifer test` runs them in a worker thread, which the exit ends: the case fails, named.
    const suite = rotifer(root, 'test', 'quit')
    assert.equal(suite.status, 1)
    assert.match(suite.stdout + suite.stderr, /it ended its thread \(exit code 0\) before returning/)
  })

  test('a loop after an await, out of any timer\'s reach, still ends the command at --timeout', (t) => {
    const root = makeProject(t)
    addGene(root, 'spin', { 'index.js': 'exports.express = async () => { await null; console.log("[spin] looping"); for (;;) {} }' })
    createAgent(root, 's', ['spin'])
    const started = Date.now()
    const r = rotifer(root, 'agent', 'run', 's', '--input', '{}', '--timeout', '1')
    assert.equal(r.status, 1, r.stderr)
    assert.equal(r.stdout, '')
    assert.match(r.stderr, /^\[spin\] looping$/m, 'what it wrote before the loop reached stderr')
    assert.match(r.stderr, /^error: gene "spin" timed out after 1 s$/m)
    assert.equal(r.stderr.match(/error:/g).length, 1, r.stderr)
    assert.ok(Date.now() - started < 20000, 'it did not wait for the gene')
  })

  test('what a gene leaves behind writes to stderr, never into the output on stdout', (t) => {
    const root = makeProject(t)
    // The first gene's timer fires after it returned, while the second gene runs.
    addGene(root, 'leaky', { 'index.js': 'exports.express = (input) => { setTimeout(() => process.stdout.write("stray line\\n"), 20); return input }' })
    addGene(root, 'slow', { 'index.js': 'exports.express = async (input) => { await new Promise((r) => setTimeout(r, 300)); return { ...input, slow: true } }' })
    createAgent(root, 'l', ['leaky', 'slow'])
    const r = rotifer(root, 'agent', 'run', 'l', '--input', '{"a":1}')
    assert.equal(r.status, 0, r.stderr)
    assert.deepEqual(JSON.parse(r.stdout), { a: 1, slow: true })
    assert.match(r.stderr, /^stray line$/m)
  })

  test('--timeout must be a positive number of seconds (exit 2)', (t) => {
    const root = makeProject(t)
    for (const bad of ['0', '-1', 'soon', '1e3', '86401']) {
      const r = rotifer(root, 'run', 'g', '--input', '{}', '--timeout', bad)
      assert.equal(r.status, 2, bad)
      assert.match(oneErrorLine(r), /invalid --timeout .*greater than 0 and at most 86400/)
    }
  })

  test('rotifer test: a timed-out case fails, the others still run', (t) => {
    const root = makeProject(t)
    addGene(root, 'slow', {
      'index.js': 'exports.express = (input) => input.hang ? new Promise(() => {}) : { ok: true }',
      'testsuite.json': { testCases: [{ input: { hang: true } }, { input: {}, expectedOutput: { ok: true } }] },
    })
    const r = rotifer(root, 'test', 'slow', '--timeout', '1')
    assert.equal(r.status, 1)
    assert.match(r.stdout, /FAIL {2}case 1: gene "slow" timed out after 1 s/)
    assert.match(r.stdout, /ok {4}case 2/)
    assert.match(r.stdout, /1 passed, 1 failed/)
  })
})

describe('rotifer test: testsuite.json is checked like every input', () => {
  test('an unknown field is an error, naming the field it was meant to be', (t) => {
    const root = makeProject(t)
    addGene(root, 'g', {
      'index.js': 'exports.express = () => ({ a: 1 })',
      'testsuite.json': { testCases: [{ input: {}, expected: { a: 2 } }] },
    })
    const r = rotifer(root, 'test', 'g')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /genes\/g\/testsuite\.json: test case 1 has an unknown field "expected" \(did you mean "expectedOutput"\?\)/)
    fs.writeFileSync(path.join(root, 'genes', 'g', 'testsuite.json'), JSON.stringify({ cases: [], testCases: [{ input: {} }] }))
    assert.match(oneErrorLine(rotifer(root, 'test', 'g')), /testsuite\.json has an unknown field "cases"/)
  })

  test('expectedError passes on that code only', (t) => {
    const root = makeProject(t)
    addGene(root, 'g', {
      'index.js': 'exports.express = (input, ctx) => { if (input.deny) ctx.memory.readMemory("k"); return input }',
      'testsuite.json': { testCases: [
        { name: 'fails as expected', input: { bad: 1 }, expectedError: 'MEMORY_INVALID_INPUT' },
        { name: 'succeeds', input: {}, expectedError: 'X' },
      ] },
    })
    // The first case does not fail at all; the second expected an error too.
    const r = rotifer(root, 'test', 'g')
    assert.equal(r.status, 1)
    assert.match(r.stdout, /FAIL {2}case 1: fails as expected: expected error MEMORY_INVALID_INPUT, got an output: \{"bad":1\}/)
    assert.match(r.stdout, /2 failed/)
    fs.writeFileSync(path.join(root, 'genes', 'g', 'index.js'), 'exports.express = () => { const e = new Error("nope"); e.code = "MEMORY_INVALID_INPUT"; throw e }')
    const r2 = rotifer(root, 'test', 'g')
    assert.match(r2.stdout, /ok {4}case 1: fails as expected/)
    assert.match(r2.stdout, /FAIL {2}case 2: succeeds: expected error X, got MEMORY_INVALID_INPUT \(nope/)
  })
})

describe('stdout carries only the result', () => {
  test('a gene writing to process.stdout does not corrupt the JSON output', async (t) => {
    const root = makeProject(t)
    addGene(root, 'noisy', {
      'index.js': 'exports.express = (input) => { process.stdout.write("{not json\\n"); console.log("log line"); console.info("info line"); return { ...input, done: true } }',
    })
    await addWasmGene(root, 'echo', WAT.echo())
    const r = rotifer(root, 'run', 'noisy', '--input', '{"a":1}')
    assert.deepEqual(json(r), { a: 1, done: true })
    assert.match(r.stderr, /\{not json\n/)
    assert.match(r.stderr, /log line/)
    createAgent(root, 'n', ['noisy', 'echo'])
    const a = rotifer(root, 'agent', 'run', 'n', '--input', '{"a":1}')
    assert.deepEqual(json(a), { a: 1, done: true })
    assert.match(a.stderr, /info line/)
  })
})
