'use strict'
// `rotifer agent create` and `rotifer agent run`.

const memory = require('../../../index.js')
const { CliError, UsageError } = require('../errors')
const { readGene, checkGeneName } = require('../project')
const { checkAgentName, writeAgent, readAgents, findAgent, readComposition, ensureAgentMemory, agentsDir, bindingOf } = require('../agents')
const { parseInput, parseTimeout, TIMEOUT_OPTION } = require('../runner')
const { formatQuota, policyText, field, shortGeneId, terminalWidth, visibleWidth } = require('../format')
const { runAgent, DEFAULT_INPUT } = require('../../runtime')
const { printable, printableJson } = require('../terminal-text')
const { DEFAULT_QUOTA, MAX_RETENTION_DAYS, newAgentRecord, checkAgentRecord, isMemoryUrl } = require('../../formats/agent-record')
const { KINDS, PAR_MERGES, describeComposition } = require('../../formats/composition')

/** `-n/--top`: how many genes the local arena picks, a whole number from 1 (default 2, upstream's). */
function parseTop(text) {
  if (text === undefined) return 2
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN
  if (!(n >= 1 && n <= 1000)) throw new UsageError(`invalid --top ${JSON.stringify(text)}: give a whole number of genes from 1 to 1000`, 'agent create', { seeHelp: false })
  return n
}

/**
 * `-d/--domain` and `-n/--top` without --genes: the top genes of the local arena (lib/cli/arena.js),
 * as upstream's agent create picks them; `{ genes, note }`. No gene of the domain is upstream's
 * refusal (exit 1).
 */
function autoSelect(root, options) {
  if (options.genes !== undefined) throw new UsageError('--domain and --top pick the genes from the local arena; give them without --genes', 'agent create', { seeHelp: false })
  const top = parseTop(options.top)
  const ranked = require('../arena').rankGenes(root, options.domain)
  const domain = options.domain === undefined ? '' : ` for domain '${options.domain}'`
  if (ranked.length === 0) {
    throw new CliError(`No genes found in Arena${domain}: the local arena ranks the project's genes${options.domain === undefined ? '' : ' of that domain'}, and there are none; write one with rotifer wrap <gene> --domain ${options.domain || '<domain>'}, or name the genes with --genes`)
  }
  const picked = ranked.slice(0, top)
  const strategy = options.strategy === undefined ? 'greedy' : options.strategy
  const note = `Auto-selected top ${picked.length} gene(s) from Arena${options.domain === undefined ? '' : ` (domain: ${options.domain})`} [strategy: ${strategy}]: ` +
    picked.map((g) => `${g.name} (${g.fitness.toFixed(3)})`).join(', ')
  return { genes: picked.map((g) => g.name), strategy, note }
}

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

/**
 * `--memory-url`: a postgres:// or postgresql:// URL, or `sqlite` (R-BIND-1), checked as the
 * memory API parses it. No message repeats the value: it may hold a password.
 */
function parseMemoryUrl(text, agentId, root) {
  if (text === undefined) return undefined
  if (!isMemoryUrl(text)) {
    throw new UsageError('invalid --memory-url: give a postgres:// or postgresql:// URL (libpq\'s form), or sqlite for the SQLite file; the value given is not repeated here, since it may hold a password', 'agent create', { seeHelp: false })
  }
  try {
    memory.agentMemoryBinding({ agentId, root, url: text })
  } catch (e) {
    // The memory API's message shows the URL without its password.
    if (e.code === 'MEMORY_INVALID_INPUT') throw new UsageError(`invalid --memory-url: ${e.message}`, 'agent create', { seeHelp: false })
    throw e
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
  needsProject: true,
  summary: 'create an agent from genes, with its memory quota and data policy',
  usage: 'rotifer agent create <name> -g|--genes <gene…> [--composition Seq|Par|Cond|Try|TryPool] [--par-merge first|concat|merge] [--strategy <word>] [--memory-quota=<size>] [--allow-anonymization] [--max-retention-days=<N>] [--memory-url <url|sqlite>]\n       rotifer agent create <name> -d|--domain <domain> [-n|--top <N>] [--composition Seq|Par|Cond|Try|TryPool] [--par-merge first|concat|merge] [--strategy <word>] [--memory-quota=<size>] [--allow-anonymization] [--max-retention-days=<N>] [--memory-url <url|sqlite>]\n       rotifer agent create <name> --composition <file.json> [--strategy <word>] [--memory-quota=<size>] [--allow-anonymization] [--max-retention-days=<N>] [--memory-url <url|sqlite>]',
  description: [
    'Creates an agent that runs the given genes and creates its memory, as upstream\'s agent create:',
    'Seq (default) runs them in order, each output the next input (one gene: Single); Par runs them',
    'on the same input and keeps the first success (--par-merge first, the default) or all of them',
    '(concat or merge: {"branch_0": …}); Cond runs the first gene when the input\'s "type" is',
    '"primary", else the second; Try runs the first and falls back to the next on failure; TryPool',
    'pools the genes by domain and fails over to the fittest other gene of the domain. A JSON file',
    'gives any composition (docs/cli.md). Everything is checked first: if a gene is missing or an',
    'option is invalid, nothing is created. The agent is written to .rotifer/agents/<id>.json in',
    'upstream\'s format, with its memory quota and data policy; its id is a new UUID. Instead of',
    '--genes, -d/--domain picks the top -n/--top genes (default 2) of the domain from the local',
    'arena, ranked by upstream\'s estimated fitness (strategy greedy). A Seq whose gene\'s',
    'outputSchema lacks a field the next gene\'s inputSchema requires is warned about on stderr.',
    'The memory is created where the project puts it (ROTIFER_MEMORY_URL, rotifer.json\'s',
    'memory.url, else the SQLite file), or where --memory-url says, which the record keeps',
    '(memoryUrl): a PostgreSQL URL (its role must reach the server now), or sqlite.',
  ],
  positionals: ['name'],
  options: {
    genes: { type: 'list', short: 'g', value: '<gene…>', help: 'genes of the genes folder, in this order (space- or comma-separated); required unless --domain or a --composition file picks them' },
    domain: { type: 'string', short: 'd', value: '<domain>', help: "pick the genes of this domain from the local arena, by upstream's estimated fitness, instead of --genes" },
    top: { type: 'string', short: 'n', value: '<N>', help: 'how many of the top genes to pick (default 2); without --domain, from every gene of the project' },
    composition: { type: 'string', value: '<kind|file.json>', help: `how --genes compose: ${KINDS.join(', ')} (default Seq); or a JSON file holding a composition` },
    'par-merge': { type: 'string', value: '<merge>', help: `with --composition Par: ${Object.keys(PAR_MERGES).join(', ')} (default first: the first branch that succeeds; concat and merge: every branch)` },
    strategy: { type: 'string', value: '<word>', help: 'the gene selection strategy recorded with the agent (default manual, as upstream records for --genes)' },
    'memory-quota': { type: 'string', value: '<size>', help: 'memory quota: a number and KB, MB or GB (1 KB = 1024 bytes), e.g. 512KB, 50MB, 1.5GB; more than 0, at most 1024GB. Default 10MB' },
    'allow-anonymization': { type: 'boolean', help: 'the data policy supports anonymization: entries may be written with sharePolicy ANONYMIZED_SHARE or KNOWLEDGE_GENE' },
    'max-retention-days': { type: 'string', value: '<N>', help: 'the data policy keeps entries at most N days (1 to 2147483647); default: no limit' },
    'memory-url': { type: 'string', value: '<url|sqlite>', help: "where the agent's memory lives, kept in its record: a postgres:// or postgresql:// URL, or sqlite for the SQLite file; default: ROTIFER_MEMORY_URL, rotifer.json's memory.url, else the file" },
  },
  examples: [
    'rotifer agent create my-agent --genes formatter --memory-quota=50MB',
    'rotifer agent create checker -g strict lenient --composition Try',
    'rotifer agent create fan -g a b --composition Par --par-merge concat',
    'rotifer agent create router --composition router.json',
    'rotifer agent create best -d code.format -n 1',
    'rotifer agent create shared -g formatter --memory-url postgresql://deploy@db.internal/rotifer',
  ],

  async run({ positionals, options, root, io }) {
    const name = positionals.name
    // Validate everything before creating anything (R-HOST-3).
    checkAgentName(name)
    const sameName = readAgents(root).find((a) => a.name === name)
    if (sameName) throw new CliError(`an agent named "${name}" already exists (id ${sameName.id}); choose another name`)
    let selected = null
    if (options.domain !== undefined || options.top !== undefined) {
      selected = autoSelect(root, options)
      options = { ...options, genes: selected.genes, strategy: selected.strategy }
    }
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
    // Upstream's schema check of a pipeline: a warning, never a refusal.
    const warnings = composition.type === 'Seq' ? require('../schema-compat').seqWarnings(genes) : []
    if (warnings.length) {
      io.err('warning: Schema compatibility warnings:')
      for (const w of warnings) io.err(`  ${w}`)
    }
    const record = newAgentRecord({ name, genome: genes.map((g) => g.name), composition, strategy, memoryQuota: quota, dataPolicy })
    const memoryUrl = parseMemoryUrl(options['memory-url'], record.id, root)
    if (memoryUrl !== undefined) record.memoryUrl = memoryUrl
    const { plan } = checkAgentRecord(record, `.rotifer/agents/${record.id}.json`, record.id)

    // Memory first: if it cannot be created, no agent record points at it.
    memory.createAgentMemory({ agentId: record.id, root, quota, dataPolicy, url: memoryUrl })
    writeAgent(root, record)
    const id = record.id
    const binding = bindingOf(root, record)

    // At a terminal, lines fit it (gene ids shortened if need be); piped, everything in full.
    const width = terminalWidth(process.stdout, Infinity)
    const geneLine = (g) => (visibleWidth(`${' '.repeat(16)}${g.name} ${g.id}`) <= width ? `${g.name} ${g.id}` : `${g.name} ${shortGeneId(g.id)}`)
    if (selected) io.out(selected.note)
    // One column of labels; the composition in the record's words (Single for one gene).
    io.out(`Created agent "${name}"`)
    io.out(field('id', id, width))
    io.out(`  ${'genome'.padEnd(14)}` + genes.map(geneLine).join(`\n${' '.repeat(16)}`))
    io.out(field('composition', describeComposition(plan), width))
    io.out(field('strategy', strategy, width))
    io.out(field('memory quota', formatQuota(quota), width))
    io.out(field('data policy', policyText(dataPolicy), width))
    io.out(field('binding', binding, width))
    return 0
  },
}

const run = {
  name: 'agent run',
  needsProject: true,
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
    'Gene output other than the result (console.log, logs), the --verbose step log and the genome',
    'snapshot (at a terminal, or with --verbose) go to stderr. Before any gene loads, each passes',
    "upstream's L0 gate: the permissions its phenotype declares against this runtime's limits.",
  ],
  positionals: ['agent'],
  options: {
    input: { type: 'string', value: '<json>', help: 'the input of the composition: JSON, @file to read it from a file, or - to read stdin; default {"name":"world"}' },
    verbose: { type: 'boolean', help: "write each gene's run (engine, time, input and output) and the genome snapshot (domains, executable genes, duration) to stderr; at a terminal the snapshot is written anyway" },
    'no-sandbox': { type: 'boolean', help: 'run every gene from its source under Node, even a compiled one (so Par, Cond and Try run as a sequence)' },
    timeout: TIMEOUT_OPTION,
  },
  examples: [`rotifer agent run my-agent --input '{"code":"a {\\n  b\\n}","indent":4}'`],

  async run({ positionals, options, root, io }) {
    const input = options.input === undefined ? { ...DEFAULT_INPUT } : parseInput(options.input, 'agent run')
    const seconds = parseTimeout(options.timeout, 'agent run')
    const agent = findAgent(root, positionals.agent)
    ensureAgentMemory(root, agent, io)
    const started = Date.now()
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
    // Upstream's genome snapshot, after the result: on stderr, so stdout stays the JSON.
    if (options.verbose || process.stderr.isTTY) io.err(genomeSnapshot(root, agent, Date.now() - started))
    return 0
  },
}

/**
 * Upstream's "Genome Snapshot" of a run: the first gene's domain, how many domains and genes the
 * genome has, how many have a file to run (source or compiled), and how long the run took.
 */
function genomeSnapshot(root, agent, ms) {
  const genes = []
  for (const name of agent.genome) {
    try {
      genes.push(readGene(root, name))
    } catch {
      // it ran, so it read; a gene changed since is left out, as upstream leaves out unreadable ones
    }
  }
  const executable = genes.filter((g) => g.source || g.wasm).length
  return [
    'Genome Snapshot',
    `  primary domain    ${genes.length ? genes[0].domain : '-'}`,
    `  distinct domains  ${new Set(genes.map((g) => g.domain)).size}`,
    `  genes in genome   ${genes.length}`,
    `  executable genes  ${executable}/${genes.length}`,
    `  run duration      ${ms} ms`,
  ].join('\n')
}

module.exports = { create, run }
