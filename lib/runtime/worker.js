'use strict'
// The worker thread genes run in (R-RUN-6). The main thread (deadline.js) sends one request at a
// time and stops the whole thread when a gene overruns its deadline, which is the only way to
// stop a promise that never settles or a WASM loop that never calls the host. Memory works
// here as in the main thread: the native addon loads in workers, and every gene gets its own
// GeneMemoryAccess (or memory imports) bound to the agent, its v2 id and its domain.
//
// Requests and replies: gene-host.js.

const { parentPort, workerData } = require('node:worker_threads')

/**
 * A thread started before its first request (prestart.js) gets ready now, while the main thread
 * is busy: it reads which genes the command will run (from `argv`, as the command will) and,
 * unless every one of them is compiled or imports nothing (gene-loader.js), registers the ES
 * module hooks, whose thread takes a while to start, so that it starts first. Anything that
 * fails here fails again, and is reported, at load.
 */
function warm(argv) {
  try {
    const { findProjectRoot } = require('../formats/project-config')
    const loader = require('../cli/gene-loader')
    const root = findProjectRoot(process.cwd())
    const genes = genesOf(root, argv)
    if (genes === null || !genes.every((g) => g.wasm || loader.importsNothing(g))) loader.install(root)
  } catch {
    // reported by the first load
  }
}

/** The genes `rotifer test <gene>` will load (the one command that prestarts); null if unsure. */
function genesOf(root, argv) {
  const { readGene } = require('../cli/project')
  const words = argv.filter((a) => !a.startsWith('-'))
  // Only when the name is the word right after the command (no option between them).
  if (argv[0] === 'test' && words[1] === argv[1] && argv[1] !== undefined) return [readGene(root, argv[1])]
  return null
}

if (workerData && workerData.warm) warm(workerData.argv || [])

const { createGeneHost } = require('./gene-host')
const { describeError } = require('../cli/errors')

// What a gene writes to process.stdout or process.stderr (console.log included) travels to the
// main thread on the same port as the replies, so it arrives before the reply and is never lost
// when the thread is stopped; the main thread writes it to stderr (bounded: gene-host.js).
const host = createGeneHost({ send: (message) => parentPort.postMessage(message) })

for (const stream of [process.stdout, process.stderr]) {
  stream.write = function (chunk, encoding, callback) {
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined]
    host.capture(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(encoding === 'buffer' ? undefined : encoding))
    if (typeof callback === 'function') process.nextTick(callback)
    return true
  }
}

parentPort.on('message', (request) => {
  host.handle(request).then(
    (reply) => parentPort.postMessage(reply),
    (e) => parentPort.postMessage({ ok: false, error: describeError(e) }),
  )
})
