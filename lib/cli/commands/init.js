'use strict'
// `rotifer init [name|path]`: a project as upstream's init makes it (R-RUN-1): `rotifer.json`
// (`{ name, version, author, genes_dir, default_domain }`) and the genes folder with the example
// gene `hello-world`, which remembers (through ctx.memory) how often it greeted each name. The
// project goes into the folder `name` of the current folder (default `my-agent`, upstream's), or
// the folder a path names (`.`, `../x` is refused, an absolute path is taken as it is); inside an
// npm project (a package.json and no rotifer.json) plain `init` makes that folder the project.
// It never writes over anything: a folder holding rotifer.json, or a file it would write, is
// refused, and a failure halfway removes what was made.

const fs = require('node:fs')
const path = require('node:path')
const { CliError, UsageError } = require('../errors')
const { CONFIG_FILE, newProjectConfig, writeProjectConfig } = require('../../formats/project-config')
const { DOMAIN, FIDELITIES } = require('../../formats/phenotype')
const { writeStarterGene, STARTER_FILES } = require('../starter-genes')

const DEFAULT_NAME = 'my-agent'
/** A folder name of letters (of any script), digits, '.', '_' and '-': upstream accepts `init 测试项目`. */
const PROJECT_NAME = /^[\p{L}\p{N}][\p{L}\p{N}\p{M}._-]{0,99}$/u
const GENE = 'hello-world'

const isFile = (p) => {
  try {
    return fs.statSync(p).isFile()
  } catch {
    return false
  }
}

/**
 * Where the project goes and its name: `{ dir, name, inPlace }`. `inPlace` when the folder
 * exists already (it then must not hold a project).
 */
function targetOf(given, cwd) {
  if (given === undefined) {
    // Inside an npm project that is not a Rotifer project yet: the npm project becomes one.
    if (isFile(path.join(cwd, 'package.json')) && !isFile(path.join(cwd, CONFIG_FILE))) return { dir: cwd, name: packageName(cwd) }
    return { dir: path.resolve(cwd, DEFAULT_NAME), name: DEFAULT_NAME }
  }
  const isPath = given === '.' || path.isAbsolute(given) || given.includes('/') || given.includes(path.sep)
  if (given.split(/[\\/]/).includes('..') || given.includes('\0') || (!isPath && !PROJECT_NAME.test(given))) {
    throw new UsageError(`invalid project name ${JSON.stringify(given)}: use letters, digits, ".", "_" and "-" (at most 100 characters, no spaces), ".", or a path without ".."`, 'init', { seeHelp: false })
  }
  const dir = path.resolve(cwd, given)
  return { dir, name: isPath ? packageName(dir) : given }
}

/** The project's name for a folder: its package.json's name (without the scope), else the folder's. */
function packageName(dir) {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
    if (pkg && typeof pkg.name === 'string' && pkg.name.trim() !== '') return pkg.name.replace(/^@[^/]+\//, '')
  } catch {
    // no usable package.json
  }
  return path.basename(dir) || DEFAULT_NAME
}

/** True when `dir` is inside the folder holding the node_modules this CLI was installed into. */
function installedLocallyFor(dir) {
  const parts = __dirname.split(path.sep)
  const at = parts.lastIndexOf('node_modules')
  if (at < 0) return false
  const owner = parts.slice(0, at).join(path.sep) || path.sep
  const rel = path.relative(owner, dir)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))
}

/** Makes `dir` (a new folder, or an existing one holding no project); returns whether it made it. */
function prepare(dir) {
  let stat = null
  try {
    stat = fs.statSync(dir)
  } catch (e) {
    if (e.code !== 'ENOENT') throw new CliError(`cannot look at ${dir} (${e.code || e.message})`)
  }
  if (stat === null) {
    try {
      fs.mkdirSync(dir, { recursive: true })
    } catch (e) {
      throw new CliError(`cannot create ${dir} (${e.code || e.message})`)
    }
    return true
  }
  if (!stat.isDirectory()) throw new CliError(`${dir} already exists and is not a folder; rotifer init never writes over anything: choose another name`)
  if (fs.existsSync(path.join(dir, CONFIG_FILE))) {
    throw new CliError(`${path.join(dir, CONFIG_FILE)} already exists: ${dir} is a project already, and rotifer init never overwrites one; run rotifer commands there, or choose another name`)
  }
  const gene = path.join(dir, 'genes', GENE)
  if (fs.existsSync(gene)) throw new CliError(`${gene} already exists; rotifer init never writes over anything: move it away, or choose another folder`)
  return false
}

const init = {
  name: 'init',
  needsProject: false,
  summary: 'create a project: rotifer.json and the genes folder with a first gene that remembers',
  usage: 'rotifer init [name|path] [--domain <domain>] [--fidelity Wrapped|Hybrid|Native]',
  description: [
    `Makes a project in the folder <name> of the current folder (default ${DEFAULT_NAME}), or in the folder`,
    'a path names ("." for the current one, or an absolute path): rotifer.json ({ name, version',
    '0.1.0, author local-dev, genes_dir "genes", default_domain }) and genes/hello-world/',
    '(phenotype.json, index.ts and testsuite.json), as the upstream playground does. hello-world',
    'remembers, in its agent\'s memory, how many times it greeted each name. Inside an npm project',
    '(a package.json and no rotifer.json), plain rotifer init makes that folder the project. A',
    'folder holding rotifer.json is refused: init never writes over anything.',
  ],
  positionals: ['name'],
  optionalPositionals: ['name'],
  options: {
    domain: { type: 'string', value: '<domain>', help: 'the default gene domain, written as default_domain (default general)' },
    fidelity: { type: 'string', value: '<Wrapped|Hybrid|Native>', help: 'the fidelity of the example gene (default Wrapped)' },
    'no-genesis': { type: 'boolean', help: "upstream's flag to skip its Genesis genes; none are installed here, so it changes nothing" },
  },
  examples: ['rotifer init', 'rotifer init .', 'rotifer init my-agent --domain code.format'],

  async run({ positionals, options, cwd, io }) {
    const { dir, name } = targetOf(positionals.name, cwd)
    const domain = options.domain === undefined ? 'general' : options.domain
    if (!DOMAIN.test(domain)) throw new UsageError(`invalid --domain ${JSON.stringify(domain)}: use lower-case letters, digits and dots, like "general" or "code.format"`, 'init', { seeHelp: false })
    const fidelity = options.fidelity === undefined ? 'Wrapped' : options.fidelity
    if (!FIDELITIES.includes(fidelity)) throw new UsageError(`invalid --fidelity ${JSON.stringify(fidelity)}: give ${FIDELITIES.join(', ')}`, 'init', { seeHelp: false })

    const made = prepare(dir)
    const genesExisted = fs.existsSync(path.join(dir, 'genes'))
    const written = []
    try {
      const config = newProjectConfig(name, { domain })
      written.push(writeProjectConfig(dir, config))
      writeStarterGene(path.join(dir, config.genes_dir), GENE, { domain, fidelity })
    } catch (e) {
      // Only what init made goes: the folder it created, else its own files.
      if (made) fs.rmSync(dir, { recursive: true, force: true })
      else {
        for (const f of written) fs.rmSync(f, { force: true })
        fs.rmSync(path.join(dir, genesExisted ? path.join('genes', GENE) : 'genes'), { recursive: true, force: true })
      }
      if (e instanceof CliError) throw e
      throw new CliError(`cannot create the project in ${dir} (${e.code || e.message}); nothing was left behind`)
    }
    const rotifer = installedLocallyFor(dir) ? 'npx rotifer' : 'rotifer'
    const rel = path.relative(cwd, dir)
    const cd = rel === '' ? '' : `cd ${/^[\w./-]+$/.test(rel) ? rel : JSON.stringify(rel)} && `
    io.out(`Created project "${name}" in ${dir}`)
    io.out('  rotifer.json')
    for (const f of STARTER_FILES) io.out(`  genes/${GENE}/${f}`)
    io.out(`Next: ${cd}${rotifer} agent create greeter -g ${GENE} && ${rotifer} agent run greeter --input '{"name":"world"}'`)
    io.out(`      run it again and it remembers; ${rotifer} test ${GENE} runs its suite`)
    return 0
  },
}

module.exports = { init }
