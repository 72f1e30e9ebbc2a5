'use strict'
// `rotifer agent create` and `rotifer agent run`.

const { randomUUID } = require('node:crypto')
const memory = require('../../../index.js')
const { CliError, UsageError } = require('../errors')
const { readGene } = require('../project')
const { checkAgentName, writeAgent, readAgents, findAgent, readComposition, ensureAgentMemory } = require('../agents')
const { parseInput, parseTimeout, TIMEOUT_OPTION } = require('../runner')
const { formatQuota } = require('../format')
const { runAgent, leaves } = require('../../runtime')

/** R-QUO-1: the quota of an agent created without --memory-quota. */
const DEFAULT_QUOTA = 10 * 1024 * 1024
const MAX_RETENTION_DAYS = 2147483647

/** `--max-retention-days`: a whole number of days, the range retention policies accept. */
function parseRetentionDays(text) {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN
  if (!(n >= 1 && n <= MAX_RETENTION_DAYS)) {
    throw new UsageError(`invalid --max-retention-days ${JSON.stringify(text)}: give a whole number of days from 1 to ${MAX_RETENTION_DAYS}`, 'agent create', { seeHelp: false })
  }
  return n
}

function parseQuota(text) {
  try {
    return memory.parseMemoryQuota(text)
  } catch (e) {
    // The memory API's message already names the accepted forms (R-QUO-2).
    if (e.code === 'MEMORY_INVALID_INPUT') throw new UsageError(`invalid --memory-quota: ${e.message}`, 'agent create', { seeHelp: false })
    throw e
  }
}

const create = {
  name: 'agent create',
  summary: 'create an agent from genes, with its memory quota and data policy',
  usage: 'rotifer agent create <name> --genes <gene…> [--memory-quota=<size>] [--allow-anonymization] [--max-retention-days=<N>] [--composition Seq|Par|Try]\n       rotifer agent create <name> --composition <file.json> [--memory-quota=<size>] [--allow-anonymization] [--max-retention-days=<N>]',
  description: [
    'Creates an agent that runs the given genes (in sequence by default) and creates its memory.',
    '--composition Par runs the genes side by side on the same input; Try runs the first and falls',
    'back to the next on failure. A JSON file gives any composition of Seq, Par, Cond, Try and Gene.',
    'Everything is checked first: if a gene is missing or an option is invalid, nothing is created.',
    'The agent is written to .rotifer/agents/<id>.json; its id is a new UUID.',
  ],
  positionals: ['name'],
  options: {
    genes: { type: 'list', value: '<gene…>', help: 'genes of genes/<gene>/, in this order (space- or comma-separated); required unless --composition names a file' },
    composition: { type: 'string', value: '<Seq|Par|Try|file.json>', help: 'how --genes compose (default Seq), or a JSON file holding a composition expression' },
    'memory-quota': { type: 'string', value: '<size>', help: 'memory quota: a number and KB, MB or GB (1 KB = 1024 bytes), e.g. 512KB, 50MB, 1.5GB; more than 0, at most 1024GB. Default 10MB' },
    'allow-anonymization': { type: 'boolean', help: 'the data policy supports anonymization: entries may be written with sharePolicy ANONYMIZED_SHARE or KNOWLEDGE_GENE' },
    'max-retention-days': { type: 'string', value: '<N>', help: 'the data policy keeps entries at most N days (1 to 2147483647); default: no limit' },
  },
  examples: [
    'rotifer agent create my-agent --genes formatter --memory-quota=50MB',
    'rotifer agent create checker --genes strict lenient --composition Try',
    'rotifer agent create router --composition router.json',
  ],

  async run({ positionals, options, root, io }) {
    const name = positionals.name
    // Validate everything before creating anything (R-HOST-3).
    checkAgentName(name)
    const sameName = readAgents(root).find((a) => a.name === name)
    if (sameName) throw new CliError(`an agent named "${name}" already exists (id ${sameName.id}); choose another name`)
    const composition = readComposition(root, options.genes, options.composition)
    const names = composition === 'Seq' ? options.genes : [...new Set(leaves(composition))]
    const genes = names.map((g) => readGene(root, g))
    const quota = options['memory-quota'] === undefined ? DEFAULT_QUOTA : parseQuota(options['memory-quota'])
    const dataPolicy = {
      anonymizationSupported: options['allow-anonymization'] === true,
      maxRetentionDays: options['max-retention-days'] === undefined ? null : parseRetentionDays(options['max-retention-days']),
    }

    const id = randomUUID()
    // Memory first: if it cannot be created, no agent record points at it.
    memory.createAgentMemory({ agentId: id, root, quota, dataPolicy })
    const record = {
      id,
      name,
      genome: genes.map((g) => g.name),
      composition,
      memoryQuota: quota,
      dataPolicy,
      createdAt: new Date().toISOString(),
    }
    writeAgent(root, record)

    io.out(`Created agent "${name}"`)
    io.out(`  id            ${id}`)
    const kind = composition === 'Seq' ? 'Seq' : composition.type
    io.out(`  genome (${kind})`.padEnd(16) + genes.map((g) => `${g.name} ${g.id}`).join('\n                '))
    if (composition !== 'Seq') io.out(`  composition   ${JSON.stringify(composition)}`)
    io.out(`  memory quota  ${formatQuota(quota)}`)
    io.out(`  data policy   anonymization ${dataPolicy.anonymizationSupported ? 'supported' : 'not supported'}, ` +
      (dataPolicy.maxRetentionDays === null ? 'no retention limit' : `entries kept at most ${dataPolicy.maxRetentionDays} days`))
    return 0
  },
}

const run = {
  name: 'agent run',
  summary: "run an agent's genes on an input, with the agent's memory",
  usage: 'rotifer agent run <agent> --input <json> [--timeout <seconds>]',
  description: [
    "Runs the agent's composition on the input and prints the output as JSON. In a Seq the input",
    "goes to the first gene and each gene's output is the next gene's input. Every gene reads and",
    "writes the agent's memory with its own v2 id and domain (ctx.memory, or the WASM host",
    'functions), so what it remembers persists between runs. A Par, Cond or Try holding a gene',
    'that is not WASM runs all its genes in order instead (said on stderr). <agent> is the',
    "agent's name or id. Gene output other than the result (console.log, logs) goes to stderr.",
  ],
  positionals: ['agent'],
  options: {
    input: { type: 'string', required: true, value: '<json>', help: 'the input of the composition: JSON, @file to read it from a file, or - to read stdin' },
    timeout: TIMEOUT_OPTION,
  },
  examples: [`rotifer agent run my-agent --input '{"code":"a {\\n  b\\n}","indent":4}'`],

  async run({ positionals, options, root, io }) {
    const input = parseInput(options.input, 'agent run')
    const seconds = parseTimeout(options.timeout, 'agent run')
    const agent = findAgent(root, positionals.agent)
    ensureAgentMemory(root, agent, io)
    const output = await runAgent({ root, agent, input, seconds, notice: (line) => io.err(line) })
    io.out(JSON.stringify(output, null, 2))
    return 0
  },
}

module.exports = { create, run }
