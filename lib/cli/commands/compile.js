'use strict'
// `rotifer compile <gene> --check` (R-RUN-10's check): validates the gene's phenotype (as
// upstream's compile does, with its warnings), its schemas and its files, and prints the Gene
// ID (v2). Compiling itself (gene.wasm into gene.ir.wasm with the IR sections) comes with the
// WASM sandbox: without --check the command says so and fails.

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('../errors')
const { readGene } = require('../project')
const { phenotypeWarnings } = require('../../formats/phenotype')
const { geneSchemas } = require('../../runtime/schemas')

/** Throws unless `file` holds a valid WebAssembly module. */
function checkWasm(file, where) {
  let bytes
  try {
    bytes = fs.readFileSync(file)
  } catch (e) {
    throw new CliError(`cannot read ${where} (${e.code || e.message})`)
  }
  if (!WebAssembly.validate(bytes)) throw new CliError(`${where} is not a valid WebAssembly module; build it again (from a .wat: wat2wasm gene.wat -o gene.wasm)`)
}

const compile = {
  name: 'compile',
  summary: "validate a gene (--check) and print its Gene ID (v2)",
  usage: 'rotifer compile <gene> --check [--wasm <path>] [--lang ts|wasm]',
  description: [
    "With --check, validates the gene as upstream's compile --check does: its phenotype.json",
    '(required fields, domain, semver version, the optional fields, the LLM-native rules; warnings',
    'go to stderr), that its inputSchema and outputSchema are valid JSON Schemas, and that it has a',
    'file to run, each WASM file a valid module. Prints the Gene ID (v2); writes nothing.',
    'Compiling (gene.wasm into gene.ir.wasm) comes with the WASM sandbox; until then compile',
    'without --check fails, and gene.wasm runs as it is.',
  ],
  positionals: ['gene'],
  options: {
    check: { type: 'boolean', help: 'validate only, write nothing (the only mode for now)' },
    wasm: { type: 'string', value: '<path>', help: 'a pre-compiled .wasm to wrap as IR (comes with the WASM sandbox)' },
    lang: { type: 'string', value: '<ts|wasm>', help: 'force the compilation mode (comes with the WASM sandbox)' },
  },
  examples: ['rotifer compile hello-world --check'],

  async run({ positionals, options, root, io }) {
    if (!options.check) {
      throw new CliError(`compiling a gene into gene.ir.wasm comes with the WASM sandbox, which this version does not have yet; run rotifer compile ${positionals.gene} --check to validate it (a gene.wasm runs as it is meanwhile)`)
    }
    const gene = readGene(root, positionals.gene)
    const schemas = geneSchemas(gene)
    schemas.input(null)
    schemas.output(null)
    for (const file of [gene.ir, gene.rawWasm]) if (file) checkWasm(file, path.join(gene.where, path.basename(file)))
    if (options.wasm !== undefined) checkWasm(options.wasm, options.wasm)
    for (const w of phenotypeWarnings(gene.phenotype)) io.err(`warning: ${path.join(gene.where, 'phenotype.json')}: ${w}`)
    const files = [gene.source, gene.ir, gene.rawWasm].filter(Boolean).map((f) => path.basename(f))
    io.out(`Gene "${gene.name}" is valid (nothing was written)`)
    io.out(`  Gene ID (v2)  ${gene.id}`)
    io.out(`  Domain        ${gene.domain}`)
    io.out(`  Fidelity      ${gene.fidelity || 'Unknown'}`)
    io.out(`  Files         ${files.join(', ')}${gene.compiled ? '' : ' (not compiled: runs under Node)'}`)
    return 0
  },
}

module.exports = { compile }
