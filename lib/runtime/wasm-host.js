'use strict'
// The WASM gene host (R-RUN-5): a compiled gene (gene.ir.wasm, or a lone gene.wasm) runs in the
// native sandbox (wasmtime in the addon, `sandbox/`): fuel, a 256 MiB memory cap, the run's
// deadline, the playground's host functions with the four memory calls going straight into
// the store, and bounded logs. The sandbox checks a module before it runs; this file only
// passes the gene, its input and its run context, and turns the sandbox's outcome into the
// runtime's failures.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const native = require('../native')
const { CliError } = require('../cli/errors')
const { displayPath } = require('../cli/gene-loader')
const { failureOf, invalidOutput, envelopeFailure, Failure, Stopped } = require('./failures')

function sandbox() {
  if (!native || typeof native.NativeWasmGene !== 'function') throw new CliError('the WASM sandbox is unavailable: the native binding could not be loaded; run `npm run build`')
  return native
}

/** The project's compiled-module cache (created 0700 on first use). */
function cacheDir(gene) {
  return gene.root ? path.join(gene.root, '.rotifer', 'cache', 'wasm') : undefined
}

/**
 * Compiles and checks the gene's module (or takes it from the cache), so that a gene the
 * sandbox cannot run fails before anything runs, naming what is wrong; compiling gives up at
 * `deadline` (ms since the epoch) or on Ctrl-C. Returns `{ kind, module }`, `kind` being
 * `direct` or `wasi`.
 */
function loadWasmGene(gene, deadline) {
  const { NativeWasmGene } = sandbox()
  const what = `gene "${gene.name}" (${gene.id}): ${displayPath(gene.wasm)}`
  let bytes
  try {
    bytes = fs.readFileSync(gene.wasm)
  } catch (e) {
    throw new CliError(`${what} cannot be read (${e.code || e.message})`)
  }
  let module
  try {
    module = NativeWasmGene.load(bytes, what, cacheDir(gene), deadline)
  } catch (e) {
    throw new CliError(e.message)
  }
  return { kind: module.kind, module }
}

/** The object `rotifer.readContext` reads keys of (the playground's run context). */
function runContext(gene, { memory, seconds }) {
  const limits = native.wasmLimits()
  const network = gene.phenotype && gene.phenotype.network
  return {
    agent_id: memory.agentId || 'cli',
    timestamp: Date.now(),
    permissions: {
      allowed_domains: network && Array.isArray(network.allowedDomains) ? network.allowedDomains : null,
      resource_limits: { max_memory_bytes: limits.memoryBytes, max_execution_time_ms: Math.round(seconds * 1000), max_fuel_units: limits.fuel },
      network_access: false,
      file_system_access: null,
    },
    trace_id: crypto.randomUUID(),
    binding_extensions: null,
  }
}

/**
 * Runs a loaded WASM gene on `inputJson` with memory `{ agentId, root }` until `deadline` (ms
 * since the epoch); returns the output JSON text, or throws Failure or Stopped.
 */
function runWasmGene(gene, loaded, inputJson, { memory, deadline, seconds = 60 }) {
  const result = loaded.module.run(inputJson, {
    geneName: gene.name,
    agentId: memory.agentId || undefined,
    root: memory.root || undefined,
    geneId: gene.id || undefined,
    domain: gene.domain || undefined,
    deadline,
    fuel: native.wasmLimits().fuel,
    context: JSON.stringify(runContext(gene, { memory, seconds })),
  })
  switch (result.outcome) {
    case 'output':
      return checkOutput(Buffer.from(result.output, 'utf8'))
    case 'failed':
      throw new Failure(result.code === 'INVALID_OUTPUT' ? invalidOutput(result.message) : failureOf(result.code, result.message, { text: result.message }))
    default:
      throw new Stopped(result.outcome)
  }
}

/** The gene's output bytes as JSON text, or a Failure: not JSON, or an error envelope. */
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

/** Stops every WASM gene running in this process (Ctrl-C). */
function interruptWasmGenes() {
  if (native && typeof native.interruptWasmGenes === 'function') native.interruptWasmGenes()
}

module.exports = { loadWasmGene, runWasmGene, interruptWasmGenes, Failure, Stopped }
