'use strict'
// `rotifer list` (and its alias `rotifer gene list`), and `rotifer gene id <gene>`: the
// project's genes, their fidelity, whether they are compiled, and their v2 ids (the `geneId` a
// gene's memory calls are made with; R-ACC-4, R-RUN-2, R-RUN-3).

const fs = require('node:fs')
const path = require('node:path')
const { readGene, geneFiles, geneFolders, genesDirOf, projectNote, geneV2Id } = require('../project')
const { fitTable, useColor, bold, terminalWidth, field } = require('../format')
const { checkPhenotype } = require('../../formats/phenotype')

/** `--fidelity`: upstream's fidelities, and Unknown for a phenotype that gives none. */
const FIDELITY_CHOICES = ['Wrapped', 'Hybrid', 'Native', 'Unknown']

/** How the gene runs: `wasm` when its compiled file runs, else its source's language. */
function kindOf(gene) {
  if (gene.wasm) return 'wasm'
  return gene.entry ? path.extname(gene.entry).slice(1) : '-'
}

/** The fewest characters that tell these v2 ids apart (at least `v2:` and 8), plus the "…". */
function idWidth(ids) {
  for (let n = 11; n < 67; n++) {
    if (new Set(ids.map((id) => id.slice(0, n))).size === ids.length) return n + 1
  }
  return 67
}

/**
 * Gene `folder` read as upstream's list reads it: a phenotype.json that is a JSON object but
 * lacks fields (or has a wrong one) is still listed, with what it has (domain "unknown",
 * version "-", fidelity Unknown) and the problem. A folder with no phenotype.json, or one that
 * is not a JSON object, is an error row.
 */
function listedGene(root, folder) {
  try {
    return rowOf(readGene(root, folder))
  } catch (e) {
    // A complete phenotype with nothing to run (a wrapped skill, a gene before its source) is a
    // gene to upstream's list: listed with its fields, and e as the problem.
    try {
      return { ...rowOf(readGene(root, folder, { phenotypeOnly: true })), problem: e.message }
    } catch {
      // the phenotype itself is missing or has problems: read leniently below
    }
    const dir = path.join(genesDirOf(root), folder)
    let phenotype
    try {
      phenotype = JSON.parse(fs.readFileSync(path.join(dir, 'phenotype.json'), 'utf8'))
    } catch {
      return { name: folder, error: e.message }
    }
    if (phenotype === null || typeof phenotype !== 'object' || Array.isArray(phenotype)) return { name: folder, error: e.message }
    // A phenotype that checks out failed above for another reason (outside the project): an error.
    try {
      checkPhenotype(phenotype, 'phenotype.json')
      return { name: folder, error: e.message }
    } catch {
      // fields missing or wrong: listed with what it has, and e as the problem
    }
    const files = geneFiles(dir)
    const wasm = files.ir || (files.source ? null : files.wasm)
    const text = (v, fallback) => (typeof v === 'string' && v !== '' ? v : fallback)
    return {
      ...rowOf({
        name: folder,
        wasm,
        entry: files.source,
        source: files.source,
        ir: files.ir,
        rawWasm: files.wasm,
        compiled: wasm !== null,
        domain: text(phenotype.domain, 'unknown'),
        fidelity: text(phenotype.fidelity, null),
        phenotype: { ...phenotype, version: text(phenotype.version, '-') },
        id: geneV2Id(phenotype),
      }),
      problem: e.message,
    }
  }
}

/** Upstream's filters: `--domain d` keeps d and its subdomains (d.x), `--fidelity` one fidelity. */
function matches(row, { domain, fidelity }) {
  if (row.error) return domain === undefined && fidelity === undefined
  if (domain !== undefined && row.domain !== domain && !row.domain.startsWith(`${domain}.`)) return false
  if (fidelity !== undefined && (row.fidelity || 'Unknown') !== fidelity) return false
  return true
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
    needsProject: true,
    summary: "list the project's genes: name, domain, fidelity, compiled or not, and Gene ID (v2)",
    usage: `rotifer ${name} [-d|--domain <domain>] [--fidelity Wrapped|Hybrid|Native|Unknown] [--json]`,
    description: [
      "Lists every folder of the project's genes folder (rotifer.json's genes_dir, default genes/)",
      'with how it runs (ts, js or mjs under Node; wasm for a compiled gene), its domain, its',
      'fidelity (Unknown when the phenotype gives none), whether it is compiled (gene.ir.wasm;',
      'a gene with only gene.wasm counts as compiled and is told to run rotifer compile), and its',
      'Gene ID (v2). A gene whose phenotype.json lacks fields is listed with what it has (domain',
      'unknown, fidelity Unknown) and the problem, as upstream lists it; a folder that is not a gene',
      'at all is listed with what is wrong with it. --domain and --fidelity filter as upstream does.',
      ...(name === 'list' ? [] : ['The same as rotifer list.']),
    ],
    positionals: [],
    options: {
      domain: { type: 'string', short: 'd', value: '<domain>', help: 'only genes of this domain or its subdomains (-d code also lists code.format)' },
      fidelity: { type: 'string', value: '<fidelity>', choices: FIDELITY_CHOICES, help: 'only genes of this fidelity: Wrapped, Hybrid, Native or Unknown (the phenotype gives none)' },
      json: { type: 'boolean', help: 'print a JSON array of { name, kind, domain, version, fidelity, compiled, files, id, hint?, problem? } (with error instead for a folder that is not a gene)' },
    },
    examples: [`rotifer ${name}`, `rotifer ${name} -d code --fidelity Native`, `rotifer ${name} --json`],

    async run({ options, root, io }) {
      const all = geneFolders(root).map((folder) => listedGene(root, folder))
      const genes = all.filter((row) => matches(row, options))
      if (options.json) {
        io.out(JSON.stringify(genes, null, 2))
        return 0
      }
      if (genes.length === 0) {
        const filter = [options.domain !== undefined && `domain ${options.domain}`, options.fidelity !== undefined && `fidelity ${options.fidelity}`].filter(Boolean).join(' and ')
        io.out(all.length > 0 && filter
          ? `No genes of ${filter} in ${genesDirOf(root)} (${all.length} in all: rotifer ${name} shows them)`
          : `No genes in ${genesDirOf(root)}${projectNote(root)}; write one with rotifer wrap <gene>`)
        return 0
      }
      const rows = genes.map((g) => (g.error
        ? [g.name, '-', '-', '-', '-', `error: ${g.error}`]
        : [g.name, g.kind, g.domain, g.fidelity || 'Unknown', g.hint ? `gene.wasm only: run rotifer compile ${g.name}` : g.compiled ? 'yes' : 'no', g.id]))
      const problems = genes.filter((g) => g.problem)
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
      // Listed as upstream lists them, but not runnable until the phenotype is fixed.
      for (const g of problems) io.out(`\n${field(`${g.name}:`, `cannot run yet: ${g.problem}`, width, Math.max(14, g.name.length + 1))}`)
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
    // The id is the phenotype's: a gene with nothing to run yet has one too, as compile prints it.
    const gene = readGene(root, positionals.gene, { phenotypeOnly: true })
    io.out(gene.id)
    return 0
  },
}

module.exports = { list: listCommand('list'), geneList: listCommand('gene list'), id }
