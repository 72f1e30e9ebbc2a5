'use strict'
// @rotifer/playground/testing — what a gene author's own test suite needs to do what the CLI
// does: a gene folder's v2 id (as `rotifer gene id` prints it), and a gene folder run on an
// input as `rotifer agent run` runs it: the same loader (TypeScript transpiled, ES modules or
// CommonJS), in a worker thread with its deadline, its input checked against the inputSchema,
// and the same `ctx` (`ctx.memory` bound to the gene's v2 id and domain; `ctx.gatewayFetch` for
// a Hybrid gene), on a test memory instead of an agent's.

const fs = require('node:fs')
const path = require('node:path')
const memory = require('../../index.js')
const { CliError } = require('../cli/errors')
const { geneFiles, SOURCE_FILES, IR_FILE, WASM_FILE } = require('../cli/project')
const { findProjectRoot } = require('../formats/project-config')
const { resolveGeneFolder } = require('./gene-folder')
const { geneV2Id, readPhenotype } = require('../formats/phenotype')
const { problemsText } = require('../json-schema')
const { GeneWorker } = require('../runtime/deadline')
const { geneSchemas } = require('../runtime/schemas')
const { TIMEOUT, failureOf, geneFailure } = require('../runtime/failures')
const { DEFAULT_TIMEOUT_SECONDS, DEFAULT_INPUT } = require('../runtime')
const { gateGene } = require('../runtime/l0-gate')

/** A usage mistake of these helpers: a TypeError naming the argument and what it must be. */
function argumentError(message) {
  return new TypeError(message)
}

function isDirectory(p) {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

/**
 * The gene in folder `folder` (a path; a relative one from the project root of the calling file,
 * see gene-folder.js), read as the CLI reads a gene of its project: `{ name, root, dir, where,
 * entry, wasm, phenotype, id, domain }`. Its project root (for the TypeScript cache) is the
 * nearest folder above holding rotifer.json.
 */
function readGeneFolder(folder, what) {
  if (typeof folder !== 'string' || folder === '') throw argumentError(`${what}: the gene folder must be a path string, not ${folder === '' ? 'an empty string' : typeof folder}`)
  const { dir, from } = resolveGeneFolder(folder)
  if (!isDirectory(dir)) throw new CliError(`${what}: there is no gene folder ${dir} (${JSON.stringify(folder)} is resolved from ${from})`)
  const root = findProjectRoot(dir)
  const where = path.relative(process.cwd(), dir) || '.'
  const phenotypeFile = path.join(dir, 'phenotype.json')
  if (!fs.existsSync(phenotypeFile)) throw new CliError(`${what}: ${path.join(where, 'phenotype.json')} is missing (E0020); every gene folder needs one (see docs/gene-authors.md, "phenotype.json")`)
  const phenotype = readPhenotype(phenotypeFile, path.join(where, 'phenotype.json'))
  const files = geneFiles(dir)
  if (!files.source && !files.ir && !files.wasm) {
    throw new CliError(`${what}: ${where} has no ${[...SOURCE_FILES, IR_FILE, WASM_FILE].join(', ')}`)
  }
  const wasm = files.ir || (files.source ? null : files.wasm)
  return {
    name: path.basename(dir),
    root,
    dir,
    where,
    entry: files.source,
    wasm,
    source: files.source,
    phenotype,
    id: geneV2Id(phenotype),
    domain: phenotype.domain,
  }
}

/** The v2 id of the gene in `folder`: what `rotifer gene id` prints and `ctx.memory` uses. */
function geneId(folder) {
  return readGeneFolder(folder, 'geneId').id
}

// Idle gene threads, reused by the next run of this process (a thread loads a gene once): a
// suite's runs follow each other closely. A thread idle for IDLE_MS is stopped, so that a
// finished suite's process can exit.
const IDLE_MS = 150
const idle = []
let idleTimer = null

function takeWorker() {
  if (idleTimer) {
    clearTimeout(idleTimer)
    idleTimer = null
  }
  return idle.pop() || new GeneWorker({ memory: null, seconds: DEFAULT_TIMEOUT_SECONDS })
}

function putWorker(worker) {
  idle.push(worker)
  if (idleTimer) clearTimeout(idleTimer)
  idleTimer = setTimeout(() => {
    idleTimer = null
    for (const w of idle.splice(0)) w.close()
  }, IDLE_MS)
  idleTimer.unref()
}

/** Checks `options` of runGene; answers `{ memory, seconds, noSandbox }`. */
function runOptions(options) {
  if (options === undefined || options === null) return { memory: null, seconds: DEFAULT_TIMEOUT_SECONDS, noSandbox: false }
  if (typeof options !== 'object') throw argumentError(`runGene: options must be an object { memory?, timeout?, noSandbox? }, not ${typeof options}`)
  for (const k of Object.keys(options)) {
    if (!['memory', 'timeout', 'noSandbox'].includes(k)) throw argumentError(`runGene: unknown option "${k}"; the options are memory, timeout and noSandbox`)
  }
  const m = options.memory
  if (m !== undefined && m !== null && !(typeof m === 'object' && typeof m.agentId === 'string' && typeof m.root === 'string')) {
    throw argumentError('runGene: options.memory must be a test memory (createTestMemory()) or { agentId, root }')
  }
  const t = options.timeout
  if (t !== undefined && !(typeof t === 'number' && Number.isFinite(t) && t > 0)) {
    throw argumentError(`runGene: options.timeout must be a positive number of seconds, not ${JSON.stringify(t)}`)
  }
  return { memory: m || null, seconds: t === undefined ? DEFAULT_TIMEOUT_SECONDS : t, noSandbox: options.noSandbox === true }
}

/**
 * Runs the gene in `folder` once on `input` (default `{ "name": "world" }`, as `agent run`) and
 * resolves to its output. `options.memory`: the test memory its `ctx.memory` works on (shared
 * with other runs and with the test, to see what the gene remembers); without it, a fresh one,
 * deleted after the run. `options.timeout`: seconds (default 60). `options.noSandbox`: run the
 * source under Node even when the gene is compiled. A failure rejects with an Error whose
 * `code` is the failure's code (`INVALID_INPUT`, a `MEMORY_…` code, the name of what the gene
 * threw, …) and whose `reason` is its message.
 */
async function runGene(folder, input = DEFAULT_INPUT, options = undefined) {
  const { memory: given, seconds, noSandbox } = runOptions(options)
  const read = readGeneFolder(folder, 'runGene')
  if (noSandbox && !read.source) throw new CliError(`runGene: ${read.where} has no source to run without the sandbox (${SOURCE_FILES.join(', ')})`)
  const gene = noSandbox ? { ...read, entry: read.source, wasm: null } : read
  const schemas = geneSchemas(gene)
  schemas.input(null) // a broken schema says so before anything runs
  let value
  try {
    value = JSON.parse(JSON.stringify(input))
  } catch (e) {
    throw argumentError(`runGene: the input must be a JSON value (${e.message})`)
  }
  if (value === undefined) throw argumentError('runGene: the input must be a JSON value, not undefined')
  const problems = schemas.input(value)
  if (problems) {
    throw geneFailure(gene, failureOf('INVALID_INPUT', `the input does not match the inputSchema of ${path.join(gene.where, 'phenotype.json')}: ${problemsText(problems)}`))
  }
  // The L0 gate, as every run passes it, before the gene's code is loaded.
  gateGene(gene, { seconds, notice: (line) => process.emitWarning(line.replace(/^warning: /, ''), 'L0GateWarning') })
  const own = given ? null : memory.createTestMemory()
  const target = given || own
  const worker = takeWorker()
  worker.memory = { agentId: target.agentId, root: target.root }
  worker.seconds = seconds
  try {
    const deadline = Date.now() + seconds * 1000
    await worker.load(gene, deadline)
    return await worker.run(gene, value, { deadline })
  } catch (e) {
    if (e && e.name === 'GeneTimeout') Object.assign(e, { code: TIMEOUT, reason: e.message })
    throw e
  } finally {
    // A thread stopped at its deadline or crashed is replaced on the next request.
    putWorker(worker)
    if (own) own.dispose()
  }
}

module.exports = {
  geneId,
  runGene,
  createTestMemory: memory.createTestMemory,
  TEST_GENE_ID: memory.TEST_GENE_ID,
}
