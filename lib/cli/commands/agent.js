'use strict'
// `rotifer agent create` and `rotifer agent run`.

const memory = require('../../../index.js')
const { CliError, UsageError } = require('../errors')
const { readGene, checkGeneName } = require('../project')
const { checkAgentName, writeAgent, readAgents, findAgent, readComposition, ensureAgentMemory, agentsDir } = require('../agents')
const { parseInput, parseTimeout, TIMEOUT_OPTION } = require('../runner')
const { formatQuota, policyText, field, shortGeneId, terminalWidth, visibleWidth } = require('../format')
const { runAgent, DEFAULT_INPUT } = require('../../runtime')
const { printable, printableJson } = require('../terminal-text')
const { DEFAULT_QUOTA, MAX_RETENTION_DAYS, newAgentRecord, checkAgentRecord } = require('../../formats/agent-record')
const { KINDS, PAR_MERGES, describeComposition } = require('../../formats/composition')

/** `--strategy`: upstream stores the word as given ("manual" when --genes names the genes). */
const STRATEGY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** `--max-retention-days`: a whole number of days, the range retention policies accept. */
function parseRetentionDays(text) {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN
  if (!(n >= 1 && n <= MAX_RETENTION_DAYS)) {
    throw new UsageError(`invalid --max-retention-days ${JSON.stringify(text)}: give a whole number of days from 1 to ${MAX_RETENTION_DAYS}`, 'agent create', { seeHelp: false })
  }
  return n
}

function parseStrategy(text) {
  if (text === undefined) return 'manual'
  if (!STRATEGY.test(text)) {
    throw new UsageError(`invalid --strategy ${JSON.stringify(text)}: give a word of 1 to 64 letters, digits, ".", "_" or "-", such as manual or greedy`, 'agent create', { seeHelp: false })
  }
  return text
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
  usage: 'rotifer agent create <name> -g|--genes <gene…> [--composition Seq|Par|Cond|Try|TryPool] [--par-merge first|concat|merge] [--strategy <word>] [--memory-quota=<size>] [--allow-anonymization] [--max-retention-days=<N>]\n       rotifer agent create <name> --composition <file.json> [--strategy <word>] [--memory-quota=<size>] [--allow-anonymization] [--max-retention-days=<N>]',
  description: [
    'Creates an agent that runs the given genes and creates its memory, as upstream\'s agent create:',
    'Seq (default) runs them in order, each output the next input (one gene: Single); Par runs them',
    'on the same input and keeps the first success (--par-merge first, the default) or all of them',
    '(concat or merge: {"branch_0": …}); Cond runs the first gene when the input\'s "type" is',
    '"primary", else the second; Try runs the first and falls back to the next on failure; TryPool',
    'pools the genes by domain and fails over to the fittest other gene of the domain. A JSON file',
    'gives any composition (docs/cli.md). Everything is checked first: if a gene is missing or an',
    'option is invalid, nothing is created. The agent is written to .rotifer/agents/<id>.json in',
    'upstream\'s format, with its memory quota and data policy; its id is a new UUID.',
  ],
  positionals: ['name'],
  options: {
    genes: { type: 'list', short: 'g', value: '<gene…>', help: 'genes of the genes folder, in this order (space- or comma-separated); required unless --composition names a file' },
    composition: { type: 'string', value: '<kind|file.json>', help: `how --genes compose: ${KINDS.join(', ')} (default Seq); or a JSON file holding a composition` },
    'par-merge': { type: 'string', value: '<merge>', help: `with --composition Par: ${Object.keys(PAR_MERGES).join(', ')} (default first: the first branch that succeeds; concat and merge: every branch)` },
    strategy: { type: 'string', value: '<word>', help: 'the gene selection strategy recorded with the agent (default manual, as upstream records for --genes)' },
    'memory-quota': { type: 'string', value: '<size>', help: 'memory quota: a number and KB, MB or GB (1 KB = 1024 bytes), e.g. 512KB, 50MB, 1.5GB; more than 0, at most 1024GB. Default 10MB' },
    'allow-anonymization': { type: 'boolean', help: 'the data policy supports anonymization: entries may be written with sharePolicy ANONYMIZED_SHARE or KNOWLEDGE_GENE' },
    'max-retention-days': { type: 'string', value: '<N>', help: 'the data policy keeps entries at most N days (1 to 2147483647); default: no limit' },
  },
  examples: [
    'rotifer agent create my-agent --genes formatter --memory-quota=50MB',
    'rotifer agent create checker -g strict lenient --composition Try',
    'rotifer agent create fan -g a b --composition Par --par-merge concat',
    'rotifer agent create router --composition router.json',
  ],

  async run({ positionals, options, root, io }) {
    const name = positionals.name
    // Validate everything before creating anything (R-HOST-3).
    checkAgentName(name)
    const sameName = readAgents(root).find((a) => a.name === name)
    if (sameName) throw new CliError(`an agent named "${name}" already exists (id ${sameName.id}); choose another name`)
    for (const g of options.genes || []) {
      try {
        checkGeneName(g)
      } catch (e) {
        throw new UsageError(`invalid --genes: ${e.message}`, 'agent create', { seeHelp: false })
      }
    }
    const { genome, composition } = readComposition(options.genes, options.composition, options['par-merge'])
    const strategy = parseStrategy(options.strategy)
    const quota = options['memory-quota'] === undefined ? DEFAULT_QUOTA : parseQuota(options['memory-quota'])
    const dataPolicy = {
      anonymizationSupported: options['allow-anonymization'] === true,
      maxRetentionDays: options['max-retention-days'] === undefined ? null : parseRetentionDays(options['max-retention-days']),
    }
    const genes = genome.map((g) => readGene(root, g))
    const record = newAgentRecord({ name, genome: genes.map((g) => g.name), composition, strategy, memoryQuota: quota, dataPolicy })
    const { plan } = checkAgentRecord(record, `.rotifer/agents/${record.id}.json`, record.id)

    // Memory first: if it cannot be created, no agent record points at it.
    memory.createAgentMemory({ agentId: record.id, root, quota, dataPolicy })
    writeAgent(root, record)
    const id = record.id

    // At a terminal, lines fit it (gene ids shortened if need be); piped, everything in full.
    const width = terminalWidth(process.stdout, Infinity)
    const geneLine = (g) => (visibleWidth(`${' '.repeat(16)}${g.name} ${g.id}`) <= width ? `${g.name} ${g.id}` : `${g.name} ${shortGeneId(g.id)}`)
    io.out(`Created agent "${name}"`)
    io.out(`  id            ${id}`)
    io.out(`  genome (${composition.type}) `.padEnd(16) + genes.map(geneLine).join('\n                '))
    io.out(field('composition', describeComposition(plan), width))
    io.out(field('strategy', strategy, width))
    io.out(field('memory quota', formatQuota(quota), width))
    io.out(field('data policy', policyText(dataPolicy), width))
    return 0
  },
}

const run = {
  name: 'agent run',
  summary: "run an agent's genes on an input, with the agent's memory",
  usage: 'rotifer agent run <agent> [--input <json>] [--verbose] [--no-sandbox] [--timeout <seconds>]',
  description: [
    "Runs the agent's composition on the input and prints the output as JSON (nothing else goes to",
    "stdout). In a Seq the input goes to the first gene and each gene's output is the next gene's",
    "input. Every gene reads and writes the agent's memory with its own v2 id and domain",
    '(ctx.memory, or the WASM host functions), so what it remembers persists between runs. A Par,',
    'Cond or Try holding a gene that is not compiled runs all its genes once, in written order,',
    'instead (said on stderr), as upstream does. A TryPool prints {"<domain>": output} and keeps',
    "its fitness state in .rotifer/agents/<name>.fitness.json. <agent> is the agent's name or id.",
    'Gene output other than the result (console.log, logs) and the --verbose step log go to stderr.',
  ],
  positionals: ['agent'],
  options: {
    input: { type: 'string', value: '<json>', help: 'the input of the composition: JSON, @file to read it from a file, or - to read stdin; default {"name":"world"}' },
    verbose: { type: 'boolean', help: "write each gene's run (engine, time, input and output) to stderr" },
    'no-sandbox': { type: 'boolean', help: 'run every gene from its source under Node, even a compiled one (so Par, Cond and Try run as a sequence)' },
    timeout: TIMEOUT_OPTION,
  },
  examples: [`rotifer agent run my-agent --input '{"code":"a {\\n  b\\n}","indent":4}'`],

  async run({ positionals, options, root, io }) {
    const input = options.input === undefined ? { ...DEFAULT_INPUT } : parseInput(options.input, 'agent run')
    const seconds = parseTimeout(options.timeout, 'agent run')
    const agent = findAgent(root, positionals.agent)
    ensureAgentMemory(root, agent, io)
    const output = await runAgent({
      root,
      agent,
      input,
      seconds,
      noSandbox: options['no-sandbox'] === true,
      agentsDir: agentsDir(root),
      notice: (line) => io.err(printable(line)),
      step: options.verbose ? (line) => io.err(line.split('\n').map(printable).join('\n')) : null,
    })
    io.out(printableJson(JSON.stringify(output, null, 2)))
    return 0
  },
}

module.exports = { create, run }
