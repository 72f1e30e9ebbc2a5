'use strict'
// The Agent Memory API end to end, through the real `rotifer` CLI.
//
// In a fresh temporary project holding the formatter gene of examples/formatter/, this creates
// an agent with a memory quota, runs it twice (first with indent 4, then with no indent: the
// gene uses the indent it remembered), lists the agent's memory, and runs the gene's test suite.
// Run it with `npm run demo` (builds the addon first) or `node examples/demo.js [--keep]`;
// --keep leaves the temporary project in place to explore.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const BIN = path.join(__dirname, '..', 'bin', 'rotifer.js')
const GENE = path.join(__dirname, 'formatter', 'genes', 'formatter')
const keep = process.argv.includes('--keep')

const project = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-demo-'))
fs.writeFileSync(path.join(project, 'rotifer.json'), JSON.stringify({ name: 'formatter-demo' }, null, 2) + '\n')
fs.cpSync(GENE, path.join(project, 'genes', 'formatter'), { recursive: true })

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

say(`A fresh project at ${project}, with the formatter gene in genes/formatter/.`)
say('1. Create an agent that runs the formatter, with a 1 MB memory quota:')
rotifer('agent', 'create', 'demo-agent', '--genes', 'formatter', '--memory-quota=1MB')

say('2. Run it asking for an indent of 4: the gene uses it and remembers it (a PREFERENCE entry):')
const first = JSON.parse(rotifer('agent', 'run', 'demo-agent', '--input', JSON.stringify({ code: CODE, indent: 4 })))

say('3. Run it again without an indent: the gene reads the one it remembered:')
const second = JSON.parse(rotifer('agent', 'run', 'demo-agent', '--input', JSON.stringify({ code: CODE })))
if (first.indent !== 4 || second.indent !== 4) fail(`expected indent 4 in both runs, got ${first.indent} and ${second.indent}`)
say(`   The second run used indent ${second.indent}, remembered from the first run:`)
process.stdout.write(second.formatted.replace(/^/gm, '     | ') + '\n')

say("4. The deployer's view of the agent's memory (values are never shown):")
rotifer('agent', 'memory', 'list', 'demo-agent')

say("5. The gene's own test suite runs against a throw-away test memory, not the agent's:")
rotifer('test', 'formatter')

if (keep) {
  say(`Done. The project is kept at ${project}; try: cd ${project} && node ${BIN} --help`)
} else {
  fs.rmSync(project, { recursive: true, force: true })
  say('Done. The temporary project has been removed (run with --keep to explore it).')
}
