'use strict'
// `rotifer agent memory log`: the agent's lines of .rotifer/audit.jsonl and its rotated files
// (audit.<n>.jsonl), oldest first, each judged committed or not by the core (readAgentAuditLog,
// R-AUD-6/7); this file only filters and renders. A line that is not a whole audit line (a crash
// cut it short, someone edited the file) is skipped and counted, never fatal.

const memory = require('../../../index.js')
const { UsageError } = require('../errors')
const { findAgent } = require('../agents')
const { geneNamesById } = require('../project')
const { table } = require('../format')

// Refusal lines keep at most this many bytes of a key, then "…" (core/src/audit.rs
// REFUSAL_KEY_BYTES); summary lines keep no key at all.
const REFUSAL_KEY_BYTES = 64
const REFUSALS = ['memory.access_denied', 'memory.quota_reject']

const ACTIONS = ['create', 'update', 'delete', 'evict', 'expire', 'restore', 'drop', 'quota_reject', 'access_denied']
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
  if (l.action === 'memory.restore' || l.action === 'memory.drop') return l.reason || ''
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
    'The rotated files (audit.<n>.jsonl, the highest n oldest; see "audit" in rotifer.json) are read too.',
    'A change written ahead whose transaction did not commit (the disk filled, the process was',
    'killed) is marked "(not committed)" after its action, and has "committed": false with --json.',
    'Any reader of the files can tell by itself: a change line of agent A with "tx": S committed iff',
    "S <= A's last_seq (the agent row of its database) and no later line of A has \"tx\": S and",
    '"txLine": 1 (a later attempt at S, made after this one failed). Lines without "tx" (denials,',
    'quota rejections) changed nothing and count as committed; an agent without a database is',
    'judged by its lines alone (the last attempt at each S counts as committed).',
    '--action takes an action with or without its "memory." prefix. With --key-prefix, a refusal whose key was cut to 64 bytes is shown if it may match, and',
    'summary lines (refusals counted without their keys) are always shown.',
  ],
  positionals: ['agent'],
  options: {
    since: { type: 'string', value: '<time>', help: 'only lines at or after this RFC 3339 time' },
    action: { type: 'string', value: '<a>', help: `one of: ${ACTIONS.join(', ')}` },
    'key-prefix': { type: 'string', value: '<p>', help: 'only lines whose key starts with <p> (and refusals that may)' },
    json: { type: 'boolean', help: 'print a JSON array of the audit lines as written, each with "committed": true|false added' },
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
    const log = memory.readAgentAuditLog({ agentId: agent.id, root })
    const lines = log.lines.filter((l) => {
      if (since !== null && Date.parse(l.ts) < since) return false
      if (action !== null && l.action !== action) return false
      if (prefix !== undefined && !mayConcernPrefix(l, prefix)) return false
      return true
    })
    const bad = log.skipped
    if (bad > 0) io.err(`note: skipped ${bad} ${bad === 1 ? 'line' : 'lines'} of the audit log (rotated files included) ${root}/.rotifer/audit.jsonl that ${bad === 1 ? 'is not an audit line' : 'are not audit lines'}`)
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
      String(l.action).replace(/^memory\./, '') + (l.committed === false ? ' (not committed)' : ''),
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
