'use strict'
// The main thread's side of the worker (R-RUN-6): sends a gene to the worker thread, and stops
// the thread when the gene has not answered by its deadline. A stopped thread is replaced on the
// next request. What the worker writes to stdout or stderr (console.log, process.stdout.write,
// WASM logs) goes to this process's stderr, so stdout carries only the command's result.
// Ctrl-C stops every gene at once (a WASM gene through the sandbox, a Node gene with its
// thread), prints one line and exits 130.

const native = require('../native')
const { takePrestarted, spawnGeneThread } = require('./prestart')
const { CliError } = require('../cli/errors')
const { TIMEOUT, failureOf, geneFailure, GeneTimeout, InvalidInput, SchemaTimeout } = require('./failures')

/** The exit status of a command stopped by SIGINT (128 + 2), as shells report it. */
const INTERRUPTED_STATUS = 130

/** Why a request ended without a reply. */
class Stopped extends Error {}

/** The workers with a live thread, which Ctrl-C stops. */
const live = new Set()

function onInterrupt() {
  if (native && typeof native.interruptWasmGenes === 'function') native.interruptWasmGenes()
  process.stderr.write('rotifer: interrupted; the running gene was stopped\n')
  const exit = () => process.exit(INTERRUPTED_STATUS)
  setTimeout(exit, 2000).unref()
  Promise.allSettled([...live].map((w) => w.close())).then(exit, exit)
}

function track(worker, alive) {
  if (alive) live.add(worker)
  else live.delete(worker)
  const listening = process.listeners('SIGINT').includes(onInterrupt)
  if (live.size > 0 && !listening) process.on('SIGINT', onInterrupt)
  if (live.size === 0 && listening) process.removeListener('SIGINT', onInterrupt)
}

class GeneWorker {
  #worker = null
  #streams = []
  #pending = null
  /** The worker's last count of a gene's output it dropped during the request in flight. */
  #dropped = null
  /** What the request in flight is doing, as the worker said: `check` (a schema) or `run`. */
  #phase = null

  /**
   * `memory`: `{ agentId, root }` every gene's memory is bound to (agentId null: standalone,
   * every call denied). `seconds`: the run's timeout, as shown in messages.
   */
  constructor({ memory, seconds }) {
    this.memory = memory
    this.seconds = seconds
  }

  #spawn() {
    const worker = takePrestarted() || spawnGeneThread()
    for (const stream of [worker.stdout, worker.stderr]) {
      stream.pipe(process.stderr, { end: false })
      this.#streams.push(new Promise((resolve) => stream.once('end', resolve).once('close', resolve)))
    }
    worker.on('message', (reply) => {
      if (typeof reply.written === 'string') process.stderr.write(reply.written)
      else if (reply.dropped) this.#dropped = reply.dropped
      else if (reply.phase) {
        this.#phase = reply.phase
        if (this.#pending && this.#pending.onPhase) this.#pending.onPhase(reply.phase)
      }
      else this.#settle(worker, (p) => p.resolve(reply))
    })
    worker.on('error', (e) => this.#settle(worker, (p) => p.reject(new Stopped(`its thread stopped on an uncaught error: ${e && e.message ? e.message : String(e)}`)), true))
    worker.on('exit', (code) => this.#settle(worker, (p) => p.reject(new Stopped(`it ended its thread (exit code ${code}) before returning`)), true))
    // Between requests, a gene's stray timers or handles must not keep the CLI alive.
    worker.unref()
    this.#worker = worker
    track(this, true)
    return worker
  }

  /** Hands the pending request (if any) to `how`; a thread that `ended` is replaced next time. */
  #settle(worker, how, ended = false) {
    if (worker !== this.#worker) return
    if (ended) {
      this.#worker = null
      track(this, false)
    }
    const p = this.#pending
    this.#pending = null
    if (p) how(p)
  }

  /** One line telling what a gene's output lost to the bounds, once per request. */
  #tellDropped() {
    const d = this.#dropped
    this.#dropped = null
    if (d) {
      const l = d.limits
      process.stderr.write(`[${d.gene}] note: ${d.writes} write(s) to stdout/stderr (${d.bytes} bytes) dropped: a gene may write ${l.bytesPerRun} bytes per run, ${l.linesPerSecond} lines per second (bursts of ${l.burstLines})\n`)
    }
  }

  /** Ends the thread (a gene overran, or the run is over). */
  #stop() {
    const worker = this.#worker
    this.#worker = null
    track(this, false)
    if (worker) return worker.terminate()
    return Promise.resolve()
  }

  /**
   * Sends `request` about `gene` and waits for the reply until `deadline` (ms since the epoch).
   * At the deadline the thread is stopped: `onTimeout(phase)` says what to throw (`phase`: what
   * the worker said it was doing, `check` or `run`). With `checkMs`, the deadline is only an
   * outer bound: once the worker says the check starts, it has `checkMs` from then.
   */
  #request(gene, request, deadline, onTimeout, { checkMs = null } = {}) {
    const worker = this.#worker || this.#spawn()
    worker.ref()
    this.#phase = null
    return new Promise((resolve, reject) => {
      const expire = () => {
        this.#pending = null
        this.#stop()
        reject(onTimeout(this.#phase))
      }
      let timer = setTimeout(expire, Math.max(0, deadline - Date.now()))
      this.#pending = {
        resolve: (reply) => { clearTimeout(timer); worker.unref(); resolve(reply) },
        reject: (e) => { clearTimeout(timer); reject(e) },
        onPhase: checkMs === null ? null : (phase) => {
          if (phase !== 'check') return
          clearTimeout(timer)
          timer = setTimeout(expire, checkMs)
        },
      }
      worker.postMessage({ ...request, gene: plainGene(gene) })
    }).finally(() => this.#tellDropped()).catch((e) => {
      if (e instanceof Stopped) throw geneFailure(gene, failureOf('GENE_CRASHED', e.message, { text: e.message }))
      throw e
    })
  }

  /** Loads `gene` in the thread, before anything runs; returns its kind (`node`, `direct`, `wasi`). */
  async load(gene, deadline) {
    const reply = await this.#request(gene, { op: 'load', deadline }, deadline, () => new GeneTimeout(gene, this.seconds))
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
    const reply = await this.#request(gene, request, deadline, onTimeout)
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
    const reply = await this.#request(gene, request, deadline, () => new SchemaTimeout(what, seconds), { checkMs: seconds * 1000 })
    if (!reply.ok) throw new CliError(reply.error || reply.failure.text)
    return reply.problems
  }

  /** Stops the thread and waits until everything it wrote has been passed on. */
  async close() {
    const streams = this.#streams
    this.#streams = []
    await this.#stop()
    await Promise.all(streams)
  }
}

/** What the worker needs of a gene (a structured-clone-safe copy). */
function plainGene(gene) {
  return { name: gene.name, root: gene.root, dir: gene.dir, entry: gene.entry, wasm: gene.wasm, id: gene.id, domain: gene.domain, phenotype: gene.phenotype }
}

module.exports = { GeneWorker }
