'use strict'
// The `rotifer` command: finds the command named by the leading words, shows help, parses
// options and runs it. Every failure becomes one line on stderr and a non-zero exit code
// (2 for a wrong command line, 1 for anything else).

const { CliError, UsageError, describeError, oneLine } = require('./errors')
const { printable } = require('./terminal-text')

/** The commands that run genes on a worker: its thread starts before anything else loads. */
const RUNS_GENES = ['test']

// Start-up loads only what the command needs: each command's module is required when the
// command is looked up (a getter below), not before; help loads commander's layout.
const modules = new Map()
function load(file) {
  let m = modules.get(file)
  if (!m) {
    m = require(file)
    modules.set(file, m)
  }
  return m
}

/** Command groups hold commands (or more groups); commands have a `run`. */
const tree = {
  name: '',
  summary: 'the Rotifer playground CLI: agents, genes and agent memory',
  commands: {
    agent: {
      name: 'agent',
      summary: 'create, run, update and delete agents, inspect and clean their memory',
      commands: {
        get create() { return load('./commands/agent').create },
        get list() { return load('./commands/agent-inspect').list },
        get show() { return load('./commands/agent-inspect').show },
        get run() { return load('./commands/agent').run },
        get update() { return load('./commands/agent-manage').update },
        get delete() { return load('./commands/agent-manage').delete },
        get migrate() { return load('./commands/agent-migrate').migrate },
        memory: {
          name: 'agent memory',
          summary: "inspect, clean and move an agent's memory (the deployer's view)",
          commands: {
            get list() { return load('./commands/agent-memory').list },
            get get() { return load('./commands/agent-memory-get').get },
            get log() { return load('./commands/agent-memory-log').log },
            get delete() { return load('./commands/agent-memory').delete },
            get export() { return load('./commands/agent-memory-transfer').export },
            get import() { return load('./commands/agent-memory-transfer').import },
            get backup() { return load('./commands/agent-memory-backup').backup },
            get restore() { return load('./commands/agent-memory-backup').restore },
          },
        },
      },
    },
    gene: {
      name: 'gene',
      summary: "list the project's genes and show their v2 ids",
      commands: {
        get list() { return load('./commands/gene').geneList },
        get id() { return load('./commands/gene').id },
      },
    },
    // (Their summaries are in `summaries` below too, so that `rotifer --help` loads none of them.)
    get init() { return load('./commands/init').init },
    get list() { return load('./commands/gene').list },
    get wrap() { return load('./commands/wrap').wrap },
    get compile() { return load('./commands/compile').compile },
    get run() { return load('./commands/run').run },
    get test() { return load('./commands/test').test },
    get hello() { return load('./commands/hello').hello },
    get scan() { return load('./commands/scan').scan },
    get doctor() { return load('./commands/doctor').doctor },
    // Not upstream's: memory on a PostgreSQL server (docs/postgres.md).
    binding: {
      name: 'binding',
      summary: "set up a PostgreSQL database for agents' memory and a deployment's role",
      commands: {
        get setup() { return load('./commands/binding').setup },
      },
    },
  },
  /** What `rotifer --help` says of the commands above; a test holds them to the commands' own. */
  summaries: {
    init: 'create a project: rotifer.json and the genes folder with a first gene that remembers',
    list: "list the project's genes: name, domain, fidelity, compiled or not, and Gene ID (v2)",
    wrap: "write a gene's phenotype.json (fidelity Wrapped) and print its Gene ID (v2)",
    compile: 'compile a gene into gene.ir.wasm (or --check it) and print its Gene ID (v2)',
    run: 'run one gene on its own, outside any agent (memory calls are denied)',
    test: "run a gene's test suite (or the standard checks) against a fresh test memory",
    hello: 'quick start: create and run an agent from a template, one that remembers',
    scan: 'list candidate genes in code (exported functions), or agent skills with --skills',
    doctor: 'check the toolchain, the native binding, memory and the sandbox',
  },
}

/** The deepest command or group the leading words name, and the words after it. */
function resolve(argv) {
  let node = tree
  let i = 0
  while (node.commands && i < argv.length && Object.prototype.hasOwnProperty.call(node.commands, argv[i])) {
    node = node.commands[argv[i]]
    i++
  }
  return { node, rest: argv.slice(i) }
}

function fullName(node) {
  return node.name ? `rotifer ${node.name}` : 'rotifer'
}

/**
 * commander's Help class, from its own file: `require('commander')` also loads what parsing
 * needs (child_process and more), which help does not.
 */
function commanderHelp() {
  try {
    const path = require('node:path')
    return require(path.join(path.dirname(require.resolve('commander')), 'lib', 'help.js'))
  } catch {
    return require('commander')
  }
}

/**
 * commander's help layout (Help#formatItem, Help#boxWrap) at `width` columns, measuring text
 * as the terminal does (CJK and emoji take two columns).
 */
function helper(width) {
  const { Help } = commanderHelp()
  const { displayWidth } = require('./format')
  const h = new Help()
  h.helpWidth = width
  // Wrap descriptions even in a narrow column (commander's default gives up below 40).
  h.minWidthToWrap = 16
  h.displayWidth = (text) => displayWidth(text)
  return h
}

/** The width help is laid out in: the terminal's, at most 100; 80 when not a terminal. */
function helpWidth() {
  return Math.min(100, require('./format').terminalWidth(process.stdout, 80))
}

/** Rows of `[term, description]` as aligned items, descriptions wrapped under themselves. */
function items(h, rows) {
  const termWidth = Math.max(...rows.map((r) => h.displayWidth(r[0])))
  return rows.map(([term, text]) => h.formatItem(term, termWidth, text, h))
}

/**
 * `Usage: …` lines, wrapped between the parts of the synopsis (never inside `[…]` or `(…)`),
 * each continuation indented under the first part after the command's name.
 */
function usageLines(h, usage, commandWords) {
  const out = []
  usage.split('\n').map((l) => l.trim()).forEach((line, n) => {
    const lead = n === 0 ? 'Usage: ' : '       '
    const head = line.startsWith(commandWords + ' ') ? commandWords + ' ' : ''
    // Spaces inside brackets become a placeholder, so that boxWrap breaks only between parts.
    let depth = 0
    const glued = [...line.slice(head.length)].map((c) => {
      if (c === '[' || c === '(') depth++
      if (c === ']' || c === ')') depth--
      return c === ' ' && depth > 0 ? '\u0001' : c
    }).join('')
    // Continuations go under the first part after the command's name, or, when a part would
    // not fit there, just in from "Usage:".
    const widestPart = Math.max(...glued.split(' ').map((p) => h.displayWidth(p)))
    const indent = ' '.repeat(lead.length + (lead.length + head.length + widestPart <= h.helpWidth ? head.length : 2))
    // Greedy: as many parts on a line as fit (a part too wide for any line goes alone).
    const lines = [lead + head.trimEnd()]
    for (const part of glued.split(' ').map((p) => p.replace(/\u0001/g, ' '))) {
      const last = lines[lines.length - 1]
      const bare = last.trim() === '' || last === lead + head.trimEnd()
      if (h.displayWidth(`${last} ${part}`) <= h.helpWidth || (bare && last !== indent)) lines[lines.length - 1] = `${last} ${part}`
      else lines.push(indent + part)
    }
    out.push(lines.join('\n'))
  })
  return out
}

/**
 * An example command line, broken with ` \` between words (outside quotes) when it is wider
 * than the help: what is printed can still be pasted into a shell.
 */
function exampleLines(h, example) {
  const width = h.helpWidth - 2
  if (h.displayWidth(example) <= width) return [`  ${example}`]
  const words = example.match(/(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"])+/g) || [example]
  const lines = []
  let line = ''
  for (const w of words) {
    const next = line ? `${line} ${w}` : w
    if (line && h.displayWidth(next) + 2 > width - (lines.length ? 4 : 0)) {
      lines.push(line + ' \\')
      line = w
    } else {
      line = next
    }
  }
  lines.push(line)
  return lines.map((l, i) => (i === 0 ? `  ${l}` : `      ${l}`))
}

function groupHelp(node) {
  const h = helper(helpWidth())
  const names = Object.keys(node.commands)
  return [
    ...usageLines(h, `${fullName(node)} <command> [options]`, fullName(node)),
    '',
    h.boxWrap(node.summary.charAt(0).toUpperCase() + node.summary.slice(1) + '.', h.helpWidth),
    '',
    'Commands:',
    ...items(h, names.map((n) => [n, (node.summaries && node.summaries[n]) || node.commands[n].summary])),
    '',
    h.boxWrap(`Run "${fullName(node)} <command> --help" for the options of a command.` +
      (node === tree ? ' The project root is the nearest folder upwards holding rotifer.json; outside one, list, agent, compile, run, test, wrap and hello refuse to run, and the memory commands take the current folder.' : ''), h.helpWidth),
  ].join('\n')
}

function commandHelp(cmd) {
  const h = helper(helpWidth())
  const rows = Object.entries(cmd.options || {}).map(([name, o]) => [
    (o.short ? `-${o.short}, ` : '') + (o.type === 'boolean' ? `--${name}` : `--${name} ${o.value || '<value>'}`),
    o.help + (o.required ? ' (required)' : ''),
  ])
  rows.push(['-h, --help', 'show this help'])
  return [
    ...usageLines(h, cmd.usage, `rotifer ${cmd.name}`),
    '',
    h.boxWrap(cmd.description.join(' '), h.helpWidth),
    '',
    'Options:',
    ...items(h, rows),
    ...(cmd.examples && cmd.examples.length ? ['', 'Examples:', ...cmd.examples.flatMap((e) => exampleLines(h, e))] : []),
  ].join('\n')
}

function helpOf(node) {
  return node.commands ? groupHelp(node) : commandHelp(node)
}

/**
 * Runs the CLI on `argv` (without `node` and the script). Returns the exit code; writes through
 * `io.out` / `io.err` (one line or block per call).
 */
async function main(argv, io) {
  if (RUNS_GENES.includes(argv.slice(0, argv[0] === 'agent' ? 2 : 1).join(' ')) && !argv.includes('--help') && !argv.includes('-h')) {
    require('../runtime/prestart').prestart(argv)
  }
  const { parseArgs, wantsHelp } = require('./args')
  const { node, rest } = resolve(argv)
  let root = null
  try {
    if (wantsHelp(rest) || (node === tree && rest[0] === 'help')) {
      io.out(helpOf(node))
      return 0
    }
    if (node === tree && (rest[0] === '--version' || rest[0] === '-V')) {
      io.out(require('../../package.json').version)
      return 0
    }
    if (node.commands) {
      if (rest.length === 0) {
        const names = Object.keys(node.commands)
        throw new UsageError(`missing command: ${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`, node.name || null)
      }
      const { didYouMean } = require('./suggest')
      const what = rest[0].startsWith('-') ? `option ${rest[0]}` : `command "${rest[0]}"${didYouMean(rest[0], Object.keys(node.commands))}`
      throw new UsageError(`unknown ${what}`, node.name || null)
    }
    const args = parseArgs(rest, node)
    // `rotifer init` makes a new project: it needs none, and a broken one above must not stop it.
    if (node.needsProject === false) return await node.run({ ...args, cwd: process.cwd(), io })
    const { findProjectRoot, checkProjectFile, NOT_IN_PROJECT } = require('./project')
    root = findProjectRoot(process.cwd())
    // Upstream's project commands (list, agent, compile, run, test, wrap, hello) need rotifer.json.
    if (checkProjectFile(root) === null && node.needsProject === true) throw new CliError(NOT_IN_PROJECT)
    return await node.run({ ...args, root, io })
  } catch (e) {
    // A gene's code and message are in it: one line, nothing the terminal would act on.
    io.err(`error: ${printable(oneLine(withAgentNames(messageOf(e), root)))}`)
    return e instanceof CliError ? e.exitCode : 1
  }
}

/**
 * The memory API names agents by id (`agent "5d3e…"`, `not "5d3e…"`): where the project has a
 * record with that id, it becomes `agent "my-agent" (5d3e…)`, as the CLI's own messages say it.
 */
function withAgentNames(message, root) {
  const ids = /(agent )?"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"/g
  if (root === null || !ids.test(message)) return message
  let names
  try {
    const { readAgents } = require('./agents')
    names = new Map(readAgents(root).map((a) => [a.id, a.name]))
  } catch {
    return message
  }
  return message.replace(ids, (whole, _, id) => (names.has(id) ? `agent "${names.get(id)}" (${id})` : whole))
}

function messageOf(e) {
  if (e instanceof UsageError) {
    const cmd = e.command ? `rotifer ${e.command}` : 'rotifer'
    return e.seeHelp ? `${cmd}: ${e.message} (see ${cmd} --help)` : `${cmd}: ${e.message}`
  }
  if (e instanceof CliError) return e.message
  // A MemoryError from the memory API shows its code; anything else is unexpected.
  return describeError(e)
}

module.exports = { main, tree }
