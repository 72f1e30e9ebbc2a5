'use strict'
// The main thread's side of the worker (R-RUN-6): sends a gene to the worker thread, and stops
// the thread when the gene has not answered by its deadline. A stopped thread is replaced on the
// next request. What the worker writes to stdout or stderr (console.log, process.stdout.write,
// WASM logs) goes to this process's stderr, so stdout carries only the command's result.
// Ctrl-C stops every gene at once (a WASM gene through the sandbox, a Node gene with its
// thread), prints one line and exits 130.

const native = require('../native')
const { takePrestarted, spawnGeneThread } = require('./prestart')
const { GeneCalls, Stopped, plainGene, droppedLine, INTERRUPTED_STATUS, INTERRUPTED_LINE } = require('./gene-calls')

/** The workers with a live thread, which Ctrl-C stops. */
const live = new Set()

function onInterrupt() {
  if (native && typeof native.interruptWasmGenes === 'function') native.interruptWasmGenes()
  process.stderr.write(INTERRUPTED_LINE)
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

class GeneWorker extends GeneCalls {
  #worker = null
  #streams = []
  #pending = null
  /** The worker's last count of a gene's output it dropped during the request in flight. */
  #dropped = null
  /** What the request in flight is doing, as the worker said: `check` (a schema) or `run`. */
  #phase = null

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
    if (d) process.stderr.write(droppedLine(d))
  }

  /** Ends the thread (a gene overran, or the run is over). */
  #stop() {
    const worker = this.#worker
    this.#worker = null
    track(this, false)
    if (worker) return worker.terminate()
    return Promise.resolve()
  }

  /** See GeneCalls; at the deadline the thread is stopped. */
  request(gene, request, deadline, onTimeout, { checkMs = null } = {}) {
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
    }).finally(() => this.#tellDropped())
  }

  /** Stops the thread and waits until everything it wrote has been passed on. */
  async close() {
    const streams = this.#streams
    this.#streams = []
    await this.#stop()
    await Promise.all(streams)
  }
}

module.exports = { GeneWorker }
