'use strict'
// Testing a gene as its author does, with the package as users get it: `npm pack`, installed
// into a fresh project (no Rust toolchain on PATH), and the README's "Test your gene" section
// run as written: its files written out, its commands run (a `node:test` suite of TypeScript on
// Node 20 through `--import @rotifer/playground/register`, and a vitest suite). Also that the
// helpers agree with the real bin (`rotifer gene id`, `rotifer agent run`), and that the types
// compile under `node10` resolution and `tsc --init`'s defaults with no DOM library.

const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const REPO = path.join(__dirname, '..')
const NO_RUST_PATH = [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter)

let work
let app
let env

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...options })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stdout}\n${r.stderr}`)
  return r.stdout
}

/** docs/testing.md's "Test your gene" section: `{ files: [{ path, text }], commands: [line] }`. */
function readmeSection() {
  const readme = fs.readFileSync(path.join(REPO, 'docs', 'testing.md'), 'utf8')
  const start = readme.indexOf('\n## Test your gene\n')
  assert.notEqual(start, -1, 'docs/testing.md has a "Test your gene" section')
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end === -1 ? undefined : end)
  const files = [...section.matchAll(/<!-- file: (\S+) -->\n```\w*\n([\s\S]*?)```/g)].map((m) => ({ path: m[1], text: m[2] }))
  const commands = [...section.matchAll(/<!-- run -->\n```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1].split('\n').filter((l) => l.trim() !== ''))
  return { files, commands }
}

const gene = (name) => path.join(app, 'genes', name)

function writeGene(name, phenotype, source) {
  fs.mkdirSync(gene(name), { recursive: true })
  fs.writeFileSync(path.join(gene(name), 'phenotype.json'), JSON.stringify(phenotype))
  fs.writeFileSync(path.join(gene(name), 'index.ts'), source)
}

before(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-gene-testing-')))
  const packed = run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: REPO }).trim().split('\n').pop()
  app = path.join(work, 'app')
  fs.mkdirSync(path.join(app, 'node_modules'), { recursive: true })
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'gene-author', version: '1.0.0', private: true }))
  fs.writeFileSync(path.join(app, 'rotifer.json'), '{}\n')
  // The package's dependencies, copied so that the install needs no network.
  for (const dep of ['typescript', 'ajv', 'commander', 'fast-deep-equal', 'fast-uri', 'json-schema-traverse', 'require-from-string']) {
    fs.cpSync(path.join(REPO, 'node_modules', dep), path.join(app, 'node_modules', dep), { recursive: true })
  }
  env = { ...process.env, PATH: [path.join(app, 'node_modules', '.bin'), NO_RUST_PATH].join(path.delimiter), NO_COLOR: '1', FORCE_COLOR: '0' }
  delete env.NODE_TEST_CONTEXT // the README's `node --test` is a suite of its own, not a child of this one
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(work, packed)], { cwd: app, env })
  // vitest and vite: this checkout's, linked (their own dependencies resolve from here) and
  // declared as the author's devDependencies, so that `npx vitest` finds them.
  const devDependencies = {}
  for (const dep of ['vitest', 'vite']) {
    fs.symlinkSync(path.join(REPO, 'node_modules', dep), path.join(app, 'node_modules', dep))
    devDependencies[dep] = JSON.parse(fs.readFileSync(path.join(REPO, 'node_modules', dep, 'package.json'), 'utf8')).version
  }
  fs.mkdirSync(path.join(app, 'node_modules', '.bin'), { recursive: true })
  fs.symlinkSync('../vitest/vitest.mjs', path.join(app, 'node_modules', '.bin', 'vitest'))
  const manifest = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8'))
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ ...manifest, devDependencies }, null, 2))
  for (const file of readmeSection().files) {
    fs.mkdirSync(path.dirname(path.join(app, file.path)), { recursive: true })
    fs.writeFileSync(path.join(app, file.path), file.text)
  }
})

after(() => fs.rmSync(work, { recursive: true, force: true }))

function sh(line) {
  return spawnSync('bash', ['-c', line], { cwd: app, env, encoding: 'utf8', timeout: 180_000 })
}

const testCount = (file) => fs.readFileSync(path.join(app, file), 'utf8').match(/^test\(/gm).length

test('the README\'s "Test your gene" section runs as written: node:test on TypeScript (Node 20) and vitest', () => {
  const { files, commands } = readmeSection()
  assert.deepEqual(files.map((f) => f.path).sort(), ['genes/counter/index.ts', 'genes/counter/phenotype.json', 'test/counter.spec.ts', 'test/counter.test.ts'])
  assert.equal(commands.length, 2, commands.join('\n'))
  const [nodeTest, vitest] = commands
  assert.match(nodeTest, /^node --import @rotifer\/playground\/register --test test\/counter\.test\.ts$/)
  let r = sh(nodeTest)
  assert.equal(r.status, 0, r.stdout + r.stderr)
  assert.match(r.stdout, new RegExp(`^# pass ${testCount('test/counter.test.ts')}$`, 'm'), r.stdout)
  assert.match(r.stdout, /^# fail 0$/m)
  assert.match(vitest, /^npx vitest run test\/counter\.spec\.ts$/)
  r = sh(vitest)
  assert.equal(r.status, 0, r.stdout + r.stderr)
  assert.match(r.stdout, new RegExp(`Tests\\s+${testCount('test/counter.spec.ts')} passed`), r.stdout)
  assert.doesNotMatch(r.stdout, /failed/)
})

test('without the register hooks, Node 20 refuses the TypeScript suite (what --import fixes)', () => {
  const r = sh('node --test test/counter.test.ts')
  assert.notEqual(r.status, 0)
  assert.match(r.stdout + r.stderr, /ERR_UNKNOWN_FILE_EXTENSION/)
  // The hooks module itself is not an export; the register entry is.
  const probe = sh(`node -e "for (const s of ['@rotifer/playground/lib/cli/gene-hooks.mjs', '@rotifer/playground/register', '@rotifer/playground/testing']) { try { require.resolve(s); console.log(s, 'ok') } catch (e) { console.log(s, e.code) } }"`)
  assert.equal(probe.stdout, '@rotifer/playground/lib/cli/gene-hooks.mjs ERR_PACKAGE_PATH_NOT_EXPORTED\n@rotifer/playground/register ok\n@rotifer/playground/testing ok\n')
})

test('geneId(folder) is what the installed `rotifer gene id` prints', () => {
  const r = sh(`node -e "console.log(require('@rotifer/playground/testing').geneId('genes/counter'))" && rotifer gene id counter`)
  assert.equal(r.status, 0, r.stderr)
  const [id, ...printed] = r.stdout.trim().split('\n')
  assert.match(id, /^v2:[0-9a-f]{64}$/)
  assert.ok(printed.join('\n').includes(id), r.stdout)
})

test('runGene gives a gene the ctx and the outputs `rotifer agent run` gives it', () => {
  writeGene('probe', { domain: 'demo.probe', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: {} }, [
    `import { MemoryError, type GeneContext } from '@rotifer/playground/memory'`,
    `export async function express(input: { n?: number }, ctx: GeneContext) {`,
    `  const seen = ctx.memory.readMemory('seen')`,
    `  const runs = (seen ? seen.value[0] : 0) + 1`,
    `  const entry = ctx.memory.writeMemory('seen', new Uint8Array([runs]), 'CONTEXT')`,
    `  let denied = null`,
    `  try { ctx.memory.deleteMemory('absent') } catch (e) { denied = e instanceof MemoryError ? e.code : 'another class' }`,
    `  return { keys: Object.keys(ctx).sort(), cls: ctx.memory.constructor.name, createdBy: entry.createdBy, runs, denied, n: input.n ?? null }`,
    `}`,
  ].join('\n'))
  const viaTesting = sh(`node -e "
    const { createTestMemory, runGene } = require('@rotifer/playground/testing')
    const t = createTestMemory()
    ;(async () => {
      const out = [await runGene('genes/probe', { n: 1 }, { memory: t }), await runGene('genes/probe', {}, { memory: t })]
      t.dispose()
      console.log(JSON.stringify(out))
    })()"`)
  assert.equal(viaTesting.status, 0, viaTesting.stderr)
  const viaBin = sh(`rotifer agent create p --genes probe >/dev/null && rotifer agent run p --input '{"n":1}' && rotifer agent run p --input '{}'`)
  assert.equal(viaBin.status, 0, viaBin.stderr)
  const bin = viaBin.stdout.trim().split(/\n(?=\{)/).map((t) => JSON.parse(t))
  const testing = JSON.parse(viaTesting.stdout)
  assert.equal(testing[0].runs, 1)
  assert.equal(testing[1].runs, 2, 'the second run reads what the first wrote')
  assert.equal(testing[0].denied, 'MEMORY_NOT_FOUND')
  assert.deepEqual(testing, bin)
})

test('runGene: a gene over its timeout fails with code TIMEOUT; a broken gene names its file', () => {
  writeGene('stuck', { domain: 'demo.stuck', version: '1.0.0', inputSchema: {}, outputSchema: {} }, 'export function express() { for (;;) {} }\n')
  writeGene('broken', { domain: 'demo.broken', version: '1.0.0', inputSchema: {}, outputSchema: {} }, 'export function express( {\n')
  const r = sh(`node -e "
    const { runGene } = require('@rotifer/playground/testing')
    const codeOf = (p) => p.then(() => 'resolved', (e) => e.code || e.message)
    ;(async () => console.log(JSON.stringify([await codeOf(runGene('genes/stuck', {}, { timeout: 0.5 })), await codeOf(runGene('genes/broken', {}))])))()"`)
  assert.equal(r.status, 0, r.stderr)
  const [stuck, broken] = JSON.parse(r.stdout)
  assert.equal(stuck, 'TIMEOUT')
  assert.match(broken, /genes\/broken\/index\.ts/)
})

const TYPES_PROBE = [
  `import { createMemoryImports, createTestMemory, GeneMemoryAccess, MemoryError, type GeneContext, type MemoryFilter } from '@rotifer/playground/memory'`,
  `import { geneId, runGene, type RunGeneOptions } from '@rotifer/playground/testing'`,
  `const t = createTestMemory({ domain: undefined, geneId: undefined, quota: undefined, dataPolicy: { maxRetentionDays: undefined } })`,
  `const filter: MemoryFilter = { category: undefined, keyPrefix: 'a/', limit: undefined }`,
  `t.memory.queryMemory(filter)`,
  `new GeneMemoryAccess({ agentId: t.agentId, geneId: geneId('genes/counter'), domain: undefined, root: t.root, now: undefined })`,
  `const options: RunGeneOptions = { memory: t, timeout: undefined }`,
  `export const done: Promise<unknown> = runGene('genes/counter', {}, options)`,
  `createMemoryImports({ agentId: null, geneId: null, deadline: undefined }, () => ({ buffer: new ArrayBuffer(8) }))`,
  `export function express(input: { n: number }, ctx: GeneContext): { n: number } {`,
  `  ctx.memory.writeMemory('n', new Uint8Array([input.n]), 'CACHE')`,
  `  return { n: input.n }`,
  `}`,
  `export const isError = (e: unknown): boolean => e instanceof MemoryError`,
  `// @ts-expect-error a domain is a string`,
  `createTestMemory({ domain: 5 })`,
  `// @ts-expect-error runGene takes no such option`,
  `runGene('genes/counter', {}, { retries: 1 })`,
].join('\n')

test('types compile under strict with node10 resolution and no DOM library', () => {
  fs.writeFileSync(path.join(app, 'types-probe.ts'), TYPES_PROBE)
  const tsc = path.join(app, 'node_modules', 'typescript', 'bin', 'tsc')
  run(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'commonjs', '--moduleResolution', 'node10', '--target', 'es2022', '--lib', 'es2022', 'types-probe.ts'], { cwd: app })
  // And the check is live: a wrong field is reported.
  fs.writeFileSync(path.join(app, 'types-wrong.ts'), `import { createTestMemory } from '@rotifer/playground/memory'\ncreateTestMemory({ domian: 'x' })\n`)
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'commonjs', '--moduleResolution', 'node10', '--lib', 'es2022', 'types-wrong.ts'], { cwd: app, encoding: 'utf8' })
  assert.notEqual(r.status, 0)
  assert.match(r.stdout, /types-wrong\.ts\(2,.*domian/)
})

test("types compile under `tsc --init`'s defaults (exactOptionalPropertyTypes, nodenext) in an ES module project", () => {
  const dir = path.join(app, 'strict-project')
  fs.mkdirSync(path.join(dir, 'genes'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'strict-project', private: true, type: 'module' }))
  const tsc = path.join(app, 'node_modules', 'typescript', 'bin', 'tsc')
  run(process.execPath, [tsc, '--init'], { cwd: dir })
  const config = fs.readFileSync(path.join(dir, 'tsconfig.json'), 'utf8')
  assert.match(config, /^\s*"exactOptionalPropertyTypes": true/m, 'tsc --init turns exactOptionalPropertyTypes on')
  fs.writeFileSync(path.join(dir, 'probe.ts'), TYPES_PROBE)
  run(process.execPath, [tsc, '--noEmit', '-p', '.'], { cwd: dir })
})

test('the tarball ships the docs the README links to', () => {
  const pkg = path.join(app, 'node_modules', '@rotifer', 'playground')
  const linked = [...fs.readFileSync(path.join(REPO, 'README.md'), 'utf8').matchAll(/\]\((docs\/[\w.-]+\.md)\)/g)].map((m) => m[1])
  assert.ok(linked.length >= 8, `the README links the docs: ${linked}`)
  for (const doc of ['README.md', ...linked, 'testing.d.ts', 'lib/testing/register.js']) {
    assert.ok(fs.existsSync(path.join(pkg, doc)), doc)
  }
})
