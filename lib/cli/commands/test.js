'use strict'
// `rotifer test <gene>`: runs the gene's test suite (or, without one, upstream's standard checks)
// against a test memory (R-HOST-4, R-RUN-9): empty, dedicated, shared by every case in order (a
// later case reads what an earlier one wrote), and deleted at the end. It lives outside the
// project, so no agent's memory, audit or telemetry file is ever touched. How cases are judged
// is lib/runtime/testing.js's.

const path = require('node:path')
const memory = require('../../../index.js')
const { readGene } = require('../project')
const { readTestSuite } = require('../../formats/testsuite')
const { parseTimeout, TIMEOUT_OPTION } = require('../runner')
const { printable } = require('../terminal-text')
const { geneRunner } = require('../../runtime')
const { runSuite, runStandardChecks } = require('../../runtime/testing')

const test = {
  name: 'test',
  summary: "run a gene's test suite (or the standard checks) against a fresh test memory",
  usage: 'rotifer test <gene> [--timeout <seconds>]',
  description: [
    'Runs every case of <genes_dir>/<gene>/testsuite.json in order, { "testCases": [{ "name"?,',
    '"input", "expectedOutput"?, "expectedSchema"?, "expectedError"?, "timeout"? }], "config"?:',
    '{ "fuzzIterations", "seed" } }, and reports each. A case whose input fits the inputSchema',
    'passes when the gene succeeds with an output that equals expectedOutput, conforms to',
    'expectedSchema and to the outputSchema, or fails with the code expectedError names. A case',
    'whose input does not fit must be refused (or answered as it declares), never crash the gene.',
    'With "config", generated inputs must not crash it. Without a suite, the standard checks run.',
    "All cases share one empty test memory, deleted at the end; no agent's memory or logs are",
    'touched. Exits 1 if any case fails.',
  ],
  positionals: ['gene'],
  options: { timeout: { ...TIMEOUT_OPTION, help: `${TIMEOUT_OPTION.help}; for each case (a case's "timeout", in ms, overrides it)` } },
  examples: ['rotifer test formatter'],

  async run({ positionals, options, root, io }) {
    const seconds = parseTimeout(options.timeout, 'test')
    const gene = readGene(root, positionals.gene)
    const suite = readTestSuite(gene.dir, path.join(gene.where, 'testsuite.json'))

    const testMemory = memory.createTestMemory({ geneId: gene.id, domain: gene.domain })
    const runner = geneRunner({ gene, memory: { agentId: testMemory.agentId, root: testMemory.root }, seconds })
    // The memory API deletes test memories at process exit; a signal (Ctrl-C) skips that.
    const interrupted = (signal) => {
      testMemory.dispose()
      process.exit(signal === 'SIGINT' ? 130 : 143)
    }
    process.once('SIGINT', interrupted)
    process.once('SIGTERM', interrupted)
    let tally
    try {
      // The report's own line breaks stay; within a line, nothing a terminal would act on.
      const report = (line) => io.out(line.split('\n').map(printable).join('\n'))
      tally = suite ? await runSuite({ gene, suite, runner, report }) : await runStandardChecks({ gene, runner, report })
    } finally {
      process.off('SIGINT', interrupted)
      process.off('SIGTERM', interrupted)
      await runner.close()
      testMemory.dispose()
    }
    io.out(`${tally.passed} passed, ${tally.failed} failed${tally.skipped ? `, ${tally.skipped} skipped` : ''}`)
    return tally.failed === 0 ? 0 : 1
  },
}

module.exports = { test }
