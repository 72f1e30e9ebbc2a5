'use strict'
// The gene runtime the CLI commands call (R-RUN): an agent's composition, one gene on its own,
// or one gene case after case (a test suite). A test suite's genes run in a worker thread
// (deadline.js) that is stopped at a case's deadline, and the suite goes on; the one-shot
// commands run theirs on the main thread (inline.js), where a gene's deadline ends the command,
// as it would anyway, and no thread has to start. A TryPool run keeps the worker: its fitness
// state is saved even when the run times out. Every gene's input is checked against its
// inputSchema (schemas.js) before it runs, on the genes' thread, so the deadline and Ctrl-C bound
// the check too. This file wires the pieces and owns no rule of its own.

const path = require('node:path')
const { CliError } = require('../cli/errors')
const { printable } = require('../cli/terminal-text')
const { readGene, sourceOnly, checkOwnIdentity } = require('../cli/project')
const { problemsText } = require('../json-schema')
const { InlineGenes } = require('./inline')
const { failureOf, geneFailure, InvalidInput } = require('./failures')
const { leaves } = require('../formats/composition')
const { evaluate } = require('./composition')
const { gateGene } = require('./l0-gate')

const toStderr = (line) => process.stderr.write(`${line}\n`)

const { DEFAULT_TIMEOUT_SECONDS, DEFAULT_INPUT } = require('./defaults')
/** How much of an input or output a --verbose step line shows. */
const PREVIEW = 150

/** A value a --verbose step line shows: its JSON, cut, with nothing a terminal acts on. */
const preview = (value) => {
  const text = JSON.stringify(value)
  return printable(text === undefined ? String(value) : text.length > PREVIEW ? `${text.slice(0, PREVIEW)}…` : text)
}

/**
 * Runs `agent`'s composition (its record's `plan`) on `input` with the agent's memory, within
 * `seconds`; returns the output. Every gene is read and loaded before the first one runs.
 * `noSandbox`: every gene runs its source under Node. `notice(line)` receives the one-line notes
 * for stderr; `step(line)`, when given (--verbose), a line per gene run. `agentsDir`: where a
 * TryPool keeps its fitness state.
 */
async function runAgent({ root, agent, input, seconds, notice, step = null, noSandbox = false, agentsDir }) {
  const node = agent.plan
  const genes = new Map()
  for (const name of leaves(node)) {
    if (genes.has(name)) continue
    try {
      const gene = noSandbox ? sourceOnly(readGene(root, name)) : readGene(root, name)
      if (gene.wasm) checkOwnIdentity(root, gene)
      genes.set(name, gene)
    } catch (e) {
      throw new CliError(`agent "${agent.name}": ${e.message}`)
    }
  }
  // The L0 gate, before any gene's code is loaded (--no-sandbox does not skip it). The schemas
  // compile in the worker, at load, before anything runs.
  for (const gene of genes.values()) gateGene(gene, { seconds, notice: notice || toStderr })
  const deadline = Date.now() + seconds * 1000
  const memory = { agentId: agent.id, root }
  const worker = node.type === 'TryPool' ? new (require('./deadline').GeneWorker)({ memory, seconds }) : new InlineGenes({ memory, seconds })
  try {
    // Every gene loads, and its schemas compile, before anything runs: a broken schema stops the
    // run with its place.
    const kinds = new Map()
    for (const [name, gene] of genes) kinds.set(name, await worker.load(gene, deadline))
    let count = 0
    const runOne = async (name, value, geneDeadline = deadline) => {
      const gene = genes.get(name)
      const n = ++count
      const started = Date.now()
      const log = (status, detail) => step && step(`[${n}] ${name} (${kinds.get(name)}) ${status} in ${Date.now() - started} ms\n    input:  ${preview(value)}\n    ${detail}`)
      try {
        let output
        try {
          output = await worker.run(gene, value, { deadline: geneDeadline, runDeadline: deadline, checkInput: true })
        } catch (e) {
          // A failure of the gene's (code INVALID_INPUT): a Try falls back on it, as on any other.
          if (e instanceof InvalidInput) throw geneFailure(gene, failureOf('INVALID_INPUT', inputMessage(gene, e.problems)))
          throw e
        }
        log('ok', `output: ${preview(output)}`)
        return output
      } catch (e) {
        log('failed', `error:  ${printable(e.code ? `${e.code}: ${e.reason || e.message}` : e.message)}`)
        throw e
      }
    }
    if (node.type === 'TryPool') return await runPool({ agent, agentsDir, genes, input, notice, step, runOne })
    return await evaluate(node, input, {
      deadline,
      notice,
      isWasm: (name) => kinds.get(name) !== 'node',
      runGene: runOne,
    })
  } finally {
    await worker.close()
  }
}

/** A TryPool run: the fitness state is read before and saved after, even when the run fails. */
async function runPool({ agent, agentsDir, genes, input, notice, step, runOne }) {
  const { readFitnessState, writeFitnessState } = require('../formats/fitness-state')
  const { runTryPool } = require('./try-pool')
  const state = readFitnessState(agentsDir, agent.name, notice)
  try {
    const result = await runTryPool({ names: agent.plan.genes, genes, input, state, runGene: (name, value) => runOne(name, value), step: step || (() => {}) })
    writeFitnessState(agentsDir, agent.name, result.state)
    return result.output
  } catch (e) {
    if (e.state) writeFitnessState(agentsDir, agent.name, e.state)
    throw e
  }
}

/** What a schema check is about, for its timeout message. */
function schemaName(gene, schema) {
  if (typeof schema !== 'string') return `a value against ${schema.where}`
  return `a value against the ${schema}Schema of ${path.join(gene.where || gene.dir, 'phenotype.json')}`
}

/**
 * A runner of one `gene` with memory `{ agentId, root }` (agentId null: every memory call is
 * denied): `load()`, then `run(input)` as often as needed, each within `seconds`; `close()`.
 * `check(schema, value, seconds?)` checks a value against `'input'`, `'output'` or `{ schema,
 * where }` in the gene's thread, within the same bound (null: it conforms; else its problems);
 * `compile(schema)` only compiles it (a CliError names a broken one).
 * `stop()` (a signal handler's) stops a WASM gene in the sandbox at once, so that the thread it
 * runs on can be ended: a thread in native code cannot be until the gene returns.
 */
function geneRunner({ gene, memory, seconds, notice = toStderr }) {
  const worker = new (require('./deadline').GeneWorker)({ memory, seconds })
  const deadline = (s) => Date.now() + s * 1000
  // The check has `s` seconds from when it starts; starting the thread and compiling the schema
  // are bounded apart, by the default timeout or a longer `seconds`.
  const outer = () => deadline(Math.max(seconds, DEFAULT_TIMEOUT_SECONDS))
  const checkWithin = (schema, value, s = seconds) => worker.check(gene, schema, value, { deadline: outer(), seconds: s, what: schemaName(gene, schema) })
  const runner = {
    seconds,
    /** How the gene loaded (`node`, `direct` or `wasi`), once it has. */
    kind: null,
    load: async () => {
      gateGene(gene, { seconds, notice })
      runner.kind = await worker.load(gene, deadline(seconds))
      return runner.kind
    },
    /** Runs on `input`; `options.seconds` gives this run its own timeout. */
    run: (input, options = {}) => worker.run(gene, input, { deadline: deadline(options.seconds || seconds), seconds: options.seconds || seconds }),
    check: (schema, value, s) => checkWithin(schema, value, s || seconds),
    compile: (schema) => checkWithin(schema, undefined),
    close: () => worker.close(),
    stop: () => require('./wasm-host').interruptWasmGenes(),
  }
  return runner
}

/** What is wrong with an input `gene` was given, naming its phenotype, the fields and the rules. */
function inputMessage(gene, problems) {
  return `the input does not match the inputSchema of ${path.join(gene.where, 'phenotype.json')}: ${problemsText(problems)}`
}

/**
 * Runs `gene` once on `input` with memory `{ agentId, root }`: loading and running within
 * `seconds`. The input is checked against the gene's inputSchema first.
 */
async function runGene({ gene, memory, input, seconds, notice = toStderr }) {
  gateGene(gene, { seconds, notice })
  const deadline = Date.now() + seconds * 1000
  const worker = new InlineGenes({ memory, seconds })
  try {
    await worker.load(gene, deadline)
    return await worker.run(gene, input, { deadline, checkInput: true })
  } catch (e) {
    if (e instanceof InvalidInput) throw new CliError(`gene "${gene.name}": ${inputMessage(gene, e.problems)}; give an input that it accepts`)
    throw e
  } finally {
    await worker.close()
  }
}

module.exports = { DEFAULT_TIMEOUT_SECONDS, DEFAULT_INPUT, runAgent, runGene, geneRunner, leaves }
