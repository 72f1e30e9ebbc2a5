'use strict'
// `rotifer gene list` and `rotifer gene id <gene>`: the project's genes and their v2 ids (the
// `geneId` a gene's memory calls are made with; R-ACC-4).

const path = require('node:path')
const { readGene, geneFolders, projectNote } = require('../project')
const { table, useColor, bold } = require('../format')

/** `wasm` when the folder holds gene.wasm (it is what runs), else the entry's language. */
function kindOf(gene) {
  if (gene.wasm) return 'wasm'
  return gene.entry.endsWith('.ts') ? 'ts' : 'js'
}

const list = {
  name: 'gene list',
  summary: "list the project's genes: name, kind, domain and v2 id",
  usage: 'rotifer gene list [--json]',
  description: [
    'Lists every folder of genes/ with its kind (ts, js or wasm: a folder holding gene.wasm is a',
    'WASM gene), its phenotype domain and its v2 id. A folder that is not a usable gene is listed',
    'with what is wrong with it.',
  ],
  positionals: [],
  options: {
    json: { type: 'boolean', help: 'print a JSON array of { name, kind, domain, id } (with error instead for a broken gene)' },
  },
  examples: ['rotifer gene list', 'rotifer gene list --json'],

  async run({ options, root, io }) {
    const genes = geneFolders(root).map((name) => {
      try {
        const gene = readGene(root, name)
        return { name, kind: kindOf(gene), domain: gene.domain, id: gene.id }
      } catch (e) {
        return { name, error: e.message }
      }
    })
    if (options.json) {
      io.out(JSON.stringify(genes, null, 2))
      return 0
    }
    if (genes.length === 0) {
      io.out(`No genes in ${path.join(root, 'genes')}${projectNote(root)}`)
      return 0
    }
    const rows = genes.map((g) => (g.error ? [g.name, '-', '-', `error: ${g.error}`] : [g.name, g.kind, g.domain, g.id]))
    const color = useColor(process.stdout)
    io.out(table(['NAME', 'KIND', 'DOMAIN', 'V2 ID'], rows, { style: (line, n) => (n === 0 && color ? bold(line) : line) }))
    return 0
  },
}

const id = {
  name: 'gene id',
  summary: "print a gene's v2 id (the geneId of its memory calls)",
  usage: 'rotifer gene id <gene>',
  description: [
    "Prints the v2 id of genes/<gene>/: `v2:` and the SHA-256 of its phenotype.json (sorted keys,",
    'without irHash). It is the geneId to give GeneMemoryOptions and createTestMemory, and the',
    'createdBy of the entries the gene writes. Any change to the phenotype gives a new id.',
  ],
  positionals: ['gene'],
  options: {},
  examples: ['rotifer gene id formatter'],

  async run({ positionals, root, io }) {
    const gene = readGene(root, positionals.gene)
    io.out(gene.id)
    return 0
  },
}

module.exports = { list, id }
