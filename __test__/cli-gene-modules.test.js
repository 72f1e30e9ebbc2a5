'use strict'
// Genes as ES modules and TypeScript, through the real bin: `import`/`export`, top-level
// `await`, ES-module-only packages of the project, `export default function express`, the
// transpile cache under .rotifer/cache/ts, and loading from a worker thread.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { rotifer, rotiferWithEnv, json, makeProject, addGene, createAgent, oneErrorLine } = require('./cli-harness')

/** node_modules/esm-only: a package with only an "import" export, which `require` cannot load. */
function addEsmOnlyPackage(root) {
  const dir = path.join(root, 'node_modules', 'esm-only')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'esm-only', type: 'module', exports: { import: './index.js' } }))
  fs.writeFileSync(path.join(dir, 'index.js'), 'export const shout = (s) => s.toUpperCase() + "!"\n')
}

/** A preload that makes `typescript` unloadable: proves a run did not need it. */
function tsBlocker(root) {
  const file = path.join(root, 'block-typescript.js')
  fs.writeFileSync(file, [
    "const Module = require('node:module')",
    'const resolve = Module._resolveFilename',
    "Module._resolveFilename = function (request, ...rest) { if (request === 'typescript') throw new Error('typescript was loaded'); return resolve.call(this, request, ...rest) }",
  ].join('\n'))
  return { NODE_OPTIONS: `--require ${file}` }
}

function cacheFiles(root) {
  const dir = path.join(root, '.rotifer', 'cache', 'ts')
  return fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => path.join(dir, f)) : []
}

test('ES module genes: top-level await, an ES-module-only package, export default function express', (t) => {
  const root = makeProject(t)
  addEsmOnlyPackage(root)
  addGene(root, 'js', {
    'index.js': [
      'import { shout } from "esm-only";',
      'const greeting = await Promise.resolve("hi");',
      'export default function express(input) { return { text: shout(greeting + " " + input.name) } }',
    ].join('\n'),
  })
  addGene(root, 'ts', {
    'index.ts': [
      'import { shout } from "esm-only";',
      'import type { GeneContext } from "@rotifer/playground/memory";',
      'import { MemoryError } from "@rotifer/playground/memory";',
      'const greeting: string = await Promise.resolve("hey");',
      'export default function express(input: { name: string }, ctx: GeneContext): { text: string; code: string } {',
      '  let code = "";',
      '  try { ctx.memory.readMemory("k") } catch (e) { code = e instanceof MemoryError ? e.code : "not a MemoryError" }',
      '  return { text: shout(`${greeting} ${input.name}`), code };',
      '}',
    ].join('\n'),
  })
  assert.deepEqual(json(rotifer(root, 'run', 'js', '--input', '{"name":"ann"}')), { text: 'HI ANN!' })
  assert.deepEqual(json(rotifer(root, 'run', 'ts', '--input', '{"name":"bo"}')), { text: 'HEY BO!', code: 'MEMORY_ACCESS_DENIED' })
  // In an agent, with its memory, both genes in sequence.
  createAgent(root, 'pair', ['ts'])
  assert.deepEqual(json(rotifer(root, 'agent', 'run', 'pair', '--input', '{"name":"cy"}')), { text: 'HEY CY!', code: '' })
})

test('a gene whose top-level code throws fails with one line naming the gene, the error and its line', (t) => {
  const root = makeProject(t)
  addGene(root, 'tla', { 'index.ts': 'export function express() { return {} }\nawait Promise.resolve()\nthrow new Error("setup failed")\n' })
  const r = rotifer(root, 'run', 'tla', '--input', '{}')
  assert.equal(r.status, 1)
  assert.match(oneErrorLine(r), /^error: gene "tla" \(v2:[0-9a-f]{64}\) could not be loaded: setup failed \(at genes\/tla\/index\.ts:3:7\)$/)
  assert.doesNotMatch(r.stderr, /gene-loader|gene-hooks/)
})

test('a TypeScript gene seen before runs from the cache, without loading TypeScript', (t) => {
  const root = makeProject(t)
  addGene(root, 'typed', { 'index.ts': 'export function express(input: { n: number }): { n: number } { return { n: input.n + 1 } }\n' })
  const blocked = tsBlocker(root)
  // First run: a cache miss needs TypeScript.
  const miss = rotiferWithEnv(root, blocked, 'run', 'typed', '--input', '{"n":1}')
  assert.equal(miss.status, 1)
  assert.match(miss.stderr, /typescript was loaded/)
  assert.deepEqual(json(rotifer(root, 'run', 'typed', '--input', '{"n":1}')), { n: 2 })
  const [entry, ...more] = cacheFiles(root)
  assert.equal(more.length, 0)
  assert.match(path.basename(entry), /^[0-9a-f]{64}\.js$/)
  assert.equal(fs.statSync(entry).mode & 0o777, 0o600)
  for (const dir of ['.rotifer', '.rotifer/cache', '.rotifer/cache/ts']) assert.equal(fs.statSync(path.join(root, dir)).mode & 0o777, 0o700, dir)
  // Second run: served from the cache, TypeScript unreachable.
  assert.deepEqual(json(rotiferWithEnv(root, blocked, 'run', 'typed', '--input', '{"n":1}')), { n: 2 })

  // The cached file is what runs: a cache entry others may write is ignored and rewritten. (A
  // gene that imports nothing is loaded with require, so its entry is CommonJS.)
  fs.writeFileSync(entry, 'exports.express = function express() { return { tampered: true } }\n')
  assert.deepEqual(json(rotifer(root, 'run', 'typed', '--input', '{"n":1}')), { tampered: true })
  fs.chmodSync(entry, 0o666)
  assert.deepEqual(json(rotifer(root, 'run', 'typed', '--input', '{"n":1}')), { n: 2 })
  assert.equal(fs.statSync(entry).mode & 0o777, 0o600)

  // A changed source is a new entry: never a stale result.
  addGene(root, 'typed', { 'index.ts': 'export function express(input: { n: number }): { n: number } { return { n: input.n + 10 } }\n' })
  assert.deepEqual(json(rotifer(root, 'run', 'typed', '--input', '{"n":1}')), { n: 11 })
  assert.equal(cacheFiles(root).length, 2)
})

test('a project where the cache cannot be written still runs TypeScript genes', (t) => {
  const root = makeProject(t)
  addGene(root, 'typed', { 'index.ts': 'export const express = (input: { n: number }) => ({ n: -input.n })\n' })
  fs.writeFileSync(path.join(root, '.rotifer'), 'not a folder')
  assert.deepEqual(json(rotifer(root, 'run', 'typed', '--input', '{"n":3}')), { n: -3 })
})

test('loadExpress works inside a worker thread (ES module and TypeScript genes)', async (t) => {
  const root = makeProject(t)
  addEsmOnlyPackage(root)
  addGene(root, 'typed', { 'index.ts': 'import { shout } from "esm-only";\nexport default { express: (i: { s: string }) => ({ s: shout(i.s) }) }\n' })
  const loader = path.join(__dirname, '..', 'lib', 'cli', 'gene-loader.js')
  const project = path.join(__dirname, '..', 'lib', 'cli', 'project.js')
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { loadExpress } = require(${JSON.stringify(loader)})
    const { readGene } = require(${JSON.stringify(project)})
    loadExpress(readGene(workerData, 'typed')).then((express) => parentPort.postMessage(express({ s: 'in a worker' })), (e) => parentPort.postMessage({ error: e.message }))
  `
  const result = await new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: root })
    w.once('message', (m) => { resolve(m); w.terminate() })
    w.once('error', reject)
  })
  assert.deepEqual(result, { s: 'IN A WORKER!' })
})
