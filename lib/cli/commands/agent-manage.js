'use strict'
// `rotifer agent update` and `rotifer agent delete`: the deployer changes an agent's memory
// limits, or removes the agent. The memory API does the work on the database
// (createAgentMemory reconfigures an existing one; deleteAgentDatabase audits, then removes it);
// these commands validate first and keep the agent record in step.

const fs = require('node:fs')
const path = require('node:path')
const memory = require('../../../index.js')
const { CliError, UsageError } = require('../errors')
const { findAgent, writeAgent, agentsDir, bindingOf, isSqlite } = require('../agents')
const { formatQuota, formatSize, policyText, plural, field, terminalWidth } = require('../format')
const { MAX_RETENTION_DAYS } = require('../../formats/agent-record')
const { fitnessFile } = require('../../formats/fitness-state')
const { confirm, progress } = require('../interactive')

const describePolicy = policyText

const update = {
  name: 'agent update',
  needsProject: true,
  summary: "change an agent's memory quota and data policy",
  usage: 'rotifer agent update <agent> [--memory-quota <size>] [--allow-anonymization | --no-allow-anonymization] [--max-retention-days <N>|none]',
  description: [
    "Reconfigures the agent's memory database with a new quota and/or data policy, as",
    'createAgentMemory does for an existing database, then writes the new memoryQuota and',
    "dataPolicy into the agent record (.rotifer/agents/<id>.json, whole or not at all). What is",
    'not given keeps its current value. Everything is checked first; if the database cannot be',
    'changed, nothing is. A quota below what the agent holds is allowed and evicts nothing: later',
    'writes make room (or are refused) as the quota says. A new retention limit applies to the',
    'entries written without a retention policy of their own. <agent> is its name or id.',
  ],
  positionals: ['agent'],
  options: {
    'memory-quota': { type: 'string', value: '<size>', help: 'the new quota: a number and KB, MB or GB (1 KB = 1024 bytes), e.g. 512KB, 50MB, 1.5GB; more than 0, at most 1024GB' },
    'allow-anonymization': { type: 'boolean', help: 'the data policy supports anonymization (entries may be written with sharePolicy ANONYMIZED_SHARE or KNOWLEDGE_GENE)' },
    'no-allow-anonymization': { type: 'boolean', help: 'the data policy does not support anonymization' },
    'max-retention-days': { type: 'string', value: '<N>|none', help: `the data policy keeps entries at most N days (1 to ${MAX_RETENTION_DAYS}); none: no limit` },
  },
  examples: [
    'rotifer agent update my-agent --memory-quota 50MB',
    'rotifer agent update my-agent --no-allow-anonymization --max-retention-days 30',
    'rotifer agent update my-agent --max-retention-days none',
  ],

  async run({ positionals, options, root, io }) {
    const usage = (msg) => new UsageError(msg, 'agent update', { seeHelp: false })
    // Validate everything before changing anything.
    const allow = options['allow-anonymization'] === true
    const deny = options['no-allow-anonymization'] === true
    const quotaText = options['memory-quota']
    const daysText = options['max-retention-days']
    if (quotaText === undefined && !allow && !deny && daysText === undefined) {
      throw usage('nothing to change: give --memory-quota <size>, --allow-anonymization or --no-allow-anonymization, and/or --max-retention-days <N>|none')
    }
    if (allow && deny) throw usage('give --allow-anonymization or --no-allow-anonymization, not both')
    let quota
    if (quotaText !== undefined) {
      try {
        quota = memory.parseMemoryQuota(quotaText)
      } catch (e) {
        // The memory API's message names the accepted forms (R-QUO-2).
        if (e.code === 'MEMORY_INVALID_INPUT') throw usage(`invalid --memory-quota: ${e.message}`)
        throw e
      }
    }
    let days
    if (daysText !== undefined) {
      const n = /^[0-9]+$/.test(daysText) ? Number(daysText) : NaN
      if (daysText === 'none') days = null
      else if (n >= 1 && n <= MAX_RETENTION_DAYS) days = n
      else throw usage(`invalid --max-retention-days ${JSON.stringify(daysText)}: give a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or none for no limit`)
    }
    const agent = findAgent(root, positionals.agent)

    // What the database enforces now is the starting point (it may differ from the record if an
    // earlier update changed the database and could not write the record): each option given
    // replaces its value, the others are kept.
    const current = memory.inspectAgentMemory({ agentId: agent.id, root })
    const base = current ? { quota: current.quota, dataPolicy: current.dataPolicy } : { quota: agent.memoryQuota, dataPolicy: agent.dataPolicy }
    const newQuota = quota === undefined ? base.quota : quota
    const dataPolicy = {
      anonymizationSupported: allow ? true : deny ? false : base.dataPolicy.anonymizationSupported,
      maxRetentionDays: days === undefined ? base.dataPolicy.maxRetentionDays : days,
    }

    // The database first: if it cannot be changed, the record is not written either.
    memory.createAgentMemory({ agentId: agent.id, root, quota: newQuota, dataPolicy })
    const record = { ...agent, memoryQuota: newQuota, dataPolicy }
    try {
      writeAgent(root, record)
    } catch (e) {
      throw new CliError(`the memory database of agent "${agent.name}" now has quota ${formatQuota(newQuota)} and data policy ` +
        `"${describePolicy(dataPolicy)}", but its record could not be updated (${e.message}); run the same command again to update the record`)
    }
    const after = memory.inspectAgentMemory({ agentId: agent.id, root })
    const width = terminalWidth(process.stdout, Infinity)
    io.out(`Updated agent "${agent.name}" (${agent.id})`)
    io.out(field('memory quota', formatQuota(after.quota), width))
    io.out(field('data policy', describePolicy(after.dataPolicy), width))
    const over = after.used > after.quota ? ' (over the quota: nothing was evicted; later writes make room or are refused)' : ''
    io.out(field('usage', `${formatSize(after.used)} in ${plural(after.entries, 'entry', 'entries')}${over}`, width))
    return 0
  },
}

const del = {
  name: 'agent delete',
  needsProject: true,
  summary: 'delete an agent: its record and, unless --keep-memory, its memory',
  usage: 'rotifer agent delete <agent> [--keep-memory] [--yes]',
  description: [
    "Deletes the agent's record (.rotifer/agents/<id>.json) and its fitness state, and, unless",
    '--keep-memory, its memory: the database <id>.db and every companion file (-wal, -shm,',
    '-lineage and any *.orphaned-* moved aside). The deletion of the memory is recorded in',
    '.rotifer/audit.jsonl first (memory.drop, actor "deployer"); if that line cannot be written,',
    'nothing is removed. A process that still has the agent open fails its next memory call with',
    'MEMORY_STORAGE_ERROR instead of writing into the deleted database. The memory goes before the',
    'record: if it cannot all be removed, the record stays and running the command again finishes.',
    'At a terminal it asks first (y to go ahead; --yes does not ask); without one (a script,',
    'stdin not a terminal) it needs --yes (exit 2 without it). <agent> is its name or id.',
    "On PostgreSQL the memory is the agent's rows on the server (entries and audit rows), dropped",
    'after the memory.drop line is written to .rotifer/audit.jsonl.',
  ],
  positionals: ['agent'],
  options: {
    'keep-memory': { type: 'boolean', help: "keep the agent's memory database (only the record goes)" },
    yes: { type: 'boolean', help: 'delete without asking (at a terminal, delete asks first; without one, --yes is required)' },
  },
  examples: ['rotifer agent delete my-agent --yes', 'rotifer agent delete my-agent --keep-memory --yes'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    const keep = options['keep-memory'] === true
    // Where the memory is, read while the record (which may say) is still there.
    const binding = bindingOf(root, agent)
    // A person at a terminal confirms; a script must say --yes.
    const what = keep ? 'its record (its memory is kept)' : 'its record and its memory'
    await confirm({
      command: 'agent delete',
      yes: options.yes,
      question: `Delete agent "${agent.name}" (${agent.id}): ${what}?`,
      nothing: `agent "${agent.name}" was not deleted (--yes deletes without asking)`,
    })
    let dropped = null
    if (!keep) {
      const bar = progress()
      bar.step(`Deleting the memory of agent "${agent.name}"…`)
      try {
        dropped = memory.deleteAgentDatabase({ agentId: agent.id, root })
      } finally {
        bar.done()
      }
    }
    const dir = agentsDir(root)
    const file = path.join(dir, `${agent.id}.json`)
    try {
      fs.rmSync(file, { force: true })
    } catch (e) {
      const done = dropped ? 'its memory was deleted, but ' : ''
      throw new CliError(`agent "${agent.name}": ${done}${file} could not be removed (${e.message}); remove it by hand or run the command again`)
    }
    // A TryPool's fitness state goes with its agent (a name that would leave the folder has none).
    let fitness = null
    try {
      fitness = fitnessFile(dir, agent.name)
    } catch {}
    if (fitness) fs.rmSync(fitness, { force: true })
    io.out(`Deleted agent "${agent.name}" (${agent.id})`)
    const onFile = isSqlite(binding)
    if (keep) {
      io.out(`  memory kept   ${onFile ? `.rotifer/memory/${agent.id}.db` : `on ${binding}`}`)
    } else if (dropped.existed) {
      const where = onFile ? plural(dropped.removed.length, 'file') : `its rows on ${binding}`
      io.out(`  memory        deleted: ${plural(dropped.entries, 'entry', 'entries')} (${formatSize(dropped.used)}), ${where}`)
    } else {
      io.out(`  memory        none (${onFile ? 'it had no database' : `it had no memory on ${binding}`})`)
    }
    return 0
  },
}

module.exports = { update, delete: del }
