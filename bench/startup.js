'use strict'
// The `startup` section of the benchmark: what a whole `rotifer` process costs over starting
// Node itself (`node -e 0`), as a user runs it:
//   - `rotifer agent run` of the gene `rotifer init` writes (TypeScript, run once before so its
//     transpiled code and compiled schemas come from .rotifer/cache/): target ≤ 1.5×;
//   - `rotifer agent run` of a small compiled gene (gene.wasm, run once before so the module
//     comes from .rotifer/cache/wasm/): target ≤ 1.5×;
//   - `rotifer --help`: target ≤ 1.2×.
// Rounds alternate with the baseline (which goes first every other round); medians of wall time.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { compileWat } = require('../scripts/wat')
const { median } = require('./measure')

const REPO = path.join(__dirname, '..')
const BIN = path.join(REPO, 'bin', 'rotifer.js')

const SMALL = `(module (memory (export "memory") 1 1)
  (data (i32.const 1024) "{\\"ok\\":1}\\00")
  (func (export "express") (param i32 i32) (result i32) (i32.const 1024)))`

/** Milliseconds of one process; throws when it fails. */
function run(cwd, args) {
  const start = process.hrtime.bigint()
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  return ms
}

/** A project made by `rotifer init`, with agent "ts" of its gene and agent "wasm" of a compiled one. */
async function project(tmp) {
  const parent = path.join(tmp, 'startup')
  fs.mkdirSync(parent, { recursive: true })
  run(parent, [BIN, 'init', 'p'])
  const root = path.join(parent, 'p')
  const wasm = path.join(root, 'genes', 'small')
  fs.mkdirSync(wasm)
  fs.writeFileSync(path.join(wasm, 'phenotype.json'), JSON.stringify({ domain: 'bench', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }))
  fs.writeFileSync(path.join(wasm, 'gene.wasm'), await compileWat(SMALL))
  run(root, [BIN, 'agent', 'create', 'ts', '--genes', 'hello-world'])
  run(root, [BIN, 'agent', 'create', 'wasm', '--genes', 'small'])
  return root
}

async function startupSection(cfg, tmp, out, progress) {
  const rounds = cfg.mode === 'quick' ? 3 : 15
  progress(`startup: rotifer agent run (TypeScript gene, compiled gene) and --help against node -e 0, ${rounds} rounds`)
  const root = await project(tmp)
  const cases = [
    ['startup-agent-run-ts', 'rotifer agent run of the gene rotifer init writes (TypeScript, cached) vs node -e 0', [BIN, 'agent', 'run', 'ts'], 1.5],
    ['startup-agent-run-wasm', 'rotifer agent run of a compiled gene (gene.wasm, module cached) vs node -e 0', [BIN, 'agent', 'run', 'wasm', '--input', '{}'], 1.5],
    ['startup-help', 'rotifer --help vs node -e 0', [BIN, '--help'], 1.2],
  ]
  // Warm-up: the caches filled, the files in the page cache.
  for (const [, , args] of cases) run(root, args)
  const times = Object.fromEntries(cases.map(([id]) => [id, []]))
  const node = []
  for (let r = 0; r < rounds; r++) {
    for (const [id, , args] of cases) {
      if (r % 2 === 0) {
        node.push(run(root, ['-e', '0']))
        times[id].push(run(root, args))
      } else {
        times[id].push(run(root, args))
        node.push(run(root, ['-e', '0']))
      }
    }
  }
  const baseline = median(node)
  for (const [id, label, , limit] of cases) {
    const ours = median(times[id])
    const ratio = ours / baseline
    out.rows.push({
      id,
      label,
      kind: 'time',
      ours: ours * 1000,
      baseline: baseline * 1000,
      ratio,
      otherClock: null,
      limit,
      target: `≤ ${limit}×`,
      verdict: ratio <= limit ? 'met' : 'MISSED',
      baselineIs: 'node -e 0 (starting Node and nothing else)',
    })
  }
  out.details.startup = { rounds, nodeMs: node, ms: times }
}

module.exports = { startupSection }
