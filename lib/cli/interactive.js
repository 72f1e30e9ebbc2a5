'use strict'
// What the CLI does only for a person at a terminal: a question before a destructive command,
// and a progress line on stderr while a long one runs. Scripts (no terminal) get neither.

const readline = require('node:readline')
const { CliError, UsageError } = require('./errors')
const { printable, truncate } = require('./format')

/** True when a person can answer: stdin and stderr are both a terminal. */
function canAsk() {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY)
}

/**
 * Asks `question` on stderr and reads the answer from stdin: resolves true for y or yes (any
 * case), false for anything else, an empty line or the end of input.
 */
function ask(question) {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })
    let answered = false
    // Ctrl-C at the question is a no.
    rl.on('SIGINT', () => rl.close())
    rl.question(`${question} [y/N] `, (answer) => {
      answered = true
      rl.close()
      resolve(/^(y|yes)$/i.test(answer.trim()))
    })
    rl.on('close', () => {
      if (!answered) {
        process.stderr.write('\n')
        resolve(false)
      }
    })
  })
}

/**
 * Confirms a destructive command: with `yes` (--yes) it goes ahead; at a terminal the person is
 * asked, and anything but yes stops the command (exit 1, `nothing` says what was left alone).
 * Without a terminal to ask on (stdin not a terminal: a script, a pipe, a cron job; or stderr
 * not one), a usage error asking for --yes (exit 2): nothing destructive happens unasked.
 */
async function confirm({ yes, question, nothing, command }) {
  if (yes) return
  if (!canAsk()) {
    const why = process.stdin.isTTY ? 'stderr is not a terminal to ask on' : 'stdin is not a terminal, so no one can be asked'
    throw new UsageError(`${question.replace(/\?$/, '')}: ${why}; add --yes to confirm`, command, { seeHelp: false })
  }
  if (!(await ask(question))) throw new CliError(`not confirmed: ${nothing}`)
}

/**
 * A progress line on stderr for long work, when stderr is a terminal and the output is not
 * JSON: `step(text)` shows what is being done (replacing the line), `done()` erases it, so
 * only the result stays. Elsewhere both do nothing.
 */
function progress({ json = false } = {}) {
  const on = Boolean(process.stderr.isTTY) && !json
  let shown = false
  const clear = () => {
    if (shown) process.stderr.write('\r\x1b[2K')
    shown = false
  }
  return {
    step(text) {
      if (!on) return
      const width = process.stderr.columns > 0 ? process.stderr.columns - 1 : 79
      // One line, never wrapped: a wrapped line could not be erased with one \r.
      const line = truncate(printable(text), width)
      process.stderr.write(`${shown ? '\r\x1b[2K' : ''}${line}`)
      shown = true
    },
    done: clear,
  }
}

module.exports = { canAsk, ask, confirm, progress }
