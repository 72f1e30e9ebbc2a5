'use strict'
// `rotifer agent memory backup` and `rotifer agent memory restore` (R-HOST-1b): a consistent copy
// of an agent's memory made while it is in use, and that copy put back as one change that every
// process with the agent open sees. The copy and its checks are the memory API's
// (backupAgentMemory, restoreAgentMemory); these commands name files and confirm.

const path = require('node:path')
const memory = require('../../../index.js')
const { UsageError } = require('../errors')
const { findAgent, ensureAgentMemory } = require('../agents')
const { formatSize } = require('../format')

function count(n) {
  return `${n} ${n === 1 ? 'entry' : 'entries'}`
}

const backup = {
  name: 'agent memory backup',
  summary: "copy an agent's memory to a file, consistently, while it is in use",
  usage: 'rotifer agent memory backup <agent> <file> [--json]',
  description: [
    "Writes a consistent copy of the agent's memory database to <file> with SQLite's online",
    'backup: one snapshot, taken while other processes may be using the agent. The copy is one',
    'standalone file (mode 0600, no WAL beside it), written under a temporary name and then',
    'moved into place; an existing <file> is never replaced. It holds the values: keep it as',
    'private as the memory itself. Put it back with rotifer agent memory restore.',
  ],
  positionals: ['agent', 'file'],
  options: {
    json: { type: 'boolean', help: 'print { entries, used, bytes } as JSON' },
  },
  examples: ['rotifer agent memory backup my-agent backups/my-agent-2026-12-01.db'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    ensureAgentMemory(root, agent, io)
    const file = path.resolve(positionals.file)
    const r = memory.backupAgentMemory({ agentId: agent.id, root, file })
    if (options.json) {
      io.out(JSON.stringify(r, null, 2))
      return 0
    }
    io.out(`Backed up ${count(r.entries)} (${formatSize(r.used)}) of agent "${agent.name}" to ${file} (${formatSize(r.bytes)})`)
    return 0
  },
}

const restore = {
  name: 'agent memory restore',
  summary: "replace an agent's memory with a backup, as one change",
  usage: 'rotifer agent memory restore <agent> <file> [--yes] [--json]',
  description: [
    "Replaces every entry of the agent with those of a backup made by rotifer agent memory",
    'backup, in one transaction: every process that has the agent open sees the restored memory',
    "at its next call. The backup is checked first (that it is this agent's, every entry, the",
    "agent's data policy and quota: a restore evicts nothing); a refused backup changes nothing.",
    'The agent keeps its quota and data policy; entries that expired by its rules are left out.',
    'The restore is recorded in .rotifer/audit.jsonl (memory.restore, actor "deployer"). When',
    'stdin is a terminal, --yes is needed. Never copy a backup over the database file by hand',
    'while the agent may be in use: use this command.',
  ],
  positionals: ['agent', 'file'],
  options: {
    yes: { type: 'boolean', help: "confirm that the agent's entries are replaced (needed when stdin is a terminal)" },
    json: { type: 'boolean', help: 'print { entries, replaced, expired, used } as JSON' },
  },
  examples: ['rotifer agent memory restore my-agent backups/my-agent-2026-12-01.db --yes'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    const file = path.resolve(positionals.file)
    if (process.stdin.isTTY && !options.yes) {
      // A person at a terminal confirms that the entries are replaced; scripts are not asked.
      throw new UsageError(`this replaces every entry of agent "${agent.name}" with the backup ${file}; add --yes to confirm`, 'agent memory restore', { seeHelp: false })
    }
    // R-HOST-1: a restore into a deleted database cannot lift the agent's limits.
    ensureAgentMemory(root, agent, io)
    const r = memory.restoreAgentMemory({ agentId: agent.id, root, file })
    if (options.json) {
      io.out(JSON.stringify(r, null, 2))
      return 0
    }
    const expired = r.expired ? `; ${count(r.expired)} of the backup had expired and were left out` : ''
    io.out(`Restored ${count(r.entries)} (${formatSize(r.used)}) into agent "${agent.name}" from ${file}, replacing ${count(r.replaced)}${expired}`)
    return 0
  },
}

module.exports = { backup, restore }
