'use strict'
// The agent records' files: `.rotifer/agents/<id>.json`, one per agent (R-RUN-7); their format
// (upstream's shape plus `memoryQuota`, `dataPolicy` and `memoryUrl`) is
// lib/formats/agent-record.js's. Here too: where an agent's memory lives, as it is shown
// (R-BIND-1: never with a password).
// Like everything under `.rotifer/`, the folder is private (0700) and the files 0600, they are
// never reached through a symlink, and a record another user owns or may write is refused.

const fs = require('node:fs')
const path = require('node:path')
const { CliError, UsageError } = require('./errors')
const memory = require('../../index.js')
const { didYouMean } = require('./suggest')
const { writePrivateFile } = require('../private-file')
const { projectNote } = require('./project')
const { parseComposition, compositionOfGenes, leaves, CompositionError, KINDS, PAR_MERGES } = require('../formats/composition')
const { parseAgentRecord, formatAgentRecord, AgentRecordError, SQLITE } = require('../formats/agent-record')

/** Agent names follow the memory API's agent id rule, so a name is always safe to print. */
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function agentsDir(root) {
  return path.join(root, '.rotifer', 'agents')
}

/**
 * Refuses what another user owns or may write, as memory refuses its own files (docs/threat-model.md: threat
 * model): an agent record decides which genes run and with what quota.
 */
function refuseUntrusted(file, st) {
  const me = typeof process.geteuid === 'function' ? process.geteuid() : null
  if (me !== null && st.uid !== me) {
    throw new CliError(`${file} is owned by user id ${st.uid}, not by this process's user (id ${me}): agent records are trusted only when they are yours. If it is yours, chown it to you; if not, move it away`)
  }
  const mode = st.mode & 0o7777
  if (mode & 0o022) {
    throw new CliError(`${file} can be written by its group or by others (mode ${mode.toString(8).padStart(4, '0')}): run chmod go-w ${file}`)
  }
  if (st.isFile() && st.nlink > 1) {
    throw new CliError(`${file} has ${st.nlink} names (hard links): copy it and use the copy`)
  }
}

/** Creates `dir` 0700 if missing; an existing one must be a real folder, not a link, and ours. */
function ensurePrivateDir(dir) {
  try {
    fs.mkdirSync(dir, { mode: 0o700 })
  } catch (e) {
    if (e.code !== 'EEXIST') throw new CliError(`cannot create ${dir}: ${e.message}`)
  }
  const st = fs.lstatSync(dir)
  if (st.isSymbolicLink()) throw new CliError(`${dir} is a symlink; agent records are never followed through links`)
  if (!st.isDirectory()) throw new CliError(`${dir} exists and is not a folder`)
  refuseUntrusted(dir, st)
}

/**
 * The text of the agent record `file`, read without following a link; `null` if it is not a
 * regular file. A record someone else could have written is refused (`refuseUntrusted`).
 */
function readRecordText(file) {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
  try {
    const st = fs.fstatSync(fd)
    if (!st.isFile()) return null
    refuseUntrusted(file, st)
    return fs.readFileSync(fd, 'utf8')
  } finally {
    fs.closeSync(fd)
  }
}

/** Checks a name given to `rotifer agent create`. */
function checkAgentName(name) {
  if (!AGENT_NAME.test(name)) {
    throw new UsageError(`agent name ${JSON.stringify(name)} is not valid: use 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit`, 'agent create', { seeHelp: false })
  }
  // Agents are found by name or id; a name shaped like an id would be shadowed by that id.
  if (UUID.test(name)) throw new UsageError(`agent name ${JSON.stringify(name)} looks like an agent id; choose another name`, 'agent create', { seeHelp: false })
}

/**
 * Writes the record of a new agent. The file appears complete or not at all: it is written
 * under a temporary name, then renamed.
 */
function writeAgent(root, record) {
  ensurePrivateDir(path.join(root, '.rotifer'))
  ensurePrivateDir(agentsDir(root))
  const file = path.join(agentsDir(root), `${record.id}.json`)
  try {
    writePrivateFile(file, formatAgentRecord(record))
  } catch (e) {
    throw new CliError(`cannot write ${file}: ${e.message}`)
  }
  return file
}

/**
 * Every agent record of the project, read through lib/formats/agent-record.js: `{ agents,
 * invalid }`, where `invalid` holds `{ id, name, error }` for records with a wrong field (they
 * are an error only for the command that names them). Files that are not records are skipped.
 */
function readAgentFiles(root) {
  const dir = agentsDir(root)
  let files
  try {
    const st = fs.lstatSync(dir)
    if (st.isSymbolicLink()) throw new CliError(`${dir} is a symlink; agent records are never followed through links`)
    refuseUntrusted(dir, st)
    files = fs.readdirSync(dir)
  } catch (e) {
    if (e.code === 'ENOENT') return { agents: [], invalid: [] }
    if (e instanceof CliError) throw e
    throw new CliError(`cannot read ${dir}: ${e.message}`)
  }
  const agents = []
  const invalid = []
  for (const f of files.sort()) {
    if (!f.endsWith('.json') || f.startsWith('.') || f.endsWith('.fitness.json')) continue
    const id = f.slice(0, -'.json'.length)
    const file = path.join(dir, f)
    let text
    try {
      text = readRecordText(file)
    } catch (e) {
      if (e instanceof CliError) throw e
      if (e.code === 'ELOOP') throw new CliError(`${file} is a symlink; agent records are never followed through links: replace it with the file`)
      continue // unreadable (a permission): not an agent this command can use
    }
    if (text === null) continue
    try {
      const record = parseAgentRecord(text, file, id)
      if (record) agents.push(record)
    } catch (e) {
      if (!(e instanceof AgentRecordError)) throw e
      let name = null
      try {
        name = JSON.parse(text).name
      } catch {}
      invalid.push({ id, name, error: e })
    }
  }
  return { agents, invalid }
}

/** Every usable agent record of the project. */
function readAgents(root) {
  return readAgentFiles(root).agents
}

/** The agent whose id, or else whose name, is `ref`. */
function findAgent(root, ref) {
  const { agents, invalid } = readAgentFiles(root)
  const byId = agents.find((a) => a.id === ref)
  if (byId) return byId
  const badId = invalid.find((a) => a.id === ref)
  if (badId) throw badId.error
  const named = agents.filter((a) => a.name === ref)
  const badNamed = invalid.filter((a) => a.name === ref)
  if (named.length === 1 && badNamed.length === 0) return named[0]
  if (named.length === 0 && badNamed.length === 1) throw badNamed[0].error
  if (named.length + badNamed.length > 1) {
    named.push(...badNamed)
    throw new CliError(`agent name "${ref}" is ambiguous: ${named.length} agents have it (ids ${named.map((a) => a.id).join(', ')}); name the agent by its id`)
  }
  const suggestion = didYouMean(ref, agents.map((a) => a.name))
  const note = projectNote(root)
  const hint = suggestion || note ? '' : '; create one with: rotifer agent create <name> --genes <gene…>'
  throw new CliError(`no agent named or with id ${JSON.stringify(ref)} in ${root}${suggestion}${hint}${note}`)
}

/**
 * Where `agent`'s memory lives (R-BIND-1: its record's `memoryUrl`, ROTIFER_MEMORY_URL,
 * rotifer.json's `memory.url`, else the SQLite file), as every command shows it: `sqlite`, or
 * the PostgreSQL URL with its password replaced by `***`. Connects to nothing.
 */
function bindingOf(root, agent) {
  return memory.agentMemoryBinding({ agentId: agent.id, root })
}

const isSqlite = (binding) => binding === SQLITE

/**
 * `agent` as it may be printed: its `memoryUrl`, if it holds a URL, without its password (the
 * memory API's redaction, the one its messages use).
 */
function printableRecord(root, agent) {
  const url = agent.memoryUrl
  if (typeof url !== 'string' || url === '' || url === SQLITE) return agent
  return { ...agent, memoryUrl: memory.agentMemoryBinding({ agentId: agent.id, root, url }) }
}

/**
 * Call before a command opens `agent`'s memory (R-HOST-1): a memory that is missing (a database
 * deleted for a reset; a fresh clone where agent records are committed and databases are not;
 * on PostgreSQL, an agent without rows on the server) is created, empty, with the quota and
 * data policy of the agent's record, never the defaults. An existing memory is left exactly as
 * it is. A note on stderr says when one was created, and where.
 */
function ensureAgentMemory(root, agent, io) {
  let created
  try {
    created = memory.ensureAgentMemory({ agentId: agent.id, root, quota: agent.memoryQuota, dataPolicy: agent.dataPolicy })
  } catch (e) {
    if (e.code !== 'MEMORY_INVALID_INPUT') throw e
    const file = path.join(agentsDir(root), `${agent.id}.json`)
    throw new CliError(`agent record ${file} has an invalid memoryQuota or dataPolicy (${e.message}); fix the record or create the agent again`)
  }
  if (!created) return
  const binding = bindingOf(root, agent)
  if (isSqlite(binding)) {
    io.err(`note: agent "${agent.name}" had no memory database; created an empty one with the quota and data policy of its record`)
  } else {
    io.err(`note: agent "${agent.name}" had no memory on ${binding}; created it there, empty, with the quota and data policy of its record`)
  }
}

/**
 * What `agent create` was told to compose: `{ genome, composition }`. With `--genes`, the
 * composition upstream's create writes for `--composition <kind>` (default Seq) and
 * `--par-merge`; without, the expression of the JSON file `--composition` names, checked whole,
 * whose genes (in written order, each once) are the genome.
 */
function readComposition(genes, composition, parMerge) {
  const usage = (msg) => new UsageError(msg, 'agent create')
  const kinds = KINDS.join(', ')
  const merges = Object.keys(PAR_MERGES).join(', ')
  if (parMerge !== undefined && !Object.prototype.hasOwnProperty.call(PAR_MERGES, parMerge)) {
    throw usage(`invalid --par-merge ${JSON.stringify(parMerge)}: use one of ${merges} (first: the first branch that succeeds; concat or merge: every branch, as {"branch_0": …, "branch_1": …})`)
  }
  if (genes !== undefined) {
    const kind = composition === undefined ? 'Seq' : composition
    if (!KINDS.includes(kind)) {
      throw usage(`invalid --composition ${JSON.stringify(kind)} with --genes: use one of ${kinds}; a composition file names its genes itself, so give it without --genes`)
    }
    if (parMerge !== undefined && kind !== 'Par') throw usage(`--par-merge applies to --composition Par, not ${kind}`)
    if ((kind === 'Cond' || kind === 'Try') && genes.length < 2) {
      throw usage(kind === 'Try' ? '--composition Try needs at least two genes: the first, then its fallbacks in order'
        : '--composition Cond needs two genes: the one run when the input\'s "type" is "primary", then the other (for another predicate, write a composition file)')
    }
    if (kind === 'Cond' && genes.length > 2) throw usage('--composition Cond takes two genes: the one run when the input\'s "type" is "primary", then the other')
    return { genome: genes, composition: compositionOfGenes(kind, genes, { parMerge }) }
  }
  if (composition === undefined) throw usage('--genes is required (or --composition <file.json>)')
  if (KINDS.includes(composition)) throw usage(`--composition ${composition} composes --genes: give the genes with --genes`)
  if (parMerge !== undefined) throw usage('--par-merge applies to --composition Par over --genes; in a composition file, write "merge" in the Par')
  const file = path.resolve(composition)
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (e) {
    // A file the command line names that is not there is a wrong command line, as `--input @file`.
    throw new UsageError(`--composition ${composition}: cannot read ${composition} (${e.code === 'ENOENT' ? 'no such file' : e.code || e.message})`, 'agent create', { seeHelp: false })
  }
  let value
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new CliError(`composition file ${composition} is not valid JSON (${e.message})`)
  }
  let plan
  try {
    plan = parseComposition(value)
  } catch (e) {
    if (e instanceof CompositionError) throw new CliError(`composition file ${composition}: ${e.message}`)
    throw e
  }
  return { genome: [...new Set(leaves(plan))], composition: value }
}

module.exports = {
  readComposition, agentsDir, ensurePrivateDir, checkAgentName, writeAgent, readAgents, findAgent, ensureAgentMemory, refuseUntrusted,
  bindingOf, isSqlite, printableRecord,
}
