'use strict'
// The package as users get it: `npm pack`, then `npm install <tarball>` into a fresh project
// with no Rust toolchain on PATH. From there: named and default imports from ES modules (`.mjs`
// and a "type": "module" folder) and `require`, all giving the same objects; every type name
// of index.d.ts through the package's "types"; and the `rotifer` bin running a TypeScript gene.

const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const REPO = path.join(__dirname, '..')
const NO_RUST_PATH = [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter)

let work
let project

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...options })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stdout}\n${r.stderr}`)
  return r.stdout
}

/** The names index.d.ts exports: values (classes, consts, functions) and types. */
function declaredNames() {
  const dts = fs.readFileSync(path.join(REPO, 'index.d.ts'), 'utf8')
  const values = [...dts.matchAll(/^export declare (?:class|const|function) (\w+)/gm)].map((m) => m[1])
  const types = [...dts.matchAll(/^export (?:type|interface) (\w+)/gm)].map((m) => m[1])
  return { values: [...new Set(values)], types: [...new Set(types)] }
}

before(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-package-test-')))
  const packed = run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: REPO }).trim().split('\n').pop()
  project = path.join(work, 'project')
  fs.mkdirSync(path.join(project, 'node_modules'), { recursive: true })
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'user-project', version: '1.0.0', private: true }))
  // The dependencies (typescript; ajv and its own), copied so the test needs no network; npm
  // installs the tarball itself.
  for (const dep of ['typescript', 'ajv', 'commander', 'fast-deep-equal', 'fast-uri', 'json-schema-traverse', 'require-from-string']) {
    fs.cpSync(path.join(REPO, 'node_modules', dep), path.join(project, 'node_modules', dep), { recursive: true })
  }
  assert.notEqual(spawnSync('cargo', ['--version'], { env: { ...process.env, PATH: NO_RUST_PATH } }).status, 0, 'cargo must be off PATH')
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(work, packed)], {
    cwd: project,
    env: { ...process.env, PATH: NO_RUST_PATH },
  })
})

after(() => fs.rmSync(work, { recursive: true, force: true }))

function node(file) {
  return run(process.execPath, [file], { cwd: project, env: { ...process.env, PATH: NO_RUST_PATH } })
}

test('the tarball holds the built addon and no Rust sources', () => {
  const pkg = path.join(project, 'node_modules', '@rotifer', 'playground')
  assert.ok(fs.readdirSync(pkg).some((f) => f.endsWith('.node')), 'the native addon is packed')
  for (const absent of ['src', 'core', 'Cargo.toml', '__test__']) assert.equal(fs.existsSync(path.join(pkg, absent)), false, absent)
})

test('ESM: every name of index.d.ts imports by name and by default, from .mjs and a "type": "module" folder, same objects as require', () => {
  const { values } = declaredNames()
  assert.ok(values.includes('MemoryError') && values.includes('createTestMemory'), values.join(' '))
  const probe = [
    `import def, { ${values.join(', ')} } from '@rotifer/playground/memory'`,
    `import { createRequire } from 'node:module'`,
    `const cjs = createRequire(import.meta.url)('@rotifer/playground/memory')`,
    `const named = { ${values.join(', ')} }`,
    `const problems = []`,
    `for (const [name, value] of Object.entries(named)) {`,
    `  if (value === undefined) problems.push(name + ' is undefined')`,
    `  if (def[name] !== value) problems.push(name + ' differs from the default export')`,
    `  if (cjs[name] !== value) problems.push(name + ' differs from require')`,
    `}`,
    `const t = createTestMemory()`,
    `t.memory.writeMemory('k', new TextEncoder().encode('v'), 'CACHE')`,
    `let code = null`,
    `try { t.memory.deleteMemory('absent') } catch (e) { code = e instanceof MemoryError && e instanceof cjs.MemoryError ? e.code : 'wrong class' }`,
    `const value = new TextDecoder().decode(t.memory.readMemory('k').value)`,
    `t.dispose()`,
    `console.log(JSON.stringify({ problems, code, value, loaded: nativeBindingLoaded }))`,
  ].join('\n')
  fs.writeFileSync(path.join(project, 'probe.mjs'), probe)
  fs.mkdirSync(path.join(project, 'esm'), { recursive: true })
  fs.writeFileSync(path.join(project, 'esm', 'package.json'), JSON.stringify({ type: 'module' }))
  fs.writeFileSync(path.join(project, 'esm', 'probe.js'), probe)
  for (const file of ['probe.mjs', path.join('esm', 'probe.js')]) {
    assert.deepEqual(JSON.parse(node(file)), { problems: [], code: 'MEMORY_NOT_FOUND', value: 'v', loaded: true }, file)
  }
})

test('CommonJS require of the installed package works as before', () => {
  fs.writeFileSync(path.join(project, 'probe.cjs'), [
    `const { MemoryError, parseMemoryQuota } = require('@rotifer/playground/memory')`,
    `console.log(JSON.stringify({ quota: parseMemoryQuota('0.5KB'), cls: typeof MemoryError }))`,
  ].join('\n'))
  assert.deepEqual(JSON.parse(node('probe.cjs')), { quota: 512, cls: 'function' })
})

test('types: every type and value name of index.d.ts resolves through the installed package (TypeScript, node16)', () => {
  const { values, types } = declaredNames()
  assert.ok(types.includes('GeneContext'), 'GeneContext is declared')
  fs.writeFileSync(path.join(project, 'types.mts'), [
    `import type { ${types.join(', ')} } from '@rotifer/playground/memory'`,
    `import { ${values.join(', ')} } from '@rotifer/playground/memory'`,
    `export type All = [${types.join(', ')}]`,
    `export const all = [${values.join(', ')}]`,
    `export function express(input: { n: number }, ctx: GeneContext): { n: number } {`,
    `  ctx.memory.writeMemory('n', new TextEncoder().encode(String(input.n)), 'CACHE')`,
    `  return { n: input.n }`,
    `}`,
  ].join('\n'))
  const tsc = path.join(project, 'node_modules', 'typescript', 'bin', 'tsc')
  run(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', '--lib', 'es2022,dom', 'types.mts'], { cwd: project })
})

test('the installed bin runs a TypeScript gene in an agent, without a Rust toolchain', () => {
  const gene = path.join(project, 'genes', 'counter')
  fs.mkdirSync(gene, { recursive: true })
  fs.writeFileSync(path.join(project, 'rotifer.json'), '{}\n')
  fs.writeFileSync(path.join(gene, 'phenotype.json'), JSON.stringify({ name: 'counter', domain: 'test.count', version: '1.0.0', inputSchema: {}, outputSchema: {} }))
  fs.writeFileSync(path.join(gene, 'index.ts'), [
    `import type { GeneContext } from '@rotifer/playground/memory'`,
    `export function express(input: {}, ctx: GeneContext): { count: number } {`,
    `  const seen = ctx.memory.readMemory('count')`,
    `  const count = (seen ? Number(new TextDecoder().decode(seen.value)) : 0) + 1`,
    `  ctx.memory.writeMemory('count', new TextEncoder().encode(String(count)), 'CONTEXT')`,
    `  return { count }`,
    `}`,
  ].join('\n'))
  const bin = path.join(project, 'node_modules', '.bin', 'rotifer')
  const env = { ...process.env, PATH: NO_RUST_PATH }
  run(bin, ['agent', 'create', 'c', '--genes', 'counter'], { cwd: project, env })
  run(bin, ['agent', 'run', 'c', '--input', '{}'], { cwd: project, env })
  assert.deepEqual(JSON.parse(run(bin, ['agent', 'run', 'c', '--input', '{}'], { cwd: project, env })), { count: 2 })
})
