'use strict'
// The WASM gene host (R-RUN-2): checks a gene.wasm before it runs, and runs it, either through
// the playground's direct ABI (`express(ptr, len) -> ptr` over the gene's own memory, with the
// memory host functions of R-WASM) or, for a WASI command (a TypeScript gene compiled to WASM),
// with Node's WASI: input on stdin, output on stdout, no memory functions.

const fs = require('node:fs')
const path = require('node:path')
const { createMemoryImports } = require('../../index.js')
const { CliError } = require('../cli/errors')
const { displayPath } = require('../cli/gene-loader')
const { printable } = require('../cli/format')
const { failureOf, invalidOutput, envelopeFailure } = require('./failures')

const WASI_MODULE = 'wasi_snapshot_preview1'
const MEMORY_CALLS = ['readMemory', 'writeMemory', 'queryMemory', 'deleteMemory']
const PROVIDED = [...MEMORY_CALLS, 'log', 'logicalTimestamp']
const LEVELS = ['debug', 'info', 'warn', 'error']

/** Thrown inside the worker for a failure of the gene itself (not of the host). */
class Failure extends Error {
  constructor(failure) {
    super(failure.text)
    this.failure = failure
  }
}

const listProvided = () => PROVIDED.map((n) => `rotifer.${n}`).join(', ')

/**
 * Compiles `gene.wasm` and checks what it imports and exports, so that a gene the host cannot
 * run fails before it runs, with a message naming what is wrong. Returns `{ kind, module }`,
 * `kind` being `direct` or `wasi`.
 */
function loadWasmGene(gene) {
  const file = displayPath(gene.wasm)
  let module
  try {
    module = new WebAssembly.Module(fs.readFileSync(gene.wasm))
  } catch (e) {
    throw new CliError(`gene "${gene.name}" (${gene.id}): ${file} is not a valid WebAssembly module (${e.message})`)
  }
  const imports = WebAssembly.Module.imports(module)
  const exports = WebAssembly.Module.exports(module)
  const exported = (name, kind) => exports.some((e) => e.name === name && e.kind === kind)
  const wasi = imports.some((i) => i.module === WASI_MODULE) || exported('_start', 'function')

  if (wasi) {
    const memory = imports.find((i) => i.module === 'rotifer')
    if (memory) {
      throw new CliError(`gene "${gene.name}" (${gene.id}): ${file} is a WASI command (a TypeScript gene compiled to WASM) and imports rotifer.${memory.name}; compiled TypeScript genes cannot use memory: run the gene as TypeScript (index.ts, without gene.wasm) to use ctx.memory`)
    }
    const other = imports.find((i) => i.module !== WASI_MODULE)
    if (other) throw new CliError(`gene "${gene.name}" (${gene.id}): ${file} imports ${importName(other)}, which the host does not provide; a WASI gene may import only ${WASI_MODULE}`)
    if (!exported('_start', 'function')) throw new CliError(`gene "${gene.name}" (${gene.id}): ${file} imports ${WASI_MODULE} but exports no _start function; a WASI gene must be a command module`)
    return { kind: 'wasi', module }
  }

  const unknown = imports.find((i) => i.module !== 'rotifer' || !PROVIDED.includes(i.name) || i.kind !== 'function')
  if (unknown) {
    throw new CliError(`gene "${gene.name}" (${gene.id}): ${file} imports ${importName(unknown)}, which the host does not provide; a WASM gene may import only the functions ${listProvided()}`)
  }
  if (!exported('memory', 'memory')) throw new CliError(`gene "${gene.name}" (${gene.id}): ${file} does not export its memory as "memory"`)
  if (!exported('express', 'function')) throw new CliError(`gene "${gene.name}" (${gene.id}): ${file} does not export a function "express(ptr: i32, len: i32) -> i32"`)
  return { kind: 'direct', module }
}

function importName(i) {
  return `${JSON.stringify(i.module)}.${JSON.stringify(i.name)} (${i.kind})`
}

/** `rotifer.logicalTimestamp()`: milliseconds since the epoch, strictly increasing in a thread. */
let lastTimestamp = 0
function logicalTimestamp() {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1)
  return BigInt(lastTimestamp)
}

/** `rotifer.log(level, ptr, len)`: one line on stderr, prefixed by the gene's name. */
function logFor(gene, memory) {
  return (level, ptr, len) => {
    const buffer = memory().buffer
    ptr >>>= 0
    len >>>= 0
    const text = ptr + len <= buffer.byteLength
      ? new TextDecoder().decode(new Uint8Array(buffer, ptr, len))
      : `(log message outside the gene's memory: ${len} bytes at ${ptr})`
    const name = LEVELS[level] || `level ${level}`
    process.stderr.write(`[${gene.name}] ${name}: ${printable(text.replace(/\n+$/, ''))}\n`)
  }
}

/**
 * Runs a direct-ABI gene on `inputJson`. `memory` is `{ agentId, root }` (agentId null for a
 * standalone run); host calls at or after `deadline` get -4. Returns the output JSON text, or
 * throws Failure.
 */
function runDirect(gene, module, inputJson, { memory, deadline }) {
  let instance
  const exportedMemory = () => instance.exports.memory
  const rotifer = {
    ...createMemoryImports({ agentId: memory.agentId, root: memory.root, geneId: gene.id, domain: gene.domain, deadline }, exportedMemory),
    log: logFor(gene, exportedMemory),
    logicalTimestamp,
  }
  instance = new WebAssembly.Instance(module, { rotifer })
  const { express, alloc } = instance.exports

  const input = Buffer.from(inputJson, 'utf8')
  const ptr = typeof alloc === 'function' ? alloc(input.length) >>> 0 : 0
  if (ptr + input.length > exportedMemory().buffer.byteLength) {
    throw new Failure(invalidOutput(`alloc(${input.length}) returned ${ptr}, which leaves no room for the input in the gene's memory`))
  }
  new Uint8Array(exportedMemory().buffer, ptr, input.length).set(input)

  const result = express(ptr, input.length)
  if (typeof result !== 'number') throw new Failure(invalidOutput('express must return an i32 pointer to its output'))
  if (result < 0) throw new Failure(failureOf(String(result), `express returned ${result}`, { text: `express returned ${result}` }))
  const bytes = new Uint8Array(exportedMemory().buffer)
  const end = bytes.indexOf(0, result)
  if (end === -1) throw new Failure(invalidOutput(`the output at ${result} has no NUL byte before the end of memory; end the output JSON with one NUL byte`))
  return checkOutput(Buffer.from(bytes.subarray(result, end)))
}

/**
 * Runs a WASI command gene: input JSON on stdin, output JSON read from stdout. The streams are
 * files in `tmp` (a private folder of the run); the gene's stderr is the CLI's.
 */
function runWasi(gene, module, inputJson, { tmp }) {
  const dir = fs.mkdtempSync(path.join(tmp, 'wasi-'))
  const inFile = path.join(dir, 'stdin')
  const outFile = path.join(dir, 'stdout')
  fs.writeFileSync(inFile, inputJson, { mode: 0o600 })
  const stdin = fs.openSync(inFile, 'r')
  const stdout = fs.openSync(outFile, 'wx', 0o600)
  try {
    // Loaded on first use: only WASI genes need it (and Node warns that it is experimental).
    const { WASI } = require('node:wasi')
    const wasi = new WASI({ version: 'preview1', args: [gene.name], env: {}, stdin, stdout, stderr: 2, returnOnExit: true })
    const instance = new WebAssembly.Instance(module, wasi.getImportObject())
    const status = wasi.start(instance)
    if (status !== 0) throw new Failure(failureOf(`EXIT_${status}`, `the WASI command exited with status ${status}`))
  } finally {
    fs.closeSync(stdin)
    fs.closeSync(stdout)
  }
  try {
    return checkOutput(fs.readFileSync(outFile))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** The gene's output bytes as JSON text, or a Failure: not UTF-8 JSON, or an error envelope. */
function checkOutput(bytes) {
  let value
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (e) {
    throw new Failure(invalidOutput(`its output is not UTF-8 JSON (${e.message})`))
  }
  const reported = envelopeFailure(value)
  if (reported) throw new Failure(reported)
  return JSON.stringify(value)
}

/** Runs a loaded WASM gene (`loadWasmGene`) and returns its output JSON text. */
function runWasmGene(gene, loaded, inputJson, options) {
  return loaded.kind === 'wasi'
    ? runWasi(gene, loaded.module, inputJson, options)
    : runDirect(gene, loaded.module, inputJson, options)
}

module.exports = { loadWasmGene, runWasmGene, Failure, PROVIDED }
