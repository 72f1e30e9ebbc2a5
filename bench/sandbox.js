'use strict'
// The `sandbox` section of the benchmark: WASM genes in the native sandbox (wasmtime, fuel on)
// against the same genes on Node's own WebAssembly (V8), the way this CLI ran them before and
// the way a user would host them with `createMemoryImports` (bench/node-wasm-host.js):
//   - a whole `rotifer run` of a small compiled gene, cold (the module cache emptied first) and
//     warm (the module from .rotifer/cache/wasm), each against the Node-WebAssembly CLI;
//   - 10,000 readMemory hits from a WASM gene in one run, per call, against the same reads from
//     a TypeScript gene (`ctx.memory.readMemory`);
//   - a CPU-bound gene (10^8 loop iterations) with fuel metering on, against V8;
//   - endless loops of host calls that make the host work (1,024 empty WASI buffers a call; a
//     query of ~3 MiB answered into an `out` of 0, two requests alternating so that no kept
//     response answers them): how long each takes to spend the default fuel, against a plain
//     endless loop spending the same fuel.
// It also reports the addon's size.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const native = require('../binding.js')
const memory = require('../index.js')
const { compileWat } = require('../scripts/wat')
const { median } = require('./measure')

const REPO = path.join(__dirname, '..')
const BIN = path.join(REPO, 'bin', 'rotifer.js')
const PRELOAD = path.join(__dirname, 'node-wasm-preload.js')
const GENE_ID = 'v2:' + 'b'.repeat(64)

const SMALL = `(module (memory (export "memory") 1 1)
  (data (i32.const 1024) "{\\"ok\\":1}\\00")
  (func (export "express") (param i32 i32) (result i32) (i32.const 1024)))`

/** Reads {"key":"k"} `n` times; returns {} (a hit each time). */
const READS = (n) => `(module
  (import "rotifer" "readMemory" (func $read (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 100) "{\\"key\\":\\"k\\"}")
  (data (i32.const 200) "{}\\00")
  (func (export "express") (param i32 i32) (result i32) (local $i i32)
    (loop $l
      (if (i32.lt_s (call $read (i32.const 100) (i32.const 11) (i32.const 4096) (i32.const 4096)) (i32.const 0)) (then unreachable))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const ${n}))))
    (i32.const 200)))`

/** 10^8 iterations of a little arithmetic, its result kept so nothing is optimised away. */
const CPU = `(module (memory (export "memory") 1 1)
  (data (i32.const 200) "{}\\00")
  (func (export "express") (param i32 i32) (result i32) (local $i i32) (local $acc i32)
    (loop $l
      (local.set $acc (i32.add (i32.mul (local.get $acc) (i32.const 31)) (i32.xor (local.get $i) (i32.const 0x5bd1e995))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 100000000))))
    (i32.store (i32.const 0) (local.get $acc))
    (i32.const 200)))`

/** An endless loop; with `body`, of that body (WAT instructions). */
const ENDLESS = (imports = '', body = '', data = '', kind = 'express') => `(module ${imports}
  (memory (export "memory") 64)
  ${data}
  ${kind === 'express' ? `(func (export "express") (param i32 i32) (result i32) (loop $l ${body} (br $l)) (i32.const 0))` : `(func (export "_start") (loop $l ${body} (br $l)))`})`
const EMPTY_IOVECS = ENDLESS(
  '(import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))',
  '(drop (call $w (i32.const 2) (i32.const 0) (i32.const 1024) (i32.const 60000)))',
  '',
  'wasi'
)
const QUERY_INTO_NOTHING = ENDLESS(
  '(import "rotifer" "queryMemory" (func $q (param i32 i32 i32 i32) (result i32)))',
  '(drop (call $q (i32.const 100) (i32.const 2) (i32.const 0) (i32.const 0))) (drop (call $q (i32.const 200) (i32.const 3) (i32.const 0) (i32.const 0)))',
  '(data (i32.const 100) "{}") (data (i32.const 200) "{ }")'
)

function timed(fn) {
  const start = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - start) / 1e3
}

/** GNU time, which reports a child's CPU time (Node does not); absent, rows carry wall time only. */
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null

/** One CLI process: `{ wall, cpu }` in µs (`cpu` null without GNU time). */
function cli(root, args, { preload = false } = {}) {
  const argv = [...(preload ? ['-r', PRELOAD] : []), BIN, ...args]
  const cpuFile = path.join(root, '.cpu-time')
  const [cmd, cmdArgs] = TIME ? [TIME, ['-f', '%U %S', '-o', cpuFile, process.execPath, ...argv]] : [process.execPath, argv]
  let r
  const wall = timed(() => {
    r = spawnSync(cmd, cmdArgs, { cwd: root, encoding: 'utf8' })
  })
  if (r.status !== 0) throw new Error(`rotifer ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  const cpu = TIME ? fs.readFileSync(cpuFile, 'utf8').trim().split(/\s+/).map(Number).reduce((a, b) => a + b, 0) * 1e6 : null
  return { wall, cpu }
}

/** Alternating CLI rounds: medians of wall and CPU time for each side. */
function cliRounds(rounds, a, b) {
  const [, , as, bs] = alternating(rounds, a, b)
  const pick = (xs, k) => (xs[0][k] === null ? null : median(xs.map((x) => x[k])))
  return { ours: pick(as, 'wall'), theirs: pick(bs, 'wall'), oursCpu: pick(as, 'cpu'), theirsCpu: pick(bs, 'cpu') }
}

function row(id, label, ours, baseline, limit, baselineIs, cpu = null) {
  const ratio = ours / baseline
  return {
    id,
    label,
    kind: 'time',
    ours,
    baseline,
    ratio,
    otherClock: cpu && cpu.ours !== null ? { clock: 'cpu', ratio: cpu.ours / cpu.theirs } : null,
    limit,
    target: `≤ ${limit}×`,
    verdict: ratio <= limit ? 'met' : 'MISSED',
    baselineIs,
  }
}

/** Alternating rounds of `a` and `b` (which goes first alternates); their medians. */
function alternating(rounds, a, b) {
  const as = []
  const bs = []
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      as.push(a())
      bs.push(b())
    } else {
      bs.push(b())
      as.push(a())
    }
  }
  return [median(as), median(bs), as, bs]
}

async function sandboxSection(cfg, tmp, out, progress) {
  const quick = cfg.mode === 'quick'
  const rounds = quick ? 2 : 15
  const root = path.join(tmp, 'sandbox')
  const geneDir = path.join(root, 'genes', 'small')
  fs.mkdirSync(geneDir, { recursive: true })
  fs.writeFileSync(path.join(root, 'rotifer.json'), '{}\n')
  fs.writeFileSync(path.join(geneDir, 'phenotype.json'), JSON.stringify({ domain: 'bench.small', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }))
  fs.writeFileSync(path.join(geneDir, 'gene.wasm'), await compileWat(SMALL))
  cli(root, ['compile', 'small'])
  fs.rmSync(path.join(geneDir, 'gene.wasm'))
  const cache = path.join(root, '.rotifer', 'cache', 'wasm')
  const run = ['run', 'small', '--input', '{}']

  progress(`sandbox: rotifer run of a compiled gene, cold and warm, vs Node's WebAssembly, ${rounds} rounds`)
  cli(root, run)
  cli(root, run, { preload: true })
  const cold = cliRounds(rounds, () => {
    fs.rmSync(cache, { recursive: true, force: true })
    return cli(root, run)
  }, () => cli(root, run, { preload: true }))
  const cpuOf = (m) => ({ ours: m.oursCpu, theirs: m.theirsCpu })
  out.rows.push(row('sandbox-run-cold', 'rotifer run, small compiled gene, cold (module compiled) vs Node WebAssembly', cold.ours, cold.theirs, 1.0, "the CLI on Node's WebAssembly", cpuOf(cold)))
  cli(root, run)
  const warm = cliRounds(rounds, () => cli(root, run), () => cli(root, run, { preload: true }))
  out.rows.push(row('sandbox-run-warm', 'rotifer run, small compiled gene, warm (module cached) vs Node WebAssembly', warm.ours, warm.theirs, 1.0, "the CLI on Node's WebAssembly", cpuOf(warm)))

  const reads = quick ? 1000 : 10_000
  progress(`sandbox: ${reads} readMemory hits, WASM gene vs TypeScript gene`)
  const memRoot = path.join(tmp, 'sandbox-memory')
  fs.mkdirSync(memRoot, { recursive: true })
  memory.createAgentMemory({ agentId: 'bench-sandbox', root: memRoot })
  const access = new memory.GeneMemoryAccess({ agentId: 'bench-sandbox', root: memRoot, geneId: GENE_ID, domain: 'bench.sandbox' })
  access.writeMemory('k', Buffer.alloc(100, 0x61), 'CONTEXT')
  const readGene = native.NativeWasmGene.load(await compileWat(READS(reads)), 'reads', undefined)
  const options = { geneName: 'reads', agentId: 'bench-sandbox', root: memRoot, geneId: GENE_ID, domain: 'bench.sandbox', fuel: 1e12, context: '{}', deadline: Date.now() + 600_000 }
  const wasmReads = () => {
    let r
    const us = timed(() => {
      r = readGene.run('{}', options)
    })
    if (r.outcome !== 'output') throw new Error(`the reading gene failed: ${JSON.stringify(r)}`)
    return us / reads
  }
  const tsReads = () =>
    timed(() => {
      for (let i = 0; i < reads; i++) if (access.readMemory('k') === null) throw new Error('a miss')
    }) / reads
  wasmReads()
  tsReads()
  const [wasmPerCall, tsPerCall] = alternating(quick ? 3 : 11, wasmReads, tsReads)
  out.rows.push(row('sandbox-reads', `readMemory hit from a WASM gene (${reads} in one run, per call) vs from a TypeScript gene`, wasmPerCall, tsPerCall, 2, 'the same reads from a TypeScript gene'))

  progress('sandbox: a CPU-bound gene (10^8 iterations), fuel on, vs V8')
  const cpuBytes = await compileWat(CPU)
  const cpuGene = native.NativeWasmGene.load(cpuBytes, 'cpu', undefined)
  const v8 = new WebAssembly.Instance(new WebAssembly.Module(cpuBytes), {})
  const ours = () =>
    timed(() => {
      const r = cpuGene.run('{}', { geneName: 'cpu', fuel: 1e11, context: '{}', deadline: Date.now() + 600_000 })
      if (r.outcome !== 'output') throw new Error(`the CPU gene failed: ${JSON.stringify(r)}`)
    })
  const theirs = () => timed(() => v8.exports.express(0, 0))
  ours()
  theirs()
  const [cpuOurs, cpuV8] = alternating(quick ? 2 : 7, ours, theirs)
  out.rows.push(row('sandbox-cpu', 'CPU-bound gene, 10^8 loop iterations, fuel on, vs V8 (Node WebAssembly)', cpuOurs, cpuV8, 1.5, 'V8 on the same module'))

  progress('sandbox: endless loops of host calls making the host work, to the end of their fuel, vs a plain endless loop')
  const fuelRoot = path.join(tmp, 'sandbox-fuel')
  fs.mkdirSync(fuelRoot, { recursive: true })
  memory.createAgentMemory({ agentId: 'bench-fuel', root: fuelRoot, quota: '16MB' })
  const filler = new memory.GeneMemoryAccess({ agentId: 'bench-fuel', root: fuelRoot, geneId: GENE_ID, domain: 'bench.sandbox' })
  for (let i = 0; i < 24; i++) filler.writeMemory(`k${i}`, Buffer.alloc(96 * 1024, 0x61), 'CONTEXT')
  // The default fuel; a fifth of it in quick mode (both sides of a ratio spend the same).
  const fuel = quick ? native.wasmLimits().fuel / 5 : native.wasmLimits().fuel
  const endless = (wat, name, memoryBound) =>
    compileWat(wat).then((bytes) => {
      const gene = native.NativeWasmGene.load(bytes, name, undefined)
      const bound = memoryBound ? { agentId: 'bench-fuel', root: fuelRoot, geneId: GENE_ID, domain: 'bench.sandbox' } : {}
      return () => {
        let r
        const us = timed(() => {
          r = gene.run('{}', { geneName: name, ...bound, fuel, context: '{}', deadline: Date.now() + 600_000 })
        })
        if (r.code !== 'OUT_OF_FUEL') throw new Error(`${name} ended ${JSON.stringify(r)}, not out of fuel`)
        return us
      }
    })
  const plain = await endless(ENDLESS(), 'plain', false)
  const iovecs = await endless(EMPTY_IOVECS, 'iovecs', false)
  const queries = await endless(QUERY_INTO_NOTHING, 'queries', true)
  const fuelRounds = quick ? 1 : 3
  const [iovecUs, plainUs1] = alternating(fuelRounds, iovecs, plain)
  out.rows.push(row('sandbox-fuel-iovecs', 'endless fd_write of 1,024 empty buffers, to OUT_OF_FUEL vs a plain endless loop on the same fuel', iovecUs, plainUs1, 3, 'a plain endless loop on the same fuel'))
  const [queryUs, plainUs2] = alternating(fuelRounds, queries, plain)
  out.rows.push(row('sandbox-fuel-queries', 'endless queryMemory of ~3 MiB into an out of 0, to OUT_OF_FUEL vs a plain endless loop on the same fuel', queryUs, plainUs2, 3, 'a plain endless loop on the same fuel'))

  const addon = fs.readdirSync(REPO).find((f) => f.endsWith('.node'))
  out.details.sandbox = {
    rounds,
    reads,
    addonBytes: addon ? fs.statSync(path.join(REPO, addon)).size : null,
    cold,
    warm,
    readsPerCallUs: { wasm: wasmPerCall, typescript: tsPerCall },
    cpuUs: { ours: cpuOurs, v8: cpuV8 },
    fuel,
    fuelUs: { iovecs: iovecUs, queries: queryUs, plain: [plainUs1, plainUs2] },
  }
  progress(`sandbox: addon ${out.details.sandbox.addonBytes} bytes`)
}

module.exports = { sandboxSection }
