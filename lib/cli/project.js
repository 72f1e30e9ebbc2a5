'use strict'
// The project a command works in, and its genes (R-RUN-1, R-RUN-3).
//
// The project root is the nearest ancestor of the working directory holding `rotifer.json`,
// else the working directory: the same rule the memory API uses, computed here once so that
// genes, agents and memory are always read from the same place. Genes live in
// `<genes_dir>/<name>/` (rotifer.json's `genes_dir`, default `genes`), named by their folder,
// with `phenotype.json` and their files:
// - the source, `index.ts`, `index.js` or `index.mjs` (the first found), run under Node;
// - `gene.ir.wasm`, the compiled gene, and `gene.wasm`, the input `rotifer compile` turns into
//   it. A gene is compiled when it has `gene.ir.wasm`, or when `gene.wasm` is its only runnable
//   file (it runs as WASM genes always have here). The compiled file runs in the WASM sandbox
//   (lib/runtime/wasm-host.js over the addon's wasmtime).

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('./errors')
const { didYouMean } = require('./suggest')
const { findProjectRoot, readProjectConfig, CONFIG_FILE } = require('../formats/project-config')
const { canonicalJson, geneV2Id, readPhenotype } = require('../formats/phenotype')

/** Upstream's gene name rule (validate-gene-name.ts): lower case, at most 100 characters. */
const GENE_NAME = /^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$/
const MAX_GENE_NAME = 100
const GENE_NAME_RULE = 'lower-case letters, digits, ".", "_" and "-", starting and ending with a letter or digit, at most 100 characters'
const SOURCE_FILES = ['index.ts', 'index.js', 'index.mjs']
const IR_FILE = 'gene.ir.wasm'
const WASM_FILE = 'gene.wasm'

/** Upstream's refusal of a project command outside a project (exit 1). */
const NOT_IN_PROJECT = "Not in a Rotifer project. Run 'rotifer init' first."

/** True when `name` is a gene name. */
function isGeneName(name) {
  return typeof name === 'string' && name.length <= MAX_GENE_NAME && GENE_NAME.test(name) && !name.includes('..')
}

/** Throws unless `name` is a gene name. */
function checkGeneName(name) {
  if (!isGeneName(name)) throw new CliError(`${JSON.stringify(name)} is not a gene name: use ${GENE_NAME_RULE}`)
}

/**
 * Checks the project file `<root>/rotifer.json`, if there is one. Returns its path, or null
 * when the root has none (no project was found).
 */
function checkProjectFile(root) {
  return readProjectConfig(root).file
}

/**
 * Where the project root came from, for messages about a missing agent or gene: empty when
 * `root` holds rotifer.json, else that none was found from `root` up to the filesystem root.
 */
function projectNote(root) {
  if (isFile(path.join(root, CONFIG_FILE))) return ''
  return ` (no rotifer.json was found in ${root} or any folder above it, so the current folder is the project root; run the command inside your project)`
}

function isFile(p) {
  try {
    return fs.statSync(p).isFile()
  } catch {
    return false
  }
}

function isDirectory(p) {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

/** The absolute folder of the genes of the project at `root`. */
function genesDirOf(root) {
  return readProjectConfig(root).genesDir
}

/**
 * The gene folder `dir` of `name` and the files it uses, each resolved through its symlinks:
 * an error when any of them lies outside the project (a folder or file linked in from
 * elsewhere), as a genes_dir outside it is. What runs is only ever the project's own.
 */
function checkInsideProject(root, name, dir, files) {
  const top = fs.realpathSync(root)
  const inside = (p) => {
    const rel = path.relative(top, fs.realpathSync(p))
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)
  }
  for (const p of [dir, ...files.filter(Boolean)]) {
    if (inside(p)) continue
    const shown = path.relative(root, p)
    throw new CliError(`gene "${name}": ${shown} leads through a symlink to ${fs.realpathSync(p)}, outside the project ${root}; a gene is loaded only from inside its project: copy the gene into ${path.relative(root, dir)}${path.sep} instead of linking it`)
  }
}

/**
 * The files of the gene folder `dir`: `{ source, ir, wasm }`, each a path or null. `source` is
 * the first of index.ts, index.js, index.mjs.
 */
function geneFiles(dir) {
  const found = (f) => (isFile(path.join(dir, f)) ? path.join(dir, f) : null)
  const sourceName = SOURCE_FILES.find((f) => isFile(path.join(dir, f)))
  return { source: sourceName ? path.join(dir, sourceName) : null, ir: found(IR_FILE), wasm: found(WASM_FILE) }
}

/**
 * Reads gene `name` of the project at `root`: `{ name, root, dir, where, entry, wasm, source,
 * ir, rawWasm, compiled, phenotype, id, domain, fidelity }`. `entry` is the source (or null);
 * `wasm` is the WASM file that runs (gene.ir.wasm, else gene.wasm when there is no source), or
 * null when the gene runs under Node. Does not run the gene's code; `lib/runtime/` does that.
 * A gene needs a runnable file unless `phenotypeOnly` (what `rotifer compile` accepts).
 */
function readGene(root, name, { phenotypeOnly = false } = {}) {
  checkGeneName(name)
  const genesDir = genesDirOf(root)
  const dir = path.join(genesDir, name)
  const relDir = path.relative(root, dir)
  const rel = (f) => path.join(relDir, f)
  if (!isDirectory(dir)) {
    throw new CliError(`gene "${name}" not found: there is no folder ${relDir}${path.sep} in ${root}${didYouMean(name, geneFolders(root))}${projectNote(root)}`)
  }
  const phenotypeFile = path.join(dir, 'phenotype.json')
  if (!isFile(phenotypeFile)) {
    checkInsideProject(root, name, dir, [])
    throw new CliError(`gene "${name}" has no ${rel('phenotype.json')} (E0020); run 'rotifer wrap ${name}' to write one`)
  }
  const files = geneFiles(dir)
  checkInsideProject(root, name, dir, [phenotypeFile, files.source, files.ir, files.wasm])
  const phenotype = readPhenotype(phenotypeFile, rel('phenotype.json'))
  if (!files.source && !files.ir && !files.wasm && !phenotypeOnly) {
    const wat = isFile(path.join(dir, 'gene.wat')) ? ` (${rel('gene.wat')} is text: compile it to ${rel(WASM_FILE)}, e.g. with wat2wasm)` : ''
    throw new CliError(`gene "${name}" has no ${SOURCE_FILES.map(rel).join(', ')}, ${rel(IR_FILE)} or ${rel(WASM_FILE)}${wat}`)
  }
  const wasm = files.ir || (files.source ? null : files.wasm)
  return {
    name,
    root,
    dir,
    where: relDir,
    entry: files.source,
    wasm,
    source: files.source,
    ir: files.ir,
    rawWasm: files.wasm,
    compiled: wasm !== null,
    phenotype,
    id: geneV2Id(phenotype),
    domain: phenotype.domain,
    fidelity: phenotype.fidelity === undefined ? null : phenotype.fidelity,
  }
}

/**
 * `gene` to run under Node whatever it has compiled (`--no-sandbox`); an error when it has no
 * source.
 */
function sourceOnly(gene) {
  if (!gene.source) {
    throw new CliError(`gene "${gene.name}" has no source to run without the sandbox: --no-sandbox runs ${SOURCE_FILES.map((f) => path.join(gene.where, f)).join(', ')} under Node, and it has none; leave out --no-sandbox`)
  }
  return { ...gene, entry: gene.source, wasm: null }
}

/** The names of the folders of the project's genes, sorted: readable or not. */
function geneFolders(root) {
  try {
    return fs.readdirSync(genesDirOf(root), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()
  } catch {
    return []
  }
}

/**
 * For a compiled `gene` (from readGene) about to run with an agent's memory: an error when
 * another gene folder of the project has the same Gene ID (v2). The id is upstream's hash of
 * phenotype.json, not of the code, so a WASM gene shipping another's phenotype byte for byte
 * would read that gene's CREATOR_GENE_ONLY entries as its own. A folder linked to this one is
 * the same gene; folders that do not read are skipped.
 */
function checkOwnIdentity(root, gene) {
  const own = fs.realpathSync(gene.dir)
  for (const folder of geneFolders(root)) {
    const dir = path.join(genesDirOf(root), folder)
    let id
    try {
      if (fs.realpathSync(dir) === own) continue
      id = geneV2Id(JSON.parse(fs.readFileSync(path.join(dir, 'phenotype.json'), 'utf8')))
    } catch {
      continue
    }
    if (id === gene.id) {
      const other = path.relative(root, dir)
      throw new CliError(`gene "${gene.name}" is compiled WASM with the same Gene ID (v2) as ${other}${path.sep} (${id}): its phenotype.json is that gene's, byte for byte, so it would read that gene's own memory; give it a phenotype of its own (its name, domain or version), or remove one of the two folders`)
    }
  }
}

/**
 * v2 id → gene name for every readable gene of the project, to name the creators of memory
 * entries. Genes that do not read cleanly are skipped: this only decorates output.
 */
function geneNamesById(root) {
  const names = new Map()
  for (const folder of geneFolders(root)) {
    try {
      const gene = readGene(root, folder)
      if (!names.has(gene.id)) names.set(gene.id, gene.name)
    } catch {
      // not a usable gene folder
    }
  }
  return names
}

module.exports = {
  findProjectRoot, checkProjectFile, projectNote, canonicalJson, geneV2Id, readGene, checkOwnIdentity, sourceOnly, geneFiles, geneFolders, geneNamesById, genesDirOf,
  NOT_IN_PROJECT, GENE_NAME, GENE_NAME_RULE, isGeneName, checkGeneName, SOURCE_FILES, IR_FILE, WASM_FILE,
}
