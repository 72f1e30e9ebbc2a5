'use strict'
// `rotifer test` (R-RUN-9): a gene's testsuite.json, or upstream's standard checks when it has
// none, run with a gene runner (index.js `geneRunner`, bound to one test memory shared by every
// case). Outcomes are judged as upstream's suite runner judges them:
// - A case whose input conforms to the inputSchema is positive: the gene must succeed, and its
//   output must equal `expectedOutput` and conform to `expectedSchema` when they are given, and to
//   the outputSchema always; or fail with the code `expectedError` names.
// - A case whose input violates the inputSchema is refused before the gene runs, with
//   INVALID_INPUT, as every run refuses it (agent run, run, runGene: one rule). The case passes
//   when it expects that refusal (no expectation, or `expectedError` INVALID_INPUT); one that
//   expects an output or another error fails, saying so.
// - With `config`, `fuzzIterations` inputs generated from the inputSchema with `seed` must not
//   crash the gene, and what it returns must conform to the outputSchema.
// `report(line)` receives each line as soon as it is known; with `verbose`, each run's input and
// output (or error) follow its line. The result is `{ passed, failed, skipped }`. Every schema
// check runs in the gene's thread (`runner.check`), within the case's timeout: a check that does
// not finish fails its case, and Ctrl-C stops it.

const fs = require('node:fs')
const path = require('node:path')
const native = require('../native')
const { isDeepStrictEqual } = require('node:util')
const { CliError, GeneFailure, describeError } = require('../cli/errors')
const { printable } = require('../cli/terminal-text')
const { problemsText } = require('../json-schema')
const { sampleInput, fuzzInput } = require('./inputs')
const { TIMEOUT, SchemaTimeout, failureOf, geneFailure } = require('./failures')
const { evaluateL0 } = require('./l0-gate')

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

/**
 * The problems of a successful `output` against what `testCase` and the gene declare: its
 * `caseSchema` (`{ schema, where }`, or null) and, with `withOutputSchema`, the outputSchema.
 */
async function outputProblem(testCase, output, check, caseSchema, withOutputSchema) {
  if ('expectedOutput' in testCase && !isDeepStrictEqual(output, testCase.expectedOutput)) {
    return `output differs\n      expected: ${shown(testCase.expectedOutput)}\n      actual:   ${shown(output)}`
  }
  if (caseSchema) {
    const problems = await check(caseSchema, output)
    if (problems) return `the output does not conform to expectedSchema: ${problemsShown(problems)}; output ${shown(output)}`
  }
  if (withOutputSchema) {
    const problems = await check('output', output)
    if (problems) return `the output does not conform to the outputSchema: ${problemsShown(problems)}; output ${shown(output)}`
  }
  return null
}

/** Judges a positive case's outcome; null when it passed. */
async function judgePositive(gene, testCase, outcome, check, caseSchema) {
  const { output, error } = outcome
  if (error) {
    if ('expectedError' in testCase && error.code === testCase.expectedError) return null
    if ('expectedError' in testCase) return `expected error ${printable(testCase.expectedError)}, got ${error.code === undefined ? whatFailed(error) : `${printable(error.code)} (${whatFailed(error)})`}`
    return whatFailed(error)
  }
  if ('expectedError' in testCase) return `expected error ${printable(testCase.expectedError)}, got an output: ${shown(output)}`
  return outputProblem(testCase, output, check, caseSchema, true)
}

/** The refusal every run gives an input outside the inputSchema (runtime/index.js's rule). */
function refusal(gene, problems) {
  return geneFailure(gene, failureOf('INVALID_INPUT', `the input does not match the inputSchema of ${path.join(gene.where, 'phenotype.json')}: ${problemsShown(problems)}`))
}

/** Judges a case whose input violates the inputSchema (refused, never run); null when it passed. */
function judgeRefused(testCase) {
  const why = 'its input is outside the inputSchema, and every run refuses such an input with INVALID_INPUT before the gene runs'
  if ('expectedError' in testCase && testCase.expectedError !== 'INVALID_INPUT') return `expected error ${printable(testCase.expectedError)}, got INVALID_INPUT: ${why}; fix the input, or expect "INVALID_INPUT"`
  if ('expectedOutput' in testCase || 'expectedSchema' in testCase) return `the case expects an output, but ${why}; fix the input or the inputSchema, or expect "INVALID_INPUT"`
  return null
}

/** The --verbose lines of one run: its input, then its output or its error. */
function runLines(input, { output, error }) {
  const text = (v) => {
    const t = printable(JSON.stringify(v))
    return t.length > 200 ? `${t.slice(0, 200)}…` : t
  }
  return [`        input:  ${text(input)}`, error ? `        error:  ${whatFailed(error)}` : `        output: ${text(output)}`]
}

function label(testCase, i) {
  return typeof testCase.name === 'string' ? `case ${i + 1}: ${printable(testCase.name)}` : `case ${i + 1}`
}

/** Runs `suite` (from readTestSuite); see the file's comment. */
async function runSuite({ gene, suite, runner, report, verbose = false }) {
  await runner.compile('input')
  await runner.compile('output')
  const where = path.join(gene.where, 'testsuite.json')
  // Every expectedSchema compiles before anything runs.
  const caseSchemas = suite.testCases.map((c, i) => ('expectedSchema' in c ? { schema: c.expectedSchema, where: `${where}: test case ${i + 1}: "expectedSchema"` } : null))
  for (const s of caseSchemas) if (s) await runner.compile(s)
  await runner.load()
  report(`Testing gene "${gene.name}" (${gene.id}): ${suite.testCases.length} case${suite.testCases.length === 1 ? '' : 's'}, one shared test memory`)
  const tally = { passed: 0, failed: 0, skipped: 0 }
  const line = (problem, text) => {
    tally[problem ? 'failed' : 'passed']++
    report(problem ? `  FAIL  ${text}: ${problem}` : `  ok    ${text}`)
  }
  for (const [i, testCase] of suite.testCases.entries()) {
    const seconds = 'timeout' in testCase ? testCase.timeout / 1000 : undefined
    const check = (schema, value) => runner.check(schema, value, seconds)
    let illegal = null
    let problem
    let outcome = {}
    try {
      illegal = await check('input', testCase.input)
      outcome = illegal ? { error: refusal(gene, illegal) } : await attempt(runner, testCase.input, seconds)
      problem = illegal ? judgeRefused(testCase) : await judgePositive(gene, testCase, outcome, check, caseSchemas[i])
    } catch (e) {
      // A check stopped at the case's timeout fails the case; the next one gets a new thread.
      if (!(e instanceof SchemaTimeout)) throw e
      problem = e.message
      outcome = { error: e }
    }
    const note = illegal ? ` (input outside the inputSchema: ${problemsShown(illegal, 1)}; refused, INVALID_INPUT)` : ''
    line(problem, label(testCase, i) + note)
    if (verbose) runLines(testCase.input, outcome).forEach((l) => report(l))
  }
  if (suite.config) await fuzz(gene, suite.config, runner, line)
  return tally
}

/** The suite's fuzz run: one report line. */
async function fuzz(gene, config, runner, line) {
  const iterations = config.fuzzIterations === undefined ? DEFAULT_FUZZ_ITERATIONS : config.fuzzIterations
  const seed = config.seed === undefined ? DEFAULT_SEED : config.seed
  const text = `fuzz: ${iterations} input${iterations === 1 ? '' : 's'} from the inputSchema, seed ${seed}`
  if (iterations === 0) return line('config.fuzzIterations is 0, so the fuzz run asserts nothing; give 1 or more, or remove "config"', text)
  let refused = 0
  for (let i = 0; i < iterations; i++) {
    const input = fuzzInput(gene.phenotype.inputSchema, seed, i)
    const replay = `(iteration ${i + 1}, input ${shown(input).slice(0, 200)}; the same seed replays it)`
    let illegal
    try {
      illegal = await runner.check('input', input)
    } catch (e) {
      if (!(e instanceof SchemaTimeout)) throw e
      return line(`${e.message} ${replay}`, text)
    }
    const { output, error } = illegal ? { error: refusal(gene, illegal) } : await attempt(runner, input)
    if (error && crashed(gene, error)) return line(`the gene crashed: ${whatFailed(error)} ${replay}`, text)
    if (error) {
      refused++
      continue
    }
    let problems
    try {
      problems = await runner.check('output', output)
    } catch (e) {
      if (!(e instanceof SchemaTimeout)) throw e
      return line(`${e.message} ${replay}`, text)
    }
    if (problems) return line(`the output does not conform to the outputSchema: ${problemsShown(problems)} ${replay}`, text)
  }
  return line(null, refused ? `${text} (${refused} refused)` : text)
}

/**
 * What to write when a gene failed on the sample input `{}` because its inputSchema lists no
 * properties (the phenotype upstream's wrap writes); '' otherwise.
 */
function openSchemaHint(gene, input) {
  const props = gene.phenotype.inputSchema && gene.phenotype.inputSchema.properties
  if (Object.keys(input).length > 0 || (props && typeof props === 'object' && Object.keys(props).length > 0)) return ''
  const file = path.join(gene.where, 'phenotype.json')
  return `; the inputSchema of ${file} lists no properties, so the sample input was {}: write the fields express reads there, like "properties": {"code": {"type": "string"}}, "required": ["code"], or run rotifer wrap ${gene.name} to derive them from the TypeScript types of express`
}

/**
 * Upstream's standard checks, for a gene with no testsuite.json: the schemas compile, a sample
 * input made from the inputSchema conforms to it, the gene has a file to run, runs on the sample
 * and returns an output (not null) that conforms to the outputSchema.
 */
async function runStandardChecks({ gene, runner, report, verbose = false }) {
  const tally = { passed: 0, failed: 0, skipped: 0 }
  const check = (problem, text) => {
    tally[problem ? 'failed' : 'passed']++
    report(problem ? `  FAIL  ${text}: ${problem}` : `  ok    ${text}`)
  }
  report(`Testing gene "${gene.name}" (${gene.id}): no ${path.join(gene.where, 'testsuite.json')}, so the standard checks, on one shared test memory`)
  check(null, 'phenotype: domain, version, inputSchema and outputSchema are present and valid')
  const compiles = async (kind) => {
    try {
      await runner.compile(kind)
      return null
    } catch (e) {
      if (e instanceof CliError) return e.message
      throw e
    }
  }
  // A check that does not finish in time fails like a broken schema.
  const problemsOf = async (kind, value) => {
    try {
      return { problems: await runner.check(kind, value) }
    } catch (e) {
      if (e instanceof SchemaTimeout) return { stopped: e.message }
      throw e
    }
  }
  const inputBad = await compiles('input')
  check(inputBad, 'inputSchema is a valid JSON Schema')
  const outputBad = await compiles('output')
  check(outputBad, 'outputSchema is a valid JSON Schema')
  const input = sampleInput(gene.phenotype.inputSchema)
  const sample = inputBad ? {} : await problemsOf('input', input)
  const illegal = sample.problems
  check(inputBad ? 'the inputSchema does not compile' : sample.stopped || (illegal && `${problemsShown(illegal)}; give the properties a "default" or an "enum"`), `the sample input ${shown(input)} conforms to the inputSchema`)
  const file = gene.wasm || gene.entry
  check(null, `gene file: ${path.join(gene.where, path.basename(file))}`)
  let output
  let ran = false
  // The open-schema hint is for a gene that ran on {} and failed, not one the L0 gate blocked,
  // that could not be loaded or whose sample input was refused.
  let running = false
  try {
    await runner.load()
    if (illegal) throw refusal(gene, illegal)
    running = true
    output = await runner.run(input)
    ran = true
  } catch (e) {
    check(whatFailed(e) + (running ? openSchemaHint(gene, input) : ''), 'runs on the sample input')
    if (verbose) runLines(input, { error: e }).forEach((l) => report(l))
  }
  if (ran) {
    check(output === null ? 'the gene returned null' : null, 'runs on the sample input')
    if (verbose) runLines(input, { output }).forEach((l) => report(l))
    if (output !== null) {
      const checked = outputBad ? {} : await problemsOf('output', output)
      const problems = checked.problems
      check(outputBad ? 'the outputSchema does not compile' : checked.stopped || (problems && `${problemsShown(problems)}; output ${shown(output)}`), 'the output conforms to the outputSchema')
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

/**
 * Upstream's `--compliance` checks, those that are local, after the suite or the standard checks
 * (`runner` loaded): C1 the gene runs in the WASM sandbox, C3 the L0 gate passes, C4 the
 * phenotype has every field of the gene standard (fidelity too), C6 the IR module passes
 * verification without a warning. C2 and C5 (the fuel and F(g) metrics of a run) are skipped:
 * the sandbox meters fuel, but a run here does not report what it used. Adds to `tally`.
 */
function runCompliance({ gene, runner, report, tally }) {
  const check = (problem, text) => {
    tally[problem ? 'failed' : 'passed']++
    report(problem ? `  FAIL  ${text}: ${problem}` : `  ok    ${text}`)
  }
  const skip = (text, why) => {
    tally.skipped++
    report(`  skip  ${text}: ${why}`)
  }
  report('Compliance checks')
  const c1 = 'C1 sandbox execution: the gene runs in the WASM sandbox'
  if (!gene.wasm) skip(c1, `the gene is not compiled (run rotifer compile ${gene.name})`)
  else check(runner.kind && runner.kind !== 'node' ? null : 'it did not load into the sandbox', `${c1} (${runner.kind})`)
  skip('C2 fuel consumption', 'the sandbox meters fuel, but a run does not report what it used')
  const l0 = evaluateL0(gene, runner.seconds)
  check(l0.kind === 'pass' ? null : l0.detail, `C3 L0 gate${l0.kind === 'pass' ? `: PASS (${l0.checksPerformed} checks)` : ''}`)
  const missing = ['domain', 'inputSchema', 'outputSchema', 'version', 'fidelity'].filter((f) => !(f in gene.phenotype))
  check(missing.length ? `missing fields: ${missing.join(', ')}` : null, 'C4 phenotype compliance: every field of the gene standard is present')
  skip('C5 fitness computability', 'it needs the fuel a run used, which is not reported')
  const c6 = 'C6 IR segment integrity'
  if (!gene.ir) {
    skip(c6, `there is no ${path.join(gene.where, 'gene.ir.wasm')}`)
  } else {
    const v = native.verifyIr(fs.readFileSync(gene.ir))
    check(v.errors.length || v.warnings.length ? [...v.errors, ...v.warnings.map((w) => `WARN: ${w}`)].join('; ') : null, c6)
  }
  return tally
}

module.exports = { runSuite, runStandardChecks, runCompliance }
