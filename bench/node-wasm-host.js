'use strict'
// The baseline of the sandbox rows: a WASM gene host on Node's own WebAssembly, as a user
// would build one with `createMemoryImports` (and as this CLI ran compiled genes before the
// native sandbox): compile with V8, instantiate with the memory imports, `rotifer.log` and
// `rotifer.logicalTimestamp`, pass the input at `alloc(len)` or 0, read the NUL-terminated output.
// Direct genes only; bench/node-wasm-preload.js puts it in place of lib/runtime/wasm-host.js.

const fs = require('node:fs')
const { createMemoryImports } = require('../index.js')
const { failureOf, invalidOutput, envelopeFailure } = require('../lib/runtime/failures')

class Failure extends Error {
  constructor(failure) {
    super(failure.text)
    this.failure = failure
  }
}

class Stopped extends Error {}

function loadWasmGene(gene) {
  return { kind: 'direct', module: new WebAssembly.Module(fs.readFileSync(gene.wasm)) }
}

let last = 0
const logicalTimestamp = () => BigInt((last = Math.max(Date.now(), last + 1)))

function runWasmGene(gene, loaded, inputJson, { memory, deadline }) {
  let instance
  const exported = () => instance.exports.memory
  const rotifer = {
    ...createMemoryImports({ agentId: memory.agentId, root: memory.root, geneId: gene.id, domain: gene.domain, deadline }, exported),
    log: (level, ptr, len) => process.stderr.write(`[${gene.name}] ${new TextDecoder().decode(new Uint8Array(exported().buffer, ptr >>> 0, len >>> 0))}\n`),
    logicalTimestamp,
  }
  instance = new WebAssembly.Instance(loaded.module, { rotifer })
  const { express, alloc } = instance.exports
  const input = Buffer.from(inputJson, 'utf8')
  const ptr = typeof alloc === 'function' ? alloc(input.length) >>> 0 : 0
  new Uint8Array(exported().buffer, ptr, input.length).set(input)
  const result = express(ptr, input.length)
  if (result < 0) throw new Failure(failureOf(String(result), `express returned ${result}`))
  const bytes = new Uint8Array(exported().buffer)
  const end = bytes.indexOf(0, result)
  if (end === -1) throw new Failure(invalidOutput('no NUL byte'))
  const value = JSON.parse(Buffer.from(bytes.subarray(result, end)).toString('utf8'))
  const reported = envelopeFailure(value)
  if (reported) throw new Failure(reported)
  return JSON.stringify(value)
}

module.exports = { loadWasmGene, runWasmGene, interruptWasmGenes: () => {}, Failure, Stopped }
