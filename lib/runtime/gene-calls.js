'use strict'
// What the CLI's gene runtime asks of the thread genes run on (R-RUN-3, R-RUN-8): load a gene,
// run it, check a value against a schema, each within a deadline; and how the replies (see
// gene-host.js) become outputs or the CLI's errors. Two kinds of thread answer: a worker thread
// (deadline.js: `GeneWorker`, stopped at the deadline) and the main thread itself (inline.js:
// `InlineGenes`, for the one-shot commands, which a watchdog ends at the deadline).

const { CliError } = require('../cli/errors')
const { TIMEOUT, failureOf, geneFailure, GeneTimeout, InvalidInput, SchemaTimeout } = require('./failures')

/** Why a request ended without a reply. */
class Stopped extends Error {}

/** The exit status of a command stopped by SIGINT (128 + 2), as shells report it. */
const INTERRUPTED_STATUS = 130
const INTERRUPTED_LINE = 'rotifer: interrupted; the running gene was stopped\n'

/** The line telling what a gene's output lost to the bounds (`dropped` as the host sends it). */
function droppedLine(d) {
  const l = d.limits
  return `[${d.gene}] note: ${d.writes} write(s) to stdout/stderr (${d.bytes} bytes) dropped: a gene may write ${l.bytesPerRun} bytes per run, ${l.linesPerSecond} lines per second (bursts of ${l.burstLines})\n`
}

/**
 * The calls. A subclass gives `request(gene, request, deadline, onTimeout, { checkMs })`: sends
 * `request` about `gene` and resolves to the reply, or at `deadline` (ms since the epoch)
 * rejects with `onTimeout(phase)` (`phase`: what the host said it was doing, `check` or `run`);
 * with `checkMs`, the deadline is only an outer bound: once the check starts, it has `checkMs`
 * from then. It rejects with `Stopped` when the gene ended its thread or escaped its call.
 */
class GeneCalls {
  /**
   * `memory`: `{ agentId, root }` every gene's memory is bound to (agentId null: standalone,
   * every call denied). `seconds`: the run's timeout, as shown in messages.
   */
  constructor({ memory, seconds }) {
    this.memory = memory
    this.seconds = seconds
  }

  /** What the request's reply or its `Stopped` become. */
  async ask(gene, request, deadline, onTimeout, options) {
    try {
      return await this.request(gene, request, deadline, onTimeout, options)
    } catch (e) {
      if (e instanceof Stopped) throw geneFailure(gene, failureOf('GENE_CRASHED', e.message, { text: e.message }))
      throw e
    }
  }

  /** Loads `gene` in the thread, before anything runs; returns its kind (`node`, `direct`, `wasi`). */
  async load(gene, deadline) {
    const reply = await this.ask(gene, { op: 'load', deadline }, deadline, () => new GeneTimeout(gene, this.seconds))
    if (!reply.ok) throw reply.failure ? geneFailure(gene, reply.failure) : new CliError(reply.error)
    return reply.kind
  }

  /**
   * Runs `gene` on `input` (a JSON value) and returns its output. `deadline` is when the gene is
   * stopped; when it comes before `runDeadline` (a `Par` deadline) the gene fails with code
   * TIMEOUT, which a `Try` or the `Par` merge may handle; at the run's deadline the run fails.
   * `seconds` is the timeout the message names (a test case's own, or the run's).
   */
  async run(gene, input, { deadline, runDeadline = deadline, seconds = this.seconds, checkInput = false }) {
    const onTimeout = (phase) => {
      if (deadline < runDeadline) return geneFailure(gene, failureOf(TIMEOUT, 'stopped at the Par deadline', { text: 'timed out at the Par deadline' }))
      if (phase === 'check') return new SchemaTimeout(`the input of gene "${gene.name}" against its inputSchema`, seconds)
      return new GeneTimeout(gene, seconds)
    }
    const request = { op: 'run', input: JSON.stringify(input), memory: this.memory, deadline, seconds, checkInput }
    const reply = await this.ask(gene, request, deadline, onTimeout)
    // With `checkInput`: the inputSchema refused the input, and the gene did not run.
    if (reply.invalid) throw new InvalidInput(gene, reply.invalid)
    // The sandbox stops a WASM gene at its deadline itself; its reply may beat the timer.
    if (reply.stopped === 'timeout') throw onTimeout()
    if (reply.stopped) throw new CliError(`gene "${gene.name}" was interrupted`)
    if (!reply.ok) throw reply.failure ? geneFailure(gene, reply.failure) : new CliError(reply.error)
    return JSON.parse(reply.output)
  }

  /**
   * Checks `value` (a JSON value; undefined: only compile) against `schema` of `gene` in the
   * thread: `'input'`, `'output'`, or `{ schema, where }` (a test case's expectedSchema, `where`
   * naming it). Returns null when it conforms, else its problems; an invalid schema throws a
   * CliError naming it. The check itself has `seconds` from when it starts (the thread's start
   * and the compiling are bounded by `deadline`): then the thread is stopped and SchemaTimeout
   * thrown, naming `what`.
   */
  async check(gene, schema, value, { deadline, seconds = this.seconds, what }) {
    const request = { op: 'check', schema, value: value === undefined ? undefined : JSON.stringify(value) }
    const reply = await this.ask(gene, request, deadline, () => new SchemaTimeout(what, seconds), { checkMs: seconds * 1000 })
    if (!reply.ok) throw new CliError(reply.error || reply.failure.text)
    return reply.problems
  }

}

/** What the host needs of a gene (a structured-clone-safe copy). */
function plainGene(gene) {
  return { name: gene.name, root: gene.root, dir: gene.dir, entry: gene.entry, wasm: gene.wasm, id: gene.id, domain: gene.domain, phenotype: gene.phenotype }
}

module.exports = { GeneCalls, Stopped, plainGene, droppedLine, INTERRUPTED_STATUS, INTERRUPTED_LINE }
