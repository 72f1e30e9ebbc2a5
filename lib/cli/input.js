'use strict'
// `--input`: JSON given inline, read from a file (`@file`), or from stdin (`-`), as curl does.

const fs = require('node:fs')
const { UsageError } = require('./errors')

/** The text `--input` names: itself, the file after `@`, or stdin for `-`. */
function inputText(text, command) {
  if (text === '-') {
    try {
      return { text: fs.readFileSync(0, 'utf8'), from: 'stdin' }
    } catch (e) {
      throw new UsageError(`--input -: cannot read stdin (${e.code || e.message})`, command, { seeHelp: false })
    }
  }
  if (text.startsWith('@')) {
    const file = text.slice(1)
    try {
      return { text: fs.readFileSync(file, 'utf8'), from: `file ${file}` }
    } catch (e) {
      const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a folder' : e.code || e.message
      throw new UsageError(`--input ${text}: cannot read ${file} (${why})`, command, { seeHelp: false })
    }
  }
  return { text, from: null }
}

/**
 * Parses `--input` of `command` as JSON. Invalid JSON is a usage error (exit code 2) whose
 * message says what is wrong and how to write it.
 */
function parseInput(text, command = null) {
  const input = inputText(text, command)
  try {
    return JSON.parse(input.text)
  } catch (e) {
    const hint = input.from
      ? `the ${input.from} must hold one JSON value`
      : `quote it for the shell, e.g. --input '{"code":"x"}', or give --input @file.json or --input - (stdin)`
    throw new UsageError(`--input${input.from ? ` (${input.from})` : ''} is not valid JSON (${e.message}); ${hint}`, command, { seeHelp: false })
  }
}

module.exports = { parseInput }
