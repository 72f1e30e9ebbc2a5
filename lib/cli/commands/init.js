'use strict'
// `rotifer init [name]`: a new project in the folder `name` of the current folder, as upstream's
// init makes it (R-RUN-1): `rotifer.json` (`{ name, version, author, genes_dir, default_domain }`)
// and the genes folder with the example gene `hello-world`. It never writes over anything: a
// folder that exists already is refused, and a failure halfway removes what was made.

const fs = require('node:fs')
const path = require('node:path')
const { CliError, UsageError } = require('../errors')
const { newProjectConfig, writeProjectConfig } = require('../../formats/project-config')
const { DOMAIN, FIDELITIES, writePhenotype } = require('../../formats/phenotype')

const DEFAULT_NAME = 'my-rotifer-project'
const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/

/** The example gene's phenotype, in upstream's shape. */
function helloPhenotype(domain, fidelity) {
  const p = {
    domain,
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    outputSchema: { type: 'object', properties: { greeting: { type: 'string' } } },
    version: '0.1.0',
    fidelity,
    transparency: 'Open',
  }
  if (fidelity === 'Hybrid') p.network = { allowedDomains: ['api.example.com'], maxTimeoutMs: 30000, maxResponseBytes: 1048576, maxRequestsPerMin: 10 }
  return p
}

const HELLO_SOURCE = [
  'export async function express(input: { name: string }): Promise<{ greeting: string }> {',
  '  return { greeting: `Hello, ${input.name}! This gene runs in the Rotifer playground.` };',
  '}',
  '',
].join('\n')

const init = {
  name: 'init',
  needsProject: false,
  summary: 'create a new project: rotifer.json and the genes folder with an example gene',
  usage: 'rotifer init [name] [--domain <domain>] [--fidelity Wrapped|Hybrid|Native]',
  description: [
    `Creates the folder <name> (default ${DEFAULT_NAME}) in the current folder, with rotifer.json`,
    '({ name, version 0.1.0, author local-dev, genes_dir "genes", default_domain }) and',
    'genes/hello-world/ (phenotype.json and index.ts), as the upstream playground does. A folder',
    'that exists already is refused: init never writes over anything.',
  ],
  positionals: ['name'],
  optionalPositionals: ['name'],
  options: {
    domain: { type: 'string', value: '<domain>', help: 'the default gene domain, written as default_domain (default general)' },
    fidelity: { type: 'string', value: '<Wrapped|Hybrid|Native>', help: 'the fidelity of the example gene (default Wrapped)' },
    'no-genesis': { type: 'boolean', help: "upstream's flag to skip its Genesis genes; there are none here, so it changes nothing" },
  },
  examples: ['rotifer init', 'rotifer init my-agent --domain code.format'],

  async run({ positionals, options, cwd, io }) {
    const name = positionals.name === undefined ? DEFAULT_NAME : positionals.name
    if (!PROJECT_NAME.test(name) || name.includes('..')) {
      throw new UsageError(`invalid project name ${JSON.stringify(name)}: use letters, digits, ".", "_" and "-" (a folder name, no path), at most 100 characters`, 'init', { seeHelp: false })
    }
    const domain = options.domain === undefined ? 'general' : options.domain
    if (!DOMAIN.test(domain)) throw new UsageError(`invalid --domain ${JSON.stringify(domain)}: use lower-case letters, digits and dots, like "general" or "code.format"`, 'init', { seeHelp: false })
    const fidelity = options.fidelity === undefined ? 'Wrapped' : options.fidelity
    if (!FIDELITIES.includes(fidelity)) throw new UsageError(`invalid --fidelity ${JSON.stringify(fidelity)}: give ${FIDELITIES.join(', ')}`, 'init', { seeHelp: false })

    const dir = path.resolve(cwd, name)
    try {
      fs.mkdirSync(dir)
    } catch (e) {
      if (e.code === 'EEXIST') throw new CliError(`${dir} exists already; rotifer init makes a new folder and never writes over one: choose another name, or run it elsewhere`)
      throw new CliError(`cannot create ${dir} (${e.code || e.message})`)
    }
    try {
      const config = newProjectConfig(name, { domain })
      writeProjectConfig(dir, config)
      const gene = path.join(dir, config.genes_dir, 'hello-world')
      fs.mkdirSync(gene, { recursive: true })
      writePhenotype(path.join(gene, 'phenotype.json'), helloPhenotype(domain, fidelity))
      fs.writeFileSync(path.join(gene, 'index.ts'), HELLO_SOURCE, { flag: 'wx' })
    } catch (e) {
      fs.rmSync(dir, { recursive: true, force: true })
      if (e instanceof CliError) throw e
      throw new CliError(`cannot create the project in ${dir} (${e.code || e.message}); nothing was left behind`)
    }
    io.out(`Created project "${name}" in ${dir}`)
    io.out('  rotifer.json')
    io.out('  genes/hello-world/phenotype.json')
    io.out('  genes/hello-world/index.ts')
    io.out(`Next: cd ${name} && rotifer run hello-world --input '{"name":"world"}'`)
    return 0
  },
}

module.exports = { init }
