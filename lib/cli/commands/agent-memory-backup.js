'use strict'
// `rotifer agent memory backup` and `rotifer agent memory restore` (R-HOST-1b): a consistent copy
// of an agent's memory made while it is in use, and that copy put back as one change that every
// process with the agent open sees. The copy and its checks are the memory API's
// (backupAgentMemory, restoreAgentMemory); these commands name files and confirm.

const fs = require('node:fs')
const path = require('node:path')
const memory = require('../../../index.js')
const { CliError } = require('../errors')
const { findAgent, ensureAgentMemory } = require('../agents')
const { formatSize } = require('../format')
const { confirm, progress } = require('../interactive')

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
    'private as the memory itself. Put it back with rotifer agent memory restore. At a terminal,',
    'a progress line on stderr says what is being copied (not with --json). An agent on PostgreSQL',
    'is copied from one snapshot of its rows into the same kind of file: either restores into either.',
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
    const bar = progress({ json: options.json })
    const usage = process.stderr.isTTY && !options.json ? memory.inspectAgentMemory({ agentId: agent.id, root }) : null
    if (usage) bar.step(`Backing up agent "${agent.name}" (${count(usage.entries)}, ${formatSize(usage.used)}) to ${file}…`)
    let r
    try {
      r = memory.backupAgentMemory({ agentId: agent.id, root, file })
    } finally {
      bar.done()
    }
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
    'The restore is recorded in the agent\'s audit (memory.restore, actor "deployer"). At a',
    'terminal it asks first (y to go ahead; --yes does not ask) and shows a progress line on',
    'stderr; without one (a script, stdin not a terminal) it needs --yes (exit 2 without it). Never copy a backup over the',
    'database file by hand while the agent may be in use: use this command.',
  ],
  positionals: ['agent', 'file'],
  options: {
    yes: { type: 'boolean', help: "replace the agent's entries without asking (at a terminal, restore asks first; without one, --yes is required)" },
    json: { type: 'boolean', help: 'print { entries, replaced, expired, used } as JSON' },
  },
  examples: ['rotifer agent memory restore my-agent backups/my-agent-2026-12-01.db --yes'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    const file = path.resolve(positionals.file)
    let size
    try {
      size = fs.statSync(file).size
    } catch (e) {
      throw new CliError(`the backup ${file} cannot be read: ${e.code === "ENOENT" ? "no such file (ENOENT)" : e.code || e.message}; nothing was restored`)
    }
    // A person at a terminal confirms that the entries are replaced; a script must say --yes.
    await confirm({
      command: 'agent memory restore',
      yes: options.yes,
      question: `Replace every entry of agent "${agent.name}" with the backup ${file} (${formatSize(size)})?`,
      nothing: `agent "${agent.name}" was left as it was (--yes restores without asking)`,
    })
    // R-HOST-1: a restore into a deleted database cannot lift the agent's limits.
    ensureAgentMemory(root, agent, io)
    const bar = progress({ json: options.json })
    bar.step(`Restoring agent "${agent.name}" from ${file} (${formatSize(size)})…`)
    let r
    try {
      r = memory.restoreAgentMemory({ agentId: agent.id, root, file })
    } finally {
      bar.done()
    }
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
