'use strict'
// The gene runtime the CLI commands call (R-RUN): an agent's composition, one gene on its own,
// or one gene case after case (a test suite). Genes run in a worker thread (deadline.js) that is
// stopped at the deadline; this file wires the pieces and owns no rule of its own.

const { CliError } = require('../cli/errors')
const { readGene } = require('../cli/project')
const { GeneWorker } = require('./deadline')
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
  const deadline = Date.now() + seconds * 1000
  const worker = new GeneWorker({ memory: { agentId: agent.id, root }, seconds })
  try {
    const kinds = new Map()
    for (const [name, gene] of genes) kinds.set(name, await worker.load(gene, deadline))
    return await evaluate(node, input, {
      deadline,
      notice,
      isWasm: (name) => kinds.get(name) !== 'node',
      runGene: (name, value, geneDeadline) => worker.run(genes.get(name), value, { deadline: geneDeadline, runDeadline: deadline }),
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
  const deadline = () => Date.now() + seconds * 1000
  return {
    load: () => worker.load(gene, deadline()),
    run: (input) => worker.run(gene, input, { deadline: deadline() }),
    close: () => worker.close(),
  }
}

/** Runs `gene` once on `input` with memory `{ agentId, root }`: loading and running within `seconds`. */
async function runGene({ gene, memory, input, seconds }) {
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
