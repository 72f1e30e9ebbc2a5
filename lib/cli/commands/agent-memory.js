'use strict'
// `rotifer agent memory list` and `rotifer agent memory delete`: the deployer's view of an
// agent's memory (R-HOST-2). Both ignore access policies and never show values; every deletion
// is logged by the memory API with actor "deployer". There is deliberately no command that
// edits entries.

const memory = require('../../../index.js')
const { UsageError } = require('../errors')
const { findAgent, ensureAgentMemory } = require('../agents')
const { geneNamesById } = require('../project')
const { formatQuota, formatSize, printable, truncate, useColor, bold } = require('../format')
const { lineWriter, jsonArrayWriter, streamTable, outputWidth, width } = require('../stream')
const { confirm, progress } = require('../interactive')

/** The categories `--category` accepts, in eviction-safe order. */
const CATEGORIES = ['PREFERENCE', 'PATTERN', 'CONTEXT', 'CACHE']

const list = {
  name: 'agent memory list',
  summary: "list an agent's memory entries (never their values)",
  usage: 'rotifer agent memory list <agent> [--category <C>] [--key-prefix <p>] [--limit <n>] [--wide] [--json]',
  description: [
    "Lists the agent's live memory entries by key: key, category, size (UTF-8 bytes of key and",
    'value), the v2 id of the gene that created it (with its name when that gene is in genes/),',
    'and when it was last updated (UTC). Values are never shown. <agent> is the agent\'s name or id.',
    'Lines fit the terminal (80 columns when stdout is not a terminal, or $COLUMNS): long keys',
    'and gene ids are shortened with "…", gene names left out if need be (--wide: in full).',
    'Entries are read and printed a page at a time, so the first lines come at once at any size;',
    'columns are as wide as the first page needs. The first line gives the count and bytes of',
    'every matching entry and the quota the memory database enforces, from the first page\'s read.',
  ],
  positionals: ['agent'],
  options: {
    category: { type: 'string', value: '<C>', choices: CATEGORIES, help: 'only entries of this category: PREFERENCE, PATTERN, CONTEXT or CACHE' },
    'key-prefix': { type: 'string', value: '<p>', help: 'only keys starting with these characters (a plain prefix, no wildcards)' },
    limit: { type: 'string', value: '<n>', help: 'only the first <n> entries by key' },
    wide: { type: 'boolean', help: 'full keys, gene ids and times, however wide the lines get' },
    json: { type: 'boolean', help: 'print a JSON array of { key, category, size, createdBy, createdByGene, updatedAt } (exact bytes, full ids)' },
  },
  examples: [
    'rotifer agent memory list my-agent',
    'rotifer agent memory list my-agent --category CACHE --json',
    'rotifer agent memory list my-agent --limit 20',
  ],

  async run({ positionals, options, root, io }) {
    const limit = options.limit === undefined ? Infinity : parseLimit(options.limit, 'agent memory list')
    const agent = findAgent(root, positionals.agent)
    ensureAgentMemory(root, agent, io)
    const names = geneNamesById(root)
    const select = { agentId: agent.id, root, category: options.category, keyPrefix: options['key-prefix'] }
    // The first page is small, so that the first lines come at once; the totals come with it.
    let page = memory.listAgentMemoryPage({ ...select, limit: Math.min(limit, FIRST_PAGE), totals: true })
    const first = page.entries
    let shown = first.length
    const later = function* () {
      while (page.more && shown < limit) {
        page = memory.listAgentMemoryPage({ ...select, after: page.entries[page.entries.length - 1].key, limit: Math.min(PAGE, limit - shown) })
        shown += page.entries.length
        yield page.entries
      }
    }
    const out = lineWriter(io)
    if (options.json) {
      const json = jsonArrayWriter(out)
      const put = (entries) => {
        for (const e of entries) json.item({ ...e, createdByGene: names.get(e.createdBy) || null })
      }
      put(first)
      out.flush()
      for (const entries of later()) put(entries)
      json.end()
      return 0
    }
    const totals = page.totals
    const prefix = options['key-prefix'] !== undefined ? ` with keys starting "${printable(options['key-prefix'])}"` : ''
    const scope = (options.category ? ` in ${options.category}` : '') + prefix
    const quota = totals.quota > 0 ? ` of ${formatQuota(totals.quota, { exact: false })} quota` : ''
    const part = totals.entries > limit ? `; the first ${limit} by key` : ''
    const head = `Agent "${agent.name}" (${agent.id})`
    const figures = `${count(totals.entries)}${scope}, ${formatBytesExact(totals.bytes)}${quota}${part}`
    // One line if it fits, else the figures on a line of their own.
    const wide = options.wide === true
    if (wide || width(`${head}: ${figures}`) <= outputWidth(process.stdout)) out.line(`${head}: ${figures}`)
    else out.line(`${head}\n${figures}`)
    if (first.length === 0) {
      out.flush()
      return 0
    }
    out.line('')
    const cells = entryCells(names, wide)
    const color = useColor(process.stdout)
    const t = streamTable(
      [{ header: 'KEY', grow: 1, middle: true }, { header: 'CATEGORY' }, { header: 'SIZE', right: true }, { header: 'CREATED BY', grow: 2 }, { header: wide ? 'UPDATED' : 'UPDATED (UTC)' }],
      first.map(cells),
      wide ? Infinity : outputWidth(process.stdout),
    )
    out.line(color ? bold(t.header()) : t.header())
    for (const e of first) out.line(t.row(cells(e)))
    out.flush()
    for (const entries of later()) for (const e of entries) out.line(t.row(cells(e)))
    out.flush()
    return 0
  },
}

/** Entries the first page holds: the table is laid out from them. */
const FIRST_PAGE = 200
/** Entries each later page holds. */
const PAGE = 5000

/** `--limit`: a whole number of at least 1. */
function parseLimit(text, command) {
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`invalid --limit ${JSON.stringify(text)}: give a whole number of at least 1`, command, { seeHelp: false })
  }
  return Number(text)
}

/** `17 bytes`, or `1.2 KB (1229 bytes)`: exact, and readable at a glance. */
function formatBytesExact(n) {
  return n < 1024 ? `${n} ${n === 1 ? 'byte' : 'bytes'}` : `${formatSize(n)} (${n} bytes)`
}

/** `v2:1a2b3c4d…`: enough of a v2 id to tell genes apart at a glance. */
function shortId(id) {
  return /^v2:[0-9a-f]{64}$/.test(id) ? `${id.slice(0, 11)}…` : id
}

/** A row of the table: the creator with its name when there is room for it, unless `wide`. */
function entryCells(names, wide) {
  const make = (id) => {
    if (wide) return names.has(id) ? `${id} (${names.get(id)})` : id
    return names.has(id) ? { long: `${shortId(id)} (${truncate(names.get(id), 24)})`, short: shortId(id) } : shortId(id)
  }
  // Few genes create many entries: each creator's cell is made once.
  const made = new Map()
  const creator = (id) => {
    let cell = made.get(id)
    if (cell === undefined) {
      cell = make(id)
      if (made.size < 10_000) made.set(id, cell)
    }
    return cell
  }
  return (e) => [e.key, e.category, formatSize(e.size), creator(e.createdBy), wide ? e.updatedAt : e.updatedAt.slice(0, 19).replace('T', ' ')]
}

const del = {
  name: 'agent memory delete',
  summary: "delete one entry by key, or every entry of a category or key prefix, from an agent's memory",
  usage: 'rotifer agent memory delete <agent> (--key <K> | --category <C> | --key-prefix <p>) [--yes] [--json]',
  description: [
    'Deletes the entry with key K, or every entry of category C, of key prefix p, or of both,',
    'whoever created them and whatever their access policy, and prints how many were deleted.',
    '--key goes alone. Deleting a key that does not exist fails with MEMORY_NOT_FOUND. At a',
    'terminal, a delete that matches more than one entry asks first (y to go ahead) and shows a',
    'progress line while it runs; --yes goes ahead without asking. Without a terminal (a script,',
    'stdin not a terminal) a delete by --category or --key-prefix needs --yes (exit 2 without it).',
    'Each deletion is recorded in .rotifer/audit.jsonl (on PostgreSQL, in the agent\'s audit rows',
    'on the server) with actor "deployer".',
  ],
  positionals: ['agent'],
  options: {
    key: { type: 'string', value: '<K>', help: 'the key of the entry to delete' },
    category: { type: 'string', value: '<C>', choices: CATEGORIES, help: 'delete every entry of this category: PREFERENCE, PATTERN, CONTEXT or CACHE' },
    'key-prefix': { type: 'string', value: '<p>', help: 'delete every entry whose key starts with these characters (a plain prefix, no wildcards)' },
    yes: { type: 'boolean', help: 'delete without asking (at a terminal, a delete of more than one entry asks first; without one, --category and --key-prefix need --yes)' },
    json: { type: 'boolean', help: 'print { deleted } (how many entries) as JSON' },
  },
  examples: [
    'rotifer agent memory delete my-agent --key formatter/indent',
    'rotifer agent memory delete my-agent --category CACHE',
    'rotifer agent memory delete my-agent --key-prefix session/ --yes',
  ],

  async run({ positionals, options, root, io }) {
    const hasKey = options.key !== undefined
    const hasCategory = options.category !== undefined
    const hasPrefix = options['key-prefix'] !== undefined
    if (hasKey ? hasCategory || hasPrefix : !hasCategory && !hasPrefix) {
      throw new UsageError('give --key <K> alone, or --category <C> and/or --key-prefix <p>', 'agent memory delete')
    }
    const agent = findAgent(root, positionals.agent)
    ensureAgentMemory(root, agent, io)
    const selection = hasKey ? { key: options.key } : { category: options.category, keyPrefix: options['key-prefix'] }
    const what = hasKey
      ? `key "${printable(options.key)}"`
      : [hasCategory ? `category ${options.category}` : null, hasPrefix ? `keys starting "${printable(options['key-prefix'])}"` : null].filter(Boolean).join(', ')
    const bar = progress({ json: options.json })
    if (!hasKey) {
      // A delete by category or prefix may take many entries. A person at a terminal confirms
      // one that matches more than one; without a terminal (a script) it needs --yes, whatever
      // it matches today, so a script does not start failing when the memory grows.
      if (!options.yes && !process.stdin.isTTY) {
        await confirm({ command: 'agent memory delete', yes: false, question: `Delete every entry of ${what} from agent "${agent.name}"?`, nothing: '' })
      }
      const wanted = !options.yes || process.stderr.isTTY
      const matching = wanted ? memory.listAgentMemory({ agentId: agent.id, root, ...selection }) : null
      if (matching && matching.length > 1) {
        const bytes = matching.reduce((sum, e) => sum + e.size, 0)
        await confirm({
          command: 'agent memory delete',
          yes: options.yes,
          question: `Delete ${count(matching.length)} (${what}, ${formatSize(bytes)}) from agent "${agent.name}"?`,
          nothing: `nothing was deleted from agent "${agent.name}" (--yes deletes without asking)`,
        })
        bar.step(`Deleting ${count(matching.length)} (${formatSize(bytes)}) from agent "${agent.name}"…`)
      }
    }
    let n
    try {
      n = memory.deleteAgentMemory({ agentId: agent.id, root, ...selection })
    } finally {
      bar.done()
    }
    if (options.json) io.out(JSON.stringify({ deleted: n }, null, 2))
    else io.out(`Deleted ${count(n)} (${what}) from agent "${agent.name}"`)
    return 0
  },
}

function count(n) {
  return `${n} ${n === 1 ? 'entry' : 'entries'}`
}

module.exports = { list, delete: del, parseLimit, shortId }
