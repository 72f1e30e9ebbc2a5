'use strict'
// What `rotifer run`, `rotifer agent run` and `rotifer test` share on the command line: the
// input and the timeout. Running genes is lib/runtime/'s job.

const { UsageError } = require('./errors')
const { parseInput } = require('./input')
const { DEFAULT_TIMEOUT_SECONDS } = require('../runtime/defaults')

/** The longest `--timeout`: one day. */
const MAX_TIMEOUT_SECONDS = 86400

/** The `--timeout` option every command that runs genes takes. */
const TIMEOUT_OPTION = {
  type: 'string',
  value: '<seconds>',
  help: `stop a gene still running after this many seconds (it fails, exit 1); default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS}`,
}

/** Parses `--timeout` (seconds, decimals allowed); absent: the default. */
function parseTimeout(text, command) {
  if (text === undefined) return DEFAULT_TIMEOUT_SECONDS
  const n = /^[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : NaN
  if (!(n > 0 && n <= MAX_TIMEOUT_SECONDS)) {
    throw new UsageError(`invalid --timeout ${JSON.stringify(text)}: give a number of seconds greater than 0 and at most ${MAX_TIMEOUT_SECONDS}, e.g. --timeout 5`, command, { seeHelp: false })
  }
  return n
}

module.exports = { parseInput, parseTimeout, TIMEOUT_OPTION }
