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
 * Confirms a destructive command: with `yes` (--yes) or when stdin is not a terminal it goes
 * ahead (a script is not asked); at a terminal the person is asked, and anything but yes stops
 * the command (exit 1, `nothing` says what was left alone). stdin a terminal but stderr not: a
 * usage error asking for --yes (exit 2).
 */
async function confirm({ yes, question, nothing, command }) {
  if (yes || !process.stdin.isTTY) return
  // A person typed the command but stderr goes elsewhere: no question can be shown, and going
  // ahead unasked is not for a terminal.
  if (!canAsk()) throw new UsageError(`${question.replace(/\?$/, '')}: stderr is not a terminal to ask on; add --yes to confirm`, command, { seeHelp: false })
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
