'use strict'
// A gene's contract, checked (R-RUN-9): its phenotype's `inputSchema` and `outputSchema`,
// compiled once per gene and process, on first use (from the project's schema cache when it
// holds them, json-schema.js). `run` and `agent run` check every gene's
// input against its inputSchema before the gene sees it; `rotifer test` checks inputs and
// outputs.

const path = require('node:path')
const { compileSchema, schemaCacheDirOf } = require('../json-schema')

const compiled = new Map()

/**
 * `{ input(value), output(value) }` of `gene` (from readGene): each null when `value` conforms,
 * else the problems (field and rule). An invalid schema throws a CliError naming it.
 */
function geneSchemas(gene) {
  const key = `${gene.dir}\0${gene.id}`
  let entry = compiled.get(key)
  if (!entry) {
    const where = (field) => `${path.join(gene.where || gene.dir, 'phenotype.json')}: "${field}"`
    const cache = { cacheDir: gene.root ? schemaCacheDirOf(gene.root) : null }
    let input = null
    let output = null
    const make = {
      input: () => (input = input || compileSchema(gene.phenotype.inputSchema, where('inputSchema'), cache)),
      output: () => (output = output || compileSchema(gene.phenotype.outputSchema, where('outputSchema'), cache)),
    }
    entry = {
      input: (value) => make.input()(value),
      output: (value) => make.output()(value),
      /** The check of `'input'` or `'output'`, compiled now. */
      compiled: (kind) => make[kind](),
    }
    compiled.set(key, entry)
  }
  return entry
}

module.exports = { geneSchemas }
