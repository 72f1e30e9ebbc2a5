'use strict'
// `rotifer agent memory log`: the agent's lines of .rotifer/audit.jsonl and its rotated files
// (audit.<n>.jsonl), oldest first, each judged committed or not by the core, read a page at a
// time and followed with openAgentAuditLog (R-AUD-6/7); this file only filters, counts and
// renders, printing each page as it comes. A line that is not a whole audit line (a crash
// cut it short, someone edited the file) is skipped and counted, never fatal.

const memory = require('../../../index.js')
const { UsageError } = require('../errors')
const { findAgent } = require('../agents')
const { geneNamesById } = require('../project')
const { formatSize, truncate, useColor, bold } = require('../format')
const { lineWriter, jsonArrayWriter, streamTable, outputWidth, width } = require('../stream')
const { parseLimit } = require('./agent-memory')

// Refusal lines keep at most this many bytes of a key, then "…" (core/src/audit.rs
// REFUSAL_KEY_BYTES); summary lines keep no key at all.
const REFUSAL_KEY_BYTES = 64
const REFUSALS = ['memory.access_denied', 'memory.quota_reject']

const ACTIONS = ['create', 'update', 'delete', 'evict', 'expire', 'restore', 'drop', 'quota_reject', 'access_denied', 'audit_trim']
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i
const DATE = /^(\d{4})-(\d\d)-(\d\d)$/

/** `--since`: an RFC 3339 time, or a date (`2026-12-01`), which is that day's midnight UTC. */
function parseSince(text) {
  const date = DATE.exec(text)
  let ms = NaN
  if (date) {
    ms = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]))
    // Only a day that exists: 2026-02-30 is no date.
    if (new Date(ms).toISOString().slice(0, 10) !== text) ms = NaN
  } else if (RFC3339.test(text)) {
    ms = Date.parse(text)
  }
  if (Number.isNaN(ms)) {
    throw new UsageError(`invalid --since ${JSON.stringify(text)}: give a date such as 2026-11-30 (midnight UTC) or an RFC 3339 time such as 2026-11-30T01:38:19.123Z`, 'agent memory log', { seeHelp: false })
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
  // A change line's long key shows its beginning, "…", and the whole key's length (keyBytes).
  if (typeof l.keyBytes === 'number' && l.key.endsWith('…')) return prefix.startsWith(l.key.slice(0, -1))
  if (!REFUSALS.includes(l.action) || !l.key.endsWith('…')) return false
  const kept = l.key.slice(0, -1)
  return Buffer.byteLength(kept) > REFUSAL_KEY_BYTES - 4 && prefix.startsWith(kept)
}

/** `v2:1a2b3c4d…`, with the gene's name when it is in genes/ and there is room for it. */
function actorCell(actor, names, wide) {
  if (actor === null || actor === undefined) return '-'
  if (typeof actor !== 'string') return '?'
  if (!actor.startsWith('v2:')) return actor
  if (wide) return names.has(actor) ? `${actor} (${names.get(actor)})` : actor
  const short = `${actor.slice(0, 11)}…`
  return names.has(actor) ? { long: `${short} (${truncate(names.get(actor), 24)})`, short } : short
}

/** A size for reading at a glance (`formatSize`), or `?` when a line holds something else. */
function size(n) {
  return Number.isSafeInteger(n) && n >= 0 ? formatSize(n) : String(n)
}

function detailText(l) {
  const detail = (() => {
    // A summary line stands for refusals a gene handle repeated past its bound (docs/decisions.md: audit).
    if (l.count !== undefined && l.count !== null) {
      const what = l.action === 'memory.quota_reject' ? 'quota rejections' : `denials of ${l.op || '?'}`
      return `${l.count} more ${what} since ${l.since}`
    }
    if (l.action === 'memory.access_denied') return `${l.op || '?'}: ${l.reason || l.code || ''}`
    if (l.action === 'memory.quota_reject') return `needed ${size(l.needed)} more, quota ${size(l.quota)}, used ${size(l.used)}, evictable ${size(l.evictable)}`
    if (l.action === 'memory.restore' || l.action === 'memory.drop' || l.action === 'memory.migrate') return l.reason || ''
    // R-BIND-3: on PostgreSQL the oldest rows past the deployer's bound go, and this line says so.
    if (l.action === 'memory.audit_trim') return `trimmed the ${l.trimmed === 1 ? 'oldest line' : `${l.trimmed} oldest lines`} (at most ${l.max} kept)`
    return ''
  })()
  if (l.committed !== false) return detail
  return detail === '' ? 'not committed' : `not committed: ${detail}`
}

/** `2026-11-30 01:38:19` (UTC) from the line's RFC 3339 time; the time as written with --wide. */
function timeText(ts, wide) {
  if (wide || typeof ts !== 'string') return String(ts)
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(ts)) return `${ts.slice(0, 10)} ${ts.slice(11, 19)}`
  const ms = Date.parse(ts)
  return Number.isNaN(ms) ? ts : new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

/** The cells of line `l`. `actors` keeps each actor's cell: few actors write many lines. */
function cellsOf(l, names, wide, actors) {
  let actor = typeof l.actor === 'string' ? actors.get(l.actor) : undefined
  if (actor === undefined) {
    actor = actorCell(l.actor, names, wide)
    if (typeof l.actor === 'string' && actors.size < 10_000) actors.set(l.actor, actor)
  }
  return [
    timeText(l.ts, wide),
    String(l.action).replace(/^memory\./, ''),
    actor,
    l.key === null || l.key === undefined ? '-' : String(l.key),
    l.category || '-',
    l.size === null || l.size === undefined ? '-' : size(l.size),
    detailText(l),
  ]
}

// ---------------------------------------------------------------------------------------------
// --summary: lines per action and per hour or day

const HOUR = 3_600_000
const DAY = 24 * HOUR
const LEVELS = '▁▂▃▄▅▆▇█'

/**
 * Counts of lines by hour (UTC) and action, uncommitted apart, kept as the lines go by (`add`);
 * `by(period)` gives them per 'hour' or 'day'.
 */
function tally() {
  const hours = new Map() // action → Map(hour start → lines)
  let lines = 0
  let firstTs = null
  let lastTs = null
  return {
    add(l) {
      const ms = Date.parse(l.ts)
      if (Number.isNaN(ms)) return
      lines++
      firstTs ??= l.ts
      lastTs = l.ts
      const at = Math.floor(ms / HOUR) * HOUR
      const name = l.committed === false ? 'not committed' : String(l.action).replace(/^memory\./, '')
      if (!hours.has(name)) hours.set(name, new Map())
      const per = hours.get(name)
      // A summary line stands for `count` refusals.
      per.set(at, (per.get(at) || 0) + (Number.isSafeInteger(l.count) && l.count > 0 ? l.count : 1))
    },
    get lines() { return lines },
    get span() { return lines === 0 ? 0 : Date.parse(lastTs) - Date.parse(firstTs) },
    get firstTs() { return firstTs },
    get lastTs() { return lastTs },
    by(period) {
      const step = period === 'day' ? DAY : HOUR
      const actions = new Map()
      let first = Infinity
      let last = -Infinity
      for (const [name, per] of hours) {
        const into = new Map()
        for (const [hour, n] of per) {
          const at = Math.floor(hour / step) * step
          into.set(at, (into.get(at) || 0) + n)
          first = Math.min(first, at)
          last = Math.max(last, at)
        }
        actions.set(name, into)
      }
      // Actions in the order of ACTIONS, then any other, then "not committed".
      const rank = (a) => (a === 'not committed' ? ACTIONS.length : ACTIONS.includes(a) ? ACTIONS.indexOf(a) : ACTIONS.length - 0.5)
      const sorted = new Map([...actions].sort((a, b) => rank(a[0]) - rank(b[0])))
      return { by: period, step, first, last, actions: sorted }
    },
  }
}

function periodText(ms, by) {
  const iso = new Date(ms).toISOString()
  return by === 'day' ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`
}

function sumOf(per) {
  let n = 0
  for (const v of per.values()) n += v
  return n
}

/** The summary for a terminal: one strip per action, one column per period (or several). */
function strips(t, width) {
  const periods = (t.last - t.first) / t.step + 1
  const names = [...t.actions.keys()]
  const labelW = Math.max(...names.map((n) => n.length))
  const totals = names.map((n) => sumOf(t.actions.get(n)))
  const countW = Math.max(...totals.map((n) => String(n).length))
  const room = Math.max(10, width - labelW - countW - 4)
  const group = Math.ceil(periods / room)
  const columns = Math.ceil(periods / group)
  const buckets = names.map((n) => {
    const b = new Array(columns).fill(0)
    for (const [at, v] of t.actions.get(n)) b[Math.floor((at - t.first) / t.step / group)] += v
    return b
  })
  const peak = Math.max(...buckets.map((b) => Math.max(...b)))
  const unit = `${group === 1 ? '' : `${group} `}${t.by}${group === 1 ? '' : 's'}`
  const out = [`one column per ${unit} (UTC); █ = ${peak} ${peak === 1 ? 'line' : 'lines'}`, '']
  names.forEach((n, i) => {
    const strip = buckets[i].map((v) => (v === 0 ? ' ' : LEVELS[Math.min(7, Math.ceil((v / peak) * 8) - 1)])).join('').trimEnd()
    out.push(`${n.padEnd(labelW)}  ${String(totals[i]).padStart(countW)}  ${strip}`)
  })
  const from = periodText(t.first, t.by)
  const to = periodText(t.first + (columns - 1) * group * t.step, t.by)
  const axis = columns > from.length + to.length + 1 ? `${from}${' '.repeat(columns - from.length - to.length)}${to}` : from
  out.push(`${' '.repeat(labelW + countW + 4)}${axis}`)
  return out
}

/** The summary as plain text (stdout is not a terminal): one line per period and action. */
function plainSummary(t) {
  const rows = []
  const periods = new Set()
  for (const per of t.actions.values()) for (const at of per.keys()) periods.add(at)
  for (const at of [...periods].sort((a, b) => a - b)) {
    for (const [name, per] of t.actions) if (per.has(at)) rows.push([periodText(at, t.by), name, String(per.get(at))])
  }
  const w = [Math.max(periodText(0, t.by).length, 12), Math.max(6, ...rows.map((r) => r[1].length)), Math.max(5, ...rows.map((r) => r[2].length))]
  const line = (r) => `${r[0].padEnd(w[0])}  ${r[1].padEnd(w[1])}  ${r[2].padStart(w[2])}`
  return [line([t.by === 'day' ? 'DAY (UTC)' : 'HOUR (UTC)', 'ACTION', 'LINES']), ...rows.map(line)]
}

function summaryJson(t, agent) {
  const periods = new Map()
  for (const [name, per] of t.actions) {
    for (const [at, v] of per) {
      if (!periods.has(at)) periods.set(at, {})
      periods.get(at)[name] = v
    }
  }
  return {
    agentId: agent.id,
    by: t.by,
    totals: Object.fromEntries([...t.actions].map(([n, per]) => [n, sumOf(per)])),
    periods: [...periods].sort((a, b) => a[0] - b[0]).map(([at, counts]) => ({ start: new Date(at).toISOString(), counts })),
  }
}

// ---------------------------------------------------------------------------------------------

/** Lines read per page from the core; the first page is what the table is laid out from. */
const FIRST_PAGE = 200
const PAGE = 5000
/** How often --follow looks for new lines (a `stat` of the log when nothing changed). */
const FOLLOW_MS = 200

const log = {
  name: 'agent memory log',
  summary: "show the audit trail of an agent's memory",
  usage: 'rotifer agent memory log <agent> [--since <time>] [--action <a>] [--key-prefix <p>] [--limit <n>] [--follow] [--summary [--by hour|day]] [--wide] [--json]',
  description: [
    "Shows the agent's lines of .rotifer/audit.jsonl, oldest first, newest last: time (UTC),",
    'action, actor (a gene, shortened, with its name when it is in genes/ and there is room;',
    '"deployer"; or - for expiry and eviction), key, category, size, and for denials, quota',
    'rejections, restores and drops what happened. The rotated files (audit.<n>.jsonl, the',
    'highest n oldest; see "audit" in rotifer.json) are read too, after audit.kept.jsonl (each',
    "agent's latest lines from rotated files that went). Lines that are not whole audit lines",
    'are skipped, and their number is reported on stderr.',
    'Lines fit the terminal (80 columns when stdout is not a terminal, or $COLUMNS): keys are cut',
    'with "…", and a detail that does not fit goes on the next line, indented (--wide: one line',
    'each, nothing cut, times as written). Lines are read and printed a page at a time; columns',
    'are as wide as the first page needs.',
    'A change written ahead whose transaction did not commit (the disk filled, the process was',
    'killed) says "not committed" in its detail, and has "committed": false with --json.',
    'Any reader of the files can tell by itself: a change line of agent A with "tx": S committed',
    "iff S <= A's last_seq (the agent row of its database) and no later line of A has \"tx\": S",
    'and "txLine": 1 (a later attempt at S, made after this one failed). Lines without "tx"',
    '(denials, quota rejections) changed nothing and count as committed; an agent without a',
    'database is judged by its lines alone (the last attempt at each S counts as committed).',
    '--action takes an action with or without its "memory." prefix. With --key-prefix, a refusal',
    'whose key was cut to 64 bytes is shown if it may match, and summary lines (refusals counted',
    'without their keys) are always shown.',
    '--limit <n> shows the last <n> matching lines. --follow then keeps printing new lines as',
    'they are appended, across rotations, until interrupted (Ctrl-C; exit code 130); with --json',
    'it prints one JSON object per line (JSON Lines) instead of an array.',
    '--summary counts the matching lines per action and per hour (per day when they span more',
    'than two days, or as --by says): on a terminal as one strip per action, one column per',
    'period; otherwise as plain lines "<period>  <action>  <lines>"; with --json as an object.',
    'A refusal summary line counts as the refusals it stands for; uncommitted lines count apart.',
    'On PostgreSQL the lines are the agent\'s audit rows on the server, in the same shapes, all',
    'committed; when the oldest are trimmed past the deployer\'s bound, an audit_trim line says',
    'how many went.',
  ],
  positionals: ['agent'],
  options: {
    since: { type: 'string', value: '<time>', help: 'only lines at or after this time: an RFC 3339 time, or a date (2026-11-30: its midnight UTC)' },
    action: { type: 'string', value: '<a>', help: `one of: ${ACTIONS.join(', ')}` },
    'key-prefix': { type: 'string', value: '<p>', help: 'only lines whose key starts with <p> (and refusals that may)' },
    limit: { type: 'string', value: '<n>', help: 'only the last <n> matching lines' },
    follow: { type: 'boolean', help: 'keep printing new lines as they are appended, until interrupted' },
    summary: { type: 'boolean', help: 'lines per action and per hour or day instead of the lines' },
    by: { type: 'string', value: 'hour|day', help: 'the period of --summary (default: hour, or day past two days)' },
    wide: { type: 'boolean', help: 'nothing cut: full times, ids, keys and details, however wide the lines get' },
    json: { type: 'boolean', help: 'print a JSON array of the audit lines as written, each with "committed": true|false added' },
  },
  examples: [
    'rotifer agent memory log my-agent',
    'rotifer agent memory log my-agent --action delete --since 2026-11-30T00:00:00Z --json',
    'rotifer agent memory log my-agent --limit 20 --follow',
    'rotifer agent memory log my-agent --summary --by day',
  ],

  async run({ positionals, options, root, io }) {
    const since = options.since === undefined ? null : parseSince(options.since)
    const action = options.action === undefined ? null : parseAction(options.action)
    const prefix = options['key-prefix']
    const limit = options.limit === undefined ? Infinity : parseLimit(options.limit, 'agent memory log')
    if (options.by !== undefined && !options.summary) throw new UsageError('--by goes with --summary', 'agent memory log')
    if (options.by !== undefined && !['hour', 'day'].includes(options.by)) {
      throw new UsageError(`invalid --by ${JSON.stringify(options.by)}: use hour or day`, 'agent memory log', { seeHelp: false })
    }
    if (options.summary && options.follow) throw new UsageError('--summary and --follow do not go together', 'agent memory log')
    const agent = findAgent(root, positionals.agent)
    const reader = memory.openAgentAuditLog({ agentId: agent.id, root, follow: options.follow === true })
    const bad = reader.skipped
    if (bad > 0) io.err(`note: skipped ${bad} ${bad === 1 ? 'line' : 'lines'} of the audit log (rotated files included) ${root}/.rotifer/audit.jsonl that ${bad === 1 ? 'is not an audit line' : 'are not audit lines'}`)
    const filtered = since !== null || action !== null || prefix !== undefined
    const matches = (l) => {
      if (since !== null && Date.parse(l.ts) < since) return false
      if (action !== null && l.action !== action) return false
      if (prefix !== undefined && !mayConcernPrefix(l, prefix)) return false
      return true
    }
    // The matching lines read so far, page by page: with --limit, only the last ones.
    if (limit !== Infinity && !filtered) reader.skip(Math.max(0, reader.remaining - limit))
    const pages = function* () {
      if (limit !== Infinity && filtered) {
        let kept = []
        for (let p; (p = reader.next(PAGE)); ) {
          kept.push(...p.filter(matches))
          if (kept.length > 2 * limit) kept = kept.slice(-limit)
        }
        if (kept.length > 0) yield kept.slice(-limit)
        return
      }
      for (let p, size = FIRST_PAGE; (p = reader.next(size)); size = PAGE) {
        const m = filtered ? p.filter(matches) : p
        if (m.length > 0) yield m
      }
    }

    const out = lineWriter(io)
    if (options.summary) {
      const counts = tally()
      for (const p of pages()) for (const l of p) counts.add(l)
      if (counts.lines === 0) {
        io.out(noLines(agent, filtered))
        return 0
      }
      const t = counts.by(options.by || (counts.span > 2 * DAY ? 'day' : 'hour'))
      if (options.json) {
        io.out(JSON.stringify(summaryJson(t, agent), null, 2))
        return 0
      }
      const head = `Audit lines of agent "${agent.name}" (${agent.id})${filtered ? ' that match' : ''}`
      const figures = `${counts.lines} from ${timeText(counts.firstTs)} to ${timeText(counts.lastTs)} UTC`
      const w = outputWidth(process.stdout)
      // One line if it fits, else the figures on a line of their own.
      const top = width(`${head}: ${figures}`) <= w ? [`${head}: ${figures}`] : [head, figures]
      const body = process.stdout.isTTY ? strips(t, w) : plainSummary(t)
      io.out([...top, '', ...body].join('\n'))
      return 0
    }

    const names = geneNamesById(root)
    const wide = options.wide === true
    const follow = options.follow === true
    const actors = new Map()
    let table = null
    const color = useColor(process.stdout)
    const print = (lines) => {
      if (options.json) {
        for (const l of lines) out.line(JSON.stringify(l))
        return
      }
      if (table === null) {
        const longest = Math.max(0, ...Object.keys(reader.actions).map((a) => a.replace(/^memory\./, '').length))
        table = streamTable(
          [
            { header: 'TIME' }, { header: 'ACTION', min: longest }, { header: 'ACTOR', grow: 3 }, { header: 'KEY', grow: 2, middle: true },
            { header: 'CATEGORY' }, { header: 'SIZE', right: true }, { header: 'DETAIL', grow: 1, optional: true },
          ],
          lines.map((l) => cellsOf(l, names, wide, actors)),
          wide ? Infinity : outputWidth(process.stdout),
        )
        out.line(color ? bold(table.header()) : table.header())
      }
      for (const l of lines) {
        const cells = cellsOf(l, names, wide, actors)
        const detail = cells[cells.length - 1]
        if (detail === '' || table.fits(cells)) {
          out.line(table.row(cells))
        } else {
          // A detail that does not fit goes whole on a line of its own, indented (cut to the width).
          cells[cells.length - 1] = ''
          out.line(table.row(cells))
          out.line(table.continuation(detail))
        }
      }
    }
    let any = false
    if (options.json && !follow) {
      const json = jsonArrayWriter(out)
      for (const p of pages()) {
        for (const l of p) json.item(l)
        out.flush()
      }
      json.end()
      return 0
    }
    for (const p of pages()) {
      any = true
      print(p)
      out.flush()
    }
    if (!follow) {
      if (!any) io.out(noLines(agent, filtered))
      return 0
    }
    return followLog(reader, filtered ? matches : null, (lines) => {
      print(lines)
      out.flush()
    })
  },
}

function noLines(agent, filtered) {
  return `No audit lines for agent "${agent.name}" (${agent.id})${filtered ? ' that match' : ''}`
}

/** Prints new lines as they come until SIGINT (or SIGTERM): resolves to the exit code, 130. */
function followLog(reader, matches, print) {
  return new Promise((resolve) => {
    let timer = null
    const stop = () => {
      clearTimeout(timer)
      process.removeListener('SIGINT', stop)
      process.removeListener('SIGTERM', stop)
      resolve(130)
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    const look = () => {
      if (reader.poll() > 0) {
        for (let p; (p = reader.next(PAGE)); ) {
          const m = matches ? p.filter(matches) : p
          if (m.length > 0) print(m)
        }
      }
      timer = setTimeout(look, FOLLOW_MS)
    }
    timer = setTimeout(look, FOLLOW_MS)
  })
}

module.exports = { log }
