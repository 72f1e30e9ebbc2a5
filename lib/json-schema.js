'use strict'
// JSON Schema validation of gene inputs and outputs (R-RUN-9): phenotype `inputSchema` and
// `outputSchema`, and a test case's `expectedSchema`. Ajv, as upstream uses it: draft-07,
// `allErrors`, `strict: false` (unknown keywords and formats are ignored, never fatal), so a
// value passes here exactly when it passes in the upstream playground. Loaded on first use.

const { CliError } = require('./cli/errors')

let instance = null

/**
 * The validator, made once per process: compiling a second schema on it costs about 1 ms, a
 * new instance 30 ms or more. `addUsedSchema: false` keeps schemas' `$id`s out of its registry,
 * so two genes whose schemas share an `$id` never collide.
 */
function ajv() {
  if (!instance) {
    const Ajv = require('ajv')
    instance = new (Ajv.default || Ajv)({ allErrors: true, strict: false, addUsedSchema: false })
  }
  return instance
}

/** One ajv error as `where rule: what` for a person, e.g. `/indent must be <= 16 (rule "maximum")`. */
function describe(e) {
  const at = e.instancePath === '' ? '(root)' : e.instancePath
  let what = e.message
  if (e.keyword === 'additionalProperties') what = `must not have the property ${JSON.stringify(e.params.additionalProperty)}`
  if (e.keyword === 'required') what = `must have the property ${JSON.stringify(e.params.missingProperty)}`
  if (e.keyword === 'enum') what = `must be one of ${e.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
  return `${at} ${what} (rule "${e.keyword}")`
}

/**
 * Compiles `schema`; `where` names it in the error when it is not a valid JSON Schema (such as
 * `genes/x/phenotype.json: "inputSchema"`). Returns `check(value)`: null when `value` conforms,
 * else the list of its problems, each naming the field and the rule.
 */
function compileSchema(schema, where) {
  let validate
  try {
    validate = ajv().compile(schema)
  } catch (e) {
    throw new CliError(`${where} is not a valid JSON Schema: ${e.message}; fix the schema (see https://json-schema.org)`)
  }
  return (value) => (validate(value) ? null : validate.errors.map(describe))
}

/** The problems as one line: the first few, and how many more. */
function problemsText(problems, max = 3) {
  const shown = problems.slice(0, max).join('; ')
  return problems.length > max ? `${shown}; and ${problems.length - max} more` : shown
}

module.exports = { compileSchema, problemsText }
