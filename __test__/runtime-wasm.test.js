'use strict'
// The WASM gene host (lib/runtime/wasm-host.js, R-RUN-2), called directly: the run's deadline
// reaches the memory host functions, alloc, and outputs the host cannot use.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { compileWat } = require('../scripts/wat')
const { loadWasmGene, runWasmGene, Failure } = require('../lib/runtime/wasm-host')

/** A gene (as readGene gives it) whose gene.wasm is compiled from `wat`, in a temporary folder. */
async function wasmGene(t, wat) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-wasm-host-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.writeFileSync(path.join(dir, 'gene.wasm'), await compileWat(wat))
  return { name: 'g', dir, entry: null, wasm: path.join(dir, 'gene.wasm'), id: 'v2:' + 'a'.repeat(64), domain: 'test.probe' }
}

function failureOf(fn) {
  try {
    fn()
  } catch (e) {
    if (e instanceof Failure) return e.failure
    throw e
  }
  assert.fail('expected a gene failure')
}

test('host calls at or after the run deadline get -4', async (t) => {
  // express returns what readMemory returned: -4 makes it fail with code "-4".
  const gene = await wasmGene(t, `(module
    (import "rotifer" "readMemory" (func $read (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 1)
    (data (i32.const 0) "{\\"key\\":\\"k\\"}")
    (func (export "express") (param i32 i32) (result i32)
      (call $read (i32.const 0) (i32.const 11) (i32.const 1024) (i32.const 1024))))`)
  const loaded = loadWasmGene(gene)
  const memory = { agentId: null, root: os.tmpdir() }
  assert.equal(failureOf(() => runWasmGene(gene, loaded, '{}', { memory, deadline: Date.now() - 1 })).code, '-4')
  // Before the deadline, a standalone gene is denied instead: the deadline was what made -4.
  assert.equal(failureOf(() => runWasmGene(gene, loaded, '{}', { memory, deadline: Date.now() + 60000 })).code, '-2')
})

test('the input goes where alloc says; an output without NUL is refused', async (t) => {
  const echo = await wasmGene(t, `(module (memory (export "memory") 1)
    (func (export "alloc") (param i32) (result i32) (i32.const 40000))
    (func (export "express") (param $p i32) (param $n i32) (result i32)
      (if (i32.ne (local.get $p) (i32.const 40000)) (then (unreachable)))
      (i32.store8 (i32.add (local.get $p) (local.get $n)) (i32.const 0))
      (local.get $p)))`)
  const options = { memory: { agentId: null, root: os.tmpdir() }, deadline: Date.now() + 60000 }
  assert.equal(runWasmGene(echo, loadWasmGene(echo), '{"a":[1,"é"]}', options), '{"a":[1,"é"]}')

  const unterminated = await wasmGene(t, `(module (memory (export "memory") 1)
    (func (export "express") (param i32 i32) (result i32)
      (memory.fill (i32.const 0) (i32.const 65) (i32.const 65536))
      (i32.const 0)))`)
  const f = failureOf(() => runWasmGene(unterminated, loadWasmGene(unterminated), '{}', options))
  assert.equal(f.code, 'INVALID_OUTPUT')
  assert.match(f.message, /no NUL byte before the end of memory/)
})
