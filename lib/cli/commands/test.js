'use strict'
// `rotifer test <gene>`: runs the gene's test suite (or, without one, upstream's standard checks)
// against a test memory (R-HOST-4, R-RUN-9): empty, dedicated, shared by every case in order (a
// later case reads what an earlier one wrote), and deleted at the end. It lives outside the
// project, so no agent's memory, audit or telemetry file is ever touched. How cases are judged
// is lib/runtime/testing.js's.

const path = require('node:path')
const { parseTimeout, TIMEOUT_OPTION } = require('../runner')
const { printable } = require('../terminal-text')

const test = {
  name: 'test',
  needsProject: true,
  summary: "run a gene's test suite (or the standard checks) against a fresh test memory",
  usage: 'rotifer test <gene> [--verbose] [--compliance] [--timeout <seconds>]',
  description: [
    'Runs every case of <genes_dir>/<gene>/testsuite.json in order, { "testCases": [{ "name"?,',
    '"input", "expectedOutput"?, "expectedSchema"?, "expectedError"?, "timeout"? }], "config"?:',
    '{ "fuzzIterations", "seed" } }, and reports each. A case whose input fits the inputSchema',
    'passes when the gene succeeds with an output that equals expectedOutput, conforms to',
    'expectedSchema and to the outputSchema, or fails with the code expectedError names. A case',
    'whose input does not fit is refused with INVALID_INPUT before the gene runs, as every run',
    'refuses it: it passes when it expects that. With "config", generated inputs must not crash',
    'the gene. Without a suite, the standard checks run. --verbose shows each run\'s input and',
    "output; --compliance adds upstream's compliance checks that are local (C1, C3, C4, C6).",
    "All cases share one empty test memory, deleted at the end; no agent's memory or logs are",
    'touched. Exits 1 if any case fails.',
  ],
  positionals: ['gene'],
  options: {
    verbose: { type: 'boolean', help: "show each run's input and output (or error) under its line" },
    compliance: { type: 'boolean', help: "also run upstream's compliance checks that are local: C1 sandbox execution, C3 the L0 gate, C4 the phenotype's fields, C6 the IR module (C2 and C5, fuel metrics, are skipped)" },
    timeout: { ...TIMEOUT_OPTION, help: `${TIMEOUT_OPTION.help}; for each case (a case's "timeout", in ms, overrides it)` },
  },
  examples: ['rotifer test formatter', 'rotifer test formatter --verbose --compliance'],

  async run({ positionals, options, root, io }) {
    const seconds = parseTimeout(options.timeout, 'test')
    // Loaded here, not with the command's declaration: help needs none of it.
    const memory = require('../../../index.js')
    const { readGene } = require('../project')
    const { readTestSuite } = require('../../formats/testsuite')
    const { geneRunner } = require('../../runtime')
    const { runSuite, runStandardChecks, runCompliance } = require('../../runtime/testing')
    const gene = readGene(root, positionals.gene)
    const suite = readTestSuite(gene.dir, path.join(gene.where, 'testsuite.json'))

    const testMemory = memory.createTestMemory({ geneId: gene.id, domain: gene.domain })
    const runner = geneRunner({ gene, memory: { agentId: testMemory.agentId, root: testMemory.root }, seconds, notice: (line) => io.err(line) })
    // The memory API deletes test memories at process exit; a signal (Ctrl-C) skips that. The
    // gene is stopped first: exiting waits for its thread, which a WASM gene holds until it returns.
    const interrupted = (signal) => {
      runner.stop()
      testMemory.dispose()
      process.exit(signal === 'SIGINT' ? 130 : 143)
    }
    process.once('SIGINT', interrupted)
    process.once('SIGTERM', interrupted)
    let tally
    try {
      // The report's own line breaks stay; within a line, nothing a terminal would act on.
      const report = (line) => io.out(line.split('\n').map(printable).join('\n'))
      const verbose = options.verbose === true
      tally = suite ? await runSuite({ gene, suite, runner, report, verbose }) : await runStandardChecks({ gene, runner, report, verbose })
      if (options.compliance) runCompliance({ gene, runner, report, tally })
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
