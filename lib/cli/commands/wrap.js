'use strict'
// `rotifer wrap <gene> [-d|--domain <d>] [--fidelity <f>]`: writes the phenotype of a source gene,
// as upstream's wrap does (R-RUN-10): a new one (fidelity Wrapped unless told) when the gene
// folder has none, else the existing one with the domain (and fidelity) given. Prints the Gene
// ID (v2). Everything is checked before anything is written.

const fs = require('node:fs')
const path = require('node:path')
const { CliError, UsageError } = require('../errors')
const { checkGeneName, genesDirOf, geneFolders, geneFiles, geneV2Id, SOURCE_FILES } = require('../project')
const { readProjectConfig } = require('../../formats/project-config')
const { DOMAIN, FIDELITIES, newPhenotype, checkPhenotype, writeJsonAtomically } = require('../../formats/phenotype')
const { didYouMean } = require('../suggest')
const { field, terminalWidth } = require('../format')

const wrap = {
  name: 'wrap',
  needsProject: true,
  summary: "write a gene's phenotype.json (fidelity Wrapped) and print its Gene ID (v2)",
  usage: 'rotifer wrap <gene> [-d|--domain <domain>] [--fidelity Wrapped|Hybrid|Native]',
  description: [
    "Writes <genes_dir>/<gene>/phenotype.json for the gene's folder, as the upstream playground's",
    'wrap does: when there is none, a new phenotype (domain, an open input schema, version 0.1.0,',
    "the project's author, fidelity Wrapped unless --fidelity says otherwise, transparency Open);",
    'when there is one, the same with the domain (and fidelity) given. The domain is --domain, else',
    "the phenotype's own, else rotifer.json's default_domain, else general. Also writes",
    '.gene-manifest.json. Prints the Gene ID (v2). Nothing is written when anything is invalid.',
  ],
  positionals: ['gene'],
  options: {
    domain: { type: 'string', short: 'd', value: '<domain>', help: 'the gene\'s domain: lower-case words joined by dots, like "code.format"' },
    fidelity: { type: 'string', value: '<Wrapped|Hybrid|Native>', help: 'the fidelity of a new phenotype (default Wrapped), or the new fidelity of an existing one' },
  },
  examples: ['rotifer wrap hello-world --domain general', 'rotifer wrap fetcher -d web.fetch --fidelity Hybrid'],

  async run({ positionals, options, root, io }) {
    const name = positionals.gene
    if (options.domain !== undefined && !DOMAIN.test(options.domain)) {
      throw new UsageError(`invalid --domain ${JSON.stringify(options.domain)}: use lower-case letters, digits and dots, like "nlp" or "code.analysis"`, 'wrap', { seeHelp: false })
    }
    if (options.fidelity !== undefined && !FIDELITIES.includes(options.fidelity)) {
      throw new UsageError(`invalid --fidelity ${JSON.stringify(options.fidelity)}: give ${FIDELITIES.join(', ')}`, 'wrap', { seeHelp: false })
    }
    checkGeneName(name)
    const { config } = readProjectConfig(root)
    const dir = path.join(genesDirOf(root), name)
    const rel = path.relative(root, dir)
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
      throw new CliError(`gene folder ${rel} not found (E0001)${didYouMean(name, geneFolders(root))}; create it with the gene's code first: mkdir -p ${rel}`)
    }
    const file = path.join(dir, 'phenotype.json')
    const where = path.join(rel, 'phenotype.json')
    let phenotype
    if (fs.existsSync(file)) {
      try {
        phenotype = JSON.parse(fs.readFileSync(file, 'utf8'))
      } catch (e) {
        throw new CliError(`${where} is not valid JSON: ${e.message}; fix it, or delete it to have rotifer wrap write a new one`)
      }
      if (phenotype === null || typeof phenotype !== 'object' || Array.isArray(phenotype)) throw new CliError(`${where} must hold a JSON object; fix it, or delete it to have rotifer wrap write a new one`)
      if (options.domain !== undefined || !('domain' in phenotype)) phenotype.domain = options.domain || config.default_domain || 'general'
      if (options.fidelity !== undefined) phenotype.fidelity = options.fidelity
    } else {
      phenotype = newPhenotype({ domain: options.domain || config.default_domain || 'general', fidelity: options.fidelity, author: config.author })
    }
    checkPhenotype(phenotype, where)
    const id = geneV2Id(phenotype)
    writeJsonAtomically(file, phenotype)
    const fidelity = phenotype.fidelity || options.fidelity || 'Wrapped'
    writeJsonAtomically(path.join(dir, '.gene-manifest.json'), { geneId: id.slice(3), name, domain: phenotype.domain, fidelity, wrappedAt: new Date().toISOString() })

    if (!geneFiles(dir).source) io.err(`note: ${rel} has no ${SOURCE_FILES.join(', ')} yet: write the gene's express(input) there before running it`)
    io.out(`Gene "${name}" wrapped: ${where}`)
    const width = terminalWidth(process.stdout, Infinity)
    io.out(field('Gene ID (v2)', id, width))
    io.out(field('Domain', phenotype.domain, width))
    io.out(field('Fidelity', fidelity, width))
    return 0
  },
}

module.exports = { wrap }
