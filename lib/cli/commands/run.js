'use strict'
// `rotifer run <gene>`: one gene on its own, outside any agent. Memory works only inside an
// agent (R-ACC-5): the gene still gets a ctx.memory, but every call on it throws
// MEMORY_ACCESS_DENIED and no memory file is touched. A gene that lets that error escape fails,
// and its code is shown.

const memory = require('../../../index.js')
const { readGene } = require('../project')
const { loadExpress } = require('../gene-loader')
const { expressGene, parseInput } = require('../runner')

const run = {
  name: 'run',
  summary: 'run one gene on its own, outside any agent (memory calls are denied)',
  usage: 'rotifer run <gene> --input <json>',
  description: [
    "Runs genes/<gene>/ once on the input and prints its output as JSON. The gene runs outside",
    'any agent: ctx.memory exists, but every memory call throws MEMORY_ACCESS_DENIED. To try a',
    "gene's memory use `rotifer test`; to use it for real, put the gene in an agent.",
  ],
  positionals: ['gene'],
  options: {
    input: { type: 'string', required: true, value: '<json>', help: 'the input of the gene: JSON, @file to read it from a file, or - to read stdin' },
  },
  examples: [`rotifer run formatter --input '{"code":"a","indent":2}'`],

  async run({ positionals, options, root, io }) {
    const input = parseInput(options.input, 'run')
    const gene = readGene(root, positionals.gene)
    const express = await loadExpress(gene)
    const standalone = new memory.GeneMemoryAccess({ agentId: null, geneId: gene.id, domain: gene.domain, root })
    const output = await expressGene(gene, express, input, standalone)
    io.out(JSON.stringify(output, null, 2))
    return 0
  },
}

module.exports = { run }
