'use strict'
// What answers a request about a gene, on whichever thread genes run: the worker thread
// (worker.js) or the CLI's main thread (inline.js). Requests: `{ op: 'load', gene, deadline }`
// (also compiles the gene's schemas), `{ op: 'run', gene, input, memory, deadline, seconds,
// checkInput }` (with `checkInput`, the input is checked against the inputSchema first) and
// `{ op: 'check', gene, schema, value }` (a schema check, see `check`).
// Replies: `{ ok: true, kind }`, `{ ok: true, output }` (JSON text), `{ ok: true, problems }`,
// `{ ok: false, invalid }` (the input's problems), `{ ok: false, failure }`
// (the gene failed), `{ ok: false, stopped }` (the sandbox stopped a WASM gene: `timeout` or
// `interrupted`) or `{ ok: false, error }` (it could not be loaded: a message for the user).
//
// On the way, the host sends `{ phase }` (`check` or `run`: what the request is doing),
// `{ written }` (what the gene wrote, escaped and cut) and `{ dropped }` (what its output lost
// to the bounds) through `send`.

const { loadGene } = require('./genes')
const { thrownFailure, Failure, Stopped } = require('./failures')
const { CliError } = require('../cli/errors')
const { compileSchema, schemaCacheDirOf } = require('../json-schema')
const { geneSchemas } = require('./schemas')
const { printableLogLine } = require('../cli/terminal-text')

// What a gene writes to process.stdout or process.stderr (console.log included) is bounded per
// run as a WASM gene's log is: 1 MiB, 100 lines a second after a burst of 1,000, lines cut at
// 4 KiB, control and bidi characters (terminal escapes) shown escaped. What is dropped is
// counted, and the count sent along (at most ten times a second), so it can be told even
// when the gene is stopped at a deadline.
const OUTPUT_LIMITS = { bytesPerRun: 1024 * 1024, linesPerSecond: 100, burstLines: 1000, lineBytes: 4096 }

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

/**
 * A host answering requests with `handle(request)` (a promise of the reply); `capture(text)` is
 * what the gene wrote to stdout or stderr.
 */
function createGeneHost({ send }) {
  const output = { gene: null, bytes: 0, tokens: OUTPUT_LIMITS.burstLines, refilled: Date.now(), droppedWrites: 0, droppedBytes: 0, told: 0 }

  function resetOutput(gene) {
    Object.assign(output, { gene, bytes: 0, tokens: OUTPUT_LIMITS.burstLines, refilled: Date.now(), droppedWrites: 0, droppedBytes: 0, told: 0 })
  }

  function tellDropped(force) {
    const now = Date.now()
    if (output.droppedWrites > 0 && (force || now - output.told >= 100)) {
      output.told = now
      send({ dropped: { gene: output.gene, writes: output.droppedWrites, bytes: output.droppedBytes, limits: OUTPUT_LIMITS } })
    }
  }

  function capture(text) {
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
    send({ written: shown(text) })
  }

  /** At the end of a run: the last count of what was dropped, then a fresh budget. */
  function finishOutput() {
    tellDropped(true)
    resetOutput(output.gene)
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
   * a test case's) and checks `value` (JSON text) against it when given. On the genes' thread:
   * a check of an untrusted value is bounded by the request's deadline like a gene's run.
   */
  function check({ gene, schema, value }) {
    const validate = typeof schema === 'string' ? geneSchemas(gene).compiled(schema) : caseSchema(schema, gene)
    if (value === undefined) return null
    const parsed = JSON.parse(value)
    // The check's own time starts now: the thread's start and the compiling are not the value's.
    send({ phase: 'check' })
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
        send({ phase: 'check' })
        const problems = geneSchemas(request.gene).input(JSON.parse(request.input))
        if (problems) return { ok: false, invalid: problems }
      }
      send({ phase: 'run' })
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

  return { handle, capture }
}

module.exports = { createGeneHost }
