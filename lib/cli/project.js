'use strict'
// The project a command works in, and its genes.
//
// The project root is the nearest ancestor of the working directory holding `rotifer.json`,
// else the working directory: the same rule the memory API uses, computed here once so that
// genes, agents and memory are always read from the same place.
// A gene is the folder `genes/<name>/` with `phenotype.json` and `index.ts`, `index.js` or
// `gene.wasm` (R-RUN-1).

const fs = require('node:fs')
const path = require('node:path')
const { createHash } = require('node:crypto')
const { CliError } = require('./errors')
const { didYouMean } = require('./suggest')

/** Gene names are folder names: no separators, no `..`, nothing a shell would mangle. */
const GENE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
/** The playground's phenotype domain rule (R-ACC-6). */
const DOMAIN = /^[a-z0-9]+(\.[a-z0-9]+)*$/
const ENTRY_FILES = ['index.ts', 'index.js']
const WASM_FILE = 'gene.wasm'

function findProjectRoot(cwd = process.cwd()) {
  let dir = path.resolve(cwd)
  for (;;) {
    if (isFile(path.join(dir, 'rotifer.json'))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return path.resolve(cwd)
    dir = parent
  }
}

/**
 * Checks the project file `<root>/rotifer.json`, if there is one: it must hold a JSON object.
 * Returns its path, or null when the root has none (no project was found).
 */
function checkProjectFile(root) {
  const file = path.join(root, 'rotifer.json')
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (e) {
    if (e.code === 'ENOENT') return null
    throw new CliError(`cannot read the project file ${file} (${e.code || e.message})`)
  }
  let value
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new CliError(`the project file ${file} is not valid JSON (${e.message}); write a JSON object, such as {}`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError(`the project file ${file} must hold a JSON object, such as {}`)
  }
  return file
}

/**
 * Where the project root came from, for messages about a missing agent or gene: empty when
 * `root` holds rotifer.json, else that none was found from `root` up to the filesystem root.
 */
function projectNote(root) {
  if (isFile(path.join(root, 'rotifer.json'))) return ''
  return ` (no rotifer.json was found in ${root} or any folder above it, so the current folder is the project root; run the command inside your project)`
}

function isFile(p) {
  try {
    return fs.statSync(p).isFile()
  } catch {
    return false
  }
}

/** JSON with object keys sorted at every depth, no whitespace: the form a v2 id hashes. */
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/**
 * A gene's v2 id: `v2:` + SHA-256 hex of its phenotype serialised with sorted keys and without
 * `irHash` (the compiled IR's hash is not part of the gene's identity here).
 */
function geneV2Id(phenotype) {
  const { irHash, ...rest } = phenotype
  return 'v2:' + createHash('sha256').update(canonicalJson(rest), 'utf8').digest('hex')
}

/** Checks the fields the CLI relies on, with a message naming the file and the field. */
function checkPhenotype(p, where) {
  if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new CliError(`${where} must hold a JSON object`)
  const need = (field, ok, what) => {
    if (!(field in p)) throw new CliError(`${where} has no "${field}" (${what})`)
    if (!ok(p[field])) throw new CliError(`${where}: "${field}" must be ${what}`)
  }
  const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
  need('name', (v) => typeof v === 'string' && v !== '', 'a non-empty string')
  need('domain', (v) => typeof v === 'string' && DOMAIN.test(v), 'lower-case words joined by dots, like "code.format"')
  need('version', (v) => typeof v === 'string' && v !== '', 'a version string, like "1.0.0"')
  need('inputSchema', isObject, 'a JSON Schema object')
  need('outputSchema', isObject, 'a JSON Schema object')
}

/**
 * Reads gene `name` of the project at `root`: `{ name, dir, entry, wasm, phenotype, id, domain }`
 * (`entry`: the index file or null; `wasm`: the gene.wasm path or null). Does not run the gene's
 * code; `lib/runtime/` does that.
 */
function readGene(root, name) {
  if (typeof name !== 'string' || !GENE_NAME.test(name)) {
    throw new CliError(`${JSON.stringify(name)} is not a gene name: use letters, digits, ".", "_" and "-"`)
  }
  const dir = path.join(root, 'genes', name)
  const rel = (f) => path.join('genes', name, f)
  if (!isDirectory(dir)) {
    throw new CliError(`gene "${name}" not found: there is no folder ${rel('')} in ${root}${didYouMean(name, geneFolders(root))}${projectNote(root)}`)
  }
  const phenotypeFile = path.join(dir, 'phenotype.json')
  let text
  try {
    text = fs.readFileSync(phenotypeFile, 'utf8')
  } catch (e) {
    throw new CliError(`gene "${name}" has no readable ${rel('phenotype.json')} (${e.code || e.message})`)
  }
  let phenotype
  try {
    phenotype = JSON.parse(text)
  } catch (e) {
    throw new CliError(`${rel('phenotype.json')} is not valid JSON: ${e.message}`)
  }
  checkPhenotype(phenotype, rel('phenotype.json'))
  const entryName = ENTRY_FILES.find((f) => isFile(path.join(dir, f)))
  // R-RUN-1: `gene.wasm` is a WASM gene; next to an entry file it is the compiled form and runs.
  const wasm = isFile(path.join(dir, WASM_FILE)) ? path.join(dir, WASM_FILE) : null
  if (!entryName && !wasm) {
    const wat = isFile(path.join(dir, 'gene.wat')) ? ` (${rel('gene.wat')} is text: compile it to ${rel(WASM_FILE)}, e.g. with wat2wasm)` : ''
    throw new CliError(`gene "${name}" has no ${rel('index.ts')}, ${rel('index.js')} or ${rel(WASM_FILE)}${wat}`)
  }
  return {
    name,
    dir,
    entry: entryName ? path.join(dir, entryName) : null,
    wasm,
    phenotype,
    id: geneV2Id(phenotype),
    domain: phenotype.domain,
  }
}

function isDirectory(p) {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

/** The names of the folders under `<root>/genes/`, sorted: the project's genes, readable or not. */
function geneFolders(root) {
  try {
    return fs.readdirSync(path.join(root, 'genes'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()
  } catch {
    return []
  }
}

/**
 * v2 id → gene name for every readable gene of the project, to name the creators of memory
 * entries. Genes that do not read cleanly are skipped: this only decorates output.
 */
function geneNamesById(root) {
  const names = new Map()
  let folders = []
  try {
    folders = fs.readdirSync(path.join(root, 'genes'))
  } catch {
    return names
  }
  for (const folder of folders.sort()) {
    try {
      const gene = readGene(root, folder)
      if (!names.has(gene.id)) names.set(gene.id, gene.name)
    } catch {
      // not a usable gene folder
    }
  }
  return names
}

module.exports = { findProjectRoot, checkProjectFile, projectNote, canonicalJson, geneV2Id, readGene, geneFolders, geneNamesById, GENE_NAME }
