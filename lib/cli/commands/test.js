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
const { parseTimeout, TIMEOUT_OPTION } = require('../runner')
const { printable } = require('../format')
const { geneRunner } = require('../../runtime')

const SUITE_FIELDS = ['testCases']
const CASE_FIELDS = ['name', 'input', 'expectedOutput', 'expectedError']
const MEANT = { expected: 'expectedOutput', output: 'expectedOutput', expectedoutput: 'expectedOutput', error: 'expectedError', expectederror: 'expectedError' }

/** An unknown field is an error, like in every other input: a typo must not pass silently. */
function checkFields(object, allowed, where) {
  for (const key of Object.keys(object)) {
    if (allowed.includes(key)) continue
    const meant = MEANT[key.toLowerCase()]
    throw new CliError(`${where} has an unknown field ${JSON.stringify(key)}${meant ? ` (did you mean "${meant}"?)` : ''}; it takes ${allowed.map((f) => `"${f}"`).join(', ')}`)
  }
}

/**
 * Reads and checks `genes/<gene>/testsuite.json`: `{ testCases: [{ name?, input,
 * expectedOutput? | expectedError? }] }`.
 */
function readSuite(gene) {
  const rel = path.join('genes', gene.name, 'testsuite.json')
  let suite
  try {
    suite = JSON.parse(fs.readFileSync(path.join(gene.dir, 'testsuite.json'), 'utf8'))
  } catch (e) {
    if (e.code === 'ENOENT') throw new CliError(`gene "${gene.name}" has no test suite: write ${rel} as { "testCases": [{ "input": …, "expectedOutput": … }] }`)
    throw new CliError(`${rel} cannot be read: ${e.message}`)
  }
  if (suite === null || typeof suite !== 'object' || Array.isArray(suite)) throw new CliError(`${rel} must hold an object { "testCases": [ … ] }`)
  checkFields(suite, SUITE_FIELDS, rel)
  const cases = suite.testCases
  if (!Array.isArray(cases) || cases.length === 0) throw new CliError(`${rel} must have a non-empty "testCases" array`)
  cases.forEach((c, i) => {
    const where = `${rel}: test case ${i + 1}`
    if (c === null || typeof c !== 'object' || Array.isArray(c) || !('input' in c)) {
      throw new CliError(`${where} must be an object with an "input"`)
    }
    checkFields(c, CASE_FIELDS, where)
    if ('name' in c && typeof c.name !== 'string') throw new CliError(`${where}: "name" must be a string`)
    if ('expectedOutput' in c && 'expectedError' in c) throw new CliError(`${where} gives both "expectedOutput" and "expectedError"; a case expects one or the other`)
    if ('expectedError' in c && (typeof c.expectedError !== 'string' || c.expectedError === '')) {
      throw new CliError(`${where}: "expectedError" must be the code of the error, e.g. "MEMORY_ACCESS_DENIED"`)
    }
  })
  return cases
}

/** What is wrong with the outcome of `testCase` (`{ output }` or `{ error }`), or null. */
function problemOf(testCase, { output, error }) {
  if (error) {
    // The gene is named in the header already: report what it did, and where.
    const what = error instanceof GeneFailure ? describeError(error.cause) + (error.where ? ` (at ${error.where})` : '') : describeError(error)
    if ('expectedError' in testCase && error.code === testCase.expectedError) return null
    if ('expectedError' in testCase) return `expected error ${testCase.expectedError}, got ${error.code === undefined ? what : `${error.code} (${what})`}`
    return what
  }
  if ('expectedError' in testCase) return `expected error ${testCase.expectedError}, got an output: ${JSON.stringify(output)}`
  if ('expectedOutput' in testCase && !isDeepStrictEqual(output, testCase.expectedOutput)) {
    return `output differs\n      expected: ${JSON.stringify(testCase.expectedOutput)}\n      actual:   ${JSON.stringify(output)}`
  }
  return null
}

function label(testCase, i) {
  return typeof testCase.name === 'string' ? `case ${i + 1}: ${printable(testCase.name)}` : `case ${i + 1}`
}

const test = {
  name: 'test',
  summary: "run a gene's test suite against a fresh test memory",
  usage: 'rotifer test <gene> [--timeout <seconds>]',
  description: [
    'Runs every case of genes/<gene>/testsuite.json in order, { "testCases": [{ "name"?, "input",',
    '"expectedOutput"? | "expectedError"? }] }, and reports each. A case passes when the gene',
    'succeeds (with a deep-equal output, if expectedOutput is given), or fails with the code',
    'expectedError names. A case that times out fails. All cases share one empty test memory (a',
    "later case reads what an earlier one wrote), deleted at the end; no agent's memory or logs",
    'are touched. Exits 1 if any case fails.',
  ],
  positionals: ['gene'],
  options: { timeout: { ...TIMEOUT_OPTION, help: `${TIMEOUT_OPTION.help}; for each case` } },
  examples: ['rotifer test formatter'],

  async run({ positionals, options, root, io }) {
    const seconds = parseTimeout(options.timeout, 'test')
    const gene = readGene(root, positionals.gene)
    const cases = readSuite(gene)

    const testMemory = memory.createTestMemory({ geneId: gene.id, domain: gene.domain })
    const runner = geneRunner({ gene, memory: { agentId: testMemory.agentId, root: testMemory.root }, seconds })
    // The memory API deletes test memories at process exit; a signal (Ctrl-C) skips that.
    const interrupted = (signal) => {
      testMemory.dispose()
      process.exit(signal === 'SIGINT' ? 130 : 143)
    }
    process.once('SIGINT', interrupted)
    process.once('SIGTERM', interrupted)
    let failed = 0
    try {
      await runner.load()
      io.out(`Testing gene "${gene.name}" (${gene.id}): ${cases.length} case${cases.length === 1 ? '' : 's'}, one shared test memory`)
      for (const [i, testCase] of cases.entries()) {
        let outcome
        try {
          outcome = { output: await runner.run(testCase.input) }
        } catch (e) {
          outcome = { error: e }
        }
        const problem = problemOf(testCase, outcome)
        if (problem) failed++
        io.out(problem ? `  FAIL  ${label(testCase, i)}: ${problem}` : `  ok    ${label(testCase, i)}`)
      }
    } finally {
      process.off('SIGINT', interrupted)
      process.off('SIGTERM', interrupted)
      await runner.close()
      testMemory.dispose()
    }
    io.out(`${cases.length - failed} passed, ${failed} failed`)
    return failed === 0 ? 0 : 1
  },
}

module.exports = { test }
