'use strict'
// The `gene` section of the benchmark: what a TypeScript gene costs over the same gene in
// JavaScript, one `rotifer agent run` each (a whole CLI process, as a user runs it). The
// TypeScript gene has been run once before (warm-up), so its transpiled code comes from the
// cache under .rotifer/cache/ts; the target is at most 50 ms more than the JavaScript gene.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { median } = require('./measure')

const REPO = path.join(__dirname, '..')
const BIN = path.join(REPO, 'bin', 'rotifer.js')
const FORMATTER = path.join(REPO, 'examples', 'formatter', 'genes', 'formatter')
const OVERHEAD_LIMIT_MS = 50

function rotifer(root, ...args) {
  const start = process.hrtime.bigint()
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: root, encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (r.status !== 0) throw new Error(`rotifer ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  return ms
}

/** A project with the formatter gene as written (TypeScript) and as JavaScript, one agent each. */
function project(root) {
  fs.mkdirSync(path.join(root, 'genes'), { recursive: true })
  fs.writeFileSync(path.join(root, 'rotifer.json'), '{}\n')
  fs.cpSync(FORMATTER, path.join(root, 'genes', 'ts'), { recursive: true })
  const js = path.join(root, 'genes', 'js')
  fs.cpSync(FORMATTER, js, { recursive: true })
  const ts = require('typescript')
  const source = fs.readFileSync(path.join(js, 'index.ts'), 'utf8')
  const out = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } })
  fs.writeFileSync(path.join(js, 'index.js'), out.outputText)
  fs.rmSync(path.join(js, 'index.ts'))
  rotifer(root, 'agent', 'create', 'ts-agent', '--genes', 'ts')
  rotifer(root, 'agent', 'create', 'js-agent', '--genes', 'js')
}

/** Alternating rounds of the two agents after one warm-up run each; medians in milliseconds. */
function geneSection(cfg, tmp, out, progress) {
  const rounds = cfg.mode === 'quick' ? 2 : 15
  progress(`gene: rotifer agent run, TypeScript gene vs JavaScript gene, ${rounds} rounds`)
  const root = path.join(tmp, 'gene')
  project(root)
  const input = JSON.stringify({ code: 'a {\n  b\n}', indent: 4 })
  const run = (agent) => rotifer(root, 'agent', 'run', agent, '--input', input)
  run('ts-agent')
  run('js-agent')
  const ts = []
  const js = []
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so neither always runs on a warmer machine.
    if (r % 2 === 0) {
      ts.push(run('ts-agent'))
      js.push(run('js-agent'))
    } else {
      js.push(run('js-agent'))
      ts.push(run('ts-agent'))
    }
  }
  const tsMs = median(ts)
  const jsMs = median(js)
  const limit = +((jsMs + OVERHEAD_LIMIT_MS) / jsMs).toFixed(3)
  const ratio = tsMs / jsMs
  out.rows.push({
    id: 'gene-start',
    label: 'rotifer agent run: TypeScript gene (cached) vs the same gene in JavaScript',
    kind: 'time',
    ours: tsMs * 1000,
    baseline: jsMs * 1000,
    ratio,
    otherClock: null,
    limit,
    target: `≤ ${limit.toFixed(2)} (+${OVERHEAD_LIMIT_MS} ms)`,
    verdict: ratio <= limit ? 'met' : 'MISSED',
    baselineIs: 'the JavaScript gene',
  })
  out.details.gene = { rounds, tsMs: ts, jsMs: js, overheadMs: tsMs - jsMs, baselineIs: 'the JavaScript gene' }
}

module.exports = { geneSection }
