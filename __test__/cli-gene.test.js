'use strict'
// `rotifer run <gene>` (standalone, memory denied) and `rotifer test <gene>` (test memory),
// driven through the real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, rotiferWithEnv, json, makeProject, addGene, addFormatter, PROBE, steps, createAgent, oneErrorLine, stateFiles } = require('./cli-harness')

/** Every file under `.rotifer/` with its content, to prove a command changed none. */
function snapshot(root) {
  const out = {}
  const walk = (dir) => {
    if (!fs.existsSync(dir)) return
    for (const f of fs.readdirSync(dir)) {
      const p = path.join(dir, f)
      if (fs.statSync(p).isDirectory()) walk(p)
      else out[path.relative(root, p)] = fs.readFileSync(p).toString('base64')
    }
  }
  walk(path.join(root, '.rotifer'))
  return out
}

describe('rotifer run', () => {
  test('a gene on its own: every memory call is MEMORY_ACCESS_DENIED and no file is touched', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const out = json(rotifer(root, 'run', 'probe', '--input', steps([{ write: 'k' }, { read: 'k' }, { delete: 'k' }])))
    assert.deepEqual(out.results, [[{ error: 'MEMORY_ACCESS_DENIED' }, { error: 'MEMORY_ACCESS_DENIED' }, { error: 'MEMORY_ACCESS_DENIED' }]])
    assert.equal(fs.existsSync(path.join(root, '.rotifer')), false)
  })

  test('the formatter fails when the denial escapes, with its code shown', (t) => {
    const root = makeProject(t)
    addFormatter(root)
    const r = rotifer(root, 'run', 'formatter', '--input', JSON.stringify({ code: 'x', indent: 4 }))
    assert.equal(r.status, 1)
    assert.equal(r.stdout, '')
    assert.match(oneErrorLine(r), /^error: gene "formatter" \(v2:[0-9a-f]{64}\) failed: MEMORY_ACCESS_DENIED: .*\(at genes\/formatter\/index\.ts:\d+:\d+\)$/)
    assert.deepEqual(stateFiles(root), [], 'only the transpile cache')
  })

  test("an agent's memory stays out of reach of a standalone run", (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    createAgent(root, 'a', ['probe'])
    json(rotifer(root, 'agent', 'run', 'a', '--input', steps([{ write: 'k', value: 'v' }])))
    const before = snapshot(root)
    assert.deepEqual(json(rotifer(root, 'run', 'probe', '--input', steps([{ read: 'k' }]))).results, [[{ error: 'MEMORY_ACCESS_DENIED' }]])
    assert.deepEqual(snapshot(root), before, 'no agent file changed')
  })

  test('ES module and TypeScript genes load, with relative imports and the memory module', (t) => {
    const root = makeProject(t)
    addGene(root, 'esm', {
      'index.js': [
        'import { MemoryError } from "@rotifer/playground/memory";',
        'import { label } from "./label.js";',
        'export function express(input, ctx) {',
        '  console.log("gene logs go to stderr");',
        '  try { ctx.memory.readMemory("k") } catch (e) { return { label: label(input.x), same: e instanceof MemoryError } }',
        '}',
      ].join('\n'),
      'label.js': 'export const label = (x) => `<${x}>`',
    })
    addGene(root, 'typed', {
      'index.ts': 'import { twice } from "./twice";\nexport default { express: (input: { n: number }): { n: number } => ({ n: twice(input.n) }) };\n',
      'twice.ts': 'export function twice(n: number): number { return n * 2 }\n',
    })
    const esm = rotifer(root, 'run', 'esm', '--input', '{"x":1}')
    assert.equal(esm.status, 0, esm.stderr)
    assert.deepEqual(JSON.parse(esm.stdout), { label: '<1>', same: true })
    assert.match(esm.stderr, /gene logs go to stderr/)
    assert.deepEqual(json(rotifer(root, 'run', 'typed', '--input', '{"n":21}')), { n: 42 })
  })

  test('broken genes fail with one line naming the problem', (t) => {
    const root = makeProject(t)
    addGene(root, 'syntax', { 'index.ts': 'export function express(input: any) {\n  return (;\n}\n' })
    addGene(root, 'noexpress', { 'index.js': 'exports.other = 1' })
    addGene(root, 'nothing', { 'index.js': 'exports.express = () => undefined' })
    addGene(root, 'nophenotype', { 'index.js': PROBE }, { phenotype: { name: 'x', domain: 'Bad Domain', version: '1', inputSchema: {}, outputSchema: {} } })
    const cases = [
      ['syntax', /genes\/syntax\/index\.ts:2:\d+: Expression expected/],
      ['noexpress', /does not export a function named "express"/],
      ['nothing', /express returned no output/],
      ['nophenotype', /"domain" must be lower-case words joined by dots/],
      ['absent', /gene "absent" not found/],
    ]
    for (const [gene, message] of cases) {
      const r = rotifer(root, 'run', gene, '--input', '{}')
      assert.equal(r.status, 1, gene)
      assert.match(oneErrorLine(r), message)
    }
  })
})

describe('rotifer test', () => {
  const COUNTER = `
exports.express = function express(input, ctx) {
  const saved = ctx.memory.readMemory('count', 'CONTEXT')
  const before = saved ? Number(Buffer.from(saved.value).toString()) : null
  ctx.memory.writeMemory('count', Buffer.from(String((before || 0) + input.add)), 'CONTEXT')
  return { before }
}
`
  test('cases share one fresh test memory, in order: the second reads what the first wrote', (t) => {
    const root = makeProject(t)
    addGene(root, 'counter', {
      'index.js': COUNTER,
      'testsuite.json': { testCases: [{ input: { add: 5 }, expectedOutput: { before: null } }, { name: 'reads', input: { add: 1 }, expectedOutput: { before: 5 } }] },
    })
    // The test memory is made in the temporary folder: a private one shows it is deleted.
    const tmp = path.join(root, 'tmp')
    fs.mkdirSync(tmp)
    for (let run = 0; run < 2; run++) {
      // The second run starts from an empty memory again: case 1 expects nothing saved.
      const r = rotiferWithEnv(root, { TMPDIR: tmp }, 'test', 'counter')
      assert.equal(r.status, 0, r.stdout + r.stderr)
      assert.match(r.stdout, /^Testing gene "counter" \(v2:[0-9a-f]{64}\): 2 cases/)
      assert.match(r.stdout, /\n {2}ok {4}case 1\n {2}ok {4}case 2: reads\n2 passed, 0 failed\n$/)
      assert.deepEqual(fs.readdirSync(tmp), [], 'the test memory is deleted')
    }
    assert.deepEqual(stateFiles(root), [], 'no project memory or log')
  })

  test('the spec formatter suite passes; a failing case is reported and exits non-zero', (t) => {
    const root = makeProject(t)
    addFormatter(root)
    const ok = rotifer(root, 'test', 'formatter')
    assert.equal(ok.status, 0, ok.stdout + ok.stderr)
    assert.match(ok.stdout, /2 passed, 0 failed/)

    addGene(root, 'counter', {
      'index.js': COUNTER,
      'testsuite.json': {
        testCases: [
          { input: { add: 2 }, expectedOutput: { before: 7 } },
          { input: { add: 3 } },
          { input: { add: 1 }, expectedOutput: { before: null } },
          { name: 'throws', input: null },
        ],
      },
    })
    const bad = rotifer(root, 'test', 'counter')
    assert.equal(bad.status, 1)
    // A failed case does not stop the suite, and later cases still share the memory.
    assert.equal(bad.stdout.split('\n').slice(1).join('\n'), [
      '  FAIL  case 1: output differs',
      '      expected: {"before":7}',
      '      actual:   {"before":null}',
      '  ok    case 2',
      '  FAIL  case 3: output differs',
      '      expected: {"before":null}',
      '      actual:   {"before":5}',
      // null is outside the inputSchema ({"type": "object"}): refused before the gene runs, as
      // every run refuses it.
      '  ok    case 4: throws (input outside the inputSchema: (root) must be object (rule "type"); refused, INVALID_INPUT)',
      '2 passed, 2 failed',
      '',
    ].join('\n'))
  })

  test("never touches an agent's memory or logs", (t) => {
    const root = makeProject(t)
    addGene(root, 'counter', { 'index.js': COUNTER, 'testsuite.json': { testCases: [{ input: { add: 1 }, expectedOutput: { before: null } }] } })
    addGene(root, 'probe', { 'index.js': PROBE })
    createAgent(root, 'a', ['counter'])
    json(rotifer(root, 'agent', 'run', 'a', '--input', '{"add":3}'))
    const before = snapshot(root)
    const r = rotifer(root, 'test', 'counter')
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.deepEqual(snapshot(root), before)
  })

  test("a gene without a suite gets upstream's standard checks; an empty suite is an error", (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    addGene(root, 'empty', { 'index.js': PROBE, 'testsuite.json': { testCases: [] } })
    const none = rotifer(root, 'test', 'probe')
    assert.equal(none.status, 0, none.stdout + none.stderr)
    assert.match(none.stdout, /^Testing gene "probe" \(v2:[0-9a-f]{64}\): no genes\/probe\/testsuite\.json, so the standard checks/)
    assert.match(none.stdout, /\n {2}ok {4}the sample input \{\} conforms to the inputSchema\n/)
    assert.match(none.stdout, /\n {2}ok {4}runs on the sample input\n {2}ok {4}the output conforms to the outputSchema\n7 passed, 0 failed\n$/)
    const empty = rotifer(root, 'test', 'empty')
    assert.equal(empty.status, 1)
    assert.match(oneErrorLine(empty), /non-empty "testCases"/)
  })
})
