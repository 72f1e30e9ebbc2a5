'use strict'
// A TryPool agent's fitness state (R-RUN-7), in upstream's format and place: `.rotifer/agents/
// <agent name>.fitness.json` holding `{ "<gene>": { fitness, successes, failures } }`, fitness
// rounded to three decimals (upstream `src/runtime/domain-failover.ts`, `commands/agent-run.ts`).
// Its parser, its writer and its errors. As upstream does, a state that cannot be used starts the
// pool afresh; unlike upstream, stderr says so, naming the file. Written under a temporary name,
// then renamed, 0600, never through a link.

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('../cli/errors')
const { writePrivateFile } = require('../private-file')

/** The state's file; a name that would leave the folder (`/`, a leading `.`) is refused. */
function fitnessFile(agentsDir, agentName) {
  if (agentName.includes('/') || agentName.includes('\\') || agentName.startsWith('.')) {
    throw new CliError(`agent "${agentName}": a TryPool keeps its fitness state in .rotifer/agents/<name>.fitness.json, and this name would put it outside that folder; rename the agent in its record (letters, digits, ".", "_", "-")`)
  }
  return path.join(agentsDir, `${agentName}.fitness.json`)
}

const isCount = (n) => Number.isSafeInteger(n) && n >= 0

/**
 * The state of `text` for the genes it names: `{ state, problem }`; `problem` says why a state
 * that does not parse or an entry that is not `{fitness 0…1, successes, failures}` was left out.
 */
function parseFitnessState(text) {
  let value
  try {
    value = JSON.parse(text)
  } catch (e) {
    return { state: {}, problem: `it is not valid JSON (${e.message})` }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { state: {}, problem: 'it is not a JSON object of gene names' }
  const state = {}
  const bad = []
  for (const [gene, s] of Object.entries(value)) {
    const ok = s !== null && typeof s === 'object' && typeof s.fitness === 'number' && s.fitness >= 0 && s.fitness <= 1 && isCount(s.successes) && isCount(s.failures)
    if (ok) state[gene] = { fitness: s.fitness, successes: s.successes, failures: s.failures }
    else bad.push(gene)
  }
  return { state, problem: bad.length ? `the entries of ${bad.map((g) => JSON.stringify(g)).join(', ')} are not {"fitness": 0…1, "successes": n, "failures": n}` : null }
}

/** Reads the state of `agentName`; `{}` when there is none. `note(line)` hears of a state left out. */
function readFitnessState(agentsDir, agentName, note) {
  const file = fitnessFile(agentsDir, agentName)
  let text
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
    try {
      if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' })
      text = fs.readFileSync(fd, 'utf8')
    } finally {
      fs.closeSync(fd)
    }
  } catch (e) {
    if (e.code === 'ENOENT') return {}
    note(`note: cannot read the fitness state ${file} (${e.code === 'ELOOP' ? 'it is a symlink' : e.code || e.message}); the pool starts afresh and the file is replaced after the run`)
    return {}
  }
  const { state, problem } = parseFitnessState(text)
  if (problem) note(`note: the fitness state ${file} was partly or wholly left out: ${problem}; those genes start at fitness 0.5`)
  return state
}

/** Writes `state` (gene → figures) for `agentName`, fitness rounded to three decimals. */
function writeFitnessState(agentsDir, agentName, state) {
  const file = fitnessFile(agentsDir, agentName)
  const rounded = Object.fromEntries(Object.entries(state).map(([g, s]) => [g, { fitness: Math.round(s.fitness * 1000) / 1000, successes: s.successes, failures: s.failures }]))
  try {
    writePrivateFile(file, JSON.stringify(rounded, null, 2))
  } catch (e) {
    throw new CliError(`cannot write the fitness state ${file}: ${e.message}`)
  }
  return file
}

module.exports = { fitnessFile, parseFitnessState, readFitnessState, writeFitnessState }
