'use strict'
// `rotifer agent memory log`: the agent's lines of .rotifer/audit.jsonl, oldest first. The log
// is read as a stream, line by line; a line that is not a whole audit line (a crash cut it
// short, someone edited the file) is skipped and counted, never fatal.

const fs = require('node:fs')
const path = require('node:path')
const readline = require('node:readline')
const { UsageError, CliError } = require('../errors')
const { findAgent } = require('../agents')
const { geneNamesById } = require('../project')
const { table } = require('../format')

// Refusal lines keep at most this many bytes of a key, then "…" (core/src/audit.rs
// REFUSAL_KEY_BYTES); summary lines keep no key at all.
const REFUSAL_KEY_BYTES = 64
const REFUSALS = ['memory.access_denied', 'memory.quota_reject']

const ACTIONS = ['create', 'update', 'delete', 'evict', 'expire', 'quota_reject', 'access_denied']
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i

function parseSince(text) {
  const ms = RFC3339.test(text) ? Date.parse(text) : NaN
  if (Number.isNaN(ms)) {
    throw new UsageError(`invalid --since ${JSON.stringify(text)}: give an RFC 3339 time such as 2026-11-30T01:38:19.123Z`, 'agent memory log', { seeHelp: false })
  }
  return ms
}

function parseAction(text) {
  const name = text.startsWith('memory.') ? text.slice('memory.'.length) : text
  if (!ACTIONS.includes(name)) {
    throw new UsageError(`invalid --action ${JSON.stringify(text)}: use one of ${ACTIONS.join(', ')}`, 'agent memory log', { seeHelp: false })
  }
  return `memory.${name}`
}

/** A parsed audit line, or `null` for anything that is not one. */
function auditLine(text) {
  let v
  try {
    v = JSON.parse(text)
  } catch {
    return null
  }
  const ok = v !== null && typeof v === 'object' && !Array.isArray(v) &&
    typeof v.ts === 'string' && !Number.isNaN(Date.parse(v.ts)) &&
    typeof v.agentId === 'string' && typeof v.action === 'string'
  return ok ? v : null
}

/** Calls `onLine` with each audit line of `file`; returns how many lines were not audit lines. */
async function readAudit(file, onLine) {
  let fd
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  } catch (e) {
    if (e.code === 'ENOENT') return 0
    throw new CliError(`cannot read the audit log ${file}: ${e.message}`)
  }
  const input = fs.createReadStream('', { fd, encoding: 'utf8' })
  let bad = 0
  for await (const text of readline.createInterface({ input, crlfDelay: Infinity })) {
    if (text.trim() === '') continue
    const line = auditLine(text)
    if (line === null) bad++
    else onLine(line)
  }
  return bad
}

/**
 * Whether line `l` may concern a key starting with `prefix`. A refusal line's key may have been
 * cut ("…" after up to 64 bytes): it may match when what is left and the prefix agree as far as
 * both go. A summary line (`count`) stands for refusals whose keys were not recorded: it is kept,
 * since some of them may match.
 */
function mayConcernPrefix(l, prefix) {
  if (typeof l.key !== 'string') return REFUSALS.includes(l.action) && l.count !== undefined && l.count !== null
  if (l.key.startsWith(prefix)) return true
  if (!REFUSALS.includes(l.action) || !l.key.endsWith('…')) return false
  const kept = l.key.slice(0, -1)
  return Buffer.byteLength(kept) > REFUSAL_KEY_BYTES - 4 && prefix.startsWith(kept)
}

function actorText(actor, names) {
  if (actor === null || actor === undefined) return '-'
  if (typeof actor !== 'string') return '?'
  if (!actor.startsWith('v2:')) return actor
  const short = `${actor.slice(0, 11)}…`
  return names.has(actor) ? `${short} (${names.get(actor)})` : short
}

function detailText(l) {
  // A summary line stands for refusals a gene handle repeated past its bound (README: audit).
  if (l.count !== undefined && l.count !== null) {
    const what = l.action === 'memory.quota_reject' ? 'quota rejections' : `denials of ${l.op || '?'}`
    return `${l.count} more ${what} since ${l.since}`
  }
  if (l.action === 'memory.access_denied') return `${l.op || '?'}: ${l.reason || l.code || ''}`
  if (l.action === 'memory.quota_reject') return `needed ${l.needed} more, quota ${l.quota}, used ${l.used}, evictable ${l.evictable}`
  return ''
}

const log = {
  name: 'agent memory log',
  summary: "show the audit trail of an agent's memory",
  usage: 'rotifer agent memory log <agent> [--since <time>] [--action <a>] [--key-prefix <p>] [--json]',
  description: [
    "Shows the agent's lines of .rotifer/audit.jsonl, oldest first, newest last: time, action,",
    'actor (a gene, shortened, with its name when it is in genes/; "deployer"; or - for expiry and',
    'eviction), key, category, size, and for denials and quota rejections what happened. Lines',
    'that are not whole audit lines are skipped, and their number is reported on stderr.',
    '--action takes an action with or without its "memory." prefix. With --key-prefix, a refusal whose key was cut to 64 bytes is shown if it may match, and',
    'summary lines (refusals counted without their keys) are always shown.',
  ],
  positionals: ['agent'],
  options: {
    since: { type: 'string', value: '<time>', help: 'only lines at or after this RFC 3339 time' },
    action: { type: 'string', value: '<a>', help: `one of: ${ACTIONS.join(', ')}` },
    'key-prefix': { type: 'string', value: '<p>', help: 'only lines whose key starts with <p> (and refusals that may)' },
    json: { type: 'boolean', help: 'print a JSON array of the audit lines as written' },
  },
  examples: [
    'rotifer agent memory log my-agent',
    'rotifer agent memory log my-agent --action delete --since 2026-11-30T00:00:00Z --json',
  ],

  async run({ positionals, options, root, io }) {
    const since = options.since === undefined ? null : parseSince(options.since)
    const action = options.action === undefined ? null : parseAction(options.action)
    const prefix = options['key-prefix']
    const agent = findAgent(root, positionals.agent)
    const file = path.join(root, '.rotifer', 'audit.jsonl')
    const lines = []
    const bad = await readAudit(file, (l) => {
      if (l.agentId !== agent.id) return
      if (since !== null && Date.parse(l.ts) < since) return
      if (action !== null && l.action !== action) return
      if (prefix !== undefined && !mayConcernPrefix(l, prefix)) return
      lines.push(l)
    })
    if (bad > 0) io.err(`note: skipped ${bad} ${bad === 1 ? 'line' : 'lines'} of ${file} that ${bad === 1 ? 'is not an audit line' : 'are not audit lines'}`)
    if (options.json) {
      io.out(JSON.stringify(lines, null, 2))
      return 0
    }
    if (lines.length === 0) {
      io.out(`No audit lines for agent "${agent.name}" (${agent.id})${since !== null || action || prefix !== undefined ? ' that match' : ''}`)
      return 0
    }
    const names = geneNamesById(root)
    io.out(table(['TIME', 'ACTION', 'ACTOR', 'KEY', 'CATEGORY', 'SIZE', 'DETAIL'], lines.map((l) => [
      l.ts,
      String(l.action).replace(/^memory\./, ''),
      actorText(l.actor, names),
      l.key === null || l.key === undefined ? '-' : String(l.key),
      l.category || '-',
      l.size === null || l.size === undefined ? '-' : String(l.size),
      detailText(l),
    ])))
    return 0
  },
}

module.exports = { log }
