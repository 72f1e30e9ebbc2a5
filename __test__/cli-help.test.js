'use strict'
// `--help` on every command, and the command-line errors of the `rotifer` bin.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { REPO, rotifer, makeProject, oneErrorLine } = require('./cli-harness')

/** The help's `Usage:` lines with their wrapped continuations joined: one line per form. */
function unwrapUsage(help) {
  const lines = help.split('\n')
  const out = []
  for (const line of lines) {
    if (line === '') break
    if (/^ {7}rotifer /.test(line) || line.startsWith('Usage: ')) out.push(line.replace(/^Usage: | {7}/, ''))
    else out[out.length - 1] += ' ' + line.trim()
  }
  return out.map((l, i) => (i === 0 ? `Usage: ${l}` : l)).join('\n')
}

/** Help with each option's wrapped description joined back onto its line. */
function flat(help) {
  return help.replace(/\n {3,}(?=\S)/g, ' ')
}

const COMMANDS = {
  '': /^Usage: rotifer <command>/,
  agent: /^Usage: rotifer agent <command>/,
  'agent create': /^Usage: rotifer agent create <name> -g\|--genes <gene…> \[--composition Seq\|Par\|Cond\|Try\|TryPool\] \[--par-merge first\|concat\|merge\] \[--strategy <word>\] \[--memory-quota=<size>\] \[--allow-anonymization\] \[--max-retention-days=<N>\]/,
  'agent run': /^Usage: rotifer agent run <agent> \[--input <json>\] \[--verbose\] \[--no-sandbox\] \[--timeout <seconds>\]/,
  'agent update': /^Usage: rotifer agent update <agent> \[--memory-quota <size>\] \[--allow-anonymization \| --no-allow-anonymization\] \[--max-retention-days <N>\|none\]/,
  'agent delete': /^Usage: rotifer agent delete <agent> \[--keep-memory\] \[--yes\]/,
  'agent memory': /^Usage: rotifer agent memory <command>/,
  'agent list': /^Usage: rotifer agent list \[--json\]/,
  'agent show': /^Usage: rotifer agent show <agent> \[--json\]/,
  'agent memory list': /^Usage: rotifer agent memory list <agent> \[--category <C>\] \[--key-prefix <p>\] \[--limit <n>\] \[--wide\] \[--json\]/,
  'agent memory get': /^Usage: rotifer agent memory get <agent> <key> \[--json\]/,
  'agent memory log': /^Usage: rotifer agent memory log <agent> \[--since <time>\] \[--action <a>\] \[--key-prefix <p>\] \[--limit <n>\] \[--follow\] \[--summary \[--by hour\|day\]\] \[--wide\] \[--json\]/,
  'agent memory delete': /^Usage: rotifer agent memory delete <agent> \(--key <K> \| --category <C> \| --key-prefix <p>\) \[--yes\]/,
  'agent memory export': /^Usage: rotifer agent memory export <agent> \[--output <file>\] \[--include-cache\]/,
  'agent memory import': /^Usage: rotifer agent memory import <agent> <file> \[--on-conflict fail\|skip\|replace\]/,
  'agent memory backup': /^Usage: rotifer agent memory backup <agent> <file> \[--json\]/,
  'agent memory restore': /^Usage: rotifer agent memory restore <agent> <file> \[--yes\] \[--json\]/,
  gene: /^Usage: rotifer gene <command>/,
  'gene list': /^Usage: rotifer gene list \[-d\|--domain <domain>\] \[--fidelity Wrapped\|Hybrid\|Native\|Unknown\] \[--json\]/,
  'gene id': /^Usage: rotifer gene id <gene>/,
  init: /^Usage: rotifer init \[name\|path\] \[--domain <domain>\] \[--fidelity Wrapped\|Hybrid\|Native\]/,
  list: /^Usage: rotifer list \[-d\|--domain <domain>\] \[--fidelity Wrapped\|Hybrid\|Native\|Unknown\] \[--json\]/,
  wrap: /^Usage: rotifer wrap <gene> \[-d\|--domain <domain>\] \[--fidelity Wrapped\|Hybrid\|Native\] \[--from-skill <path>\]/,
  compile: /^Usage: rotifer compile <gene> \[--check\] \[--wasm <path>\] \[--lang ts\|wasm\]/,
  run: /^Usage: rotifer run <gene> \[--input <json>\] \[--timeout <seconds>\] \[--no-sandbox\]/,
  test: /^Usage: rotifer test <gene>/,
  hello: /^Usage: rotifer hello \[--template <id>\] \[--input <json> \| --file <path> \| --dir <path>\]/,
  scan: /^Usage: rotifer scan \[path\] \[--skills\] \[--skills-path <dir>\]/,
  doctor: /^Usage: rotifer doctor \[--json\]/,
}

test('--help on every command prints its usage, exits 0 and runs nothing', (t) => {
  const root = makeProject(t)
  for (const [command, usage] of Object.entries(COMMANDS)) {
    const words = command ? command.split(' ') : []
    // Extra, even invalid, arguments do not stop the help.
    const r = rotifer(root, ...words, 'some-name', '--bogus', '--help')
    assert.equal(r.status, 0, `${command} --help: ${r.stderr}`)
    assert.match(unwrapUsage(r.stdout), usage, command)
    assert.equal(r.stderr, '')
  }
  assert.match(unwrapUsage(rotifer(root, 'agent', 'memory', 'delete', '-h').stdout), COMMANDS['agent memory delete'])
  assert.equal(fs.existsSync(path.join(root, '.rotifer')), false)
  // Groups list their commands.
  assert.match(rotifer(root, 'agent', '--help').stdout, /\n {2}create [^]*?\n {2}list [^]*?\n {2}show [^]*?\n {2}run [^]*?\n {2}update [^]*?\n {2}delete [^]*?\n {2}memory /)
  assert.match(rotifer(root, '--help').stdout, /\n {2}agent [^]*?\n {2}gene [^]*?\n {2}init [^]*?\n {2}list [^]*?\n {2}wrap [^]*?\n {2}compile [^]*?\n {2}run [^]*?\n {2}test /)
  // Short options are shown with their long form.
  assert.match(rotifer(root, 'wrap', '--help').stdout, /\n {2}-d, --domain <domain> /)
  assert.match(rotifer(root, 'agent', 'create', '--help').stdout, /\n {2}-g, --genes <gene…> /)
  // Upstream's flags are there, with the values they accept and their defaults.
  const create = flat(rotifer(root, 'agent', 'create', '--help').stdout)
  assert.match(create, /--composition <kind\|file\.json> +how --genes compose: Seq, Par, Cond, Try, TryPool \(default Seq\)/)
  assert.match(create, /--par-merge <merge> +with --composition Par: first, concat, merge \(default first/)
  const run = flat(rotifer(root, 'agent', 'run', '--help').stdout)
  assert.match(run, /--input <json> .*default \{"name":"world"\}/)
  assert.match(run, /--verbose +write each gene's run/)
  assert.match(run, /--timeout <seconds> .*default 60,/)
})

test('a wrong command line is one error line and exit code 2', (t) => {
  const root = makeProject(t)
  const cases = [
    [[], /^error: rotifer: missing command: agent, gene, init, list, wrap, compile, run, test, hello, scan, doctor or binding/],
    [['wrap', 'g', '-x'], /^error: rotifer wrap: unknown option -x/],
    [['wrap', 'g', '-d', 'Bad Domain'], /^error: rotifer wrap: invalid --domain "Bad Domain": use lower-case letters/],
    [['wrap', 'g', '--fidelity', 'Full'], /invalid --fidelity "Full": give Wrapped, Hybrid, Native/],
    [['init', 'a', 'b'], /^error: rotifer init: unexpected argument "b"/],
    [['init', '../up'], /^error: rotifer init: invalid project name "\.\.\/up"/],
    [['run', 'g', '--input', '{}', '--no-sandbox=1'], /--no-sandbox takes no value/],
    [['bogus'], /^error: rotifer: unknown command "bogus" \(see rotifer --help\)$/],
    [['agent', 'memory'], /missing command: list, get, log, delete, export, import, backup or restore/],
    [['agent', 'create', 'x', '--genes', 'g', '--nope'], /^error: rotifer agent create: unknown option --nope/],
    [['agent', 'create', 'x', '--genes', 'g', '--allow-anonymization=yes'], /--allow-anonymization takes no value/],
    [['agent', 'create', 'x', '--genes'], /--genes needs at least one value/],
    // Upstream's flags: a bad value names the accepted ones.
    [['agent', 'create', 'x', '-g', 'a', 'b', '--composition', 'Loop'], /invalid --composition "Loop" with --genes: use one of Seq, Par, Cond, Try, TryPool/],
    [['agent', 'create', 'x', '-g', 'a', 'b', '--composition', 'Par', '--par-merge', 'all'], /invalid --par-merge "all": use one of first, concat, merge/],
    [['agent', 'create', 'x', '-g', 'a', 'b', '--par-merge', 'concat'], /--par-merge applies to --composition Par, not Seq/],
    [['agent', 'create', 'x', '-g', 'a', 'b', '--strategy', 'no way'], /invalid --strategy "no way": give a word/],
    [['agent', 'create', 'x', '-g', 'a', '--composition', 'Cond'], /--composition Cond needs two genes/],
    [['agent', 'run', 'a', '--timeout', '0'], /invalid --timeout "0"/],
    [['agent', 'run', 'a', 'b', '--input', '{}'], /unexpected argument "b"/],
    [['agent', 'memory', 'list'], /missing <agent>/],
    [['agent', 'update'], /missing <agent>/],
    [['agent', 'update', 'a', '--memory-quota=-5MB'], /^error: rotifer agent update: invalid --memory-quota: /],
    [['agent', 'update', 'a', '--no-allow-anonymization=1'], /--no-allow-anonymization takes no value/],
    [['agent', 'delete'], /missing <agent>/],
    [['agent', 'delete', 'a', '--keep-memroy'], /unknown option --keep-memroy; did you mean "--keep-memory"\?/],
    [['agent', 'memory', 'delete', 'a', '--key', 'k', '--key', 'j'], /--key is given more than once/],
    // One rule for a repeated option, flags included (a list option collects instead).
    [['agent', 'memory', 'list', 'a', '--limit', '1', '--limit', '2'], /^error: rotifer agent memory list: --limit is given more than once/],
    [['agent', 'memory', 'list', 'a', '--json', '--json'], /^error: rotifer agent memory list: --json is given more than once/],
    [['agent', 'delete', 'a', '--yes', '--keep-memory', '--yes'], /--yes is given more than once/],
    [['run', 'gene', '--input'], /--input needs a value/],
    [['test'], /missing <gene>/],
    [['gene', 'id'], /missing <gene>/],
    // Close names are suggested.
    [['agnet'], /^error: rotifer: unknown command "agnet"; did you mean "agent"\? \(see rotifer --help\)$/],
    [['gene', 'lst'], /unknown command "lst"; did you mean "list"\?/],
    [['agent', 'memory', 'list', 'a', '--categroy', 'CACHE'], /unknown option --categroy; did you mean "--category"\?/],
    // --input must be JSON: a usage error, before any agent or gene is looked at.
    [['run', 'absent', '--input', '{'], /^error: rotifer run: --input is not valid JSON \(.*\); quote it for the shell/],
  ]
  for (const [args, message] of cases) {
    const r = rotifer(root, ...args)
    assert.equal(r.status, 2, args.join(' '))
    assert.equal(r.stdout, '')
    assert.match(oneErrorLine(r), message)
  }
})

test("rotifer --help's summaries are the commands' own", () => {
  const { tree } = require('../lib/cli/main')
  for (const [name, summary] of Object.entries(tree.summaries)) {
    assert.equal(summary, tree.commands[name].summary, name)
  }
  const r = rotifer(REPO, '--help')
  for (const summary of Object.values(tree.summaries)) assert.ok(r.stdout.replace(/\s+/g, ' ').includes(summary.split(' ').slice(0, 4).join(' ')), summary)
})
