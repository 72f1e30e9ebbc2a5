'use strict'
// The worker thread genes run in (R-RUN-6). The main thread (deadline.js) sends one request at a
// time and stops the whole thread when a gene overruns its deadline, which is the only way to
// stop a promise that never settles or a WASM loop that never calls the host. Memory works
// here as in the main thread: the native addon loads in workers, and every gene gets its own
// GeneMemoryAccess (or memory imports) bound to the agent, its v2 id and its domain.
//
// Requests: `{ op: 'load', gene }` and `{ op: 'run', gene, input, memory, deadline, tmp }`.
// Replies: `{ ok: true, kind }`, `{ ok: true, output }` (JSON text), `{ ok: false, failure }`
// (the gene failed) or `{ ok: false, error }` (it could not be loaded: a message for the user).

const { parentPort } = require('node:worker_threads')
const { loadGene } = require('./genes')
const { Failure } = require('./wasm-host')
const { thrownFailure } = require('./failures')
const { CliError, describeError } = require('../cli/errors')

// Node's WASI is marked experimental; a gene's user should not see that warning on every run.
const emitWarning = process.emitWarning
process.emitWarning = function (warning, ...rest) {
  const type = typeof rest[0] === 'string' ? rest[0] : rest[0] && rest[0].type
  if (type === 'ExperimentalWarning' && /WASI/.test(String(warning))) return
  return emitWarning.call(this, warning, ...rest)
}

// What a gene writes to process.stdout or process.stderr (console.log included) travels to the
// main thread on the same port as the replies, so it arrives before the reply and is never lost
// when the thread is stopped; the main thread writes it to stderr.
for (const stream of [process.stdout, process.stderr]) {
  stream.write = function (chunk, encoding, callback) {
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined]
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(encoding === 'buffer' ? undefined : encoding)
    parentPort.postMessage({ written: text })
    if (typeof callback === 'function') process.nextTick(callback)
    return true
  }
}

const loaded = new Map()

async function load(gene) {
  // By folder and file: `--no-sandbox` runs the source of a gene that is also compiled.
  const key = `${gene.dir}\0${gene.wasm || gene.entry}`
  let entry = loaded.get(key)
  if (!entry) {
    entry = await loadGene(gene)
    loaded.set(key, entry)
  }
  return entry
}

async function handle(request) {
  try {
    const entry = await load(request.gene)
    if (request.op === 'load') return { ok: true, kind: entry.kind }
    const output = await entry.run(request.input, request)
    return { ok: true, output }
  } catch (e) {
    if (e instanceof Failure) return { ok: false, failure: e.failure }
    if (e instanceof CliError) return { ok: false, error: e.message }
    // A WASM trap, or the host failing under the gene: the gene failed.
    return { ok: false, failure: thrownFailure(e, null) }
  }
}

parentPort.on('message', (request) => {
  handle(request).then(
    (reply) => parentPort.postMessage(reply),
    (e) => parentPort.postMessage({ ok: false, error: describeError(e) }),
  )
})
