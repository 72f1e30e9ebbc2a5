'use strict'
// `rotifer agent list` and `rotifer agent show`: the deployer's view of agents, with the memory
// figures their databases enforce (inspectAgentMemory). Nothing here changes anything.

const memory = require('../../../index.js')
const { readAgents, findAgent } = require('../agents')
const { describeComposition } = require('../../formats/composition')
const { describeError } = require('../errors')
const { formatQuota, printable, table } = require('../format')

/** The agent's memory usage, `null` if its memory was never created, or `{ error }`. */
function usageOf(root, agent) {
  try {
    return memory.inspectAgentMemory({ agentId: agent.id, root })
  } catch (e) {
    // One damaged database must not hide the other agents.
    return { error: describeError(e) }
  }
}

function memoryCell(usage) {
  if (usage === null) return 'not created'
  if (usage.error) return `unavailable (${usage.error.split(':')[0]})`
  return `${usage.used} bytes / ${formatQuota(usage.quota, { exact: false })}`
}

function policyText(p) {
  return `anonymization ${p.anonymizationSupported ? 'supported' : 'not supported'}, ` +
    (p.maxRetentionDays === null ? 'no retention limit' : `entries kept at most ${p.maxRetentionDays} days`)
}

const list = {
  name: 'agent list',
  summary: 'list the agents of this project with their memory use',
  usage: 'rotifer agent list [--json]',
  description: [
    'Lists every agent of the project: name, id, genes, composition, memory used and the quota',
    "its database enforces, and its number of memory entries (expired ones do not count).",
  ],
  positionals: [],
  options: {
    json: { type: 'boolean', help: 'print a JSON array of { id, name, genome, composition, memory } (memory: the figures of inspectAgentMemory, or null)' },
  },
  examples: ['rotifer agent list', 'rotifer agent list --json'],

  async run({ root, options, io }) {
    const agents = readAgents(root)
    const rows = agents.map((a) => ({ agent: a, usage: usageOf(root, a) }))
    if (options.json) {
      io.out(JSON.stringify(rows.map(({ agent, usage }) => ({
        id: agent.id,
        name: agent.name,
        genome: agent.genome,
        composition: agent.composition === undefined ? 'Seq' : agent.composition,
        memory: usage && usage.error ? null : usage,
        ...(usage && usage.error ? { memoryError: usage.error } : {}),
      })), null, 2))
      return 0
    }
    if (agents.length === 0) {
      io.out(`No agents in ${root}; create one with: rotifer agent create <name> --genes <gene…>`)
      return 0
    }
    io.out(table(['NAME', 'ID', 'GENES', 'COMPOSITION', 'MEMORY', 'ENTRIES'], rows.map(({ agent, usage }) => [
      agent.name,
      agent.id,
      agent.genome.join(', '),
      describeComposition(agent.plan),
      memoryCell(usage),
      usage && !usage.error ? String(usage.entries) : '-',
    ])))
    return 0
  },
}

const show = {
  name: 'agent show',
  summary: "show an agent's record, data policy and memory use per category",
  usage: 'rotifer agent show <agent> [--json]',
  description: [
    "Shows the agent's record (id, name, genes, composition, creation time), the data policy and",
    'quota its memory database enforces, and per category: entries, bytes, evictable bytes (what',
    'eviction could free; PREFERENCE is never evicted) and the nearest expiry. <agent> is the',
    "agent's name or id. Reading changes nothing and is not audited.",
  ],
  positionals: ['agent'],
  options: {
    json: { type: 'boolean', help: 'print { agent: <record>, memory: <figures of inspectAgentMemory, or null> }' },
  },
  examples: ['rotifer agent show my-agent', 'rotifer agent show my-agent --json'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    const usage = memory.inspectAgentMemory({ agentId: agent.id, root })
    if (options.json) {
      io.out(JSON.stringify({ agent, memory: usage }, null, 2))
      return 0
    }
    io.out(`Agent "${agent.name}"`)
    io.out(`  id            ${agent.id}`)
    io.out(`  genome        ${agent.genome.join(', ')}`)
    io.out(`  composition   ${printable(describeComposition(agent.plan))}`)
    if (agent.createdAt) io.out(`  created       ${printable(agent.createdAt)}`)
    if (usage === null) {
      if (agent.dataPolicy) io.out(`  data policy   ${policyText(agent.dataPolicy)} (from the record)`)
      io.out('  memory        not created yet')
      return 0
    }
    const percent = usage.quota > 0 ? ` (${((usage.used / usage.quota) * 100).toFixed(1)}%)` : ''
    io.out(`  data policy   ${policyText(usage.dataPolicy)}`)
    io.out(`  memory        ${usage.used} bytes used of ${formatQuota(usage.quota)}${percent}, ` +
      `${usage.entries} ${usage.entries === 1 ? 'entry' : 'entries'}, ${usage.evictableBytes} bytes evictable`)
    io.out('')
    io.out(table(['CATEGORY', 'ENTRIES', 'BYTES', 'EVICTABLE', 'NEXT EXPIRY'], Object.entries(usage.categories).map(([name, c]) => [
      name, String(c.entries), String(c.bytes), String(c.evictableBytes), c.nextExpiry || '-',
    ])))
    return 0
  },
}

module.exports = { list, show, describeComposition }
