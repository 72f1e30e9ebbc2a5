'use strict'
// An agent record `.rotifer/agents/<id>.json` (R-RUN-7, R-HOST-1): its parser, its writer and its
// errors. Upstream's shape `{ id, name, state, genome, composition, strategy, createdAt,
// reputation }` plus this project's `memoryQuota`, `dataPolicy` and, for an agent whose memory is
// not where the project's configuration puts it, `memoryUrl` (R-BIND-1: a PostgreSQL URL, or
// "sqlite" for the file). A `memoryUrl` may hold a password: no message here repeats it. Every
// command that reads a record reads it through here (lib/cli/agents.js holds the files, their
// trust checks and the atomic write).
//
// Records upstream wrote have no memory fields: they get the default quota (10 MB) and data
// policy (no anonymization, no retention limit), which R-HOST-1's recreation of a missing
// database uses too. Records this project wrote in earlier versions (no `state`, `composition`
// "Seq" or an expression with `steps`/`then`/`else`) are migrated on read, in memory only: the
// file is never rewritten, and a Par without `merge` keeps the WaitAll it meant then.

const { CliError } = require('../cli/errors')
const { parseComposition, CompositionError } = require('./composition')

/** R-QUO-1: the quota of an agent whose record names none. */
const DEFAULT_QUOTA = 10 * 1024 * 1024
const DEFAULT_DATA_POLICY = Object.freeze({ anonymizationSupported: false, maxRetentionDays: null })
const MAX_RETENTION_DAYS = 2147483647
/** The memory API's agent id rule (R-HOST-1): the record's id names its database. */
const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/
/** The word that names the SQLite file where a memory URL is expected. */
const SQLITE = 'sqlite'

/** Whether `text` names a binding (R-BIND-1): a postgres:// or postgresql:// URL, or "sqlite". */
function isMemoryUrl(text) {
  return typeof text === 'string' && (text === SQLITE || /^postgres(ql)?:\/\/./.test(text))
}

/** A record that cannot be used; the message names the file, the field, the fault and the fix. */
class AgentRecordError extends CliError {
  constructor(message) {
    super(message)
    this.name = 'AgentRecordError'
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const shown = (v) => (v === undefined ? 'nothing' : JSON.stringify(v))

/**
 * Checks a parsed record of file `file` whose name says `id`. Returns the record with its
 * defaults filled in (`state`, `strategy`, `reputation`, `memoryQuota`, `dataPolicy`), `legacy`
 * (written by an earlier version) and `plan`, the composition to evaluate, both hidden
 * (not enumerable, so never printed). Throws AgentRecordError.
 */
function checkAgentRecord(value, file, id) {
  const fail = (field, what, fix) => {
    throw new AgentRecordError(`agent record ${file}: "${field}" ${what}; ${fix}`)
  }
  if (!isObject(value)) throw new AgentRecordError(`agent record ${file} must hold a JSON object {"id", "name", "genome", "composition", …}; create the agent again with rotifer agent create`)
  if (value.id !== id) fail('id', `must be ${JSON.stringify(id)}, the name of the file (got ${shown(value.id)})`, 'rename the file after its id, or fix the id')
  if (typeof value.name !== 'string' || value.name === '' || CONTROL.test(value.name) || value.name.length > 256) {
    fail('name', `must be a non-empty string of printable characters, at most 256 (got ${shown(value.name)})`, 'fix the name')
  }
  if (!Array.isArray(value.genome) || value.genome.length === 0 || !value.genome.every((g) => typeof g === 'string')) {
    fail('genome', `must be a non-empty array of gene names (got ${shown(value.genome)})`, `recreate it with: rotifer agent create ${value.name} --genes <g1> <g2>`)
  }
  for (const field of ['state', 'strategy', 'createdAt']) {
    if (field in value && typeof value[field] !== 'string') fail(field, `must be a string (got ${shown(value[field])})`, 'fix it or remove the field')
  }
  if ('reputation' in value && typeof value.reputation !== 'number') fail('reputation', `must be a number (got ${shown(value.reputation)})`, 'fix it or remove the field')
  if ('memoryQuota' in value && !(Number.isSafeInteger(value.memoryQuota) && value.memoryQuota > 0)) {
    fail('memoryQuota', `must be a whole number of bytes greater than 0 (got ${shown(value.memoryQuota)})`, `fix it, or remove it for the default ${DEFAULT_QUOTA} (10 MB)`)
  }
  // Empty or null counts as not given, as where the memory lives is chosen (core/src/binding.rs).
  if ('memoryUrl' in value && value.memoryUrl !== null && value.memoryUrl !== '' && !isMemoryUrl(value.memoryUrl)) {
    fail('memoryUrl', `must be a postgres:// or postgresql:// URL, or "sqlite" for the SQLite file (got ${typeof value.memoryUrl === 'string' ? 'another text, not repeated here: it may hold a password' : shown(value.memoryUrl)})`, 'fix it, or remove it to use the project\'s binding')
  }
  const dataPolicy = 'dataPolicy' in value ? checkDataPolicy(value.dataPolicy, fail) : { ...DEFAULT_DATA_POLICY }
  const legacy = !('state' in value)
  let plan
  try {
    plan = parseComposition(value.composition, { genome: value.genome, legacy })
  } catch (e) {
    if (e instanceof CompositionError) throw new AgentRecordError(`agent record ${file}: ${e.message}; fix the composition or create the agent again`)
    throw e
  }
  const record = {
    ...value,
    state: 'state' in value ? value.state : 'Active',
    strategy: 'strategy' in value ? value.strategy : 'manual',
    reputation: 'reputation' in value ? value.reputation : 0,
    memoryQuota: 'memoryQuota' in value ? value.memoryQuota : DEFAULT_QUOTA,
    dataPolicy,
    composition: value.composition === undefined ? 'Seq' : value.composition,
  }
  // Not fields of the record: what is printed of a record (agent show --json) leaves them out.
  Object.defineProperty(record, 'legacy', { value: legacy })
  Object.defineProperty(record, 'plan', { value: plan })
  return record
}

function checkDataPolicy(p, fail) {
  const fix = 'write {"anonymizationSupported": false, "maxRetentionDays": null}, or remove the field for that default'
  if (!isObject(p)) fail('dataPolicy', `must be an object (got ${shown(p)})`, fix)
  if (typeof p.anonymizationSupported !== 'boolean') fail('dataPolicy.anonymizationSupported', `must be true or false (got ${shown(p.anonymizationSupported)})`, fix)
  const days = p.maxRetentionDays === undefined ? null : p.maxRetentionDays
  if (days !== null && !(Number.isSafeInteger(days) && days >= 1 && days <= MAX_RETENTION_DAYS)) {
    fail('dataPolicy.maxRetentionDays', `must be null or a whole number of days from 1 to ${MAX_RETENTION_DAYS} (got ${shown(days)})`, fix)
  }
  return { anonymizationSupported: p.anonymizationSupported, maxRetentionDays: days }
}

/**
 * The text of `file` as a record, or null when it is not one at all (not JSON, or not an object
 * whose `id` is `id`): such files are not agents, as upstream skips them. A record with the
 * right id and a wrong field is an AgentRecordError.
 */
function parseAgentRecord(text, file, id) {
  let value
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  if (!isObject(value) || value.id !== id) return null
  return checkAgentRecord(value, file, id)
}

/**
 * A new record in upstream's shape, with this project's memory fields: `genome` (names),
 * `composition` (as written by compositionOfGenes or a composition file), `strategy` (default
 * "manual", as upstream's create with --genes), `memoryQuota` (bytes), `dataPolicy`, and
 * `memoryUrl` when one is given.
 */
function newAgentRecord({ name, genome, composition, strategy = 'manual', memoryQuota = DEFAULT_QUOTA, dataPolicy = DEFAULT_DATA_POLICY, memoryUrl }) {
  const record = {
    id: require('node:crypto').randomUUID(),
    name,
    state: 'Active',
    genome: [...genome],
    composition,
    strategy,
    createdAt: new Date().toISOString(),
    reputation: 0.0,
    memoryQuota,
    dataPolicy: { ...dataPolicy },
  }
  if (memoryUrl !== undefined) record.memoryUrl = memoryUrl
  return record
}

const WRITTEN = ['id', 'name', 'state', 'genome', 'composition', 'strategy', 'createdAt', 'reputation', 'memoryQuota', 'dataPolicy', 'memoryUrl']

/** The text of `record` as written to its file: upstream's field order, then ours. */
function formatAgentRecord(record) {
  return JSON.stringify(Object.fromEntries(WRITTEN.filter((k) => k in record).map((k) => [k, record[k]])), null, 2) + '\n'
}

module.exports = { SQLITE, isMemoryUrl, DEFAULT_QUOTA, DEFAULT_DATA_POLICY, MAX_RETENTION_DAYS, AGENT_ID, AgentRecordError, checkAgentRecord, parseAgentRecord, newAgentRecord, formatAgentRecord }
