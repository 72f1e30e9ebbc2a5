'use strict'
// The project file `rotifer.json` (R-RUN-1), in the upstream playground's format:
// `{ name, version, author?, genes_dir, default_domain? }`, `genes_dir` defaulting to "genes".
// Its parser, its writer and its errors; every command reads the project through here.
//
// Reading is lenient where upstream is (it never checks the file): `{}` is a project, and fields
// this module does not know are kept. A field that is there must be right, though: a `genes_dir`
// outside the project or a `default_domain` that is not a domain stops every command, naming the
// file, the field, what is wrong and how to fix it.

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('../cli/errors')
const { DOMAIN } = require('./phenotype')

const CONFIG_FILE = 'rotifer.json'
const DEFAULT_GENES_DIR = 'genes'

function isFile(p) {
  try {
    return fs.statSync(p).isFile()
  } catch {
    return false
  }
}

/** The nearest ancestor of `cwd` (itself included) holding rotifer.json, else `cwd`. */
function findProjectRoot(cwd = process.cwd()) {
  let dir = path.resolve(cwd)
  for (;;) {
    if (isFile(path.join(dir, CONFIG_FILE))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return path.resolve(cwd)
    dir = parent
  }
}

/** What is wrong with `genes_dir` value `v`, or null: a relative folder inside the project. */
function genesDirProblem(v) {
  if (typeof v !== 'string' || v.trim() === '') return 'must be a non-empty string'
  if (v.includes('\0')) return 'must not hold a NUL character'
  if (path.isAbsolute(v)) return 'must be relative to the project root, not an absolute path'
  const normal = path.normalize(v)
  if (normal === '.' || normal.split(path.sep)[0] === '..') return 'must be a folder inside the project (not the root itself, and no ".." leading out of it)'
  if (normal.split(path.sep).includes('.rotifer')) return 'must not be inside .rotifer/, which holds the memory and logs'
  return null
}

/**
 * Checks a parsed rotifer.json (`file` names it in messages). Returns the config with
 * `genes_dir` defaulted; every other field as written.
 */
function checkProjectConfig(value, file) {
  const fail = (field, what, fix) => {
    throw new CliError(`${file}: "${field}" ${what}; ${fix}`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError(`the project file ${file} must hold a JSON object, such as {"name": "my-project", "version": "0.1.0", "genes_dir": "genes"} (or {})`)
  }
  for (const field of ['name', 'version', 'author']) {
    if (field in value && (typeof value[field] !== 'string' || value[field] === '')) {
      fail(field, `must be a non-empty string, not ${JSON.stringify(value[field])}`, `write a string or remove the field`)
    }
  }
  if ('genes_dir' in value) {
    const problem = genesDirProblem(value.genes_dir)
    if (problem) fail('genes_dir', `${problem} (got ${JSON.stringify(value.genes_dir)})`, `write the folder of the genes relative to ${path.dirname(file)}, such as "genes" (the default when the field is left out)`)
  }
  if ('default_domain' in value && (typeof value.default_domain !== 'string' || !DOMAIN.test(value.default_domain))) {
    fail('default_domain', `must be lower-case words joined by dots, like "general" or "code.format" (got ${JSON.stringify(value.default_domain)})`, 'fix it or remove the field')
  }
  return { ...value, genes_dir: 'genes_dir' in value ? path.normalize(value.genes_dir) : DEFAULT_GENES_DIR }
}

/** Parses the text of rotifer.json `file`; invalid JSON is an error naming the file. */
function parseProjectConfig(text, file) {
  let value
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new CliError(`the project file ${file} is not valid JSON (${e.message}); write a JSON object, such as {"name": "my-project", "version": "0.1.0", "genes_dir": "genes"} (or {})`)
  }
  return checkProjectConfig(value, file)
}

/**
 * The project at `root`: `{ file, config, genesDir }` where `genesDir` is the absolute folder of
 * the genes. `file` is null when `root` holds no rotifer.json (then `config` is the defaults).
 */
function readProjectConfig(root) {
  const file = path.join(root, CONFIG_FILE)
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (e) {
    if (e.code === 'ENOENT') return { file: null, config: { genes_dir: DEFAULT_GENES_DIR }, genesDir: path.join(root, DEFAULT_GENES_DIR) }
    throw new CliError(`cannot read the project file ${file} (${e.code || e.message})`)
  }
  const config = parseProjectConfig(text, file)
  return { file, config, genesDir: path.join(root, config.genes_dir) }
}

/** The config `rotifer init` writes, as upstream's init does. */
function newProjectConfig(name, { domain = 'general' } = {}) {
  return { name, version: '0.1.0', author: 'local-dev', genes_dir: DEFAULT_GENES_DIR, default_domain: domain }
}

/** Writes `config` as `<dir>/rotifer.json`, never over an existing file. */
function writeProjectConfig(dir, config) {
  const file = path.join(dir, CONFIG_FILE)
  checkProjectConfig(config, file)
  try {
    fs.writeFileSync(file, JSON.stringify(config, null, 2) + '\n', { flag: 'wx' })
  } catch (e) {
    if (e.code === 'EEXIST') throw new CliError(`${file} exists already; rotifer init never overwrites a project`)
    throw new CliError(`cannot write ${file} (${e.code || e.message})`)
  }
  return file
}

module.exports = { CONFIG_FILE, DEFAULT_GENES_DIR, findProjectRoot, checkProjectConfig, parseProjectConfig, readProjectConfig, newProjectConfig, writeProjectConfig }
