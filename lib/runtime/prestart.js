'use strict'
// The gene worker's thread, started before the command knows what it will run (R-RUN-6). A
// thread takes tens of milliseconds to start and more to load the addon and register the
// module hooks genes are imported through; started first thing, it does that while this thread
// loads the command, reads the agent and opens its memory. Requires nothing heavy itself.
//
// `prestart()` starts one thread (at most one per process); `takePrestarted()` hands it to the
// first GeneWorker (deadline.js), which uses it as if it had started it. A thread nobody takes
// keeps nothing alive: it is unref'd, and the process exits without waiting for it.

const path = require('node:path')
const { Worker } = require('node:worker_threads')

const WORKER = path.join(__dirname, 'worker.js')

let waiting = null

/** Starts the worker's thread now, to get ready for the command line `argv`. */
function prestart(argv) {
  if (waiting) return
  const w = spawnGeneThread({ warm: true, argv })
  w.unref()
  // A thread that fails before it is taken is dropped; GeneWorker starts another, and reports
  // what goes wrong there.
  const drop = () => {
    if (waiting === w) waiting = null
  }
  w.on('error', drop)
  w.on('exit', drop)
  waiting = w
}

/** A new thread of worker.js; `warm`: it loads what genes need before the first request. */
function spawnGeneThread({ warm = false, argv = [] } = {}) {
  return new Worker(WORKER, { stdout: true, stderr: true, workerData: { warm, argv } })
}

/** The prestarted thread, once, or null. */
function takePrestarted() {
  const w = waiting
  waiting = null
  return w
}

module.exports = { prestart, takePrestarted, spawnGeneThread }
