'use strict'
// `rotifer agent memory export` and `rotifer agent memory import`: moving an agent's memory to
// another binding (R-MIG). The bundle format, its checks and the import transaction are the
// memory API's (exportAgentMemory, importAgentMemory); these commands read and name files.

const fs = require('node:fs')
const path = require('node:path')
const memory = require('../../../index.js')
const { CliError } = require('../errors')
const { findAgent, ensureAgentMemory } = require('../agents')
const { formatSize } = require('../format')
const { confirm, progress } = require('../interactive')

const ON_CONFLICT = ['fail', 'skip', 'replace']

function count(n) {
  return `${n} ${n === 1 ? 'entry' : 'entries'}`
}

/** Why a file cannot be read, in words. */
function readFailure(e) {
  const why = { ENOENT: 'no such file', EISDIR: 'it is a folder', EACCES: 'permission denied' }[e.code]
  return why ? `${why} (${e.code})` : e.code || e.message
}

/**
 * The memory API's words for the import option, as the command line spells it:
 * `onConflict "skip"` becomes `--on-conflict skip`.
 */
function cliWords(message) {
  if (!message.includes('onConflict')) return message
  return message.replace(/(onConflict )?"(fail|skip|replace)"/g, '--on-conflict $2').replace(/\bonConflict\b/g, '--on-conflict')
}

/** The header line of a bundle (the memory API made it, so it parses). */
function headerOf(bundle) {
  const end = bundle.indexOf(10)
  return JSON.parse(bundle.subarray(0, end).toString('utf8'))
}

const exportCommand = {
  name: 'agent memory export',
  summary: "write an agent's memory to a bundle file, to import it elsewhere",
  usage: 'rotifer agent memory export <agent> [--output <file>] [--include-cache]',
  description: [
    "Writes the agent's live PREFERENCE, PATTERN and CONTEXT entries (and CACHE entries with",
    '--include-cache) as a bundle: JSON Lines, a header with the data policy, counts per category',
    'and the SHA-256 of the entries, then one line per entry with its value in base64, creator,',
    'policies and times. Expired entries are never exported. With --output the file is written',
    'under a temporary name and renamed (mode 0600); without it the bundle goes to stdout.',
    'The bundle holds the values: keep it as private as the memory itself. At a terminal, a',
    'progress line on stderr says what is being exported while it runs.',
  ],
  positionals: ['agent'],
  options: {
    output: { type: 'string', value: '<file>', help: 'write the bundle to this file (replaced if it exists) instead of stdout' },
    'include-cache': { type: 'boolean', help: 'export CACHE entries too (by default they stay behind and are recomputed)' },
  },
  examples: ['rotifer agent memory export my-agent --output my-agent.memory.jsonl'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    const output = options.output === undefined ? undefined : path.resolve(options.output)
    const bar = progress()
    const usage = process.stderr.isTTY ? memory.inspectAgentMemory({ agentId: agent.id, root }) : null
    if (usage) {
      const cats = Object.entries(usage.categories).filter(([c]) => c !== 'CACHE' || options['include-cache'] === true)
      const n = cats.reduce((sum, [, c]) => sum + c.entries, 0)
      const bytes = cats.reduce((sum, [, c]) => sum + c.bytes, 0)
      bar.step(`Exporting ${count(n)} (${formatSize(bytes)}) of agent "${agent.name}"${output ? ` to ${output}` : ''}…`)
    }
    let bundle
    try {
      bundle = memory.exportAgentMemory({ agentId: agent.id, root, includeCache: options['include-cache'] === true, output })
    } finally {
      bar.done()
    }
    const { counts } = headerOf(bundle)
    const summary = Object.entries(counts).map(([c, n]) => `${c} ${n}`).join(', ')
    const total = Object.values(counts).reduce((a, b) => a + b, 0)
    if (output === undefined) {
      // io.out ends the text with the bundle's own last newline: the bytes stay exact.
      io.out(bundle.subarray(0, bundle.length - 1).toString('utf8'))
      io.err(`Exported ${count(total)} of agent "${agent.name}" (${summary})`)
    } else {
      io.out(`Exported ${count(total)} of agent "${agent.name}" to ${output} (${summary}; ${formatSize(bundle.length)})`)
    }
    return 0
  },
}

const importCommand = {
  name: 'agent memory import',
  summary: "import a bundle into an agent's memory, all or nothing",
  usage: 'rotifer agent memory import <agent> <file> [--on-conflict fail|skip|replace] [--yes] [--json]',
  description: [
    'Imports a bundle made by rotifer agent memory export. The header, the checksum and every entry',
    "are checked first (as for a write, against the agent's data policy, and against its quota:",
    'import never evicts); then all entries land in one transaction, or none does. Creators,',
    'policies and times are kept; lastAccessedBy becomes the creator. Each entry is recorded in the',
    'agent\'s audit (memory.create or memory.update, actor "deployer"). Entries that expired',
    'since the export are left out. A refused bundle is reported with its line and the reason.',
    'At a terminal, a progress line on stderr says what is being imported (not with --json).',
    '--on-conflict replace overwrites entries: at a terminal it asks first (--yes does not ask);',
    'without one (a script, stdin not a terminal) it needs --yes (exit 2 without it).',
  ],
  positionals: ['agent', 'file'],
  options: {
    'on-conflict': { type: 'string', value: '<mode>', choices: ON_CONFLICT, help: 'a key the agent has already: fail (default: refuse the import), skip (keep the agent\'s) or replace (take the bundle\'s; counted as updated)' },
    yes: { type: 'boolean', help: 'with --on-conflict replace: replace without asking (at a terminal it asks first; without one, --yes is required)' },
    json: { type: 'boolean', help: 'print { created, updated, skipped, expired } as JSON' },
  },
  examples: ['rotifer agent memory import my-agent my-agent.memory.jsonl', 'rotifer agent memory import my-agent bundle.jsonl --on-conflict skip', 'rotifer agent memory import my-agent bundle.jsonl --on-conflict replace --yes'],

  async run({ positionals, options, root, io }) {
    const onConflict = options['on-conflict'] === undefined ? 'fail' : options['on-conflict']
    const agent = findAgent(root, positionals.agent)
    if (onConflict === 'replace') {
      // Replacing overwrites the agent's entries: a person confirms, a script says --yes.
      await confirm({
        command: 'agent memory import',
        yes: options.yes,
        question: `Replace the entries of agent "${agent.name}" whose keys the bundle ${positionals.file} holds too?`,
        nothing: `nothing was imported into agent "${agent.name}" (--yes imports without asking)`,
      })
    }
    const bar = progress({ json: options.json })
    let bundle
    try {
      bar.step(`Reading the bundle ${positionals.file}…`)
      bundle = fs.readFileSync(positionals.file)
    } catch (e) {
      bar.done()
      throw new CliError(`cannot read the bundle ${positionals.file}: ${readFailure(e)}`)
    }
    // R-HOST-1: importing into a deleted database cannot lift the agent's limits.
    ensureAgentMemory(root, agent, io)
    const lines = bundle.reduce((n, b) => (b === 10 ? n + 1 : n), 0)
    bar.step(`Checking and importing ${count(Math.max(0, lines - 1))} (${formatSize(bundle.length)}) into agent "${agent.name}"…`)
    let r
    try {
      r = memory.importAgentMemory({ agentId: agent.id, root, bundle, onConflict })
    } catch (e) {
      if (e && e.name === 'MemoryError' && typeof e.message === 'string') e.message = cliWords(e.message)
      throw e
    } finally {
      bar.done()
    }
    if (options.json) {
      io.out(JSON.stringify(r, null, 2))
      return 0
    }
    // The words of --json: an entry the bundle replaced is "updated".
    const parts = [`${r.created} created`, `${r.updated} updated`]
    if (r.skipped) parts.push(`${r.skipped} skipped (the agent had those keys)`)
    if (r.expired) parts.push(`${r.expired} left out (expired since the export)`)
    io.out(`Imported ${count(r.created + r.updated)} into agent "${agent.name}": ${parts.join(', ')}`)
    return 0
  },
}

module.exports = { export: exportCommand, import: importCommand }
