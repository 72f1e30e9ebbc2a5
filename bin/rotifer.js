#!/usr/bin/env node
'use strict'
// The `rotifer` command. All the work is in lib/cli/; this file wires it to the process:
// output streams, exit codes, and failures of the streams themselves.

// Ctrl-C before the command has set a handler of its own (while modules load, which a busy
// machine can stretch to a second): one line and exit 130, as the commands' own handlers end,
// never a death by signal. Once a command has its handler, that handler alone decides.
process.on('SIGINT', function interruptedEarly() {
  if (process.listenerCount('SIGINT') > 1) return
  process.stderr.write('rotifer: interrupted\n')
  process.exit(130)
})

const { main } = require('../lib/cli/main')
const { describeError, oneLine } = require('../lib/cli/errors')
const { printable } = require('../lib/cli/terminal-text')
const { useColor, red } = require('../lib/cli/format')

const errorPrefix = useColor(process.stderr) ? red('error:') : 'error:'

const io = {
  out: (text) => process.stdout.write(text + '\n'),
  err: (text) => process.stderr.write((text.startsWith('error:') ? errorPrefix + text.slice('error:'.length) : text) + '\n'),
}

// The reader of stdout went away (`rotifer … | head -1`): stop quietly, as a pipe's writer
// should. Any other write failure (a full disk) is one error line.
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(0)
  process.stderr.write(`${errorPrefix} cannot write the output: ${writeFailure(e)}\n`, () => process.exit(1))
})
// Nowhere left to report a failure of stderr: the exit code says it.
process.stderr.on('error', () => process.exit(1))

// Last resort for what escaped every handler (a gene's timer that throws later): one line,
// never a stack trace. While a gene runs on this thread, its runner's handler alone decides.
process.on('uncaughtException', (e) => {
  if (process.listenerCount('uncaughtException') > 1) return
  io.err(`error: ${printable(oneLine(describeError(e)))}`)
  process.exit(1)
})
process.on('unhandledRejection', (e) => {
  if (process.listenerCount('unhandledRejection') > 1) return
  io.err(`error: ${printable(oneLine(describeError(e)))}`)
  process.exit(1)
})

function writeFailure(e) {
  if (e.code === 'ENOSPC') return 'no space left on device (ENOSPC)'
  return e.code ? `${e.message.replace(/^[A-Z]+: /, '')} (${e.code})` : e.message
}

function exit(code) {
  process.exitCode = code
  // Exit once output is flushed, even if a gene left a timer or a socket open.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)))
}

main(process.argv.slice(2), io).then(exit, (e) => {
  // main reports every failure itself; this is only a last resort.
  io.err(`error: ${printable(oneLine(describeError(e)))}`)
  exit(1)
})
