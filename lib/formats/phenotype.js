'use strict'
// A gene's `phenotype.json` (R-RUN-2), in the upstream playground's format: its checks, its
// writer, and the gene's v2 id. Required: `domain`, `version` (semver), `inputSchema`,
// `outputSchema`. Optional, checked when present: `description`, `fidelity` (Wrapped | Hybrid |
// Native), `transparency`, `semanticRequirements`, `dependencies`, `author`, `tags`, `network`,
// `irHash`, and the LLM-native fields upstream's validator rules on (`llmRequirements`,
// `guardConfig`, `synthesisMethod`, `executionModel`). Anything else is kept as written. There
// is no `name` field (the gene's name is its folder's); a phenotype that has one still reads.
//
// Errors name the file, the field, the rule and the fix, and carry upstream's code where it has
// one (E0021 missing field, E0022 domain, E0023 version, E0080… LLM-native fields).

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('../cli/errors')

/** The playground's domain rule (R-ACC-6). */
const DOMAIN = /^[a-z0-9]+(\.[a-z0-9]+)*$/
/** Upstream's version rule (compile and wrap). */
const SEMVER = /^\d+\.\d+\.\d+(-[a-zA-Z0-9.]+)?$/
const FIDELITIES = ['Wrapped', 'Hybrid', 'Native']
const REQUIRED = ['domain', 'version', 'inputSchema', 'outputSchema']
// The enums of upstream's src/types/phenotype.ts.
const TEMPLATE_FORMATS = ['mustache', 'handlebars', 'jinja2', 'fstring', 'raw']
const GUARD_POSITIONS = ['input', 'output', 'both']
const SYNTHESIS_METHODS = ['MANUAL', 'LLM_ASSISTED', 'LLM_AUTO', 'MUTATION', 'DE_NOVO']
const EXECUTION_MODELS = ['CHAT', 'BATCH', 'EVENT_DRIVEN']

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const isStringArray = (v) => Array.isArray(v) && v.every((s) => typeof s === 'string')
const shown = (v) => (v === undefined ? 'nothing' : JSON.stringify(v))

/** JSON with object keys sorted at every depth, no whitespace: the form a v2 id hashes. */
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/**
 * A gene's v2 id: `v2:` + SHA-256 hex of its phenotype serialised with sorted keys and without
 * the top-level `irHash`: the hex is upstream's `Gene ID` (its `contentHash` of the phenotype
 * without `irHash`, as `compile` prints it).
 */
function geneV2Id(phenotype) {
  const { irHash, ...rest } = phenotype
  return 'v2:' + require('../sha256').sha256Hex(canonicalJson(rest))
}

/**
 * Checks phenotype `p` read from `where` (a path for messages). Throws a CliError on the first
 * problem; returns nothing.
 */
function checkPhenotype(p, where) {
  if (!isObject(p)) throw new CliError(`${where} must hold a JSON object with ${REQUIRED.map((f) => `"${f}"`).join(', ')}`)
  const fail = (field, rule, fix, code) => {
    throw new CliError(`${where}: "${field}" ${rule}${code ? ` (${code})` : ''}; ${fix}`)
  }
  // Every missing required field at once, so that a new phenotype is fixed in one go.
  const missing = REQUIRED.filter((field) => !(field in p))
  if (missing.length === 1) throw new CliError(`${where} has no "${missing[0]}" (E0021); add it: ${HINTS[missing[0]]}`)
  if (missing.length > 1) {
    throw new CliError(`${where} has no ${missing.map((f) => `"${f}"`).join(', ')} (E0021); add them: ${missing.map((f) => HINTS[f]).join(', ')}`)
  }
  if (typeof p.domain !== 'string' || !DOMAIN.test(p.domain)) {
    fail('domain', `must be lower-case words joined by dots, like "code.format", not ${shown(p.domain)}`, 'use lower-case letters, digits and dots only', 'E0022')
  }
  if (typeof p.version !== 'string' || !SEMVER.test(p.version)) {
    fail('version', `must be a semantic version, not ${shown(p.version)}`, 'write it like "1.0.0" or "0.1.0-beta.1"', 'E0023')
  }
  for (const field of ['inputSchema', 'outputSchema']) {
    if (!isObject(p[field])) fail(field, `must be a JSON Schema object, not ${shown(p[field])}`, `write an object such as {"type": "object"}`)
  }
  for (const field of ['name', 'description', 'transparency', 'author', 'irHash']) {
    if (field in p && typeof p[field] !== 'string') fail(field, `must be a string, not ${shown(p[field])}`, 'write a string or remove the field')
  }
  if ('fidelity' in p && !FIDELITIES.includes(p.fidelity)) {
    fail('fidelity', `must be one of ${FIDELITIES.join(', ')}, not ${shown(p.fidelity)}`, 'write one of them (Wrapped for a source gene) or remove the field')
  }
  if ('tags' in p && !isStringArray(p.tags)) fail('tags', 'must be an array of strings', 'write it like ["format", "code"]')
  if ('dependencies' in p && !Array.isArray(p.dependencies)) fail('dependencies', `must be an array, not ${shown(p.dependencies)}`, 'write it like [] or remove the field')
  if ('network' in p) checkNetwork(p.network, fail)
  checkLlmNative(p, fail)
}

const HINTS = {
  domain: '"domain": "general" (lower-case words joined by dots)',
  version: '"version": "0.1.0" (semver)',
  inputSchema: '"inputSchema": {"type": "object"} (the JSON Schema of the input)',
  outputSchema: '"outputSchema": {"type": "object"} (the JSON Schema of the output)',
}

function checkNetwork(n, fail) {
  if (!isObject(n)) fail('network', `must be an object {"allowedDomains": [...], ...}, not ${shown(n)}`, 'fix it or remove the field')
  if ('allowedDomains' in n && !isStringArray(n.allowedDomains)) fail('network.allowedDomains', 'must be an array of host names', 'write it like ["api.example.com"]')
  for (const limit of ['maxTimeoutMs', 'maxResponseBytes', 'maxRequestsPerMin']) {
    if (limit in n && !(typeof n[limit] === 'number' && n[limit] > 0)) fail(`network.${limit}`, `must be a positive number, not ${shown(n[limit])}`, 'fix it or remove it')
  }
}

/** The errors of upstream's LLM-native validator (its warnings are `phenotypeWarnings`). */
function checkLlmNative(p, fail) {
  const llm = p.llmRequirements
  if (llm !== undefined) {
    const vars = isObject(llm) ? llm.templateVariables : undefined
    if (!Array.isArray(vars) || vars.length === 0) fail('llmRequirements.templateVariables', 'must be a non-empty array', 'list the input fields the template uses', 'E0080')
    const props = p.inputSchema.properties
    if (isObject(props)) {
      const missing = vars.find((v) => !(v in props))
      if (missing !== undefined) fail('llmRequirements.templateVariables', `names ${shown(missing)}, which is not in inputSchema.properties`, 'add it to the input schema or remove it from the list', 'E0081')
    }
  }
  const guard = p.guardConfig
  if (guard !== undefined) {
    const g = isObject(guard) ? guard : {}
    if (!GUARD_POSITIONS.includes(g.position)) fail('guardConfig.position', `must be one of ${GUARD_POSITIONS.join(', ')}, not ${shown(g.position)}`, 'write one of them', 'E0082')
    if (!Array.isArray(g.categories) || g.categories.length === 0) fail('guardConfig.categories', 'must be a non-empty array', 'list the categories the guard checks', 'E0083')
    if (g.riskThreshold !== undefined && !(typeof g.riskThreshold === 'number' && g.riskThreshold >= 0 && g.riskThreshold <= 1)) {
      fail('guardConfig.riskThreshold', `must be between 0.0 and 1.0, not ${shown(g.riskThreshold)}`, 'write a number from 0 to 1', 'E0084')
    }
  }
  if (p.synthesisMethod !== undefined && !SYNTHESIS_METHODS.includes(p.synthesisMethod)) {
    fail('synthesisMethod', `must be one of ${SYNTHESIS_METHODS.join(', ')}, not ${shown(p.synthesisMethod)}`, 'write one of them or remove the field', 'E0090')
  }
  if (p.executionModel !== undefined && !EXECUTION_MODELS.includes(p.executionModel)) {
    fail('executionModel', `must be one of ${EXECUTION_MODELS.join(', ')}, not ${shown(p.executionModel)}`, 'write one of them or remove the field', 'E0100')
  }
}

/** Upstream's warnings about a valid phenotype (W0080…), as lines; `compile --check` shows them. */
function phenotypeWarnings(p) {
  const out = []
  const domain = p.domain
  if (p.llmRequirements !== undefined) {
    if (!TEMPLATE_FORMATS.includes(p.llmRequirements && p.llmRequirements.templateFormat)) out.push(`W0080 llmRequirements.templateFormat should be one of ${TEMPLATE_FORMATS.join(', ')}`)
    if (!domain.startsWith('prompt.')) out.push(`W0081 the gene has llmRequirements but its domain "${domain}" does not start with "prompt."`)
  }
  if (p.guardConfig !== undefined && !domain.startsWith('guard.')) out.push(`W0082 the gene has guardConfig but its domain "${domain}" does not start with "guard."`)
  if (domain.startsWith('prompt.') && p.fidelity === 'Native') out.push('W0083 a prompt gene with fidelity Native is unusual: consider Wrapped or Hybrid')
  if (p.executionModel === 'CHAT' && !(typeof p.description === 'string' && p.description.trim().length >= 10)) {
    out.push('W0100 a CHAT phenotype needs a description (10 characters or more): it is the agent\'s system prompt')
  }
  if (p.systemPrompt !== undefined && p.executionModel !== undefined && p.executionModel !== 'CHAT') {
    out.push(`W0101 systemPrompt is ignored outside CHAT (executionModel is "${p.executionModel}")`)
  }
  return out
}

/** Reads and checks the phenotype at `file`; `where` names it in messages. */
function readPhenotype(file, where) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (e) {
    throw new CliError(`cannot read ${where} (${e.code || e.message})`, { cause: e })
  }
  let phenotype
  try {
    phenotype = JSON.parse(text)
  } catch (e) {
    throw new CliError(`${where} is not valid JSON: ${e.message}; fix the file`)
  }
  checkPhenotype(phenotype, where)
  return phenotype
}

/**
 * The phenotype `rotifer wrap` writes for a gene that has none, as upstream's wrap does
 * (fidelity Wrapped unless told; a Hybrid gets upstream's default network block).
 */
function newPhenotype({ domain, fidelity = 'Wrapped', author, now = new Date() }) {
  const p = {
    domain,
    inputSchema: { type: 'object', properties: {}, required: [] },
    outputSchema: { type: 'object' },
    dependencies: [],
    version: '0.1.0',
    ...(author === undefined ? {} : { author }),
    createdAt: now.toISOString(),
    fidelity,
    transparency: 'Open',
  }
  if (fidelity === 'Hybrid') p.network = { allowedDomains: [], maxTimeoutMs: 30000, maxResponseBytes: 1048576, maxRequestsPerMin: 10 }
  return p
}

/** Checks `phenotype` and writes it to `file` (2-space JSON), atomically: all or nothing. */
function writePhenotype(file, phenotype, where = file) {
  checkPhenotype(phenotype, where)
  writeJsonAtomically(file, phenotype)
}

/** Writes `value` as JSON to `file` through a temporary file in the same folder and a rename. */
function writeJsonAtomically(file, value) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  try {
    fs.writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { flag: 'wx' })
    fs.renameSync(tmp, file)
  } catch (e) {
    fs.rmSync(tmp, { force: true })
    throw new CliError(`cannot write ${file} (${e.code || e.message})`, { cause: e })
  }
}

/** True when `phenotype` makes its gene a Hybrid with a network block (R-RUN-4). */
function isHybrid(phenotype) {
  return phenotype !== null && typeof phenotype === 'object' && phenotype.fidelity === 'Hybrid' &&
    phenotype.network !== null && typeof phenotype.network === 'object' && !Array.isArray(phenotype.network)
}

module.exports = {
  isHybrid, DOMAIN, SEMVER, FIDELITIES, canonicalJson, geneV2Id, checkPhenotype, phenotypeWarnings, readPhenotype, newPhenotype, writePhenotype, writeJsonAtomically,
}
