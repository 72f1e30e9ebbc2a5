'use strict'
// `rotifer agent memory list` and `rotifer agent memory delete`: the deployer's view of an
// agent's memory (R-HOST-2). Both ignore access policies and never show values; every deletion
// is logged by the memory API with actor "deployer". There is deliberately no command that
// edits entries.

const memory = require('../../../index.js')
const { UsageError } = require('../errors')
const { findAgent, ensureAgentMemory } = require('../agents')
const { geneNamesById } = require('../project')
const { formatBytes, printable, table } = require('../format')

const list = {
  name: 'agent memory list',
  summary: "list an agent's memory entries (never their values)",
  usage: 'rotifer agent memory list <agent> [--category <C>] [--json]',
  description: [
    "Lists the agent's live memory entries by key: key, category, size (UTF-8 bytes of key and",
    'value), the v2 id of the gene that created it (with its name when that gene is in genes/),',
    'and when it was last updated. Values are never shown. <agent> is the agent\'s name or id.',
  ],
  positionals: ['agent'],
  options: {
    category: { type: 'string', value: '<C>', help: 'only entries of this category: PREFERENCE, PATTERN, CONTEXT or CACHE' },
    json: { type: 'boolean', help: 'print a JSON array of { key, category, size, createdBy, createdByGene, updatedAt }' },
  },
  examples: ['rotifer agent memory list my-agent', 'rotifer agent memory list my-agent --category CACHE --json'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    ensureAgentMemory(root, agent, io)
    const entries = memory.listAgentMemory({ agentId: agent.id, root, category: options.category })
    const names = geneNamesById(root)
    if (options.json) {
      const rows = entries.map((e) => ({ ...e, createdByGene: names.get(e.createdBy) || null }))
      io.out(JSON.stringify(rows, null, 2))
      return 0
    }
    const total = entries.reduce((sum, e) => sum + e.size, 0)
    const scope = options.category ? ` in ${options.category}` : ''
    const quota = typeof agent.memoryQuota === 'number' ? ` of ${formatBytes(agent.memoryQuota)} quota` : ''
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
  summary: "delete one entry by key, or every entry of a category, from an agent's memory",
  usage: 'rotifer agent memory delete <agent> (--key <K> | --category <C>)',
  description: [
    'Deletes the entry with key K, or every entry of category C, whoever created them and',
    'whatever their access policy, and prints how many were deleted. Give exactly one of --key',
    'and --category. Deleting a key that does not exist fails with MEMORY_NOT_FOUND. Each',
    'deletion is recorded in .rotifer/audit.jsonl with actor "deployer".',
  ],
  positionals: ['agent'],
  options: {
    key: { type: 'string', value: '<K>', help: 'the key of the entry to delete' },
    category: { type: 'string', value: '<C>', help: 'delete every entry of this category: PREFERENCE, PATTERN, CONTEXT or CACHE' },
  },
  examples: ['rotifer agent memory delete my-agent --key formatter/indent', 'rotifer agent memory delete my-agent --category CACHE'],

  async run({ positionals, options, root, io }) {
    const hasKey = options.key !== undefined
    const hasCategory = options.category !== undefined
    if (hasKey === hasCategory) {
      throw new UsageError('give exactly one of --key <K> and --category <C>', 'agent memory delete')
    }
    const agent = findAgent(root, positionals.agent)
    ensureAgentMemory(root, agent, io)
    const n = memory.deleteAgentMemory({ agentId: agent.id, root, ...(hasKey ? { key: options.key } : { category: options.category }) })
    const what = hasKey ? `key "${printable(options.key)}"` : `category ${options.category}`
    io.out(`Deleted ${count(n)} (${what}) from agent "${agent.name}"`)
    return 0
  },
}

function count(n) {
  return `${n} ${n === 1 ? 'entry' : 'entries'}`
}

module.exports = { list, delete: del }
