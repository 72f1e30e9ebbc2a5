'use strict'
// The gene runtime the CLI commands call (R-RUN): an agent's composition, one gene on its own,
// or one gene case after case (a test suite). Genes run in a worker thread (deadline.js) that is
// stopped at the deadline; every gene's input is checked against its inputSchema (schemas.js)
// before it runs. This file wires the pieces and owns no rule of its own.

const path = require('node:path')
const { CliError } = require('../cli/errors')
const { readGene } = require('../cli/project')
const { problemsText } = require('../json-schema')
const { GeneWorker } = require('./deadline')
const { geneSchemas } = require('./schemas')
const { failureOf, geneFailure } = require('./failures')
const { parseComposition, compositionOfGenes, leaves, evaluate, CompositionError } = require('./composition')

/** R-RUN-6: the playground's default run limit, in seconds. */
const DEFAULT_TIMEOUT_SECONDS = 30

/** The composition of an agent record: `"Seq"` (older records) or an expression. */
function compositionOf(agent) {
  if (agent.composition === undefined || agent.composition === 'Seq') return compositionOfGenes('Seq', agent.genome)
  try {
    return parseComposition(agent.composition)
  } catch (e) {
    if (e instanceof CompositionError) throw new CliError(`agent "${agent.name}" has an invalid composition in its record: ${e.message}`)
    throw e
  }
}

/**
 * Runs `agent`'s composition on `input` with the agent's memory, within `seconds`; returns the
 * output. Every gene is read and loaded before the first one runs. `notice(line)` receives the
 * one-line notes for stderr.
 */
async function runAgent({ root, agent, input, seconds, notice }) {
  const node = compositionOf(agent)
  const genes = new Map()
  for (const name of leaves(node)) {
    if (genes.has(name)) continue
    try {
      genes.set(name, readGene(root, name))
    } catch (e) {
      throw new CliError(`agent "${agent.name}": ${e.message}`)
    }
  }
  // Every schema compiles before anything runs: a broken one stops the run with its place.
  for (const gene of genes.values()) {
    geneSchemas(gene).input(null)
  }
  const deadline = Date.now() + seconds * 1000
  const worker = new GeneWorker({ memory: { agentId: agent.id, root }, seconds })
  try {
    const kinds = new Map()
    for (const [name, gene] of genes) kinds.set(name, await worker.load(gene, deadline))
    return await evaluate(node, input, {
      deadline,
      notice,
      isWasm: (name) => kinds.get(name) !== 'node',
      runGene: (name, value, geneDeadline) => {
        const gene = genes.get(name)
        const problems = geneSchemas(gene).input(value)
        // A failure of the gene's (code INVALID_INPUT): a Try falls back on it, as on any other.
        if (problems) return Promise.reject(geneFailure(gene, failureOf('INVALID_INPUT', inputMessage(gene, problems))))
        return worker.run(gene, value, { deadline: geneDeadline, runDeadline: deadline })
      },
    })
  } finally {
    await worker.close()
  }
}

/**
 * A runner of one `gene` with memory `{ agentId, root }` (agentId null: every memory call is
 * denied): `load()`, then `run(input)` as often as needed, each within `seconds`; `close()`.
 */
function geneRunner({ gene, memory, seconds }) {
  const worker = new GeneWorker({ memory, seconds })
  const deadline = (s) => Date.now() + s * 1000
  return {
    load: () => worker.load(gene, deadline(seconds)),
    /** Runs on `input`; `options.seconds` gives this run its own timeout. */
    run: (input, options = {}) => worker.run(gene, input, { deadline: deadline(options.seconds || seconds), seconds: options.seconds || seconds }),
    close: () => worker.close(),
  }
}

/** What is wrong with an input `gene` was given, naming its phenotype, the fields and the rules. */
function inputMessage(gene, problems) {
  return `the input does not match the inputSchema of ${path.join(gene.where, 'phenotype.json')}: ${problemsText(problems)}`
}

/**
 * Runs `gene` once on `input` with memory `{ agentId, root }`: loading and running within
 * `seconds`. The input is checked against the gene's inputSchema first.
 */
async function runGene({ gene, memory, input, seconds }) {
  const problems = geneSchemas(gene).input(input)
  if (problems) throw new CliError(`gene "${gene.name}": ${inputMessage(gene, problems)}; give an input that it accepts`)
  const deadline = Date.now() + seconds * 1000
  const worker = new GeneWorker({ memory, seconds })
  try {
    await worker.load(gene, deadline)
    return await worker.run(gene, input, { deadline })
  } finally {
    await worker.close()
  }
}

module.exports = { DEFAULT_TIMEOUT_SECONDS, runAgent, runGene, geneRunner, leaves }
