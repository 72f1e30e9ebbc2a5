'use strict'
// The worker thread genes run in (R-RUN-6). The main thread (deadline.js) sends one request at a
// time and stops the whole thread when a gene overruns its deadline, which is the only way to
// stop a promise that never settles or a WASM loop that never calls the host. Memory works
// here as in the main thread: the native addon loads in workers, and every gene gets its own
// GeneMemoryAccess (or memory imports) bound to the agent, its v2 id and its domain.
//
// Requests: `{ op: 'load', gene, deadline }` (also compiles the gene's schemas), `{ op: 'run',
// gene, input, memory, deadline, seconds, checkInput }` (with `checkInput`, the input is checked
// against the inputSchema first) and `{ op: 'check', gene, schema, value }` (a schema check, see
// `check`). Schema checks run here so that the deadline and Ctrl-C bound them as they bound genes:
// a pattern can backtrack for minutes, and the main thread must stay free to stop it.
// Replies: `{ ok: true, kind }`, `{ ok: true, output }` (JSON text), `{ ok: true, problems }`,
// `{ ok: false, invalid }` (the input's problems), `{ ok: false, failure }`
// (the gene failed), `{ ok: false, stopped }` (the sandbox stopped a WASM gene: `timeout` or
// `interrupted`) or `{ ok: false, error }` (it could not be loaded: a message for the user).

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

/** The genes `rotifer agent run <agent>`, `run <gene>` or `test <gene>` will load; null if unsure. */
function genesOf(root, argv) {
  const { readGene, sourceOnly } = require('../cli/project')
  const words = argv.filter((a) => !a.startsWith('-'))
  const source = argv.includes('--no-sandbox')
  const read = (name) => (source ? sourceOnly(readGene(root, name)) : readGene(root, name))
  // Only when the name is the word right after the command (no option between them).
  if (argv[0] === 'agent' && argv[1] === 'run' && words[2] === argv[2] && argv[2] !== undefined) {
    const { findAgent } = require('../cli/agents')
    const { leaves } = require('../formats/composition')
    return leaves(findAgent(root, argv[2]).plan).map(read)
  }
  if ((argv[0] === 'run' || argv[0] === 'test') && words[1] === argv[1] && argv[1] !== undefined) {
    // `test` runs the gene's source unless it is compiled, as `run` does.
    return [read(argv[1])]
  }
  return null
}

if (workerData && workerData.warm) warm(workerData.argv || [])

const { loadGene } = require('./genes')
const { Failure, Stopped } = require('./wasm-host')
const { thrownFailure } = require('./failures')
const { CliError, describeError } = require('../cli/errors')
const { compileSchema, schemaCacheDirOf } = require('../json-schema')
const { geneSchemas } = require('./schemas')
const { printableLogLine } = require('../cli/terminal-text')

// What a gene writes to process.stdout or process.stderr (console.log included) travels to the
// main thread on the same port as the replies, so it arrives before the reply and is never lost
// when the thread is stopped; the main thread writes it to stderr. It is bounded per run as a
// WASM gene's log is: 1 MiB, 100 lines a second after a burst of 1,000, lines cut at 4 KiB,
// control and bidi characters (terminal escapes) shown escaped. What is dropped is counted, and
// the count sent along (at most ten times a second), so the main thread can tell it even when
// the thread is stopped at a deadline.
const OUTPUT_LIMITS = { bytesPerRun: 1024 * 1024, linesPerSecond: 100, burstLines: 1000, lineBytes: 4096 }
const output = { gene: null, bytes: 0, tokens: OUTPUT_LIMITS.burstLines, refilled: Date.now(), droppedWrites: 0, droppedBytes: 0, told: 0 }

function resetOutput(gene) {
  Object.assign(output, { gene, bytes: 0, tokens: OUTPUT_LIMITS.burstLines, refilled: Date.now(), droppedWrites: 0, droppedBytes: 0, told: 0 })
}

/** Each line escaped (terminal-text.js) and cut at `lineBytes` (of what is printed). */
function shown(text) {
  return text
    .split('\n')
    .map((line) => {
      const e = printableLogLine(line)
      return Buffer.byteLength(e) > OUTPUT_LIMITS.lineBytes ? `${Buffer.from(e).subarray(0, OUTPUT_LIMITS.lineBytes).toString().replace(/\uFFFD$/, '')}… (${Buffer.byteLength(line)} bytes in all)` : e
    })
    .join('\n')
}

function tellDropped(force) {
  const now = Date.now()
  if (output.droppedWrites > 0 && (force || now - output.told >= 100)) {
    output.told = now
    parentPort.postMessage({ dropped: { gene: output.gene, writes: output.droppedWrites, bytes: output.droppedBytes, limits: OUTPUT_LIMITS } })
  }
}

function passOn(text) {
  const now = Date.now()
  output.tokens = Math.min(OUTPUT_LIMITS.burstLines, output.tokens + ((now - output.refilled) / 1000) * OUTPUT_LIMITS.linesPerSecond)
  output.refilled = now
  const lines = Math.max(1, (text.match(/\n/g) || []).length)
  const bytes = Buffer.byteLength(text)
  if (output.tokens < lines || output.bytes + bytes > OUTPUT_LIMITS.bytesPerRun) {
    output.droppedWrites++
    output.droppedBytes += bytes
    tellDropped(false)
    return
  }
  output.tokens -= lines
  output.bytes += bytes
  parentPort.postMessage({ written: shown(text) })
}

/** At the end of a run: the last count of what was dropped, then a fresh budget. */
function finishOutput() {
  tellDropped(true)
  resetOutput(output.gene)
}

for (const stream of [process.stdout, process.stderr]) {
  stream.write = function (chunk, encoding, callback) {
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined]
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(encoding === 'buffer' ? undefined : encoding)
    passOn(text)
    if (typeof callback === 'function') process.nextTick(callback)
    return true
  }
}

const loaded = new Map()

async function load(gene, deadline) {
  // By folder and file: `--no-sandbox` runs the source of a gene that is also compiled.
  const key = `${gene.dir}\0${gene.wasm || gene.entry}`
  let entry = loaded.get(key)
  if (!entry) {
    entry = await loadGene(gene, deadline)
    loaded.set(key, entry)
  }
  return entry
}

/**
 * A `check` request: compiles the schema (`'input'`, `'output'`: the gene's; or `{ schema, where }`:
 * a test case's) and checks `value` (JSON text) against it when given. Here, not on the main
 * thread: a check of an untrusted value is bounded by the request's deadline like a gene's run.
 */
function check({ gene, schema, value }) {
  const validate = typeof schema === 'string' ? geneSchemas(gene).compiled(schema) : caseSchema(schema, gene)
  if (value === undefined) return null
  const parsed = JSON.parse(value)
  // The check's own time starts now: the thread's start and the compiling are not the value's.
  phase('check')
  return validate(parsed)
}

const caseSchemas = new Map()

function caseSchema({ schema, where }, gene) {
  const key = `${where}\0${JSON.stringify(schema)}`
  let validate = caseSchemas.get(key)
  if (!validate) {
    validate = compileSchema(schema, where, { cacheDir: gene.root ? schemaCacheDirOf(gene.root) : null })
    caseSchemas.set(key, validate)
  }
  return validate
}

/** Tells the main thread what the request in flight is doing: `check` (a schema) or `run`. */
function phase(name) {
  parentPort.postMessage({ phase: name })
}

async function handle(request) {
  try {
    if (request.op === 'check') return { ok: true, problems: check(request) }
    if (request.op === 'load') {
      // A broken schema stops the run with its place, before any gene runs.
      geneSchemas(request.gene).input(null)
      geneSchemas(request.gene).output(null)
    }
    const entry = await load(request.gene, request.deadline)
    if (request.op === 'load') return { ok: true, kind: entry.kind }
    if (request.checkInput) {
      phase('check')
      const problems = geneSchemas(request.gene).input(JSON.parse(request.input))
      if (problems) return { ok: false, invalid: problems }
    }
    phase('run')
    resetOutput(request.gene.name)
    try {
      return { ok: true, output: await entry.run(request.input, request) }
    } finally {
      finishOutput()
    }
  } catch (e) {
    if (e instanceof Failure) return { ok: false, failure: e.failure }
    if (e instanceof Stopped) return { ok: false, stopped: e.how }
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
