'use strict'
// `rotifer test <gene>`: runs the gene's test suite against a test memory (R-HOST-4): empty,
// dedicated, shared by every case of the suite in order (a later case reads what an earlier one
// wrote), and deleted at the end. It lives outside the project, so no agent's memory, audit
// or telemetry file is ever touched.

const path = require('node:path')
const fs = require('node:fs')
const { isDeepStrictEqual } = require('node:util')
const memory = require('../../../index.js')
const { CliError, GeneFailure, describeError } = require('../errors')
const { readGene } = require('../project')
const { loadExpress } = require('../gene-loader')
const { expressGene } = require('../runner')
const { printable } = require('../format')

/** Reads and checks `genes/<gene>/testsuite.json`: `{ testCases: [{ input, expectedOutput? }] }`. */
function readSuite(gene) {
  const rel = path.join('genes', gene.name, 'testsuite.json')
  let suite
  try {
    suite = JSON.parse(fs.readFileSync(path.join(gene.dir, 'testsuite.json'), 'utf8'))
  } catch (e) {
    if (e.code === 'ENOENT') throw new CliError(`gene "${gene.name}" has no test suite: write ${rel} as { "testCases": [{ "input": …, "expectedOutput": … }] }`)
    throw new CliError(`${rel} cannot be read: ${e.message}`)
  }
  const cases = suite && suite.testCases
  if (!Array.isArray(cases) || cases.length === 0) throw new CliError(`${rel} must have a non-empty "testCases" array`)
  cases.forEach((c, i) => {
    if (c === null || typeof c !== 'object' || Array.isArray(c) || !('input' in c)) {
      throw new CliError(`${rel}: test case ${i + 1} must be an object with an "input"`)
    }
  })
  return cases
}

function label(testCase, i) {
  return typeof testCase.name === 'string' ? `case ${i + 1}: ${printable(testCase.name)}` : `case ${i + 1}`
}

const test = {
  name: 'test',
  summary: "run a gene's test suite against a fresh test memory",
  usage: 'rotifer test <gene>',
  description: [
    'Runs every case of genes/<gene>/testsuite.json in order, { "testCases": [{ "input",',
    '"expectedOutput"? }] }, and reports each. A case passes when express does not throw and,',
    'if expectedOutput is given, returns a deep-equal value. All cases share one empty test',
    'memory (a later case reads what an earlier one wrote), deleted at the end; no agent\'s',
    'memory or logs are touched. Exits non-zero if any case fails.',
  ],
  positionals: ['gene'],
  options: {},
  examples: ['rotifer test formatter'],

  async run({ positionals, root, io }) {
    const gene = readGene(root, positionals.gene)
    const cases = readSuite(gene)
    const express = await loadExpress(gene)

    io.out(`Testing gene "${gene.name}" (${gene.id}): ${cases.length} case${cases.length === 1 ? '' : 's'}, one shared test memory`)
    const testMemory = memory.createTestMemory({ geneId: gene.id, domain: gene.domain })
    // The memory API deletes test memories at process exit; a signal (Ctrl-C) skips that.
    const interrupted = (signal) => {
      testMemory.dispose()
      process.exit(signal === 'SIGINT' ? 130 : 143)
    }
    process.once('SIGINT', interrupted)
    process.once('SIGTERM', interrupted)
    let failed = 0
    try {
      for (const [i, testCase] of cases.entries()) {
        let problem = null
        try {
          const output = await expressGene(gene, express, testCase.input, testMemory.memory)
          if ('expectedOutput' in testCase && !isDeepStrictEqual(output, testCase.expectedOutput)) {
            problem = `output differs\n      expected: ${JSON.stringify(testCase.expectedOutput)}\n      actual:   ${JSON.stringify(output)}`
          }
        } catch (e) {
          // The gene is named in the header already: report what it threw, and where.
          problem = e instanceof GeneFailure ? describeError(e.cause) + (e.where ? ` (at ${e.where})` : '') : describeError(e)
        }
        if (problem) failed++
        io.out(problem ? `  FAIL  ${label(testCase, i)}: ${problem}` : `  ok    ${label(testCase, i)}`)
      }
    } finally {
      process.off('SIGINT', interrupted)
      process.off('SIGTERM', interrupted)
      testMemory.dispose()
    }
    io.out(`${cases.length - failed} passed, ${failed} failed`)
    return failed === 0 ? 0 : 1
  },
}

module.exports = { test }
