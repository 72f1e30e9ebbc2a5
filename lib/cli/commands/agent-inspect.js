'use strict'
// `rotifer agent list` and `rotifer agent show`: the deployer's view of agents, with the memory
// figures their databases enforce (inspectAgentMemory). Nothing here changes anything.

const memory = require('../../../index.js')
const { readAgents, findAgent, bindingOf, printableRecord } = require('../agents')
const { describeComposition } = require('../../formats/composition')
const { describeError } = require('../errors')
const { formatQuota, formatSize, quotaSize, printable, plural, policyText, usageBar, percent, fitTable, field, terminalWidth, useColor, bold, visibleWidth } = require('../format')

/** The agent's memory usage, `null` if its memory was never created, or `{ error }`. */
function usageOf(root, agent) {
  try {
    return memory.inspectAgentMemory({ agentId: agent.id, root })
  } catch (e) {
    // One damaged database must not hide the other agents.
    return { error: describeError(e) }
  }
}

function memoryCell(usage) {
  if (usage === null) return 'not created'
  if (usage.error) return `unavailable (${usage.error.split(':')[0]})`
  return `${formatSize(usage.used)} / ${quotaSize(usage.quota)}`
}

/** Cells of the bar a terminal shows; piped, only the percentage is printed. */
const BAR_CELLS = 8

/** `used` against `quota`: a bar and the percentage at a terminal, the percentage otherwise. */
function useCell(used, quota, tty, color) {
  const f = quota > 0 ? used / quota : 0
  return tty ? `${usageBar(f, BAR_CELLS, { color })} ${percent(f)}` : percent(f)
}

/**
 * The width these commands fit: the terminal's. Not at a terminal (a pipe, a file), COLUMNS if
 * set, else none: every cell in full, as with --wide.
 */
function outputWidth() {
  return terminalWidth(process.stdout, Infinity)
}

/**
 * A table with bars at a terminal, unless its lines would not fit: then with percentages only.
 * Not at a terminal, always percentages.
 */
function withBarsIfTheyFit(render, width) {
  if (!process.stdout.isTTY) return render(false)
  const text = render(true)
  return text.split('\n').some((l) => visibleWidth(l) > width) ? render(false) : text
}

/** The fewest leading characters that tell these ids apart, plus one for the "…". */
function idWidth(ids) {
  for (let n = 8; n < 36; n++) {
    if (new Set(ids.map((id) => id.slice(0, n))).size === ids.length) return n + 1
  }
  return 36
}

/** `2026-12-02T18:12:05.466Z` as `2026-12-02 18:12:05` (UTC, said in the header). */
function shortTime(ts) {
  return typeof ts === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(ts) ? ts.slice(0, 19).replace('T', ' ') : ts
}

/** Where the agent's memory lives, as --json shows it; null when its record names no usable binding (memoryError says why). */
function bindingOrNull(root, agent) {
  try {
    return bindingOf(root, agent)
  } catch {
    return null
  }
}

const list = {
  name: 'agent list',
  needsProject: true,
  summary: 'list the agents of this project with their memory use',
  usage: 'rotifer agent list [--json] [--wide]',
  description: [
    'Lists every agent of the project: name, id, genes, composition, its number of memory entries',
    '(expired ones do not count), memory used and the quota its database enforces, and how much of',
    'the quota is used: at a terminal as a bar, else as a percentage. At a terminal, lines fit its',
    'width: long genes, compositions and ids are cut with "…" (ids keep enough to tell them apart;',
    '--wide: all in full); piped, cells are in full unless COLUMNS is set. Sizes are in KB, MB and',
    'GB of 1024 bytes; --json has them exact.',
  ],
  positionals: [],
  options: {
    wide: { type: 'boolean', help: 'full ids, genes and compositions, however wide the lines get' },
    json: { type: 'boolean', help: 'print a JSON array of { id, name, genome, composition, binding, memory } (binding: "sqlite" or the URL without its password; memory: the figures of inspectAgentMemory, or null)' },
  },
  examples: ['rotifer agent list', 'rotifer agent list --json'],

  async run({ root, options, io }) {
    const agents = readAgents(root)
    const rows = agents.map((a) => ({ agent: a, usage: usageOf(root, a) }))
    if (options.json) {
      io.out(JSON.stringify(rows.map(({ agent, usage }) => ({
        id: agent.id,
        name: agent.name,
        genome: agent.genome,
        composition: agent.composition === undefined ? 'Seq' : agent.composition,
        binding: bindingOrNull(root, agent),
        memory: usage && usage.error ? null : usage,
        ...(usage && usage.error ? { memoryError: usage.error } : {}),
      })), null, 2))
      return 0
    }
    if (agents.length === 0) {
      io.out(`No agents in ${root}; create one with: rotifer agent create <name> --genes <gene…>`)
      return 0
    }
    const color = useColor(process.stdout)
    const width = options.wide ? Infinity : outputWidth()
    // Columns: NAME ID GENES COMPOSITION ENTRIES MEMORY USED. At a narrow terminal the genes
    // (named in the composition too) go before the bars do.
    const render = ({ bars, genes }) => {
      const cols = genes ? [0, 1, 2, 3, 4, 5, 6] : [0, 1, 3, 4, 5, 6]
      const pick = (cells) => cols.map((i) => cells[i])
      const at = (i) => cols.indexOf(i)
      return fitTable(pick(['NAME', 'ID', 'GENES', 'COMPOSITION', 'ENTRIES', 'MEMORY', 'USED']), rows.map(({ agent, usage }) => pick([
        agent.name,
        agent.id,
        agent.genome.join(', '),
        describeComposition(agent.plan),
        usage && !usage.error ? String(usage.entries) : '-',
        memoryCell(usage),
        usage && !usage.error ? useCell(usage.used, usage.quota, bars, color) : '-',
      ])), {
        right: [at(4)],
        raw: [at(6)],
        maxWidth: width,
        // An id keeps enough to tell it from the others.
        shrink: [at(2), at(3), at(1), at(0)].filter((i) => i >= 0),
        min: { [at(2)]: 12, [at(3)]: 16, [at(1)]: idWidth(agents.map((a) => a.id)), [at(0)]: 12 },
        style: (line, n) => (n === 0 && color ? bold(line) : line),
      })
    }
    const layouts = process.stdout.isTTY
      ? [{ bars: true, genes: true }, { bars: true, genes: false }, { bars: false, genes: true }, { bars: false, genes: false }]
      : [{ bars: false, genes: true }]
    const fits = (text) => !text.split('\n').some((l) => visibleWidth(l) > width)
    const texts = layouts.map((l) => render(l))
    io.out(texts.find(fits) || texts[texts.length - 1])
    return 0
  },
}

const show = {
  name: 'agent show',
  needsProject: true,
  summary: "show an agent's record, data policy and memory use per category",
  usage: 'rotifer agent show <agent> [--json]',
  description: [
    "Shows the agent's record (id, name, genes, composition, creation time), the data policy and",
    'quota its memory database enforces, how much of the quota is used, and per category: entries,',
    'size, evictable size (what eviction could free; PREFERENCE is never evicted), the nearest',
    'expiry and the share of the quota, drawn as bars at a terminal. Sizes are in KB, MB and GB of',
    "1024 bytes (--json: exact bytes). <agent> is the agent's name or id. Reading changes nothing",
    'and is not audited. The binding line says where the memory lives: sqlite (the file), or the',
    'PostgreSQL URL with its password shown as ***.',
  ],
  positionals: ['agent'],
  options: {
    json: { type: 'boolean', help: 'print { agent: <record>, binding: "sqlite" or the URL without its password, memory: <figures of inspectAgentMemory, or null> } (a memoryUrl without its password too)' },
  },
  examples: ['rotifer agent show my-agent', 'rotifer agent show my-agent --json'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    const binding = bindingOf(root, agent)
    const usage = memory.inspectAgentMemory({ agentId: agent.id, root })
    if (options.json) {
      io.out(JSON.stringify({ agent: printableRecord(root, agent), binding, memory: usage }, null, 2))
      return 0
    }
    const width = outputWidth()
    const tty = Boolean(process.stdout.isTTY)
    const color = useColor(process.stdout)
    const out = (label, value) => io.out(field(label, value, width))
    io.out(`Agent "${agent.name}"`)
    out('id', agent.id)
    out('genome', agent.genome.join(', '))
    out('composition', printable(describeComposition(agent.plan)))
    if (agent.createdAt) out('created', printable(agent.createdAt))
    out('binding', printable(binding))
    if (usage === null) {
      if (agent.dataPolicy) out('data policy', `${policyText(agent.dataPolicy)} (from the record)`)
      out('memory', 'not created yet')
      return 0
    }
    const fraction = usage.quota > 0 ? usage.used / usage.quota : 0
    out('data policy', policyText(usage.dataPolicy))
    out('quota', formatQuota(usage.quota))
    out('memory', `${formatSize(usage.used)} used (${percent(fraction)}), ${plural(usage.entries, 'entry', 'entries')}, ` +
      `${formatSize(usage.evictableBytes)} evictable`)
    if (tty) out('', usageBar(fraction, Math.min(40, width - 16), { color }))
    io.out('')
    const categories = (bars) => fitTable(['CATEGORY', 'ENTRIES', 'SIZE', 'EVICTABLE', 'NEXT EXPIRY (UTC)', 'OF QUOTA'], Object.entries(usage.categories).map(([name, c]) => [
      name, String(c.entries), formatSize(c.bytes), formatSize(c.evictableBytes), c.nextExpiry ? shortTime(c.nextExpiry) : '-',
      useCell(c.bytes, usage.quota, bars, color),
    ]), { right: [1, 2, 3], raw: [5], maxWidth: width, style: (line, n) => (n === 0 && color ? bold(line) : line) })
    io.out(withBarsIfTheyFit(categories, width))
    return 0
  },
}

module.exports = { list, show, describeComposition }
