'use strict'
// Test suites in the upstream playground's format (R-RUN-9): outputs checked against the
// phenotype's outputSchema and a case's expectedSchema, inputs against its inputSchema, per-case
// timeouts, seeded fuzz inputs, and the fields of testsuite.json. Through the real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const { rotifer, makeProject, addGene, oneErrorLine, PROBE } = require('./cli-harness')
const { WAT, addWasmGene } = require('./wasm-genes')

describe('test suites (R-RUN-9)', () => {
  test('outputs are checked against the outputSchema and expectedSchema, with the field and the rule', (t) => {
    const root = makeProject(t)
    const phenotype = { domain: 'test.s', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }
    addGene(root, 'g', {
      'index.js': 'exports.express = (input) => input.out',
      'testsuite.json': {
        testCases: [
          { input: { out: { n: 1 } }, expectedSchema: { properties: { n: { minimum: 2 } } } },
          { input: { out: { n: 'one' } } },
          { input: { out: { n: 2 } }, expectedSchema: { properties: { n: { minimum: 2 } } } },
          { input: { out: { n: 2 } }, expectedOutput: { n: 2 }, timeout: 1000 },
        ],
      },
    }, { phenotype })
    const r = rotifer(root, 'test', 'g')
    assert.equal(r.status, 1)
    assert.equal(r.stdout.split('\n').slice(1).join('\n'), [
      '  FAIL  case 1: the output does not conform to expectedSchema: /n must be >= 2 (rule "minimum"); output {"n":1}',
      '  FAIL  case 2: the output does not conform to the outputSchema: /n must be integer (rule "type"); output {"n":"one"}',
      '  ok    case 3',
      '  ok    case 4',
      '2 passed, 2 failed',
      '',
    ].join('\n'))
  })

  test("a case's timeout (ms) stops it; an illegal input is refused with INVALID_INPUT before the gene runs, as every run refuses it", (t) => {
    const root = makeProject(t)
    const phenotype = { domain: 'test.s', version: '1.0.0', inputSchema: { type: 'object', properties: { wait: { type: 'boolean' } } }, outputSchema: { type: 'object' } }
    addGene(root, 'g', {
      'index.js': 'exports.express = (input) => input.wait === true ? new Promise(() => {}) : input.wait === "crash" ? process.exit(3) : { ok: 1 }',
      'testsuite.json': {
        testCases: [
          { name: 'slow', input: { wait: true }, timeout: 300 },
          { name: 'answers an illegal input silently', input: { wait: 'no' } },
          { name: 'crashes', input: { wait: 'crash' } },
          { input: { wait: false } },
        ],
      },
    }, { phenotype })
    const started = Date.now()
    const r = rotifer(root, 'test', 'g')
    assert.ok(Date.now() - started < 20000, 'the 300 ms timeout, not the 30 s default')
    const lines = r.stdout.split('\n')
    assert.equal(lines[1], '  FAIL  case 1: slow: gene "g" timed out after 0.3 s')
    // The gene would answer case 2 and crash on case 3: it never sees either input.
    assert.equal(lines[2], '  ok    case 2: answers an illegal input silently (input outside the inputSchema: /wait must be boolean (rule "type"); refused, INVALID_INPUT)')
    assert.match(lines[3], /^ {2}ok {4}case 3: crashes \(input outside .*; refused, INVALID_INPUT\)$/)
    assert.equal(lines[4], '  ok    case 4')
  })

  test('fuzz inputs come from the inputSchema and the seed: the same every run; a crash is reported with its input', (t) => {
    const root = makeProject(t)
    const phenotype = { domain: 'test.f', version: '1.0.0', inputSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 50 } }, required: ['n'] }, outputSchema: { type: 'object' } }
    addGene(root, 'g', {
      'index.js': 'exports.express = (input) => { if (input.n > 40) process.exit(1); return { seen: input.n } }',
      'testsuite.json': { testCases: [{ input: { n: 1 }, expectedOutput: { seen: 1 } }], config: { fuzzIterations: 40, seed: 5 } },
    }, { phenotype })
    const first = rotifer(root, 'test', 'g')
    assert.equal(first.status, 1)
    assert.match(first.stdout, /FAIL {2}fuzz: 40 inputs from the inputSchema, seed 5: the gene crashed: .* \(iteration \d+, input \{"n":\d+\}; the same seed replays it\)/)
    assert.equal(rotifer(root, 'test', 'g').stdout, first.stdout, 'deterministic')
    addGene(root, 'g', { 'index.js': 'exports.express = (input) => ({ seen: input.n })', 'testsuite.json': { testCases: [{ input: { n: 1 } }], config: { fuzzIterations: 0 } } }, { phenotype })
    assert.match(rotifer(root, 'test', 'g').stdout, /FAIL {2}fuzz: 0 inputs .*: config\.fuzzIterations is 0, so the fuzz run asserts nothing/)
  })

  test('suite fields are upstream\'s plus name and expectedError; anything else is an error', (t) => {
    const root = makeProject(t)
    const cases = [
      [{ testCases: [{ input: {}, expectedOutputs: {} }] }, /test case 1 has an unknown field "expectedOutputs" \(did you mean "expectedOutput"\?\)/],
      [{ testCases: [{ input: {}, timeout: -1 }] }, /test case 1: "timeout" must be a positive number of milliseconds, not -1/],
      [{ testCases: [{ input: {}, expectedSchema: 'object' }] }, /"expectedSchema" must be a JSON Schema object/],
      [{ testCases: [{ input: {}, expectedSchema: {}, expectedError: 'X' }] }, /gives both "expectedSchema" and "expectedError"/],
      [{ testCases: [{ input: {} }], config: { fuzzIterations: 1.5 } }, /"config": "fuzzIterations" must be a non-negative integer, not 1\.5/],
      [{ testCases: [{ input: {} }], config: { seeds: 1 } }, /"config" has an unknown field "seeds"/],
      [{ testCases: [{ input: {}, expectedSchema: { type: 'nope' } }] }, /test case 1: "expectedSchema" is not a valid JSON Schema/],
    ]
    for (const [suite, message] of cases) {
      addGene(root, 'g', { 'index.js': PROBE, 'testsuite.json': suite })
      const r = rotifer(root, 'test', 'g')
      assert.equal(r.status, 1, JSON.stringify(suite))
      assert.match(oneErrorLine(r), message)
    }
  })
})

describe('inputs against the inputSchema (R-RUN-9)', () => {
  const phenotype = { domain: 'test.in', version: '1.0.0', inputSchema: { type: 'object', properties: { n: { type: 'integer', maximum: 9 } }, required: ['n'] }, outputSchema: { type: 'object' } }

  test('run refuses an input the gene does not accept, naming the field and the rule, and runs nothing', (t) => {
    const root = makeProject(t)
    addGene(root, 'g', { 'index.js': 'exports.express = (input) => { console.log("ran"); return input }' }, { phenotype })
    const r = rotifer(root, 'run', 'g', '--input', '{"n":10}')
    assert.equal(r.status, 1)
    assert.equal(r.stdout, '')
    assert.equal(oneErrorLine(r), 'error: gene "g": the input does not match the inputSchema of genes/g/phenotype.json: /n must be <= 9 (rule "maximum"); give an input that it accepts')
    assert.deepEqual(JSON.parse(rotifer(root, 'run', 'g', '--input', '{"n":9}').stdout), { n: 9 })
  })

  test('agent run checks every gene\'s input: the failure is that gene\'s (INVALID_INPUT), and a Try falls back on it', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'strict', WAT.constant({ strict: true }), { phenotype })
    await addWasmGene(root, 'echo', WAT.echo())
    assert.equal(rotifer(root, 'agent', 'create', 'one', '--genes', 'strict').status, 0)
    const r = rotifer(root, 'agent', 'run', 'one', '--input', '{"n":"x"}')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /^error: gene "strict" \(v2:[0-9a-f]{64}\) failed: INVALID_INPUT: the input does not match the inputSchema of genes\/strict\/phenotype\.json: \/n must be integer \(rule "type"\)$/)
    assert.deepEqual(JSON.parse(rotifer(root, 'agent', 'run', 'one', '--input', '{"n":1}').stdout), { strict: true })
    assert.equal(rotifer(root, 'agent', 'create', 'two', '--genes', 'strict', 'echo', '--composition', 'Try').status, 0)
    const fallback = rotifer(root, 'agent', 'run', 'two', '--input', '{"n":"x"}')
    assert.equal(fallback.status, 0, fallback.stderr)
    const out = JSON.parse(fallback.stdout)
    assert.deepEqual([out.error.code, out.original_input], ['INVALID_INPUT', { n: 'x' }])
  })
})
