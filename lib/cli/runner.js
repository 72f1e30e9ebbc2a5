'use strict'
// Calls a gene's `express(input, ctx)`. Shared by `rotifer run`, `rotifer agent run` and
// `rotifer test`, so that every way of running a gene behaves the same.

const { GeneFailure } = require('./errors')
const { parseInput } = require('./input')
const { locate } = require('./gene-loader')

/**
 * While a gene runs, its console output goes to stderr: stdout carries only the output JSON
 * (or the test report), so it can be piped.
 */
function consoleToStderr() {
  const methods = ['log', 'info', 'debug', 'dir', 'dirxml', 'table']
  const saved = methods.map((m) => console[m])
  const err = new console.Console({ stdout: process.stderr, stderr: process.stderr })
  for (const m of methods) console[m] = err[m].bind(err)
  return () => methods.forEach((m, k) => { console[m] = saved[k] })
}

/**
 * Runs `express` of `gene` on `input` with `ctx.memory = memory`, and returns its output as a
 * JSON value: round-tripped through JSON, so the next gene of an agent sees exactly what
 * `--input` would have given it. An `express` that returns a promise is awaited.
 */
async function expressGene(gene, express, input, memory) {
  const restore = consoleToStderr()
  let output
  try {
    output = await express(input, { memory })
  } catch (e) {
    throw new GeneFailure(gene, e, locate(e, gene.dir))
  } finally {
    restore()
  }
  let json
  try {
    json = JSON.stringify(output)
  } catch (e) {
    throw new GeneFailure(gene, new Error(`its output cannot be written as JSON (${e.message})`))
  }
  if (json === undefined) {
    throw new GeneFailure(gene, new Error('express returned no output; it must return a JSON value'))
  }
  return JSON.parse(json)
}

module.exports = { expressGene, parseInput }
