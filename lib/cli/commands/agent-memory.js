'use strict'
// `rotifer agent memory list` and `rotifer agent memory delete`: the deployer's view of an
// agent's memory (R-HOST-2). Both ignore access policies and never show values; every deletion
// is logged by the memory API with actor "deployer". There is deliberately no command that
// edits entries.

const memory = require('../../../index.js')
const { UsageError } = require('../errors')
const { findAgent, ensureAgentMemory } = require('../agents')
const { geneNamesById } = require('../project')
const { formatQuota, formatSize, printable, table, truncate, useColor, bold } = require('../format')
const { confirm, progress } = require('../interactive')

/** The categories `--category` accepts, in eviction-safe order. */
const CATEGORIES = ['PREFERENCE', 'PATTERN', 'CONTEXT', 'CACHE']

const list = {
  name: 'agent memory list',
  summary: "list an agent's memory entries (never their values)",
  usage: 'rotifer agent memory list <agent> [--category <C>] [--key-prefix <p>] [--wide] [--json]',
  description: [
    "Lists the agent's live memory entries by key: key, category, size (UTF-8 bytes of key and",
    'value), the v2 id of the gene that created it (with its name when that gene is in genes/),',
    'and when it was last updated (UTC). Values are never shown. <agent> is the agent\'s name or id.',
    'Lines fit in 100 columns: long keys and gene ids are shortened with "…" (--wide: in full).',
    'The quota shown is the one the memory database enforces.',
  ],
  positionals: ['agent'],
  options: {
    category: { type: 'string', value: '<C>', help: 'only entries of this category: PREFERENCE, PATTERN, CONTEXT or CACHE' },
    'key-prefix': { type: 'string', value: '<p>', help: 'only keys starting with these characters (a plain prefix, no wildcards)' },
    wide: { type: 'boolean', help: 'full keys, gene ids and times, however wide the lines get' },
    json: { type: 'boolean', help: 'print a JSON array of { key, category, size, createdBy, createdByGene, updatedAt } (exact bytes, full ids)' },
  },
  examples: ['rotifer agent memory list my-agent', 'rotifer agent memory list my-agent --category CACHE --json'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    ensureAgentMemory(root, agent, io)
    const entries = memory.listAgentMemory({ agentId: agent.id, root, category: options.category, keyPrefix: options['key-prefix'] })
    const names = geneNamesById(root)
    if (options.json) {
      const rows = entries.map((e) => ({ ...e, createdByGene: names.get(e.createdBy) || null }))
      io.out(JSON.stringify(rows, null, 2))
      return 0
    }
    const total = entries.reduce((sum, e) => sum + e.size, 0)
    const prefix = options['key-prefix'] !== undefined ? ` with keys starting "${printable(options['key-prefix'])}"` : ''
    const scope = (options.category ? ` in ${options.category}` : '') + prefix
    // The quota the database enforces: createAgentMemory may have changed it since the record.
    const usage = memory.inspectAgentMemory({ agentId: agent.id, root })
    const quota = usage ? ` of ${formatQuota(usage.quota, { exact: false })} quota` : ''
    io.out(`Agent "${agent.name}" (${agent.id}): ${count(entries.length)}${scope}, ${formatBytesExact(total)}${quota}`)
    if (entries.length === 0) return 0
    io.out('')
    io.out(entryTable(entries, names, options.wide === true))
    return 0
  },
}

/** `17 bytes`, or `1.2 KB (1229 bytes)`: exact, and readable at a glance. */
function formatBytesExact(n) {
  return n < 1024 ? `${n} ${n === 1 ? 'byte' : 'bytes'}` : `${formatSize(n)} (${n} bytes)`
}

/** `v2:1a2b3c4d…`: enough of a v2 id to tell genes apart at a glance. */
function shortId(id) {
  return /^v2:[0-9a-f]{64}$/.test(id) ? `${id.slice(0, 11)}…` : id
}

/** The entries as a table: at most 100 columns (keys cut), unless `wide`. */
function entryTable(entries, names, wide) {
  const creator = (id) => {
    if (!names.has(id)) return wide ? id : shortId(id)
    return wide ? `${id} (${names.get(id)})` : `${shortId(id)} (${truncate(names.get(id), 24)})`
  }
  const rows = entries.map((e) => [
    e.key,
    e.category,
    formatSize(e.size),
    creator(e.createdBy),
    wide ? e.updatedAt : e.updatedAt.slice(0, 19).replace('T', ' '),
  ])
  const color = useColor(process.stdout)
  return table(['KEY', 'CATEGORY', 'SIZE', 'CREATED BY', wide ? 'UPDATED' : 'UPDATED (UTC)'], rows, {
    right: [2],
    maxWidth: wide ? Infinity : listWidth(process.stdout),
    shrink: 0,
    style: (line, n) => (n === 0 && color ? bold(line) : line),
  })
}

/** Lines of `agent memory list` stay within 100 columns, or the terminal's width if narrower. */
function listWidth(stream) {
  return stream.isTTY && stream.columns > 0 ? Math.min(100, stream.columns) : 100
}

const del = {
  name: 'agent memory delete',
  summary: "delete one entry by key, or every entry of a category or key prefix, from an agent's memory",
  usage: 'rotifer agent memory delete <agent> (--key <K> | --category <C> | --key-prefix <p>) [--yes]',
  description: [
    'Deletes the entry with key K, or every entry of category C, of key prefix p, or of both,',
    'whoever created them and whatever their access policy, and prints how many were deleted.',
    '--key goes alone. Deleting a key that does not exist fails with MEMORY_NOT_FOUND. At a',
    'terminal, a delete that matches more than one entry asks first (y to go ahead) and shows a',
    'progress line while it runs; --yes goes ahead without asking, and a script (stdin not a',
    'terminal) is never asked. Each deletion is recorded in .rotifer/audit.jsonl with actor',
    '"deployer".',
  ],
  positionals: ['agent'],
  options: {
    key: { type: 'string', value: '<K>', help: 'the key of the entry to delete' },
    category: { type: 'string', value: '<C>', choices: CATEGORIES, help: 'delete every entry of this category: PREFERENCE, PATTERN, CONTEXT or CACHE' },
    'key-prefix': { type: 'string', value: '<p>', help: 'delete every entry whose key starts with these characters (a plain prefix, no wildcards)' },
    yes: { type: 'boolean', help: 'delete without asking (at a terminal, a delete of more than one entry asks first)' },
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
    const bar = progress()
    if (!hasKey) {
      // A person at a terminal confirms a delete of several entries; scripts are not asked. The
      // entries are counted only for the question and the progress line.
      const wanted = (process.stdin.isTTY && !options.yes) || process.stderr.isTTY
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
    io.out(`Deleted ${count(n)} (${what}) from agent "${agent.name}"`)
    return 0
  },
}

function count(n) {
  return `${n} ${n === 1 ? 'entry' : 'entries'}`
}

module.exports = { list, delete: del }
