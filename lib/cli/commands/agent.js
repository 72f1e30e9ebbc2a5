'use strict'
// `rotifer agent create` and `rotifer agent run`.

const { randomUUID } = require('node:crypto')
const memory = require('../../../index.js')
const { CliError, UsageError } = require('../errors')
const { readGene } = require('../project')
const { checkAgentName, writeAgent, readAgents, findAgent, ensureAgentMemory } = require('../agents')
const { loadExpress } = require('../gene-loader')
const { expressGene, parseInput } = require('../runner')
const { formatQuota } = require('../format')

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
  usage: 'rotifer agent create <name> --genes <gene…> [--memory-quota=<size>] [--allow-anonymization] [--max-retention-days=<N>]',
  description: [
    'Creates an agent that runs the given genes in sequence (composition Seq) and creates its memory.',
    'Everything is checked first: if a gene is missing or an option is invalid, nothing is created.',
    'The agent is written to .rotifer/agents/<id>.json; its id is a new UUID.',
  ],
  positionals: ['name'],
  options: {
    genes: { type: 'list', required: true, value: '<gene…>', help: 'genes of genes/<gene>/, run in this order (space- or comma-separated)' },
    'memory-quota': { type: 'string', value: '<size>', help: 'memory quota: a number and KB, MB or GB (1 KB = 1024 bytes), e.g. 512KB, 50MB, 1.5GB; more than 0, at most 1024GB. Default 10MB' },
    'allow-anonymization': { type: 'boolean', help: 'the data policy supports anonymization: entries may be written with sharePolicy ANONYMIZED_SHARE or KNOWLEDGE_GENE' },
    'max-retention-days': { type: 'string', value: '<N>', help: 'the data policy keeps entries at most N days (1 to 2147483647); default: no limit' },
  },
  examples: ['rotifer agent create my-agent --genes formatter --memory-quota=50MB'],

  async run({ positionals, options, root, io }) {
    const name = positionals.name
    // Validate everything before creating anything (R-HOST-3).
    checkAgentName(name)
    const sameName = readAgents(root).find((a) => a.name === name)
    if (sameName) throw new CliError(`an agent named "${name}" already exists (id ${sameName.id}); choose another name`)
    const genes = options.genes.map((g) => readGene(root, g))
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
      composition: 'Seq',
      memoryQuota: quota,
      dataPolicy,
      createdAt: new Date().toISOString(),
    }
    writeAgent(root, record)

    io.out(`Created agent "${name}"`)
    io.out(`  id            ${id}`)
    io.out(`  genome (Seq)  ${genes.map((g) => `${g.name} ${g.id}`).join('\n                ')}`)
    io.out(`  memory quota  ${formatQuota(quota)}`)
    io.out(`  data policy   anonymization ${dataPolicy.anonymizationSupported ? 'supported' : 'not supported'}, ` +
      (dataPolicy.maxRetentionDays === null ? 'no retention limit' : `entries kept at most ${dataPolicy.maxRetentionDays} days`))
    return 0
  },
}

const run = {
  name: 'agent run',
  summary: "run an agent's genes in sequence on an input, with the agent's memory",
  usage: 'rotifer agent run <agent> --input <json>',
  description: [
    "Runs the agent's genes in order: the input goes to the first gene, each gene's output is the",
    "next gene's input, and the last output is printed as JSON. Each gene's express(input, ctx) gets",
    "ctx.memory bound to this agent, the gene's v2 id and its domain, so what it remembers persists",
    'between runs. <agent> is the agent\'s name or id. Gene console output goes to stderr.',
  ],
  positionals: ['agent'],
  options: {
    input: { type: 'string', required: true, value: '<json>', help: 'the input of the first gene: JSON, @file to read it from a file, or - to read stdin' },
  },
  examples: [`rotifer agent run my-agent --input '{"code":"a {\\n  b\\n}","indent":4}'`],

  async run({ positionals, options, root, io }) {
    const input = parseInput(options.input, 'agent run')
    const agent = findAgent(root, positionals.agent)
    if (agent.composition !== undefined && agent.composition !== 'Seq') {
      throw new CliError(`agent "${agent.name}" has composition ${JSON.stringify(agent.composition)}; this version runs Seq only`)
    }
    // Every gene is read and loaded before the first one runs: a broken genome changes nothing.
    const genes = agent.genome.map((name) => {
      try {
        return readGene(root, name)
      } catch (e) {
        throw new CliError(`agent "${agent.name}": ${e.message}`)
      }
    })
    const expresses = []
    for (const gene of genes) expresses.push(await loadExpress(gene))
    ensureAgentMemory(root, agent, io)

    let value = input
    for (let i = 0; i < genes.length; i++) {
      const gene = genes[i]
      const geneMemory = new memory.GeneMemoryAccess({ agentId: agent.id, geneId: gene.id, domain: gene.domain, root })
      value = await expressGene(gene, expresses[i], value, geneMemory)
    }
    io.out(JSON.stringify(value, null, 2))
    return 0
  },
}

module.exports = { create, run }
