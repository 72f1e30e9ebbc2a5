#!/usr/bin/env node
'use strict'
// What compiling a WASM gene costs the sandbox (docs/guarantees.md, docs/threat-model.md):
// modules of a chosen shape are generated as bytes and loaded by the addon (checked, then
// compiled by Cranelift) in a child process each, which reports its wall time and peak
// resident memory. Fuel bounds what a gene computes once it runs; this is the step before.
//
//   node bench/compile-cost.js [shape:size …]
//
// Shapes (N bytes of one function's code unless said): `live` values all live at once, `blocks`
// nested blocks, `ifs` ifs in a row each redefining a local, `loads` bounds-checked loads,
// `calls` calls, `flat` local.get/local.set pairs; `funcs:N` N empty functions, `mids:N` N
// functions of 1 KiB of ifs, `callfuncs:N` N functions of 64 KiB of calls, `locals:N` one function declaring N locals. Without arguments, a
// default table.

const path = require('node:path')
const { spawnSync } = require('node:child_process')

function leb(n) {
  const out = []
  do {
    let b = n & 0x7f
    n = Math.floor(n / 128)
    if (n) b |= 0x80
    out.push(b)
  } while (n)
  return out
}

function section(id, bytes) {
  return [id, ...leb(bytes.length), ...bytes]
}

function vec(items) {
  return [...leb(items.length), ...items.flat()]
}

/** A module of `bodies` (each an array of code bytes after its locals), type `() -> ()`, and an
 * exported memory. */
function module(bodies, locals = []) {
  const head = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]
  const types = section(1, vec([[0x60, 0x00, 0x00]]))
  const funcs = section(3, vec(bodies.map(() => [0x00])))
  const memory = section(5, vec([[0x00, 0x01]]))
  const exports = section(7, vec([[...leb(6), ...Buffer.from('memory'), 0x02, 0x00]]))
  const code = section(
    10,
    vec(
      bodies.map((body) => {
        const entry = [...vec(locals), ...body, 0x0b]
        return [...leb(entry.length), ...entry]
      })
    )
  )
  const bytes = [...head, ...types, ...funcs, ...memory, ...exports, ...code]
  return Buffer.from(bytes)
}

function repeat(pattern, bytes) {
  const n = Math.max(1, Math.floor(bytes / pattern.length))
  const out = new Array(n * pattern.length)
  for (let i = 0; i < n; i++) for (let j = 0; j < pattern.length; j++) out[i * pattern.length + j] = pattern[j]
  return out
}

const SHAPES = {
  // k distinct values live at once (local 0 + 1, pushed k times), then added together.
  live(n) {
    const k = Math.floor(n / 6)
    return module([[...repeat([0x20, 0x00, 0x41, 0x01, 0x6a], 5 * k), ...repeat([0x6a], k - 1), 0x1a]], [[0x01, 0x7f]])
  },
  // k blocks nested in one another.
  blocks(n) {
    const k = Math.floor(n / 3)
    return module([[...repeat([0x02, 0x40], 2 * k), ...repeat([0x0b], k)]])
  },
  // k ifs in a row, each redefining a local (a join, a phi, a branch each).
  ifs(n) {
    return module([repeat([0x20, 0x00, 0x04, 0x40, 0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, 0x0b], n)], [[0x02, 0x7f]])
  },
  // k loads, each bounds-checked, chained through a local.
  loads(n) {
    return module([repeat([0x20, 0x00, 0x28, 0x02, 0x00, 0x21, 0x00], n)], [[0x01, 0x7f]])
  },
  // k calls of the function itself.
  calls(n) {
    return module([repeat([0x10, 0x00], n)])
  },
  flat(n) {
    return module([repeat([0x20, 0x00, 0x21, 0x00], n)], [[0x01, 0x7f]])
  },
  funcs(n) {
    return module(Array.from({ length: n }, () => []))
  },
  // n functions of 1 KiB of ifs each.
  mids(n) {
    const body = repeat([0x20, 0x00, 0x04, 0x40, 0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, 0x0b], 1024)
    return module(Array.from({ length: n }, () => body), [[0x02, 0x7f]])
  },
  // n functions of 64 KiB of calls each (what the compiler keeps as it goes).
  callfuncs(n) {
    const body = repeat([0x10, 0x00], 65536)
    return module(Array.from({ length: n }, () => body))
  },
  locals(n) {
    return module([repeat([0x20, 0x00, 0x21, 0x01], 4000)], [[...leb(n), 0x7f]])
  },
}

function child(shape, size) {
  const native = require(path.join(__dirname, '..', 'binding.js'))
  const bytes = SHAPES[shape](size)
  const start = process.hrtime.bigint()
  let result = 'compiled'
  try {
    native.NativeWasmGene.load(bytes, `${shape}:${size}`, undefined, undefined)
  } catch (e) {
    result = String(e.message || e).split('\n')[0]
  }
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  process.stdout.write(JSON.stringify({ shape, size, bytes: bytes.length, ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, result }) + '\n')
}

function main(args) {
  const cases = args.length ? args : ['funcs:20000', 'mids:2000', 'live:262144', 'blocks:262144', 'ifs:262144', 'loads:262144', 'calls:262144', 'locals:50000']
  for (const c of cases) {
    const [shape, size] = c.split(':')
    const r = spawnSync(process.execPath, [__filename, '--child', shape, size], { encoding: 'utf8' })
    if (r.status !== 0) {
      process.stdout.write(`${c}: exited ${r.status} ${r.signal || ''} ${r.stderr.slice(0, 300)}\n`)
      continue
    }
    const m = JSON.parse(r.stdout)
    process.stdout.write(`${c.padEnd(16)} ${String(m.bytes).padStart(9)} B  ${m.ms.toFixed(0).padStart(7)} ms  ${m.maxRssMiB.toFixed(0).padStart(6)} MiB  ${m.result}\n`)
  }
}

if (process.argv[2] === '--child') child(process.argv[3], Number(process.argv[4]))
else main(process.argv.slice(2))
