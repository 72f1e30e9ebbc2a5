'use strict'
// The genes this package ships for a new project (in place of upstream's Genesis genes): each a
// complete gene folder under `starter-genes/` (phenotype.json, index.ts, testsuite.json), written
// into a project's genes folder by `rotifer init` (hello-world) and `rotifer hello` (its
// templates' genes). Both remember something in their agent's memory. Nothing is written over.

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('./errors')
const { writePhenotype } = require('../formats/phenotype')

const SOURCE = path.join(__dirname, 'starter-genes')
const FILES = ['phenotype.json', 'index.ts', 'testsuite.json']
const NAMES = ['hello-world', 'text-stats']

/** Upstream's network block for a Hybrid example gene (its init's). */
const HYBRID_NETWORK = { allowedDomains: ['api.example.com'], maxTimeoutMs: 30000, maxResponseBytes: 1048576, maxRequestsPerMin: 10 }

/** The starter gene `name`'s phenotype, with `domain` and `fidelity` when given. */
function starterPhenotype(name, { domain, fidelity } = {}) {
  const p = JSON.parse(fs.readFileSync(path.join(SOURCE, name, 'phenotype.json'), 'utf8'))
  if (domain !== undefined) p.domain = domain
  if (fidelity !== undefined) p.fidelity = fidelity
  if (p.fidelity === 'Hybrid') p.network = { ...HYBRID_NETWORK }
  return p
}

/**
 * Writes the starter gene `name` into `genesDir/name/` (which must not exist); returns the
 * paths written. A failure removes the folder.
 */
function writeStarterGene(genesDir, name, options) {
  if (!NAMES.includes(name)) throw new Error(`no starter gene ${name}`)
  const dir = path.join(genesDir, name)
  try {
    fs.mkdirSync(genesDir, { recursive: true })
    fs.mkdirSync(dir)
  } catch (e) {
    if (e.code === 'EEXIST') throw new CliError(`${dir} already exists; nothing is written over it`)
    throw new CliError(`cannot create ${dir} (${e.code || e.message})`)
  }
  try {
    writePhenotype(path.join(dir, 'phenotype.json'), starterPhenotype(name, options))
    for (const f of FILES.slice(1)) fs.copyFileSync(path.join(SOURCE, name, f), path.join(dir, f), fs.constants.COPYFILE_EXCL)
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true })
    if (e instanceof CliError) throw e
    throw new CliError(`cannot write the gene ${dir} (${e.code || e.message})`)
  }
  return FILES.map((f) => path.join(dir, f))
}

module.exports = { STARTER_GENES: NAMES, STARTER_FILES: FILES, writeStarterGene, starterPhenotype }
