'use strict'
// `rotifer doctor [--json]`: upstream's toolchain check (node, npx, esbuild, javy), and ours: the
// typescript package that runs TypeScript genes, the native binding, an agent memory written
// and read (a test memory, deleted after), and a WASM gene run in the sandbox. Each line says
// ok or what is wrong and what to do; the exit code is 1 when anything a command needs is
// missing (javy included, as upstream's doctor exits 1 without its TS→WASM toolchain).

const fs = require('node:fs')
const path = require('node:path')
const native = require('../../native')
const { findJavy } = require('../javy')

const MIN_NODE = [20, 6]

/** A WASM gene of 78 bytes returning {"ok":true}: `(module (memory (export "memory") 1)
 * (data (i32.const 1024) "{\"ok\":true}\00") (func (export "express") (param i32 i32)
 * (result i32) (i32.const 1024)))`, written out section by section. */
function probeModule() {
  const text = [...Buffer.from('{"ok":true}\0')]
  const name = (s) => [s.length, ...Buffer.from(s)]
  const section = (id, bytes) => [id, bytes.length, ...bytes]
  const i32Const1024 = [0x41, 0x80, 0x08, 0x0b]
  return Buffer.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 2, 0x7f, 0x7f, 1, 0x7f]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]),
    ...section(7, [2, ...name('memory'), 2, 0, ...name('express'), 0, 0]),
    ...section(10, [1, 5, 0, ...i32Const1024.slice(0, 3), 0x0b]),
    ...section(11, [1, 0, ...i32Const1024, text.length, ...text]),
  ])
}

/** The first executable `name` on PATH, or null. */
function onPath(name, env = process.env) {
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    if (!dir) continue
    const file = path.join(dir, name)
    try {
      fs.accessSync(file, fs.constants.X_OK)
      if (fs.statSync(file).isFile()) return file
    } catch {
      // not here
    }
  }
  return null
}

function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number)
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1])
  return { name: 'node', ok, detail: ok ? `ok (v${process.versions.node}, ${process.execPath})` : `too old: v${process.versions.node}; install Node.js ${MIN_NODE.join('.')} or later` }
}

function checkTypescript() {
  try {
    const version = JSON.parse(fs.readFileSync(require.resolve('typescript/package.json'), 'utf8')).version
    return { name: 'typescript', ok: true, detail: `ok (${version}): TypeScript genes run as written` }
  } catch {
    return { name: 'typescript', ok: false, detail: 'missing: the typescript package could not be found; reinstall @rotifer/playground (npm install)' }
  }
}

function checkJavy() {
  const javy = findJavy()
  return javy
    ? { name: 'javy', ok: true, detail: `ok (${javy}): rotifer compile can build TypeScript genes into WASM` }
    : { name: 'javy', ok: false, detail: 'missing (no javy on PATH): rotifer compile cannot build a TypeScript gene into WASM (every other command works); install a release binary named javy from https://github.com/bytecodealliance/javy/releases, or npm i -g javy-cli' }
}

function checkBinding() {
  if (!native) return { name: 'native binding', ok: false, detail: 'missing: the addon could not be loaded (Linux x64 with glibc is supported); reinstall the package, or run npm run build in a checkout' }
  const target = native.__napiBindingTarget || 'native'
  return { name: 'native binding', ok: true, detail: `ok (${target}, rotifer-memory.linux-x64-gnu.node)` }
}

function checkMemory() {
  let test = null
  try {
    const memory = require('../../../index.js')
    test = memory.createTestMemory()
    test.memory.writeMemory('doctor/probe', new TextEncoder().encode('ok'), 'CACHE')
    const back = test.memory.readMemory('doctor/probe')
    if (!back || new TextDecoder().decode(back.value) !== 'ok') throw new Error('the entry written was not read back')
    return { name: 'memory', ok: true, detail: 'ok (a test memory wrote an entry and read it back, then was deleted)' }
  } catch (e) {
    return { name: 'memory', ok: false, detail: `failed: ${e.code ? `${e.code}: ` : ''}${e.message}` }
  } finally {
    if (test) test.dispose()
  }
}

function checkSandbox() {
  if (!native || typeof native.NativeWasmGene !== 'function') return { name: 'sandbox', ok: false, detail: 'missing: the WASM sandbox comes with the native binding, which could not be loaded' }
  try {
    const limits = native.wasmLimits()
    const deadline = Date.now() + 10_000
    const module = native.NativeWasmGene.load(probeModule(), 'rotifer doctor: probe module', undefined, deadline)
    const result = module.run('{}', { geneName: 'doctor-probe', deadline, fuel: limits.fuel, context: '{}' })
    if (result.outcome !== 'output' || JSON.parse(result.output).ok !== true) throw new Error(`the probe gene gave ${result.outcome}${result.message ? `: ${result.message}` : ''}`)
    return { name: 'sandbox', ok: true, detail: `ok (wasmtime ran a WASM gene; ${limits.fuel} fuel, ${Math.round(limits.memoryBytes / 1048576)} MiB of memory per run)` }
  } catch (e) {
    return { name: 'sandbox', ok: false, detail: `failed: ${e.message}` }
  }
}

const doctor = {
  name: 'doctor',
  needsProject: false,
  summary: 'check the toolchain, the native binding, memory and the sandbox',
  usage: 'rotifer doctor [--json]',
  description: [
    "Checks what the commands need, as upstream's doctor does for its TypeScript→WASM toolchain:",
    'node (20.6 or later), npx, esbuild (not needed here: TypeScript genes are transpiled by the',
    'typescript package, checked too) and javy (for rotifer compile of a TypeScript gene); then the',
    'native binding, an agent memory (a test memory written, read and deleted) and the WASM',
    'sandbox (a probe gene run). Exits 1 when anything is missing; --json prints the checks.',
  ],
  options: {
    json: { type: 'boolean', help: 'print { ok, checks: [{ name, ok, detail }] } as JSON' },
  },
  examples: ['rotifer doctor'],

  async run({ options, io }) {
    const npx = onPath('npx')
    const checks = [
      checkNode(),
      { name: 'npx', ok: true, detail: npx ? `ok (${npx})` : 'not found (not needed: npx rotifer needs it, rotifer itself does not)', optional: true },
      { name: 'active npx', ok: true, detail: npx || 'not found', optional: true },
      checkTypescript(),
      { name: 'esbuild', ok: true, detail: 'not needed (TypeScript genes are transpiled by the typescript package)', optional: true },
      checkJavy(),
      checkBinding(),
      checkMemory(),
      checkSandbox(),
    ]
    const ok = checks.every((c) => c.ok)
    if (options.json) {
      io.out(JSON.stringify({ ok, checks: checks.map(({ name, ok: good, detail }) => ({ name, ok: good, detail })) }, null, 2))
      return ok ? 0 : 1
    }
    const width = Math.max(...checks.map((c) => c.name.length)) + 1
    io.out('Rotifer doctor: the toolchain, the native binding, memory and the sandbox')
    for (const c of checks) io.out(`  ${(c.name + ':').padEnd(width)}  ${c.detail}`)
    const missing = checks.filter((c) => !c.ok).map((c) => c.name)
    io.out(ok ? 'Ready: every command can run, and rotifer compile can build TypeScript genes into WASM.' : `Not ready: ${missing.join(', ')} ${missing.length === 1 ? 'needs' : 'need'} attention (see above).`)
    return ok ? 0 : 1
  },
}

module.exports = { doctor, probeModule }
