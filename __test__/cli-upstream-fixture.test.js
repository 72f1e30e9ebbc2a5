'use strict'
// The fixture project in the upstream playground's layout (__test__/fixtures/upstream-project/):
// a custom genes_dir, phenotypes without `name` and with fidelity, tags, semanticRequirements
// and irHash, suites with expectedSchema, timeout and config. It runs unchanged: list, test,
// run, agent run and compile --check (R-RUN-1, 2, 3, 9, 10's --check). Through the real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createHash } = require('node:crypto')
const { compileWat } = require('../scripts/wat')
const { REPO, rotifer, json, oneErrorLine } = require('./cli-harness')

const FIXTURE = path.join(REPO, '__test__', 'fixtures', 'upstream-project')

/** A fresh copy of the fixture project, its echo-ir gene compiled to gene.ir.wasm. */
async function fixtureProject(t) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-upstream-')))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.cpSync(FIXTURE, root, { recursive: true })
  const echo = path.join(root, 'src', 'genes', 'echo-ir')
  fs.writeFileSync(path.join(echo, 'gene.ir.wasm'), await compileWat(fs.readFileSync(path.join(echo, 'gene.wat'), 'utf8'), 'echo.wat'))
  return root
}

/** Upstream's content hash, computed independently: keys sorted at every depth, then JSON.stringify. */
function upstreamContentHash(phenotype) {
  const sortKeysDeep = (v) => (Array.isArray(v) ? v.map(sortKeysDeep)
    : v !== null && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeysDeep(v[k])])) : v)
  const { irHash, ...rest } = phenotype
  return createHash('sha256').update(JSON.stringify(sortKeysDeep(rest))).digest('hex')
}

function phenotypeAt(root, gene) {
  return JSON.parse(fs.readFileSync(path.join(root, 'src', 'genes', gene, 'phenotype.json'), 'utf8'))
}

describe('the fixture project in upstream layout', () => {
  test('list finds its genes in genes_dir, from any folder inside, with fidelity, compiled and Gene ID (v2)', async (t) => {
    const root = await fixtureProject(t)
    const inside = path.join(root, 'src', 'genes', 'word-stats')
    const genes = json(rotifer(inside, 'list', '--json'))
    assert.deepEqual(genes.map((g) => [g.name, g.kind, g.domain, g.fidelity, g.compiled]), [
      ['echo-ir', 'wasm', 'util.echo', 'Native', true],
      ['shouter', 'mjs', 'text.tools', 'Hybrid', false],
      ['word-stats', 'ts', 'text.stats', 'Wrapped', false],
    ])
    for (const g of genes) assert.equal(g.id, `v2:${upstreamContentHash(phenotypeAt(root, g.name))}`, g.name)
    // `gene list` is the same command.
    assert.deepEqual(json(rotifer(root, 'gene', 'list', '--json')), genes)
    const table = rotifer(root, 'list').stdout.split('\n')
    assert.match(table[0], /^NAME\s+KIND\s+DOMAIN\s+FIDELITY\s+COMPILED\s+GENE ID \(V2\)$/)
    assert.match(table[1], /^echo-ir\s+wasm\s+util\.echo\s+Native\s+yes\s+v2:[0-9a-f]{64}$/)
    assert.equal(fs.existsSync(path.join(root, 'genes')), false, 'nothing looked for in genes/')
  })

  test('every suite passes: expectedSchema, timeout, expectedError, illegal inputs and fuzz from the seed', async (t) => {
    const root = await fixtureProject(t)
    const stats = rotifer(root, 'test', 'word-stats')
    assert.equal(stats.status, 0, stats.stdout + stats.stderr)
    assert.equal(stats.stdout.split('\n').slice(1).join('\n'), [
      '  ok    case 1: counts and ranks',
      '  ok    case 2',
      '  ok    case 3: a text that is not a string is refused (input outside the inputSchema: /text must be string (rule "type"); refused, INVALID_INPUT)',
      '  ok    case 4',
      '  ok    fuzz: 8 inputs from the inputSchema, seed 7',
      '5 passed, 0 failed',
      '',
    ].join('\n'))
    const shouter = rotifer(root, 'test', 'shouter')
    assert.equal(shouter.status, 0, shouter.stdout + shouter.stderr)
    assert.match(shouter.stdout, /ok {4}case 3: an empty message .* \(input outside the inputSchema: \/message must NOT have fewer than 1 characters \(rule "minLength"\); refused, INVALID_INPUT\)\n3 passed, 0 failed\n$/)
    const echo = rotifer(root, 'test', 'echo-ir')
    assert.equal(echo.status, 0, echo.stdout + echo.stderr)
    assert.match(echo.stdout, /ok {4}fuzz: 5 inputs from the inputSchema, seed 3\n3 passed, 0 failed\n$/)
  })

  test('genes run: a .mjs gene exporting main, a compiled gene, and an agent of both; inputs meet the inputSchema', async (t) => {
    const root = await fixtureProject(t)
    assert.deepEqual(json(rotifer(root, 'run', 'shouter', '--input', '{"message":"hi"}')), { shout: 'HI!' })
    assert.deepEqual(json(rotifer(root, 'run', 'echo-ir', '--input', '{"x":[1]}')), { x: [1] })
    const bad = rotifer(root, 'run', 'shouter', '--input', '{"message":"hi","loud":true}')
    assert.equal(bad.status, 1)
    assert.equal(oneErrorLine(bad), 'error: gene "shouter": the input does not match the inputSchema of src/genes/shouter/phenotype.json: (root) must not have the property "loud" (rule "additionalProperties"); give an input that it accepts')
    const created = rotifer(root, 'agent', 'create', 'pipeline', '--genes', 'echo-ir', 'shouter')
    assert.equal(created.status, 0, created.stderr)
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'pipeline', '--input', '{"message":"go"}')), { shout: 'GO!' })
    // A gene inside the composition gets an input its schema refuses: it fails with INVALID_INPUT.
    const inner = rotifer(root, 'agent', 'run', 'pipeline', '--input', '{"message":"go","extra":1}')
    assert.equal(inner.status, 1)
    assert.match(oneErrorLine(inner), /^error: gene "shouter" \(v2:[0-9a-f]{64}\) failed: INVALID_INPUT: the input does not match the inputSchema of src\/genes\/shouter\/phenotype\.json: \(root\) must not have the property "extra"/)
  })

  test('compile --check validates every gene and prints its Gene ID (v2); compile recompiles a lone gene.ir.wasm (R-RUN-10)', async (t) => {
    const root = await fixtureProject(t)
    const before = fs.readFileSync(path.join(root, 'src', 'genes', 'echo-ir', 'phenotype.json'), 'utf8')
    for (const gene of ['word-stats', 'shouter', 'echo-ir']) {
      const r = rotifer(root, 'compile', gene, '--check')
      assert.equal(r.status, 0, r.stderr)
      assert.match(r.stdout, new RegExp(`^Gene "${gene}" is valid \\(nothing was written\\)\\n {2}Gene ID \\(v2\\) {2}v2:${upstreamContentHash(phenotypeAt(root, gene))}\\n`))
    }
    assert.equal(fs.readFileSync(path.join(root, 'src', 'genes', 'echo-ir', 'phenotype.json'), 'utf8'), before, 'nothing written by --check')
    const r = rotifer(root, 'compile', 'echo-ir')
    assert.equal(r.status, 0, r.stderr)
    const irHash = r.stdout.match(/^ {2}IR Hash {7}([0-9a-f]{64})$/m)[1]
    assert.equal(JSON.parse(fs.readFileSync(path.join(root, 'src', 'genes', 'echo-ir', 'phenotype.json'), 'utf8')).irHash, irHash)
    assert.deepEqual(json(rotifer(root, 'run', 'echo-ir', '--input', '{"x":[2]}')), { x: [2] }, 'the recompiled gene runs')
    fs.writeFileSync(path.join(root, 'src', 'genes', 'echo-ir', 'gene.ir.wasm'), 'not wasm')
    const broken = rotifer(root, 'compile', 'echo-ir', '--check')
    assert.equal(broken.status, 1)
    assert.match(oneErrorLine(broken), /^error: src\/genes\/echo-ir\/gene\.ir\.wasm is not a valid WebAssembly module/)
  })
})
