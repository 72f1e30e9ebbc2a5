'use strict'
// A gene's `testsuite.json` (R-RUN-9), in the upstream playground's format (its spec §4.2
// TestSuite): `{ testCases: [{ input, expectedOutput?, expectedSchema?, timeout? }], config?:
// { fuzzIterations, seed } }`, plus this project's optional `name` and `expectedError` in a case.
// Its parser and its errors. An unknown field is an error, as upstream's loader has it: a typo
// must never make a case pass silently.

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('../cli/errors')

const SUITE_FILE = 'testsuite.json'
const SUITE_FIELDS = ['testCases', 'config']
const CASE_FIELDS = ['name', 'input', 'expectedOutput', 'expectedSchema', 'expectedError', 'timeout']
const CONFIG_FIELDS = ['fuzzIterations', 'seed']
const MEANT = {
  expected: 'expectedOutput', output: 'expectedOutput', expectedoutput: 'expectedOutput', expectedoutputs: 'expectedOutput',
  error: 'expectedError', expectederror: 'expectedError', schema: 'expectedSchema', expectedschema: 'expectedSchema',
  cases: 'testCases', tests: 'testCases', testcases: 'testCases', fuzz: 'fuzzIterations', iterations: 'fuzzIterations',
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

function checkFields(object, allowed, where) {
  for (const key of Object.keys(object)) {
    if (allowed.includes(key)) continue
    const meant = MEANT[key.toLowerCase()]
    throw new CliError(`${where} has an unknown field ${JSON.stringify(key)}${meant ? ` (did you mean "${meant}"?)` : ''}; it takes ${allowed.map((f) => `"${f}"`).join(', ')}`)
  }
}

function checkCase(c, where) {
  if (!isObject(c) || !('input' in c)) throw new CliError(`${where} must be an object with an "input"`)
  checkFields(c, CASE_FIELDS, where)
  if ('name' in c && typeof c.name !== 'string') throw new CliError(`${where}: "name" must be a string`)
  if ('expectedError' in c) {
    if (typeof c.expectedError !== 'string' || c.expectedError === '') throw new CliError(`${where}: "expectedError" must be the code of the error, e.g. "MEMORY_ACCESS_DENIED"`)
    for (const other of ['expectedOutput', 'expectedSchema']) {
      if (other in c) throw new CliError(`${where} gives both "${other}" and "expectedError"; a case expects an output or an error, not both`)
    }
  }
  if ('expectedSchema' in c && !isObject(c.expectedSchema)) {
    throw new CliError(`${where}: "expectedSchema" must be a JSON Schema object, such as {"type": "object", "required": ["result"]}`)
  }
  if ('timeout' in c && !(typeof c.timeout === 'number' && Number.isFinite(c.timeout) && c.timeout > 0)) {
    throw new CliError(`${where}: "timeout" must be a positive number of milliseconds, not ${JSON.stringify(c.timeout)}`)
  }
}

function checkConfig(config, where) {
  if (!isObject(config)) throw new CliError(`${where} must be an object { "fuzzIterations": …, "seed": … }`)
  checkFields(config, CONFIG_FIELDS, where)
  for (const key of CONFIG_FIELDS) {
    if (key in config && !(Number.isSafeInteger(config[key]) && config[key] >= 0)) {
      throw new CliError(`${where}: "${key}" must be a non-negative integer, not ${JSON.stringify(config[key])}`)
    }
  }
}

/** Checks the parsed suite `value` of `where`; returns `{ testCases, config }` (config or null). */
function checkTestSuite(value, where) {
  if (!isObject(value)) throw new CliError(`${where} must hold an object { "testCases": [ … ] }`)
  checkFields(value, SUITE_FIELDS, where)
  const cases = value.testCases
  if (!Array.isArray(cases) || cases.length === 0) throw new CliError(`${where} must have a non-empty "testCases" array: a suite with no cases asserts nothing`)
  cases.forEach((c, i) => checkCase(c, `${where}: test case ${i + 1}`))
  if ('config' in value) checkConfig(value.config, `${where}: "config"`)
  return { testCases: cases, config: 'config' in value ? value.config : null }
}

/**
 * Reads the suite of the gene folder `dir` (`where`: its path for messages). Returns null when
 * there is no testsuite.json, else the checked suite.
 */
function readTestSuite(dir, where = path.join(dir, SUITE_FILE)) {
  let text
  try {
    text = fs.readFileSync(path.join(dir, SUITE_FILE), 'utf8')
  } catch (e) {
    if (e.code === 'ENOENT') return null
    throw new CliError(`${where} cannot be read (${e.code || e.message})`)
  }
  let value
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new CliError(`${where} is not valid JSON: ${e.message}`)
  }
  return checkTestSuite(value, where)
}

module.exports = { SUITE_FILE, checkTestSuite, readTestSuite }
