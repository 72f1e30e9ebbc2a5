'use strict'
// `rotifer agent memory list` and `rotifer agent memory delete`: the deployer's view of an
// agent's memory (R-HOST-2). Both ignore access policies and never show values; every deletion
// is logged by the memory API with actor "deployer". There is deliberately no command that
// edits entries.

const memory = require('../../../index.js')
const { UsageError } = require('../errors')
const { findAgent } = require('../agents')
const { geneNamesById } = require('../project')
const { formatBytes, printable, table } = require('../format')

const list = {
  name: 'agent memory list',
  summary: "list an agent's memory entries (never their values)",
  usage: 'rotifer agent memory list <agent> [--category <C>] [--key-prefix <p>] [--json]',
  description: [
    "Lists the agent's live memory entries by key: key, category, size (UTF-8 bytes of key and",
    'value), the v2 id of the gene that created it (with its name when that gene is in genes/),',
    'and when it was last updated. Values are never shown. <agent> is the agent\'s name or id.',
    'The quota shown is the one the memory database enforces.',
  ],
  positionals: ['agent'],
  options: {
    category: { type: 'string', value: '<C>', help: 'only entries of this category: PREFERENCE, PATTERN, CONTEXT or CACHE' },
    'key-prefix': { type: 'string', value: '<p>', help: 'only keys starting with these characters (a plain prefix, no wildcards)' },
    json: { type: 'boolean', help: 'print a JSON array of { key, category, size, createdBy, createdByGene, updatedAt }' },
  },
  examples: ['rotifer agent memory list my-agent', 'rotifer agent memory list my-agent --category CACHE --json'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
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
    const quota = usage ? ` of ${formatBytes(usage.quota)} quota` : ''
    io.out(`Agent "${agent.name}" (${agent.id}): ${count(entries.length)}${scope}, ${total} bytes${quota}`)
    if (entries.length === 0) return 0
    io.out('')
    const rows = entries.map((e) => [
      e.key,
      e.category,
      String(e.size),
      names.has(e.createdBy) ? `${e.createdBy} (${names.get(e.createdBy)})` : e.createdBy,
      e.updatedAt,
    ])
    io.out(table(['KEY', 'CATEGORY', 'SIZE', 'CREATED BY', 'UPDATED'], rows))
    return 0
  },
}

const del = {
  name: 'agent memory delete',
  summary: "delete one entry by key, or every entry of a category or key prefix, from an agent's memory",
  usage: 'rotifer agent memory delete <agent> (--key <K> | --category <C> | --key-prefix <p>) [--yes]',
  description: [
    'Deletes the entry with key K, or every entry of category C, of key prefix p, or of both,',
    'whoever created them and whatever their access policy, and prints how many were deleted.',
    '--key goes alone. Deleting a key that does not exist fails with MEMORY_NOT_FOUND. When stdin',
    'is a terminal, a delete that matches more than one entry needs --yes. Each deletion is',
    'recorded in .rotifer/audit.jsonl with actor "deployer".',
  ],
  positionals: ['agent'],
  options: {
    key: { type: 'string', value: '<K>', help: 'the key of the entry to delete' },
    category: { type: 'string', value: '<C>', help: 'delete every entry of this category: PREFERENCE, PATTERN, CONTEXT or CACHE' },
    'key-prefix': { type: 'string', value: '<p>', help: 'delete every entry whose key starts with these characters (a plain prefix, no wildcards)' },
    yes: { type: 'boolean', help: 'confirm a delete of more than one entry (needed when stdin is a terminal)' },
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
    const selection = hasKey ? { key: options.key } : { category: options.category, keyPrefix: options['key-prefix'] }
    if (!hasKey && process.stdin.isTTY && !options.yes) {
      // A person at a terminal confirms a delete of several entries; scripts are not asked.
      const n = memory.listAgentMemory({ agentId: agent.id, root, ...selection }).length
      if (n > 1) throw new UsageError(`this deletes ${n} entries; add --yes to confirm`, 'agent memory delete', { seeHelp: false })
    }
    const n = memory.deleteAgentMemory({ agentId: agent.id, root, ...selection })
    const what = hasKey
      ? `key "${printable(options.key)}"`
      : [hasCategory ? `category ${options.category}` : null, hasPrefix ? `keys starting "${printable(options['key-prefix'])}"` : null].filter(Boolean).join(', ')
    io.out(`Deleted ${count(n)} (${what}) from agent "${agent.name}"`)
    return 0
  },
}

function count(n) {
  return `${n} ${n === 1 ? 'entry' : 'entries'}`
}

module.exports = { list, delete: del }
