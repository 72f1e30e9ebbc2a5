'use strict'
// Gene kinds and loading, on the thread genes run on (R-RUN-3): a gene whose `wasm` is set (its
// gene.ir.wasm, or a gene.wasm with no source beside it: see readGene) runs through the WASM
// gene host; otherwise its `index.ts`/`index.js`/`index.mjs` runs under Node with `ctx.memory`. Loading happens once per gene and thread, before the first run.

const { GeneMemoryAccess } = require('../../index.js')
const { loadExpress, locate } = require('../cli/gene-loader')
const { invalidOutput, thrownFailure, envelopeFailure, Failure } = require('./failures')
const { isHybrid } = require('../formats/phenotype')

/** `wasm` or `node`: how `gene` (from `readGene`) runs. */
function geneKind(gene) {
  return gene.wasm ? 'wasm' : 'node'
}

/**
 * Loads `gene` (a WASM module's compiling given up at `deadline`, ms since the epoch); the result
 * runs it with `run(inputJson, options)`. Throws CliError.
 */
async function loadGene(gene, deadline) {
  if (geneKind(gene) === 'wasm') {
    // (Loaded only for WASM genes, as the gateway only for Hybrid ones: start-up loads what runs.)
    const { loadWasmGene, runWasmGene } = require('./wasm-host')
    const loaded = loadWasmGene(gene, deadline)
    return { kind: loaded.kind, run: (inputJson, options) => runWasmGene(gene, loaded, inputJson, options) }
  }
  const express = await loadExpress(gene)
  return { kind: 'node', run: (inputJson, options) => runNodeGene(gene, express, inputJson, options) }
}

/**
 * Calls a Node gene's `express(input, ctx)` with `ctx.memory` bound to `memory` (`{ agentId,
 * root }`) and, for a Hybrid gene with a `network` block, `ctx.gatewayFetch` (a gateway of its
 * own for this run, R-RUN-4), awaits it, and returns its output as JSON text, so the next gene sees exactly what
 * `--input` would have given it.
 */
async function runNodeGene(gene, express, inputJson, { memory }) {
  const ctx = { memory: new GeneMemoryAccess({ agentId: memory.agentId, root: memory.root, geneId: gene.id, domain: gene.domain }) }
  if (isHybrid(gene.phenotype)) ctx.gatewayFetch = require('./network-gateway').createGateway(gene.phenotype.network).gatewayFetch
  let output
  try {
    output = await express(JSON.parse(inputJson), ctx)
  } catch (e) {
    throw new Failure(thrownFailure(e, locate(e, gene.dir)))
  }
  let json
  try {
    json = JSON.stringify(output)
  } catch (e) {
    throw new Failure(invalidOutput(`its output cannot be written as JSON (${e.message})`))
  }
  if (json === undefined) throw new Failure(invalidOutput('express returned no output; it must return a JSON value'))
  const reported = envelopeFailure(JSON.parse(json))
  if (reported) throw new Failure(reported)
  return json
}

module.exports = { geneKind, loadGene }
