'use strict'
// `rotifer hello [--template <id>] [--input <json> | --file <path> | --dir <path>]`: upstream's
// quick start: an agent made from a template and run at once. The template's genes are this
// package's starter genes, written into the project when it has none of that name; the agent
// `hello-<id>` is created the first time and reused after, so its memory carries over: run it
// twice and it remembers. What happens goes to stderr; stdout is the agent's JSON output, as
// `rotifer agent run` prints it.

const fs = require('node:fs')
const path = require('node:path')
const readline = require('node:readline')
const { CliError, UsageError } = require('../errors')
const { genesDirOf } = require('../project')
const { readAgents } = require('../agents')
const { writeStarterGene } = require('../starter-genes')
const { canAsk } = require('../interactive')
const { didYouMean } = require('../suggest')
const agent = require('./agent')

const TEMPLATES = [
  {
    id: 'greeter',
    description: 'greets you by name, and remembers how many times it did',
    genes: ['hello-world'],
    exampleInput: { name: 'world' },
  },
  {
    id: 'text-stats',
    description: 'counts the words of a text (--file, --dir or stdin), keeping running totals',
    genes: ['text-stats'],
    exampleInput: { text: 'Rotifers are microscopic animals. This agent remembers what it has read.' },
    fileMapping: { '.md': 'text', '.txt': 'text' },
  },
]

/** Upstream's templates, whose genes (its Genesis genes and cloud genes) are not here. */
const UPSTREAM_TEMPLATES = ['quality-advisor', 'uiux-diagnosis', 'content-analysis', 'code-security', 'doc-qa', 'web3-toolkit']

const MENU_PROMPT = `Template [1-${TEMPLATES.length}, Enter for 1]: `

/**
 * At a terminal, upstream's menu: the templates, numbered, on stderr; the answer (a number or an
 * id; Enter for the first) from stdin. Null when the person cancels (Ctrl-C, end of input).
 */
function chooseTemplate(io) {
  const width = Math.max(...TEMPLATES.map((t) => t.id.length))
  io.err('What would you like your agent to do?')
  TEMPLATES.forEach((t, i) => io.err(`  ${i + 1}  ${t.id.padEnd(width)}  ${t.description}`))
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })
    let answered = false
    rl.on('SIGINT', () => rl.close())
    rl.question(MENU_PROMPT, (answer) => {
      answered = true
      rl.close()
      const a = answer.trim()
      const picked = a === '' ? TEMPLATES[0] : /^[0-9]+$/.test(a) ? TEMPLATES[Number(a) - 1] : TEMPLATES.find((t) => t.id === a)
      if (picked) resolve(picked)
      else reject(new UsageError(`no template ${JSON.stringify(a)}: answer 1 to ${TEMPLATES.length}, or one of ${TEMPLATES.map((t) => t.id).join(', ')}`, 'hello', { seeHelp: false }))
    })
    rl.on('close', () => {
      if (!answered) {
        process.stderr.write('\n')
        resolve(null)
      }
    })
  })
}

function templateOf(id) {
  if (id === undefined) return TEMPLATES[0]
  const found = TEMPLATES.find((t) => t.id === id)
  if (found) return found
  if (UPSTREAM_TEMPLATES.includes(id)) {
    throw new CliError(`template "${id}" not found: it is one of the upstream playground's templates, whose genes are not shipped here; use ${TEMPLATES.map((t) => t.id).join(' or ')} (rotifer hello --list-templates)`)
  }
  throw new CliError(`template "${id}" not found${didYouMean(id, TEMPLATES.map((t) => t.id))}; rotifer hello --list-templates lists them`)
}

/** A file as the template's input: by extension, else JSON, else `{ text }`. */
function fileInput(file, template) {
  let text
  try {
    text = fs.readFileSync(path.resolve(file), 'utf8')
  } catch (e) {
    throw new CliError(e.code === 'ENOENT' ? `File not found: ${file}` : `cannot read ${file} (${e.code || e.message})`)
  }
  const field = template.fileMapping && template.fileMapping[path.extname(file).toLowerCase()]
  if (field) return { [field]: text }
  try {
    return JSON.parse(text)
  } catch {
    return { text }
  }
}

/**
 * A folder as the template's input: the files of the template's extensions under it (hidden
 * folders, node_modules and dist skipped), their texts joined per field; `{ path }` for a
 * template that takes no files.
 */
function dirInput(dir, template, io) {
  const abs = path.resolve(dir)
  let isDir = false
  try {
    isDir = fs.statSync(abs).isDirectory()
  } catch {
    // not there
  }
  if (!isDir) throw new CliError(`Directory not found: ${dir}`)
  if (!template.fileMapping) return { path: abs }
  const extensions = Object.keys(template.fileMapping)
  const out = {}
  const walk = (d) => {
    let entries = []
    try {
      entries = fs.readdirSync(d, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.') || e.name === 'node_modules' || e.name === 'dist') continue
      const full = path.join(d, e.name)
      if (e.isDirectory()) walk(full)
      else if (e.isFile() && extensions.includes(path.extname(e.name).toLowerCase())) {
        const field = template.fileMapping[path.extname(e.name).toLowerCase()]
        try {
          out[field] = (out[field] || '') + fs.readFileSync(full, 'utf8') + '\n'
        } catch {
          // unreadable: skipped
        }
      }
    }
  }
  walk(abs)
  if (Object.keys(out).length === 0) {
    io.err(`warning: No matching files (${extensions.join(', ')}) found in ${dir}; the template's example input is used`)
    return { ...template.exampleInput }
  }
  return out
}

async function readStdin() {
  const chunks = []
  for await (const c of process.stdin) chunks.push(c)
  return Buffer.concat(chunks).toString('utf8')
}

/** The run's input: --input, --file, --dir, piped stdin, else the template's example. */
async function inputOf(template, options, io) {
  const given = ['input', 'file', 'dir'].filter((o) => options[o] !== undefined)
  if (given.length > 1) throw new UsageError(`give one of --input, --file and --dir, not ${given.map((o) => `--${o}`).join(' and ')}`, 'hello')
  if (options.input !== undefined) return null
  if (options.file !== undefined) return fileInput(options.file, template)
  if (options.dir !== undefined) return dirInput(options.dir, template, io)
  if (!process.stdin.isTTY) {
    const text = await readStdin()
    if (text.trim() !== '') {
      try {
        return JSON.parse(text)
      } catch {
        const field = template.fileMapping ? Object.values(template.fileMapping)[0] : 'text'
        return { [field]: text }
      }
    }
  }
  return { ...template.exampleInput }
}

function listTemplates(io) {
  const width = Math.max(...TEMPLATES.map((t) => t.id.length))
  io.out('Available Templates (rotifer hello --template <id>):')
  for (const t of TEMPLATES) io.out(`  ${t.id.padEnd(width)}  ${t.description} (gene${t.genes.length > 1 ? 's' : ''} ${t.genes.join(', ')})`)
  io.out(`Not here: upstream's templates ${UPSTREAM_TEMPLATES.join(', ')}: their genes come from its Genesis set and its cloud.`)
  return 0
}

const hello = {
  name: 'hello',
  needsProject: true,
  summary: 'quick start: create and run an agent from a template, one that remembers',
  usage: 'rotifer hello [--template <id>] [--input <json> | --file <path> | --dir <path>] [--verbose] [--list-templates]',
  description: [
    "Upstream's quick start: makes the agent hello-<id> from a template (default greeter) and runs",
    "it. The template's genes are written into the genes folder when the project has none of that",
    'name (an existing one is used as it is); the agent is created once and reused, so its memory',
    'carries over between runs. The input is --input, else a --file (by its extension, else as',
    'JSON, else {"text": …}), else a --dir (the files of the template\'s extensions, joined), else',
    "stdin when piped, else the template's example. Without --template (or any input) at a",
    'terminal it asks which template to run. What happens goes to stderr; stdout is the JSON',
    'output, as rotifer agent run prints it.',
  ],
  options: {
    template: { type: 'string', value: '<id>', help: `the template: ${TEMPLATES.map((t) => t.id).join(', ')} (default ${TEMPLATES[0].id})` },
    input: { type: 'string', value: '<json>', help: 'the input: JSON, @file or - (stdin)' },
    file: { type: 'string', value: '<path>', help: 'read the input from a file' },
    dir: { type: 'string', value: '<path>', help: "read the input from a folder's files" },
    verbose: { type: 'boolean', help: "write each gene's run to stderr" },
    'list-templates': { type: 'boolean', help: 'list the templates and exit' },
  },
  examples: ['rotifer hello', 'rotifer hello --template text-stats --file README.md', 'rotifer hello --list-templates'],

  async run({ options, root, io }) {
    if (options['list-templates']) return listTemplates(io)
    const asking = options.template === undefined && ['input', 'file', 'dir'].every((o) => options[o] === undefined) && canAsk()
    const template = asking ? await chooseTemplate(io) : templateOf(options.template)
    if (template === null) {
      io.err('Cancelled: nothing was created')
      return 0
    }
    const input = await inputOf(template, options, io)
    const genesDir = genesDirOf(root)
    for (const g of template.genes) {
      if (!fs.existsSync(path.join(genesDir, g))) {
        writeStarterGene(genesDir, g)
        io.err(`Gene "${g}" written to ${path.relative(root, path.join(genesDir, g))}`)
      }
    }
    const name = `hello-${template.id}`
    const quiet = { out: io.err, err: io.err }
    if (readAgents(root).some((a) => a.name === name)) io.err(`Reusing agent "${name}": its memory carries over`)
    else await agent.create.run({ positionals: { name }, options: { genes: template.genes, strategy: 'hello-template' }, root, io: quiet })
    io.err(`Template ${template.id}: ${template.description}`)
    const started = Date.now()
    await agent.run.run({
      positionals: { agent: name },
      options: { input: input === null ? options.input : JSON.stringify(input), verbose: options.verbose },
      root,
      io,
    })
    io.err(`Execution complete in ${Date.now() - started} ms; run it again and it remembers (rotifer agent memory list ${name})`)
    return 0
  },
}

module.exports = { hello }
