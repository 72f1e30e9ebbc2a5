#!/usr/bin/env node
'use strict'
// Moving an agent's memory (R-MIG): how long `exportAgentMemory` and `importAgentMemory` take
// for an agent of 10,000 entries (100-byte values, like the main benchmark). No baseline: a
// store hand-rolled on better-sqlite3 has no bundle format to compare with.
//
//   node bench/bundle.js [--quick] [--entries N] [--out FILE]
//
// Each round exports the agent (to a Buffer, and to a file), then imports the bundle into a
// new, empty agent; the table shows medians. Writes the figures as JSON (default
// bench/results-bundle.json, git-ignored with the other results).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const memory = require('../index.js')
const { settle, startTimer, median } = require('./measure')

function parseArgs(argv) {
  const o = { quick: false, entries: 10_000, out: path.join(__dirname, 'results-bundle.json') }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--quick') o.quick = true
    else if (a === '--entries') o.entries = Number(argv[++i])
    else if (a === '--out') o.out = argv[++i]
    else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: node bench/bundle.js [--quick] [--entries N] [--out FILE]\n')
      process.exit(0)
    } else throw new Error(`unknown argument ${a}; see --help`)
  }
  if (!Number.isInteger(o.entries) || o.entries < 1) throw new Error('--entries takes a whole number of at least 1')
  o.rounds = o.quick ? 3 : 11
  return o
}

const GENE = 'v2:' + 'b'.repeat(64)
const VALUE = Buffer.alloc(100, 0x61)

function seed(root, entries) {
  memory.createAgentMemory({ agentId: 'source', root, quota: '1GB' })
  const m = new memory.GeneMemoryAccess({ agentId: 'source', geneId: GENE, domain: 'bench', root })
  for (let i = 0; i < entries; i++) {
    // A tenth are PREFERENCE, the rest CONTEXT: both always migrate.
    m.writeMemory(`bench/${String(i).padStart(6, '0')}`, VALUE, i % 10 === 0 ? 'PREFERENCE' : 'CONTEXT')
  }
}

async function time(f) {
  await settle()
  const stop = startTimer()
  const result = f()
  return { ...stop(), result }
}

async function main() {
  const o = parseArgs(process.argv.slice(2))
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-bench-bundle-'))
  try {
    const source = path.join(dir, 'source')
    const target = path.join(dir, 'target')
    fs.mkdirSync(source)
    fs.mkdirSync(target)
    seed(source, o.entries)
    memory.exportAgentMemory({ agentId: 'source', root: source }) // warm-up
    const samples = { export: [], exportFile: [], import: [] }
    let bytes = 0
    for (let round = 0; round < o.rounds; round++) {
      const e = await time(() => memory.exportAgentMemory({ agentId: 'source', root: source }))
      samples.export.push(e.wall)
      bytes = e.result.length
      const file = path.join(dir, `bundle-${round}.jsonl`)
      samples.exportFile.push((await time(() => memory.exportAgentMemory({ agentId: 'source', root: source, output: file }))).wall)
      const agentId = `target-${round}`
      memory.createAgentMemory({ agentId, root: target, quota: '1GB' })
      const i = await time(() => memory.importAgentMemory({ agentId, root: target, bundle: e.result }))
      if (i.result.created !== o.entries) throw new Error(`imported ${i.result.created} of ${o.entries} entries`)
      samples.import.push(i.wall)
      fs.rmSync(file)
    }
    const rows = [
      ['exportAgentMemory to a Buffer', median(samples.export)],
      ['exportAgentMemory to a file (temporary name, fsync, rename)', median(samples.exportFile)],
      ['importAgentMemory into an empty agent (one transaction)', median(samples.import)],
    ]
    const head = `${o.entries.toLocaleString('en-US')} entries, 100-byte values, bundle ${(bytes / 1024 / 1024).toFixed(2)} MiB, median of ${o.rounds} rounds`
    process.stdout.write(`${head}\n\n| operation | total | per entry |\n|:--|--:|--:|\n`)
    for (const [name, ns] of rows) {
      process.stdout.write(`| ${name} | ${(ns / 1e6).toFixed(1)} ms | ${(ns / 1e3 / o.entries).toFixed(2)} µs |\n`)
    }
    fs.writeFileSync(o.out, JSON.stringify({
      mode: o.quick ? 'quick' : 'full',
      node: process.version,
      cpus: os.cpus().length,
      entries: o.entries,
      rounds: o.rounds,
      bundleBytes: bytes,
      medianMs: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v) / 1e6])),
      samplesNs: samples,
    }, null, 2) + '\n')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  process.stderr.write(`${e && e.stack ? e.stack : e}\n`)
  process.exit(1)
})
