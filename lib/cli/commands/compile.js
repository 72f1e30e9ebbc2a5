'use strict'
// `rotifer compile <gene> [--check] [--wasm <path>] [--lang ts|wasm]` (R-RUN-10): turns the
// gene's WebAssembly into gene.ir.wasm with the playground's IR sections (the native sandbox's
// compiler: the same checks the sandbox runs before a gene runs, then the IR checks), writes
// `irHash` and `fidelity` into phenotype.json and .compile-result.json, and prints the Gene ID
// (v2). A TypeScript gene goes through Javy first, when a `javy` binary is installed. A gene
// with only its phenotype.json needs --wasm <path>, else it gets upstream's Wrapped result.

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('../errors')
const { readGene } = require('../project')
const { phenotypeWarnings, geneV2Id, writePhenotype, writeJsonAtomically } = require('../../formats/phenotype')

const LANGS = ['ts', 'wasm']

/** Throws unless `file` holds a valid WebAssembly module; returns its bytes. */
function readWasm(file, where) {
  let bytes
  try {
    bytes = fs.readFileSync(file)
  } catch (e) {
    if (e.code === 'ENOENT') throw new CliError(`WASM file not found: ${where} (E0022); build the module first (cargo build --target wasm32-unknown-unknown, asc, wat2wasm …) or give the path of the .wasm it wrote`)
    throw new CliError(`cannot read ${where} (${e.code || e.message})`)
  }
  if (!WebAssembly.validate(bytes)) throw new CliError(`${where} is not a valid WebAssembly module; build it again (from a .wat: wat2wasm gene.wat -o gene.wasm)`)
  return bytes
}

function sandbox() {
  // Loaded when compiling: help needs no addon.
  const native = require('../../native')
  if (!native || typeof native.compileIr !== 'function') throw new CliError('the IR compiler is unavailable: the native binding could not be loaded; run `npm run build`')
  return native
}

/**
 * Which WebAssembly `rotifer compile` starts from, as upstream chooses: --wasm, the source
 * through Javy, gene.wasm; then gene.ir.wasm itself. Null when the gene has only its phenotype:
 * compile then writes a Wrapped result.
 */
function inputOf(gene, options) {
  const rel = (f) => path.join(gene.where, path.basename(f))
  if (options.wasm !== undefined) return { file: options.wasm, where: options.wasm }
  if (options.lang !== 'wasm' && gene.source && /\.(ts|js|mjs)$/.test(gene.source)) return { javy: gene.source, where: rel(gene.source) }
  if (gene.rawWasm) return { file: gene.rawWasm, where: rel(gene.rawWasm) }
  // A compiled gene alone: compiled again from its IR (the rotifer.* sections are replaced).
  if (gene.ir && options.lang !== 'wasm') return { file: gene.ir, where: rel(gene.ir) }
  if (options.lang === 'wasm') throw new CliError(`gene "${gene.name}" has no ${path.join(gene.where, 'gene.wasm')} to compile (--lang wasm); build one, or give --wasm <path>`)
  return null
}

/**
 * Upstream's result for a gene with nothing to compile: `.compile-result.json` with fidelity
 * Wrapped, no WASM and no IR hash. The phenotype is left as it is.
 */
function writeWrapped(gene, started, io) {
  const id = geneV2Id(gene.phenotype)
  const resultFile = path.join(gene.where, '.compile-result.json')
  writeJsonAtomically(path.join(gene.dir, '.compile-result.json'), {
    geneId: id.replace(/^v2:/, ''),
    name: gene.name,
    domain: gene.domain,
    compiledAt: new Date().toISOString(),
    fidelity: 'Wrapped',
    wasmAvailable: false,
    irHash: null,
    wasmSize: 0,
    codeSectionSize: 0,
    durationMs: Date.now() - started,
  })
  io.err(`note: ${gene.where} has no index.ts, index.js, index.mjs or gene.wasm, so nothing was compiled: the result is Wrapped. To compile to Native, write the gene's express in index.ts (compiled with Javy), or give a module built elsewhere: rotifer compile ${gene.name} --wasm path/to/gene.wasm`)
  io.out(`Gene "${gene.name}" validated (Wrapped fidelity): nothing to compile`)
  io.out(`  Gene ID (v2)  ${id}`)
  io.out(`  Domain        ${gene.domain}`)
  io.out('  Fidelity      Wrapped')
  io.out(`  Output        ${resultFile}`)
  return 0
}

/**
 * Upstream's result for a Hybrid gene: it runs under Node with the network gateway, so nothing
 * goes to WASM (an async express is fine). `.compile-result.json` with fidelity Hybrid, no WASM
 * and no IR hash; the phenotype is left as declared.
 */
function writeHybrid(gene, started, io) {
  const id = geneV2Id(gene.phenotype)
  const domains = gene.phenotype.network && Array.isArray(gene.phenotype.network.allowedDomains) ? gene.phenotype.network.allowedDomains : []
  if (domains.length === 0) {
    io.err(`warning: ${path.join(gene.where, 'phenotype.json')}: network.allowedDomains is empty, so the gateway refuses every request; declare the hosts the gene calls, e.g. "network": { "allowedDomains": ["api.example.com"] }`)
  }
  writeJsonAtomically(path.join(gene.dir, '.compile-result.json'), {
    geneId: id.replace(/^v2:/, ''),
    name: gene.name,
    domain: gene.domain,
    compiledAt: new Date().toISOString(),
    fidelity: 'Hybrid',
    wasmAvailable: false,
    irHash: null,
    wasmSize: 0,
    codeSectionSize: 0,
    durationMs: Date.now() - started,
  })
  io.out(`Gene "${gene.name}" validated (Hybrid fidelity): it runs under Node with the network gateway, so no WASM is made`)
  io.out(`  Gene ID (v2)  ${id}`)
  io.out(`  Domain        ${gene.domain}`)
  io.out('  Fidelity      Hybrid')
  io.out(`  Gateway       ${domains.join(', ') || '(none)'}`)
  io.out(`  Output        ${path.join(gene.where, '.compile-result.json')}`)
  return 0
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`

const compile = {
  name: 'compile',
  needsProject: true,
  summary: 'compile a gene into gene.ir.wasm (or --check it) and print its Gene ID (v2)',
  usage: 'rotifer compile <gene> [--check] [--wasm <path>] [--lang ts|wasm]',
  description: [
    "Turns the gene's WebAssembly (--wasm <path>, else its index.ts/index.js through Javy, else",
    'its gene.wasm) into gene.ir.wasm with the IR sections; writes irHash and fidelity Native',
    'into phenotype.json and .compile-result.json; prints the Gene ID (v2), the IR hash, the',
    'fidelity and the size. The output passes the checks the sandbox runs before a gene runs. A',
    'gene with only phenotype.json gets a Wrapped .compile-result.json; a Hybrid gene (it runs',
    'under Node with the network gateway) a Hybrid one, with no WASM, as upstream does.',
    '--check validates the phenotype, the schemas and the files and writes nothing. A TypeScript',
    'gene needs a synchronous express (E0025) and a javy binary on PATH; a missing --wasm file is',
    'E0022.',
  ],
  positionals: ['gene'],
  options: {
    check: { type: 'boolean', help: 'validate only, write nothing' },
    wasm: { type: 'string', value: '<path>', help: 'a pre-compiled .wasm to compile into the IR' },
    lang: { type: 'string', value: '<ts|wasm>', choices: LANGS, help: 'ts: the source through Javy; wasm: gene.wasm' },
  },
  examples: ['rotifer compile hello-world', 'rotifer compile hello-world --check', 'rotifer compile counter --wasm build/counter.wasm'],

  async run({ positionals, options, root, io }) {
    const gene = readGene(root, positionals.gene, { phenotypeOnly: true })
    const { geneSchemas } = require('../../runtime/schemas')
    const schemas = geneSchemas(gene)
    schemas.input(null)
    schemas.output(null)
    const phenotypeFile = path.join(gene.dir, 'phenotype.json')
    for (const w of phenotypeWarnings(gene.phenotype)) io.err(`warning: ${path.join(gene.where, 'phenotype.json')}: ${w}`)

    if (options.check) {
      for (const file of [gene.ir, gene.rawWasm]) if (file) readWasm(file, path.join(gene.where, path.basename(file)))
      if (options.wasm !== undefined) readWasm(options.wasm, options.wasm)
      const files = [gene.source, gene.ir, gene.rawWasm].filter(Boolean).map((f) => path.basename(f))
      io.out(`Gene "${gene.name}" is valid (nothing was written)`)
      io.out(`  Gene ID (v2)  ${gene.id}`)
      io.out(`  Domain        ${gene.domain}`)
      io.out(`  Fidelity      ${gene.fidelity || 'Unknown'}`)
      const kind = files.length === 0 ? 'none: phenotype only (compile writes a Wrapped result)' : files.join(', ') + (gene.compiled ? '' : ' (not compiled: runs under Node)')
      io.out(`  Files         ${kind}`)
      if (gene.ir) {
        const v = sandbox().verifyIr(fs.readFileSync(gene.ir))
        io.out(`  IR check      ${v.errors.length ? `FAIL: ${v.errors.join('; ')}` : v.warnings.length ? `WARN: ${v.warnings.join('; ')}` : 'PASS'}`)
      }
      return 0
    }

    const started = Date.now()
    if (gene.phenotype.fidelity === 'Hybrid') return writeHybrid(gene, started, io)
    const input = inputOf(gene, options)
    if (input === null) return writeWrapped(gene, started, io)
    const wasm = input.javy ? await require('../javy').compileWithJavy(gene, input.javy, io) : readWasm(input.file, input.where)
    const fidelity = 'Native'
    const { irHash: _old, ...rest } = gene.phenotype
    const phenotype = { ...rest, fidelity }
    const { compileIr, verifyIr } = sandbox()
    let compiled
    try {
      compiled = compileIr(wasm, JSON.stringify(phenotype), `gene "${gene.name}": ${input.where}`)
    } catch (e) {
      throw new CliError(`${e.message}; a gene module exports memory and express(i32, i32) -> i32, or _start (WASI)`)
    }
    const verification = verifyIr(compiled.bytes)
    if (verification.errors.length) throw new CliError(`gene "${gene.name}": IR verification failed: ${verification.errors.join('; ')}; nothing was written`)

    const irFile = path.join(gene.dir, 'gene.ir.wasm')
    const tmp = path.join(gene.dir, `.gene.ir.wasm.${process.pid}.tmp`)
    try {
      fs.writeFileSync(tmp, compiled.bytes, { flag: 'wx', mode: 0o644 })
      fs.renameSync(tmp, irFile)
    } catch (e) {
      fs.rmSync(tmp, { force: true })
      throw new CliError(`cannot write ${path.join(gene.where, 'gene.ir.wasm')} (${e.code || e.message})`)
    }
    const written = { ...phenotype, irHash: compiled.irHash }
    writePhenotype(phenotypeFile, written, path.join(gene.where, 'phenotype.json'))
    const id = geneV2Id(written)
    const durationMs = Date.now() - started
    writeJsonAtomically(path.join(gene.dir, '.compile-result.json'), {
      geneId: id.replace(/^v2:/, ''),
      name: gene.name,
      domain: gene.domain,
      compiledAt: new Date().toISOString(),
      fidelity,
      wasmAvailable: true,
      irHash: compiled.irHash,
      wasmSize: compiled.bytes.length,
      codeSectionSize: compiled.codeSectionSize,
      durationMs,
    })
    if (gene.fidelity && gene.fidelity !== fidelity) io.err(`note: fidelity ${gene.fidelity} → ${fidelity}: a compiled WASM artifact now exists`)
    for (const w of verification.warnings) io.err(`warning: IR verification: ${w}`)
    io.out(`Gene "${gene.name}" compiled to Rotifer IR`)
    io.out(`  Gene ID (v2)  ${id}`)
    io.out(`  Domain        ${gene.domain}`)
    io.out(`  Fidelity      ${fidelity}`)
    io.out(`  IR Hash       ${compiled.irHash}`)
    io.out(`  Input         ${input.where} (${kb(wasm.length)})`)
    io.out(`  Output        ${path.join(gene.where, 'gene.ir.wasm')}`)
    io.out(`  Size          ${kb(compiled.bytes.length)}`)
    io.out(`  IR check      ${verification.warnings.length ? `WARN: ${verification.warnings.join('; ')}` : 'PASS'}`)
    return 0
  },
}

module.exports = { compile }
