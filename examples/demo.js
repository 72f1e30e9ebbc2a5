'use strict'
// The Agent Memory API end to end, through the real `rotifer` CLI.
//
// In a fresh temporary project holding the genes of examples/formatter/ (the formatter, in
// TypeScript, and the counter, a WASM gene written in WAT and compiled here with wabt), this
// creates an agent running both in sequence with a memory quota, runs it twice (first with
// indent 4, then with no indent: the formatter uses the indent it remembered, and the counter
// counts the runs it remembered), lists the agent's memory, and runs both genes' test suites.
// Run it with `npm run demo` (builds the addon first) or `node examples/demo.js [--keep]`;
// --keep leaves the temporary project in place to explore. From the installed package
// (`node node_modules/@rotifer/playground/examples/demo.js`), where there is no WAT compiler,
// it uses the gene.wasm the package ships.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const BIN = path.join(__dirname, '..', 'bin', 'rotifer.js')
const GENES = path.join(__dirname, 'formatter', 'genes')
const keep = process.argv.includes('--keep')

const project = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-demo-'))
fs.writeFileSync(path.join(project, 'rotifer.json'), JSON.stringify({ name: 'formatter-demo' }, null, 2) + '\n')
for (const gene of ['formatter', 'counter']) {
  // gene.wasm is built below from gene.wat, not copied (`npm run build:examples` makes one too).
  fs.cpSync(path.join(GENES, gene), path.join(project, 'genes', gene), { recursive: true, filter: (src) => !src.endsWith('.wasm') })
}

function say(text) {
  process.stdout.write(`\n${text}\n`)
}

/** Runs `rotifer <args>` in the project, echoing the command and its output; stops on failure. */
function rotifer(...args) {
  const shown = args.map((a) => (/^[\w./=:-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(' ')
  process.stdout.write(`$ rotifer ${shown}\n`)
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: project, encoding: 'utf8' })
  const output = (r.stdout + r.stderr).trimEnd()
  if (output) process.stdout.write(output.replace(/^(?=.)/gm, '  ') + '\n')
  if (r.status !== 0) fail(`rotifer ${args[0]} exited with ${r.status ?? r.signal}`)
  return r.stdout
}

function fail(message) {
  process.stderr.write(`\ndemo failed: ${message}\nthe project is kept at ${project}\n`)
  process.exit(1)
}

const CODE = 'function greet(name) {\n  if (name) {\n    return "hi " + name;\n  }\n}'

/** The counter's module: compiled from its WAT in a clone of the repository, else the shipped one. */
async function counterWasm() {
  const wat = path.join(GENES, 'counter', 'gene.wat')
  const compiler = path.join(__dirname, '..', 'scripts', 'wat.js')
  if (fs.existsSync(compiler)) return require(compiler).compileWat(fs.readFileSync(wat, 'utf8'), 'genes/counter/gene.wat')
  const shipped = path.join(GENES, 'counter', 'gene.wasm')
  if (!fs.existsSync(shipped)) fail(`there is no ${shipped}, and no WAT compiler to make it: run \`npm run build:examples\` in the repository`)
  return fs.readFileSync(shipped)
}

async function main() {
  const counter = path.join(project, 'genes', 'counter')
  fs.writeFileSync(path.join(counter, 'gene.wasm'), await counterWasm())

  say(`A fresh project at ${project}, with two genes: genes/formatter/ (TypeScript) and genes/counter/\n` +
    '(WAT compiled to gene.wasm: a WASM gene using the memory host functions).')
  say('1. Create an agent that runs the formatter, then the counter (composition Seq), with a 1 MB memory quota:')
  rotifer('agent', 'create', 'demo-agent', '--genes', 'formatter', 'counter', '--memory-quota=1MB')

  say('2. Run it asking for an indent of 4: the formatter uses it and remembers it (a PREFERENCE entry);\n' +
    '   the counter counts this first run in memory (a PATTERN entry) and logs it on stderr:')
  const first = JSON.parse(rotifer('agent', 'run', 'demo-agent', '--input', JSON.stringify({ code: CODE, indent: 4 })))

  say('3. Run it again without an indent: the formatter reads the one it remembered, the counter counts on:')
  const second = JSON.parse(rotifer('agent', 'run', 'demo-agent', '--input', JSON.stringify({ code: CODE })))
  if (first.indent !== 4 || second.indent !== 4) fail(`expected indent 4 in both runs, got ${first.indent} and ${second.indent}`)
  if (first.runs !== 1 || second.runs !== 2) fail(`expected runs 1 then 2, got ${first.runs} and ${second.runs}`)
  say(`   The second run used indent ${second.indent}, remembered from the first run, and is run number ${second.runs}:`)
  process.stdout.write(second.formatted.replace(/^/gm, '     | ') + '\n')

  say("4. The deployer's view of the agent's memory: one entry per gene, each created with the gene's v2 id (values are never shown):")
  rotifer('agent', 'memory', 'list', 'demo-agent')

  say("5. The genes' own test suites run against a throw-away test memory, not the agent's:")
  rotifer('test', 'formatter')
  rotifer('test', 'counter')

  if (keep) {
    say(`Done. The project is kept at ${project}; try: cd ${project} && node ${BIN} --help`)
  } else {
    fs.rmSync(project, { recursive: true, force: true })
    say('Done. The temporary project has been removed (run with --keep to explore it).')
  }
}

main().catch((e) => fail(e.message))
