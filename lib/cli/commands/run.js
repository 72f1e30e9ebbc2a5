'use strict'
// `rotifer run <gene>`: one gene on its own, outside any agent. Memory works only inside an
// agent (R-ACC-5, R-RUN-6): a TypeScript gene still gets a ctx.memory, but every call on it
// throws MEMORY_ACCESS_DENIED; a WASM gene's memory calls all return -2 with the envelope. No
// memory file is touched. A gene that lets the denial escape fails, and its code is shown.

const { readGene, sourceOnly } = require('../project')
const { parseInput, parseTimeout, TIMEOUT_OPTION } = require('../runner')
const { DEFAULT_INPUT } = require('../../runtime/defaults')
const { printableJson } = require('../terminal-text')

const run = {
  name: 'run',
  needsProject: true,
  summary: 'run one gene on its own, outside any agent (memory calls are denied)',
  usage: 'rotifer run <gene> [--input <json>] [--timeout <seconds>] [--no-sandbox]',
  description: [
    "Runs the gene once on the input and prints its output as JSON. The input must conform to the",
    "gene's inputSchema. A compiled gene (gene.ir.wasm, or gene.wasm alone) runs as WASM; with",
    '--no-sandbox its source (index.ts, index.js or index.mjs) runs under Node instead. The gene',
    'runs outside any agent: every memory call is denied (MEMORY_ACCESS_DENIED; -2 for a WASM',
    "gene). To try a gene's memory use `rotifer test`; to use it for real, put it in an agent.",
  ],
  positionals: ['gene'],
  options: {
    input: { type: 'string', value: '<json>', help: 'the input of the gene: JSON, @file to read it from a file, or - to read stdin; default {"name":"world"}, as upstream' },
    timeout: TIMEOUT_OPTION,
    'no-sandbox': { type: 'boolean', help: 'run the source under Node even when the gene is compiled' },
  },
  examples: [`rotifer run formatter --input '{"code":"a","indent":2}'`],

  async run({ positionals, options, root, io }) {
    const input = options.input === undefined ? { ...DEFAULT_INPUT } : parseInput(options.input, 'run')
    const seconds = parseTimeout(options.timeout, 'run')
    const read = readGene(root, positionals.gene)
    const gene = options['no-sandbox'] ? sourceOnly(read) : read
    const { runGene } = require('../../runtime')
    const output = await runGene({ gene, memory: { agentId: null, root }, input, seconds })
    // The same JSON, with the characters a terminal acts on escaped.
    io.out(printableJson(JSON.stringify(output, null, 2)))
    return 0
  },
}

module.exports = { run }
