'use strict'
// `rotifer test` (R-RUN-9): a gene's testsuite.json, or upstream's standard checks when it has
// none, run with a gene runner (index.js `geneRunner`, bound to one test memory shared by every
// case). Outcomes are judged as upstream's suite runner judges them:
// - A case whose input conforms to the inputSchema is positive: the gene must succeed, and its
//   output must equal `expectedOutput` and conform to `expectedSchema` when they are given, and to
//   the outputSchema always; or fail with the code `expectedError` names.
// - A case whose input violates the inputSchema is negative: the gene must handle it. Crashing
//   (its thread dying, a WASM trap, a timeout, an unusable output) fails; refusing (throwing, an
//   error envelope) passes, with the code `expectedError` names if given; returning an output
//   passes only when the case declares it (`expectedOutput` or `expectedSchema`).
// - With `config`, `fuzzIterations` inputs generated from the inputSchema with `seed` must not
//   crash the gene, and what it returns must conform to the outputSchema.
// `report(line)` receives each line as soon as it is known; the result is `{ passed, failed,
// skipped }`.

const fs = require('node:fs')
const path = require('node:path')
const native = require('../native')
const { isDeepStrictEqual } = require('node:util')
const { CliError, GeneFailure, describeError } = require('../cli/errors')
const { printable } = require('../cli/terminal-text')
const { compileSchema, problemsText } = require('../json-schema')
const { geneSchemas } = require('./schemas')
const { sampleInput, fuzzInput } = require('./inputs')
const { TIMEOUT } = require('./failures')

const DEFAULT_FUZZ_ITERATIONS = 10
const DEFAULT_SEED = 1
const CRASH_CODES = new Set(['GENE_CRASHED', TIMEOUT, 'INVALID_OUTPUT'])

/** What the gene did on one input: `{ output }` or `{ error }`. */
async function attempt(runner, input, seconds) {
  try {
    return { output: await runner.run(input, { seconds }) }
  } catch (e) {
    return { error: e }
  }
}

/** The failure as the report shows it: the gene is named in the header already. */
function whatFailed(error) {
  return printable(error instanceof GeneFailure ? describeError(error.cause) + (error.where ? ` (at ${error.where})` : '') : describeError(error))
}

/** A value the gene returned (or a case declares), as the report shows it: JSON, escaped. */
const shown = (value) => printable(JSON.stringify(value))
/** Schema problems of a value the gene returned: its property names are in them. */
const problemsShown = (problems, max) => printable(problemsText(problems, max))

/** True when `error` is the gene dying rather than refusing: see the file's comment. */
function crashed(gene, error) {
  if (!(error instanceof GeneFailure)) return true // a timeout of the whole run, a load failure
  if (CRASH_CODES.has(error.code)) return true
  return Boolean(gene.wasm) && error.code === 'RuntimeError' // a WASM trap
}

/** The problems of a successful `output` against what `testCase` and the gene declare. */
function outputProblem(testCase, output, schemas, caseSchema) {
  if ('expectedOutput' in testCase && !isDeepStrictEqual(output, testCase.expectedOutput)) {
    return `output differs\n      expected: ${shown(testCase.expectedOutput)}\n      actual:   ${shown(output)}`
  }
  if (caseSchema) {
    const problems = caseSchema(output)
    if (problems) return `the output does not conform to expectedSchema: ${problemsShown(problems)}; output ${shown(output)}`
  }
  if (schemas) {
    const problems = schemas.output(output)
    if (problems) return `the output does not conform to the outputSchema: ${problemsShown(problems)}; output ${shown(output)}`
  }
  return null
}

/** Judges a positive case's outcome; null when it passed. */
function judgePositive(gene, testCase, outcome, schemas, caseSchema) {
  const { output, error } = outcome
  if (error) {
    if ('expectedError' in testCase && error.code === testCase.expectedError) return null
    if ('expectedError' in testCase) return `expected error ${printable(testCase.expectedError)}, got ${error.code === undefined ? whatFailed(error) : `${printable(error.code)} (${whatFailed(error)})`}`
    return whatFailed(error)
  }
  if ('expectedError' in testCase) return `expected error ${printable(testCase.expectedError)}, got an output: ${shown(output)}`
  return outputProblem(testCase, output, schemas, caseSchema)
}

/** Judges a negative case's outcome (its input violates the inputSchema); null when it passed. */
function judgeNegative(gene, testCase, outcome, caseSchema) {
  const { output, error } = outcome
  if (error) {
    if (crashed(gene, error)) return `the gene crashed on an input its inputSchema forbids, instead of refusing it: ${whatFailed(error)}`
    if ('expectedError' in testCase && error.code !== testCase.expectedError) return `expected error ${printable(testCase.expectedError)}, got ${printable(error.code)} (${whatFailed(error)})`
    return null
  }
  if ('expectedError' in testCase) return `expected error ${printable(testCase.expectedError)}, got an output: ${shown(output)}`
  if (!('expectedOutput' in testCase) && !caseSchema) {
    return `the gene returned an output for an input its inputSchema forbids, and the case declares none: ${shown(output).slice(0, 200)}; declare it with "expectedOutput" or "expectedSchema" if that is right, or refuse the input`
  }
  return outputProblem(testCase, output, null, caseSchema)
}

function label(testCase, i) {
  return typeof testCase.name === 'string' ? `case ${i + 1}: ${printable(testCase.name)}` : `case ${i + 1}`
}

/** Runs `suite` (from readTestSuite); see the file's comment. */
async function runSuite({ gene, suite, runner, report }) {
  const schemas = geneSchemas(gene)
  schemas.input(null)
  schemas.output(null)
  const where = path.join(gene.where, 'testsuite.json')
  // Every expectedSchema compiles before anything runs.
  const caseSchemas = suite.testCases.map((c, i) => ('expectedSchema' in c ? compileSchema(c.expectedSchema, `${where}: test case ${i + 1}: "expectedSchema"`) : null))
  await runner.load()
  report(`Testing gene "${gene.name}" (${gene.id}): ${suite.testCases.length} case${suite.testCases.length === 1 ? '' : 's'}, one shared test memory`)
  const tally = { passed: 0, failed: 0, skipped: 0 }
  const line = (problem, text) => {
    tally[problem ? 'failed' : 'passed']++
    report(problem ? `  FAIL  ${text}: ${problem}` : `  ok    ${text}`)
  }
  for (const [i, testCase] of suite.testCases.entries()) {
    const illegal = schemas.input(testCase.input)
    const outcome = await attempt(runner, testCase.input, 'timeout' in testCase ? testCase.timeout / 1000 : undefined)
    const problem = illegal ? judgeNegative(gene, testCase, outcome, caseSchemas[i]) : judgePositive(gene, testCase, outcome, schemas, caseSchemas[i])
    const note = illegal ? ` (input outside the inputSchema: ${problemsShown(illegal, 1)})` : ''
    line(problem, label(testCase, i) + note)
  }
  if (suite.config) await fuzz(gene, suite.config, runner, schemas, line)
  return tally
}

/** The suite's fuzz run: one report line. */
async function fuzz(gene, config, runner, schemas, line) {
  const iterations = config.fuzzIterations === undefined ? DEFAULT_FUZZ_ITERATIONS : config.fuzzIterations
  const seed = config.seed === undefined ? DEFAULT_SEED : config.seed
  const text = `fuzz: ${iterations} input${iterations === 1 ? '' : 's'} from the inputSchema, seed ${seed}`
  if (iterations === 0) return line('config.fuzzIterations is 0, so the fuzz run asserts nothing; give 1 or more, or remove "config"', text)
  let refused = 0
  for (let i = 0; i < iterations; i++) {
    const input = fuzzInput(gene.phenotype.inputSchema, seed, i)
    const { output, error } = await attempt(runner, input)
    const replay = `(iteration ${i + 1}, input ${shown(input).slice(0, 200)}; the same seed replays it)`
    if (error && crashed(gene, error)) return line(`the gene crashed: ${whatFailed(error)} ${replay}`, text)
    if (error) {
      refused++
      continue
    }
    const problems = schemas.output(output)
    if (problems) return line(`the output does not conform to the outputSchema: ${problemsShown(problems)} ${replay}`, text)
  }
  return line(null, refused ? `${text} (${refused} refused)` : text)
}

/**
 * Upstream's standard checks, for a gene with no testsuite.json: the schemas compile, a sample
 * input made from the inputSchema conforms to it, the gene has a file to run, runs on the sample
 * and returns an output (not null) that conforms to the outputSchema.
 */
async function runStandardChecks({ gene, runner, report }) {
  const tally = { passed: 0, failed: 0, skipped: 0 }
  const check = (problem, text) => {
    tally[problem ? 'failed' : 'passed']++
    report(problem ? `  FAIL  ${text}: ${problem}` : `  ok    ${text}`)
  }
  report(`Testing gene "${gene.name}" (${gene.id}): no ${path.join(gene.where, 'testsuite.json')}, so the standard checks, on one shared test memory`)
  check(null, 'phenotype: domain, version, inputSchema and outputSchema are present and valid')
  const schemas = geneSchemas(gene)
  const compiles = (kind) => {
    try {
      schemas[kind](null)
      return null
    } catch (e) {
      if (e instanceof CliError) return e.message
      throw e
    }
  }
  const inputBad = compiles('input')
  check(inputBad, 'inputSchema is a valid JSON Schema')
  const outputBad = compiles('output')
  check(outputBad, 'outputSchema is a valid JSON Schema')
  const input = sampleInput(gene.phenotype.inputSchema)
  const illegal = inputBad ? null : schemas.input(input)
  check(inputBad ? 'the inputSchema does not compile' : illegal && `${problemsShown(illegal)}; give the properties a "default" or an "enum"`, `the sample input ${shown(input)} conforms to the inputSchema`)
  const file = gene.wasm || gene.entry
  check(null, `gene file: ${path.join(gene.where, path.basename(file))}`)
  let output
  let ran = false
  try {
    await runner.load()
    output = await runner.run(input)
    ran = true
  } catch (e) {
    check(whatFailed(e), 'runs on the sample input')
  }
  if (ran) {
    check(output === null ? 'the gene returned null' : null, 'runs on the sample input')
    if (output !== null) {
      const problems = outputBad ? null : schemas.output(output)
      check(outputBad ? 'the outputSchema does not compile' : problems && `${problemsShown(problems)}; output ${shown(output)}`, 'the output conforms to the outputSchema')
    }
  }
  if (gene.ir) {
    // Upstream's eighth check: the IR checks of `rotifer compile` (warnings pass, errors fail).
    const shown = path.join(gene.where, 'gene.ir.wasm')
    const v = native.verifyIr(fs.readFileSync(gene.ir))
    check(v.errors.length ? v.errors.join('; ') : null, `IR verification of ${shown}${v.warnings.length ? ` (WARN: ${v.warnings.join('; ')})` : ''}`)
  }
  return tally
}

module.exports = { runSuite, runStandardChecks }
