'use strict'
// Errors the CLI reports itself. Every failure ends as one line on stderr and a non-zero exit;
// these classes only decide the wording and the exit code.

/** A failure the user can fix: bad gene, unknown agent, invalid input. Exit code 1. */
class CliError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = 'CliError'
    this.exitCode = 1
  }
}

/** The command line itself is wrong (unknown option, missing argument). Exit code 2. */
class UsageError extends CliError {
  /**
   * `command` is the command's name (`agent create`), shown with the message. `seeHelp: false`
   * for messages that already say what to write (a bad quota lists the accepted forms).
   */
  constructor(message, command, { seeHelp = true } = {}) {
    super(message)
    this.name = 'UsageError'
    this.exitCode = 2
    this.command = command
    this.seeHelp = seeHelp
  }
}

/** A gene's `express` threw (or returned something unusable); the cause says what. */
class GeneFailure extends CliError {
  constructor(gene, cause, where) {
    super(`gene "${gene.name}" (${gene.id}) failed: ${describeError(cause)}${where ? ` (at ${where})` : ''}`, { cause })
    this.name = 'GeneFailure'
    this.where = where || null
  }
}

/**
 * One line describing `e`: a MemoryError shows its code first (`MEMORY_ACCESS_DENIED: …`) so the
 * code is visible wherever the error surfaces; other errors show their name when it helps.
 */
function describeError(e) {
  if (e && e.name === 'MemoryError' && typeof e.code === 'string') return `${e.code}: ${e.message}`
  if (e instanceof Error) {
    return e.name && e.name !== 'Error' && !(e instanceof CliError) ? `${e.name}: ${e.message}` : e.message
  }
  return `threw ${typeof e === 'string' ? JSON.stringify(e) : String(e)}`
}

/** Collapses a message to a single line: stderr gets exactly one line per failure. */
function oneLine(text) {
  return String(text).replace(/\s*[\r\n]+\s*/g, ' ').trim()
}

module.exports = { CliError, UsageError, GeneFailure, describeError, oneLine }
