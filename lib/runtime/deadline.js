'use strict'
// The main thread's side of the worker (R-RUN-6): sends a gene to the worker thread, and stops
// the thread when the gene has not answered by its deadline. A stopped thread is replaced on the
// next request. What the worker writes to stdout or stderr (console.log, process.stdout.write,
// WASM logs) goes to this process's stderr, so stdout carries only the command's result.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { CliError } = require('../cli/errors')
const { TIMEOUT, failureOf, geneFailure, GeneTimeout } = require('./failures')

const WORKER = path.join(__dirname, 'worker.js')

/** Why a request ended without a reply. */
class Stopped extends Error {}

// The private folders of runs whose worker was never closed (a thread kept for reuse by
// @rotifer/playground/testing): deleted when the process exits.
const openTmps = new Set()
process.once('exit', () => {
  for (const dir of openTmps) fs.rmSync(dir, { recursive: true, force: true })
})

class GeneWorker {
  #worker = null
  #streams = []
  #pending = null
  #tmp = null

  /**
   * `memory`: `{ agentId, root }` every gene's memory is bound to (agentId null: standalone,
   * every call denied). `seconds`: the run's timeout, as shown in messages.
   */
  constructor({ memory, seconds }) {
    this.memory = memory
    this.seconds = seconds
  }

  #spawn() {
    const worker = new Worker(WORKER, { stdout: true, stderr: true })
    for (const stream of [worker.stdout, worker.stderr]) {
      stream.pipe(process.stderr, { end: false })
      this.#streams.push(new Promise((resolve) => stream.once('end', resolve).once('close', resolve)))
    }
    worker.on('message', (reply) => {
      if (typeof reply.written === 'string') process.stderr.write(reply.written)
      else this.#settle(worker, (p) => p.resolve(reply))
    })
    worker.on('error', (e) => this.#settle(worker, (p) => p.reject(new Stopped(`its thread stopped on an uncaught error: ${e && e.message ? e.message : String(e)}`)), true))
    worker.on('exit', (code) => this.#settle(worker, (p) => p.reject(new Stopped(`it ended its thread (exit code ${code}) before returning`)), true))
    // Between requests, a gene's stray timers or handles must not keep the CLI alive.
    worker.unref()
    this.#worker = worker
    return worker
  }

  /** Hands the pending request (if any) to `how`; a thread that `ended` is replaced next time. */
  #settle(worker, how, ended = false) {
    if (worker !== this.#worker) return
    if (ended) this.#worker = null
    const p = this.#pending
    this.#pending = null
    if (p) how(p)
  }

  /** Ends the thread (a gene overran, or the run is over). */
  #stop() {
    const worker = this.#worker
    this.#worker = null
    if (worker) return worker.terminate()
    return Promise.resolve()
  }

  /**
   * Sends `request` about `gene` and waits for the reply until `deadline` (ms since the epoch).
   * At the deadline the thread is stopped: `onTimeout()` says what to throw.
   */
  #request(gene, request, deadline, onTimeout) {
    const worker = this.#worker || this.#spawn()
    worker.ref()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending = null
        this.#stop()
        reject(onTimeout())
      }, Math.max(0, deadline - Date.now()))
      this.#pending = {
        resolve: (reply) => { clearTimeout(timer); worker.unref(); resolve(reply) },
        reject: (e) => { clearTimeout(timer); reject(e) },
      }
      worker.postMessage({ ...request, gene: plainGene(gene) })
    }).catch((e) => {
      if (e instanceof Stopped) throw geneFailure(gene, failureOf('GENE_CRASHED', e.message, { text: e.message }))
      throw e
    })
  }

  /** Loads `gene` in the thread, before anything runs; returns its kind (`node`, `direct`, `wasi`). */
  async load(gene, deadline) {
    const reply = await this.#request(gene, { op: 'load' }, deadline, () => new GeneTimeout(gene, this.seconds))
    if (!reply.ok) throw reply.failure ? geneFailure(gene, reply.failure) : new CliError(reply.error)
    return reply.kind
  }

  /**
   * Runs `gene` on `input` (a JSON value) and returns its output. `deadline` is when the gene is
   * stopped; when it comes before `runDeadline` (a `Par` deadline) the gene fails with code
   * TIMEOUT, which a `Try` or the `Par` merge may handle; at the run's deadline the run fails.
   * `seconds` is the timeout the message names (a test case's own, or the run's).
   */
  async run(gene, input, { deadline, runDeadline = deadline, seconds = this.seconds }) {
    if (!this.#tmp) {
      this.#tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-run-'))
      openTmps.add(this.#tmp)
    }
    const onTimeout = () => (deadline < runDeadline
      ? geneFailure(gene, failureOf(TIMEOUT, 'stopped at the Par deadline', { text: 'timed out at the Par deadline' }))
      : new GeneTimeout(gene, seconds))
    const request = { op: 'run', input: JSON.stringify(input), memory: this.memory, deadline, tmp: this.#tmp }
    const reply = await this.#request(gene, request, deadline, onTimeout)
    if (!reply.ok) throw reply.failure ? geneFailure(gene, reply.failure) : new CliError(reply.error)
    return JSON.parse(reply.output)
  }

  /** Stops the thread and waits until everything it wrote has been passed on. */
  async close() {
    const streams = this.#streams
    this.#streams = []
    await this.#stop()
    await Promise.all(streams)
    if (this.#tmp) {
      fs.rmSync(this.#tmp, { recursive: true, force: true })
      openTmps.delete(this.#tmp)
    }
    this.#tmp = null
  }
}

/** What the worker needs of a gene (a structured-clone-safe copy). */
function plainGene(gene) {
  return { name: gene.name, root: gene.root, dir: gene.dir, entry: gene.entry, wasm: gene.wasm, id: gene.id, domain: gene.domain, phenotype: gene.phenotype }
}

module.exports = { GeneWorker }
