'use strict'
// `rotifer compile` of a gene that has only its phenotype, as the upstream playground's compile
// does (R-RUN-10): --check validates and prints the Gene ID, --wasm wraps a module built
// elsewhere, nothing to compile writes a Wrapped .compile-result.json; a missing --wasm file is
// E0022 and an async express is E0025, found before the toolchain is looked for. Through the
// real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { createHash } = require('node:crypto')
const { compileWat } = require('../scripts/wat')
const { rotifer, rotiferWithEnv, json, makeProject, oneErrorLine, createAgent } = require('./cli-harness')
const { WAT } = require('./wasm-genes')

/** Upstream's edge-test phenotype, in genes/<name>/phenotype.json and nothing else. */
function phenotypeOnly(root, name) {
  const dir = path.join(root, 'genes', name)
  fs.mkdirSync(dir, { recursive: true })
  const phenotype = { domain: 'general', inputSchema: { type: 'object', properties: {} }, outputSchema: { type: 'object' }, version: '0.1.0', fidelity: 'Wrapped', transparency: 'Open' }
  fs.writeFileSync(path.join(dir, 'phenotype.json'), JSON.stringify(phenotype, null, 2))
  return dir
}

const files = (dir) => fs.readdirSync(dir).sort()

/** Upstream's Gene ID of a phenotype file, computed here: keys sorted at every depth, no irHash. */
function upstreamGeneId(file) {
  const sortKeys = (v) => (Array.isArray(v) ? v.map(sortKeys)
    : v !== null && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])])) : v)
  const { irHash, ...rest } = JSON.parse(fs.readFileSync(file, 'utf8'))
  return createHash('sha256').update(JSON.stringify(sortKeys(rest))).digest('hex')
}
const geneIdOf = (stdout) => /Gene ID \(v2\) {2}(v2:[0-9a-f]{64})/.exec(stdout)[1]

describe('compile edge cases of upstream (R-RUN-10)', () => {
  test('--check validates a gene with only phenotype.json and prints its Gene ID, writing nothing', (t) => {
    const root = makeProject(t)
    const dir = phenotypeOnly(root, 'test-gene')
    const r = rotifer(root, 'compile', 'test-gene', '--check')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Gene "test-gene" is valid \(nothing was written\)$/m)
    assert.equal(geneIdOf(r.stdout), `v2:${upstreamGeneId(path.join(dir, 'phenotype.json'))}`)
    assert.match(r.stdout, /Files {9}none: phenotype only/)
    assert.deepEqual(files(dir), ['phenotype.json'])
  })

  test('produces Wrapped fidelity when no WASM is present: .compile-result.json, no gene.ir.wasm', (t) => {
    const root = makeProject(t)
    const dir = phenotypeOnly(root, 'test-gene')
    const before = fs.readFileSync(path.join(dir, 'phenotype.json'), 'utf8')
    const r = rotifer(root, 'compile', 'test-gene')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Gene "test-gene" validated \(Wrapped fidelity\): nothing to compile$/m)
    assert.match(r.stdout, /Fidelity {6}Wrapped/)
    assert.match(r.stderr, /rotifer compile test-gene --wasm path\/to\/gene\.wasm/, 'says how to get to Native')
    assert.deepEqual(files(dir), ['.compile-result.json', 'phenotype.json'])
    const result = JSON.parse(fs.readFileSync(path.join(dir, '.compile-result.json'), 'utf8'))
    assert.deepEqual(Object.keys(result), ['geneId', 'name', 'domain', 'compiledAt', 'fidelity', 'wasmAvailable', 'irHash', 'wasmSize', 'codeSectionSize', 'durationMs'])
    assert.deepEqual(
      { ...result, compiledAt: typeof result.compiledAt, durationMs: typeof result.durationMs },
      { geneId: upstreamGeneId(path.join(dir, 'phenotype.json')), name: 'test-gene', domain: 'general', compiledAt: 'string', fidelity: 'Wrapped', wasmAvailable: false, irHash: null, wasmSize: 0, codeSectionSize: 0, durationMs: 'number' },
    )
    assert.equal(fs.readFileSync(path.join(dir, 'phenotype.json'), 'utf8'), before, 'the phenotype is left as it is')
  })

  test('--wasm with nonexistent file fails with E0022, writing nothing, even beside a source', (t) => {
    const root = makeProject(t)
    const dir = phenotypeOnly(root, 'test-gene')
    const missing = path.join(root, 'does-not-exist.wasm')
    for (const args of [[], ['--check']]) {
      const r = rotifer(root, 'compile', 'test-gene', '--wasm', missing, ...args)
      assert.equal(r.status, 1, args.join(' '))
      assert.match(oneErrorLine(r), /WASM file not found: \S+does-not-exist\.wasm \(E0022\); build the module first/)
    }
    assert.deepEqual(files(dir), ['phenotype.json'])
    // --wasm bypasses the source: E0022 still, and Javy is not asked for.
    fs.writeFileSync(path.join(dir, 'index.ts'), 'export function express(input: object) { return input }\n')
    const bypass = rotiferWithEnv(root, { PATH: path.dirname(process.execPath) }, 'compile', 'test-gene', '--wasm', missing)
    assert.equal(bypass.status, 1)
    assert.match(oneErrorLine(bypass), /WASM file not found: .* \(E0022\)/)
  })

  test('compile --wasm wraps a module built elsewhere (bring your own WASM) into gene.ir.wasm, which runs', async (t) => {
    const root = makeProject(t)
    const dir = phenotypeOnly(root, 'rust-gene')
    const built = path.join(root, 'rust-style.wasm')
    fs.writeFileSync(built, await compileWat(WAT.constant({ from: 'elsewhere' }), 'rust-style.wat'))
    const r = rotifer(root, 'compile', 'rust-gene', '--wasm', built)
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Gene "rust-gene" compiled to Rotifer IR$/m)
    assert.match(r.stdout, /Fidelity {6}Native/)
    const result = JSON.parse(fs.readFileSync(path.join(dir, '.compile-result.json'), 'utf8'))
    assert.deepEqual([result.fidelity, result.wasmAvailable, /^[0-9a-f]{64}$/.test(result.irHash), result.wasmSize > 0], ['Native', true, true, true])
    assert.ok(fs.existsSync(path.join(dir, 'gene.ir.wasm')))
    createAgent(root, 'byo', ['rust-gene'])
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'byo', '--input', '{}')), { from: 'elsewhere' })
  })

  test('a TypeScript gene whose compilation to WASM fails is E0024: no javy, or javy failing', (t) => {
    const root = makeProject(t)
    const dir = phenotypeOnly(root, 'ts-gene')
    fs.writeFileSync(path.join(dir, 'index.ts'), 'export function express(input: { name: string }) { return { out: input.name } }\n')
    const none = rotiferWithEnv(root, { PATH: path.dirname(process.execPath) }, 'compile', 'ts-gene')
    assert.equal(none.status, 1)
    assert.match(oneErrorLine(none), /needs Javy, and no javy binary is on PATH \(E0024\)/)
    const bin = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'rotifer-failing-javy-'))
    t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
    fs.writeFileSync(path.join(bin, 'javy'), '#!/bin/sh\necho "syntax error in gene-shim.js" >&2\nexit 3\n', { mode: 0o755 })
    const failing = rotiferWithEnv(root, { PATH: `${bin}${path.delimiter}${process.env.PATH}` }, 'compile', 'ts-gene')
    assert.equal(failing.status, 1)
    assert.match(failing.stderr.trimEnd().split('\n').pop(), /javy failed to compile genes\/ts-gene\/index\.ts \(exit 3, E0024\): syntax error in gene-shim\.js/)
    assert.deepEqual(files(dir), ['index.ts', 'phenotype.json'])
  })

  test('a Hybrid gene is not compiled: exit 0, a Hybrid .compile-result.json with no WASM, async express allowed, a warning for no allowedDomains', (t) => {
    const root = makeProject(t)
    const dir = phenotypeOnly(root, 'net-gene')
    const phenotypeFile = path.join(dir, 'phenotype.json')
    const declared = { ...JSON.parse(fs.readFileSync(phenotypeFile, 'utf8')), fidelity: 'Hybrid', network: { allowedDomains: ['api.example.com'] } }
    fs.writeFileSync(phenotypeFile, JSON.stringify(declared, null, 2))
    fs.writeFileSync(path.join(dir, 'index.ts'), 'export async function express(input: { name: string }): Promise<{ greeting: string }> {\n  return { greeting: "hi " + input.name };\n}\n')
    const before = fs.readFileSync(phenotypeFile, 'utf8')
    // No javy on PATH: a Hybrid gene does not need it.
    const r = rotiferWithEnv(root, { PATH: path.dirname(process.execPath) }, 'compile', 'net-gene')
    assert.equal(r.status, 0, r.stderr)
    assert.doesNotMatch(r.stderr, /E0024|E0025|warning/)
    assert.match(r.stdout, /Fidelity {6}Hybrid/)
    assert.equal(geneIdOf(r.stdout), `v2:${upstreamGeneId(phenotypeFile)}`)
    assert.deepEqual(files(dir), ['.compile-result.json', 'index.ts', 'phenotype.json'], 'no gene.wasm, no gene.ir.wasm')
    const result = JSON.parse(fs.readFileSync(path.join(dir, '.compile-result.json'), 'utf8'))
    assert.deepEqual([result.geneId, result.fidelity, result.wasmAvailable, result.irHash, result.wasmSize], [upstreamGeneId(phenotypeFile), 'Hybrid', false, null, 0])
    assert.equal(fs.readFileSync(phenotypeFile, 'utf8'), before, 'the fidelity stays as declared')
    // No hosts declared: compiled all the same, with upstream's warning.
    fs.writeFileSync(phenotypeFile, JSON.stringify({ ...declared, network: { allowedDomains: [] } }, null, 2))
    const empty = rotiferWithEnv(root, { PATH: path.dirname(process.execPath) }, 'compile', 'net-gene')
    assert.equal(empty.status, 0, empty.stderr)
    assert.match(empty.stderr, /^warning: .*allowedDomains is empty/m)
    // init --fidelity Hybrid's first gene compiles the same way.
    const made = path.join(root, 't2')
    assert.equal(rotifer(root, 'init', made, '--fidelity', 'Hybrid').status, 0)
    const init = rotiferWithEnv(made, { PATH: path.dirname(process.execPath) }, 'compile', 'hello-world')
    assert.equal(init.status, 0, init.stderr)
    assert.equal(JSON.parse(fs.readFileSync(path.join(made, 'genes', 'hello-world', '.compile-result.json'), 'utf8')).fidelity, 'Hybrid')
  })

  test('compile fails fast with E0025 on an async express, before looking for javy', (t) => {
    const root = makeProject(t)
    const dir = phenotypeOnly(root, 'test-gene')
    fs.writeFileSync(path.join(dir, 'index.ts'), 'export async function express(input: { name: string }): Promise<{ greeting: string }> {\n  return { greeting: "hi " + input.name };\n}\n')
    // No javy on PATH: the answer is still E0025, not "install Javy".
    const r = rotiferWithEnv(root, { PATH: path.dirname(process.execPath) }, 'compile', 'test-gene')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /genes\/test-gene\/index\.ts declares an async express \(E0025\): a gene compiled to WASM needs a synchronous express/)
    assert.doesNotMatch(r.stderr, /javy binary|wasm backtrace/i)
    assert.deepEqual(files(dir), ['index.ts', 'phenotype.json'])
  })
})
