'use strict'
// How a gene's failure is described on both sides of the worker boundary (R-RUN-3, R-RUN-6).
// The worker sends plain `{ code, message, text, where }` objects; the main thread turns them
// into the CLI's errors. `code` is what `Try` hands its fallback and what a test case's
// `expectedError` names: the MEMORY_… code of a memory error, the code of a
// `{"__rotifer_error"}` output, the negative number a WASM `express` returned, or the name of
// what a JavaScript gene threw.

const { CliError, GeneFailure, describeError } = require('../cli/errors')

/** The code `Try` and `Par` see when a branch is stopped at the `Par` deadline. */
const TIMEOUT = 'TIMEOUT'

/** A failure as the worker reports it: `text` is the one-line description the CLI shows. */
function failureOf(code, message, { text = `${code}: ${message}`, where = null } = {}) {
  return { code, message, text, where }
}

/** An output the host cannot use (code INVALID_OUTPUT); the message says why. */
function invalidOutput(message) {
  return failureOf('INVALID_OUTPUT', message, { text: message })
}

/** What a JavaScript gene threw, as a failure. */
function thrownFailure(e, where) {
  const code = e && typeof e.code === 'string' ? e.code : e instanceof Error ? e.name : 'Error'
  const message = e instanceof Error ? e.message : describeError(e)
  return failureOf(code, message, { text: describeError(e), where })
}

/**
 * The failure an output reports, or null: an output that is exactly
 * `{"__rotifer_error":{"code","message"}}` is the gene rejecting its input.
 */
function envelopeFailure(output) {
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return null
  const keys = Object.keys(output)
  if (keys.length !== 1 || keys[0] !== '__rotifer_error') return null
  const e = output.__rotifer_error
  const code = e && typeof e.code === 'string' && e.code !== '' ? e.code : 'GENE_ERROR'
  const message = e && typeof e.message === 'string' ? e.message : 'the gene reported an error without a message'
  return failureOf(code, message)
}

/** The main thread's error for a failure the worker reported about `gene`. */
function geneFailure(gene, failure) {
  const err = new GeneFailure(gene, new Error(failure.text), failure.where)
  err.code = failure.code
  err.reason = failure.message
  err.gene = gene.name
  return err
}

/** Thrown on the genes' thread for a failure of the gene itself (not of the host). */
class Failure extends Error {
  constructor(failure) {
    super(failure.text)
    this.failure = failure
  }
}

/** Thrown on the genes' thread when the sandbox stopped the gene (`timeout` or `interrupted`). */
class Stopped extends Error {
  constructor(how) {
    super(how)
    this.how = how
  }
}

/** A gene still running at the run's deadline: the whole run fails (exit 1). */
class GeneTimeout extends CliError {
  constructor(gene, seconds) {
    super(`gene "${gene.name}" timed out after ${seconds} s`)
    this.name = 'GeneTimeout'
  }
}

/** An input the gene's inputSchema refuses (the worker checked it): `problems` say why. */
class InvalidInput extends CliError {
  constructor(gene, problems) {
    super(`gene "${gene.name}": the input does not match its inputSchema`)
    this.name = 'InvalidInput'
    this.problems = problems
  }
}

/**
 * A schema check of a value still running at its deadline (a pattern that backtracks without
 * end, such as ^(a+)+$ on "aaaa…!"): the worker's thread was stopped; exit 1.
 */
class SchemaTimeout extends CliError {
  constructor(what, seconds) {
    super(`checking ${what} did not finish within ${seconds} s and was stopped (a "pattern" that backtracks without end, such as ^(a+)+$, can do that; simplify the schema)`)
    this.name = 'SchemaTimeout'
  }
}

/** A `Par` whose merge found too few successes; `Try` and an outer `Par` can catch it. */
class CompositionFailure extends CliError {
  constructor(code, message, details) {
    super(message)
    this.name = 'CompositionFailure'
    this.code = code
    this.reason = message
    this.details = details
  }
}

/** Failures a `Try` falls back on and a `Par` merge counts; anything else ends the run. */
function isRecoverable(e) {
  return (e instanceof GeneFailure && typeof e.code === 'string') || e instanceof CompositionFailure
}

module.exports = { TIMEOUT, failureOf, invalidOutput, thrownFailure, envelopeFailure, geneFailure, GeneTimeout, InvalidInput, SchemaTimeout, CompositionFailure, isRecoverable, Failure, Stopped }
