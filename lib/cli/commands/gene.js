'use strict'
// `rotifer list` (and its alias `rotifer gene list`), and `rotifer gene id <gene>`: the
// project's genes, their fidelity, whether they are compiled, and their v2 ids (the `geneId` a
// gene's memory calls are made with; R-ACC-4, R-RUN-2, R-RUN-3).

const path = require('node:path')
const { readGene, geneFolders, genesDirOf, projectNote } = require('../project')
const { fitTable, useColor, bold, terminalWidth, field } = require('../format')

/** How the gene runs: `wasm` when its compiled file runs, else its source's language. */
function kindOf(gene) {
  if (gene.wasm) return 'wasm'
  return path.extname(gene.entry).slice(1)
}

/** The fewest characters that tell these v2 ids apart (at least `v2:` and 8), plus the "…". */
function idWidth(ids) {
  for (let n = 11; n < 67; n++) {
    if (new Set(ids.map((id) => id.slice(0, n))).size === ids.length) return n + 1
  }
  return 67
}

/** One gene's row for `--json`. */
function rowOf(gene) {
  const row = {
    name: gene.name,
    kind: kindOf(gene),
    domain: gene.domain,
    version: gene.phenotype.version,
    fidelity: gene.fidelity,
    compiled: gene.compiled,
    files: [gene.source, gene.ir, gene.rawWasm].filter(Boolean).map((f) => path.basename(f)),
    id: gene.id,
  }
  if (gene.compiled && !gene.ir) row.hint = `run rotifer compile ${gene.name} to turn gene.wasm into gene.ir.wasm`
  return row
}

function listCommand(name) {
  return {
    name,
    summary: "list the project's genes: name, domain, fidelity, compiled or not, and Gene ID (v2)",
    usage: `rotifer ${name} [--json]`,
    description: [
      "Lists every folder of the project's genes folder (rotifer.json's genes_dir, default genes/)",
      'with how it runs (ts, js or mjs under Node; wasm for a compiled gene), its domain, its',
      'fidelity (Unknown when the phenotype gives none), whether it is compiled (gene.ir.wasm;',
      'a gene with only gene.wasm counts as compiled and is told to run rotifer compile), and its',
      'Gene ID (v2). A folder that is not a usable gene is listed with what is wrong with it.',
      ...(name === 'list' ? [] : ['The same as rotifer list.']),
    ],
    positionals: [],
    options: {
      json: { type: 'boolean', help: 'print a JSON array of { name, kind, domain, version, fidelity, compiled, files, id, hint? } (with error instead for a broken gene)' },
    },
    examples: [`rotifer ${name}`, `rotifer ${name} --json`],

    async run({ options, root, io }) {
      const genes = geneFolders(root).map((folder) => {
        try {
          return rowOf(readGene(root, folder))
        } catch (e) {
          return { name: folder, error: e.message }
        }
      })
      if (options.json) {
        io.out(JSON.stringify(genes, null, 2))
        return 0
      }
      if (genes.length === 0) {
        io.out(`No genes in ${genesDirOf(root)}${projectNote(root)}; write one with rotifer wrap <gene>`)
        return 0
      }
      const rows = genes.map((g) => (g.error
        ? [g.name, '-', '-', '-', '-', `error: ${g.error}`]
        : [g.name, g.kind, g.domain, g.fidelity || 'Unknown', g.hint ? `gene.wasm only: run rotifer compile ${g.name}` : g.compiled ? 'yes' : 'no', g.id]))
      const color = useColor(process.stdout)
      // At a terminal lines fit it: ids keep enough to tell them apart, domains and names are
      // cut with "…", and the full errors follow the table. Piped, everything in full.
      const width = terminalWidth(process.stdout, Infinity)
      const ids = genes.filter((g) => !g.error).map((g) => g.id)
      const text = fitTable(['NAME', 'KIND', 'DOMAIN', 'FIDELITY', 'COMPILED', 'GENE ID (V2)'], rows, {
        maxWidth: width,
        shrink: [5, 4, 2, 0],
        min: { 5: idWidth(ids), 4: 8, 2: 12, 0: 12 },
        style: (line, n) => (n === 0 && color ? bold(line) : line),
      })
      io.out(text)
      const cut = text.includes('…') && genes.some((g) => g.error || g.hint)
      if (cut) {
        for (const g of genes) if (g.error || g.hint) io.out(`\n${field(`${g.name}:`, g.error ? `error: ${g.error}` : g.hint, width, Math.max(14, g.name.length + 1))}`)
      }
      return 0
    },
  }
}

const id = {
  name: 'gene id',
  summary: "print a gene's v2 id (the geneId of its memory calls)",
  usage: 'rotifer gene id <gene>',
  description: [
    "Prints the v2 id of the gene: `v2:` and the SHA-256 of its phenotype.json (sorted keys,",
    "without irHash), upstream's Gene ID with v2: in front. It is the geneId to give",
    'GeneMemoryOptions and createTestMemory, and the createdBy of the entries the gene writes.',
    'Any change to the phenotype gives a new id.',
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

module.exports = { list: listCommand('list'), geneList: listCommand('gene list'), id }
