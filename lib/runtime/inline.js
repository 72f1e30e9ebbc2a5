'use strict'
// Genes run on the main thread, for the one-shot commands (`agent run`, `run`): a worker
// thread costs Node about as much again as starting Node itself, and these commands end when
// their genes do, so nothing is left to protect by keeping a stopped gene apart. The rules are
// those of the worker (deadline.js), kept as follows:
// - the deadline: a gene that awaits is abandoned at the deadline by a timer, as a worker's
//   would be; one that holds the thread (a loop) cannot be reached from JavaScript, so the
//   native gene watchdog (sandbox crate, watchdog.rs), armed for every request, writes the
//   command's timeout line and ends the process with exit 1 a moment after the deadline;
// - Ctrl-C: the watchdog's SIGINT handler ends the process with the interruption's line and
//   exit 130 while a gene runs, and this module's handler does when the thread is free (one
//   of the two claims the exit, so one line is written);
// - what a gene writes to stdout or stderr goes, bounded and escaped (gene-host.js), to stderr,
//   as does anything written later from the timers and callbacks it left behind: writes are
//   told apart by their async context, not by when they happen;
// - an error escaping the gene's call (from a timer of its own) while it runs fails it, and a
//   `process.exit` from the gene fails it too, instead of ending the command.
// WASM genes stop themselves at their deadline (the sandbox); the watchdog is only a backstop.

const { AsyncLocalStorage } = require('node:async_hooks')
const native = require('../native')
const { createGeneHost } = require('./gene-host')
const { GeneCalls, Stopped, plainGene, droppedLine, INTERRUPTED_STATUS, INTERRUPTED_LINE } = require('./gene-calls')
const { oneLine } = require('../cli/errors')
const { printable } = require('../cli/terminal-text')
const { useColor, red } = require('../cli/format')

/** How long after a deadline the watchdog ends a process whose thread a gene still holds. */
const WATCHDOG_GRACE_MS = 1000

/** Which gene's code is running: set for the run of a request, inherited by what it schedules. */
const geneScope = new AsyncLocalStorage()

/** The writes this process had before genes ran here. */
const original = { stdout: null, stderr: null, exit: null }

/** The runner whose request is in flight (one at a time per process). */
let current = null

/** The line the CLI would print for an error with `message` (bin/rotifer.js, main.js). */
function errorLine(message) {
  const prefix = useColor(process.stderr) ? red('error:') : 'error:'
  return `${prefix} ${printable(oneLine(message))}\n`
}

function writeStderr(text) {
  original.stderr.call(process.stderr, text)
}

/** Once per process: writes and exits from genes' code are told apart from the CLI's. */
function install() {
  if (original.stdout) return
  for (const name of ['stdout', 'stderr']) {
    const stream = process[name]
    const write = stream.write
    original[name] = write
    stream.write = function (chunk, encoding, callback) {
      const runner = geneScope.getStore()
      if (!runner) return write.apply(this, arguments)
      if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined]
      runner.capture(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(encoding === 'buffer' ? undefined : encoding))
      if (typeof callback === 'function') process.nextTick(callback)
      return true
    }
  }
  original.exit = process.exit
  process.exit = function (code) {
    const runner = geneScope.getStore()
    if (!runner) return original.exit.apply(process, arguments)
    // A gene's exit ends its run, as it would end a worker thread, not the command; one from
    // what a gene left behind after its run ends nothing.
    const status = code === undefined ? process.exitCode || 0 : code
    if (runner === current) runner.fail(`it called process.exit(${status}) before returning`)
    // What follows the call in the gene does not run (unless it catches this).
    throw new Error(`process.exit(${status}) is not allowed in a gene`)
  }
  process.on('SIGINT', onInterrupt)
}

function onInterrupt() {
  if (!claim()) return
  writeStderr(INTERRUPTED_LINE)
  original.exit.call(process, INTERRUPTED_STATUS)
}

/** True when this thread may end the process (the watchdog has not begun to). */
function claim() {
  return !native || typeof native.claimProcessExit !== 'function' || native.claimProcessExit()
}

function arm(deadline, timeoutMessage) {
  if (native && typeof native.armGeneWatchdog === 'function') native.armGeneWatchdog(deadline + WATCHDOG_GRACE_MS, errorLine(timeoutMessage), INTERRUPTED_LINE)
}

/** False when the watchdog is already ending the process. */
function disarm() {
  return !native || typeof native.disarmGeneWatchdog !== 'function' || native.disarmGeneWatchdog()
}

class InlineGenes extends GeneCalls {
  #host = createGeneHost({ send: (message) => this.#received(message) })
  /** The request in flight: `{ reject, phase, onPhase }`. */
  #pending = null
  #dropped = null

  constructor(options) {
    super(options)
    install()
  }

  /** What a gene of this runner wrote. */
  capture(text) {
    this.#host.capture(text)
  }

  /** Fails the request in flight with `why` (the gene escaped its call). */
  fail(why) {
    const p = this.#pending
    this.#pending = null
    if (p) p.reject(new Stopped(why))
  }

  #received(message) {
    if (typeof message.written === 'string') writeStderr(message.written)
    else if (message.dropped) {
      this.#dropped = message.dropped
      if (native && typeof native.noteGeneWatchdog === 'function') native.noteGeneWatchdog(droppedLine(message.dropped))
    } else if (message.phase && this.#pending) {
      this.#pending.phase = message.phase
      this.#pending.onPhase(message.phase)
    }
  }

  #tellDropped() {
    const d = this.#dropped
    this.#dropped = null
    if (d) writeStderr(droppedLine(d))
  }

  /** See GeneCalls; past the deadline the gene is abandoned, or the process ended. */
  async request(gene, request, deadline, onTimeout, options) {
    // One turn of the event loop first: a Ctrl-C that came while the command was starting, or
    // between two genes, reaches its handler before a gene can take the thread.
    await new Promise((resolve) => setImmediate(resolve))
    return this.#request(gene, request, deadline, onTimeout, options)
  }

  #request(gene, request, deadline, onTimeout, { checkMs = null } = {}) {
    const escaped = (e) => this.fail(`an error escaped its call: ${e && e.message ? e.message : String(e)}`)
    return new Promise((resolve, reject) => {
      let timer = null
      let done = false
      const settle = (how) => {
        if (done) return
        done = true
        clearTimeout(timer)
        this.#pending = null
        current = null
        process.removeListener('uncaughtException', escaped)
        process.removeListener('unhandledRejection', escaped)
        // The watchdog is writing its line and ending the process: nothing more to say here.
        if (!disarm()) return
        how()
      }
      const until = (at, phase) => {
        clearTimeout(timer)
        arm(at, onTimeout(phase).message)
        timer = setTimeout(() => {
          const now = this.#pending ? this.#pending.phase : phase
          settle(() => reject(onTimeout(now)))
        }, Math.max(0, at - Date.now()))
      }
      this.#pending = {
        phase: null,
        reject: (e) => settle(() => reject(e)),
        onPhase: (phase) => {
          if (checkMs !== null && phase === 'check') until(Date.now() + checkMs, phase)
          else arm(deadline, onTimeout(phase).message)
        },
      }
      current = this
      process.on('uncaughtException', escaped)
      process.on('unhandledRejection', escaped)
      until(deadline, null)
      geneScope.run(this, () => this.#host.handle({ ...request, gene: plainGene(gene) })).then((reply) => settle(() => resolve(reply)))
    }).finally(() => this.#tellDropped())
  }

  /** Nothing to stop: a gene abandoned at its deadline ends with the command. */
  async close() {}
}

module.exports = { InlineGenes }
