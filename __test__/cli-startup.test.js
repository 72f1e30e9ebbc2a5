'use strict'
// What start-up leans on, through the real bin: compiled validators cached under
// .rotifer/cache/schemas/ judge exactly as a fresh compile does, a cache file that is not
// trusted is never run, and the gene thread started before the command knows what it runs
// keeps nothing alive when the command fails first. Its speed is measured by the benchmark
// (bench/startup.js), not here.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, makeProject, addGene, createAgent, phenotypeOf, oneErrorLine } = require('./cli-harness')

const SCHEMA = { type: 'object', properties: { n: { type: 'integer', maximum: 3 } }, required: ['n'] }

function project(t) {
  const root = makeProject(t)
  addGene(root, 'g', { 'index.js': 'exports.express = (input) => ({ twice: input.n * 2 })\n' }, { phenotype: { ...phenotypeOf('g', 'test.probe'), inputSchema: SCHEMA } })
  createAgent(root, 'a', ['g'])
  return root
}

const cacheDir = (root) => path.join(root, '.rotifer', 'cache', 'schemas')

test('validators come from the cache and judge as a fresh compile does', (t) => {
  const root = project(t)
  const first = rotifer(root, 'agent', 'run', 'a', '--input', '{"n":9}')
  assert.equal(first.status, 1)
  const files = fs.readdirSync(cacheDir(root))
  assert.equal(files.length, 2, 'the inputSchema and the outputSchema')
  for (const f of files) assert.equal(fs.statSync(path.join(cacheDir(root), f)).mode & 0o777, 0o600)
  const again = rotifer(root, 'agent', 'run', 'a', '--input', '{"n":9}')
  assert.equal(oneErrorLine(again), oneErrorLine(first))
  assert.match(oneErrorLine(again), /\/n must be <= 3 \(rule "maximum"\)/)
  assert.equal(JSON.parse(rotifer(root, 'agent', 'run', 'a', '--input', '{"n":2}').stdout).twice, 4)
})

test('a cache file others may write, or a link, is not run: the schema is compiled again', (t) => {
  const root = project(t)
  assert.equal(rotifer(root, 'agent', 'run', 'a', '--input', '{"n":1}').status, 0)
  const marker = path.join(root, 'planted')
  const planted = `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); module.exports = () => true\n`
  const [one, two] = fs.readdirSync(cacheDir(root)).map((f) => path.join(cacheDir(root), f))
  fs.writeFileSync(one, planted)
  fs.chmodSync(one, 0o666)
  const elsewhere = path.join(root, 'elsewhere.js')
  fs.writeFileSync(elsewhere, planted, { mode: 0o600 })
  fs.rmSync(two)
  fs.symlinkSync(elsewhere, two)
  const r = rotifer(root, 'agent', 'run', 'a', '--input', '{"n":9}')
  assert.equal(r.status, 1)
  assert.match(oneErrorLine(r), /\/n must be <= 3/, 'the input is still checked')
  assert.equal(fs.existsSync(marker), false, 'the planted code never ran')
})

test('agent run of an unknown agent ends at once: the thread started early keeps nothing alive', (t) => {
  const root = project(t)
  const r = rotifer(root, 'agent', 'run', 'nobody')
  assert.equal(r.status, 1)
  assert.match(oneErrorLine(r), /no agent named or with id "nobody"/)
  const bad = rotifer(root, 'run', 'g', '--input', '{')
  assert.equal(bad.status, 2)
})

test('genes that import nothing load without the module hooks; a top-level await or export syntax in .js still runs', (t) => {
  const root = makeProject(t)
  addGene(root, 'plain', { 'index.ts': 'export async function express(input: { n: number }) { return { n: input.n + 1 } }\n' })
  addGene(root, 'awaits', { 'index.ts': 'const base: number = await Promise.resolve(40)\nexport function express(input: { n: number }) { return { n: input.n + base } }\n' })
  addGene(root, 'esm', { 'index.js': 'export default function express(input) { return { n: -input.n } }\n' })
  addGene(root, 'where', { 'index.ts': 'export function express() {\n  throw new Error("line two")\n}\n' })
  // Types and the memory module only: still no module hooks needed, and MemoryError is ctx's.
  addGene(root, 'typed', {
    'index.ts': 'import type { GeneContext } from "@rotifer/playground/memory";\nimport { MemoryError } from "@rotifer/playground/memory";\n' +
      'export function express(input: { n: number }, ctx: GeneContext) {\n  try { ctx.memory.readMemory("k") } catch (e) { return { n: input.n, same: e instanceof MemoryError } }\n  return { n: input.n, same: false }\n}\n',
  })
  addGene(root, 'util', { 'index.ts': 'import { twice } from "./twice"\nexport function express(input: { n: number }) { return { n: twice(input.n) } }\n', 'twice.ts': 'export const twice = (n: number) => 2 * n\n' })
  const out = (gene) => JSON.parse(rotifer(root, 'run', gene, '--input', '{"n":2}').stdout)
  assert.deepEqual(out('plain'), { n: 3 })
  assert.deepEqual(out('awaits'), { n: 42 })
  assert.deepEqual(out('esm'), { n: -2 })
  assert.deepEqual(out('typed'), { n: 2, same: true }, 'outside an agent every call is denied, with the MemoryError class the gene imports')
  assert.deepEqual(out('util'), { n: 4 })
  // A failure still points at the line of the .ts file as written.
  const r = rotifer(root, 'run', 'where', '--input', '{}')
  assert.equal(r.status, 1)
  assert.match(oneErrorLine(r), /line two \(at genes\/where\/index\.ts:2:\d+\)/)
})
