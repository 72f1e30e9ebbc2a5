'use strict'
// JSON Schema validation of gene inputs and outputs (R-RUN-9): phenotype `inputSchema` and
// `outputSchema`, and a test case's `expectedSchema`. Ajv, as upstream uses it: draft-07,
// `allErrors`, `strict: false` (unknown keywords and formats are ignored, never fatal), so a
// value passes here exactly when it passes in the upstream playground. Loaded on first use.
//
// Compiled validators are cached on disk when a cache folder is given (the gene runtime gives
// `<root>/.rotifer/cache/schemas/`): Ajv's standalone code of the validator, one file per schema
// named by the SHA-256 of everything it depends on (the format below, Ajv's version and
// options, the schema), trusted only as the transpile cache's files are (a regular file of this
// user that no one else may write). A cached schema loads in well under a millisecond, without
// Ajv (tens of milliseconds to load, milliseconds per schema to compile).

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('./cli/errors')

/** Bump when the options or the way validators are cached change: old files stop matching. */
const CACHE_FORMAT = 1
const OPTIONS = { allErrors: true, strict: false, addUsedSchema: false }

let instance = null

/**
 * The validator, made once per process: compiling a second schema on it costs about 1 ms, a
 * new instance 30 ms or more. `addUsedSchema: false` keeps schemas' `$id`s out of its registry,
 * so two genes whose schemas share an `$id` never collide.
 */
function ajv() {
  if (!instance) {
    const Ajv = require('ajv')
    // `code.source`: the validator's code is kept, for the cache.
    instance = new (Ajv.default || Ajv)({ ...OPTIONS, code: { source: true } })
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
function compileSchema(schema, where, { cacheDir = null } = {}) {
  const file = cacheDir ? path.join(cacheDir, `${cacheKey(schema)}.js`) : null
  let validate = file ? cachedValidator(file) : null
  if (!validate) {
    try {
      validate = ajv().compile(schema)
    } catch (e) {
      throw new CliError(`${where} is not a valid JSON Schema: ${e.message}; fix the schema (see https://json-schema.org)`)
    }
    if (file) cacheValidator(cacheDir, file, validate)
  }
  return (value) => (validate(value) ? null : validate.errors.map(describe))
}

let ajvVersion = null

function cacheKey(schema) {
  ajvVersion = ajvVersion || require('ajv/package.json').version
  return require('./sha256').sha256Hex(JSON.stringify([CACHE_FORMAT, ajvVersion, OPTIONS, schema]))
}

/** What cached validator code may require: Ajv's runtime helpers, nothing else. */
function runtimeRequire(id) {
  if (!/^ajv\/dist\/runtime\/[a-z0-9_]+$/i.test(id)) throw new Error(`a cached validator may not require ${JSON.stringify(id)}`)
  return require(id)
}

/** The validator cached in `file`, or null (none, untrusted, or it does not load). */
function cachedValidator(file) {
  const { readCached } = require('./cli/transpile')
  const code = readCached(file)
  if (code === null) return null
  try {
    const module = { exports: {} }
    require('node:vm').compileFunction(code, ['require', 'module', 'exports'], { filename: file })(runtimeRequire, module, module.exports)
    return typeof module.exports === 'function' ? module.exports : null
  } catch {
    return null
  }
}

/** Writes `validate`'s standalone code to `file`; a schema standalone code cannot hold is not cached. */
function cacheValidator(cacheDir, file, validate) {
  let code
  try {
    code = require('ajv/dist/standalone').default(ajv(), validate)
  } catch {
    return
  }
  if (fs.existsSync(file)) return
  require('./cli/transpile').writeCached(cacheDir, file, code)
}

/** The problems as one line: the first few, and how many more. */
function problemsText(problems, max = 3) {
  const shown = problems.slice(0, max).join('; ')
  return problems.length > max ? `${shown}; and ${problems.length - max} more` : shown
}

/**
 * The schema cache folder of the project at `root`, or null when the project has no `.rotifer`
 * folder yet: the cache never makes one (`rotifer run` of a JavaScript gene touches no file).
 */
function schemaCacheDirOf(root) {
  const state = path.join(root, '.rotifer')
  return fs.existsSync(state) ? path.join(state, 'cache', 'schemas') : null
}

module.exports = { compileSchema, problemsText, schemaCacheDirOf }
