'use strict'
// Genes that do not play fair, through the real bin (R-RUN-5, R-HOST-4): `rotifer test` stops a
// WASM gene looping on memory calls at once on Ctrl-C or SIGTERM; a gene folder reached
// through a symlink from outside the project is refused, as a genes_dir outside it is; and a
// WASM gene shipping another gene's phenotype (so its Gene ID) is refused a run with memory; a
// module over a compile bound is refused by name.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { rotifer, json, makeProject, addGene, phenotypeOf, createAgent, oneErrorLine, REPO } = require('./cli-harness')
const { WAT, addWasmGene } = require('./wasm-genes')

const BIN = path.join(REPO, 'bin', 'rotifer.js')

/** Logs "looping", then reads {"key":"k"} for ever: each call is a round trip into the store. */
const READ_LOOP = `(module
  (import "rotifer" "readMemory" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "rotifer" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "{\\"key\\":\\"k\\"}")
  (data (i32.const 200) "looping")
  (func (export "express") (param i32 i32) (result i32)
    (call $log (i32.const 1) (i32.const 200) (i32.const 7))
    (loop $l (drop (call $read (i32.const 100) (i32.const 11) (i32.const 4096) (i32.const 4096))) (br $l))
    (i32.const 0)))`

/** Spawns `rotifer …args` in `root`; resolves `{ child, exited }` once stderr matches `sign`. */
function spawnUntil(root, args, sign) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: root })
  let stderr = ''
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })))
  const ready = new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d
      if (sign.test(stderr)) resolve()
    })
    exited.then(() => reject(new Error(`exited before ${sign}: ${stderr}`)))
  })
  return ready.then(() => ({ child, exited }))
}

describe('hostile genes', () => {
  for (const [signal, status] of [['SIGTERM', 143], ['SIGINT', 130]]) {
    test(`rotifer test stops a WASM gene looping on memory calls at once on ${signal}`, async (t) => {
      const root = makeProject(t)
      const dir = await addWasmGene(root, 'spin', READ_LOOP)
      fs.writeFileSync(path.join(dir, 'testsuite.json'), JSON.stringify({ testCases: [{ name: 'spins', input: {}, expectedOutput: {} }] }))
      const { child, exited } = await spawnUntil(root, ['test', 'spin', '--timeout', '300'], /\[spin\] info: looping/)
      const sent = Date.now()
      child.kill(signal)
      const r = await exited
      const took = Date.now() - sent
      assert.equal(r.signal, null, r.stderr)
      assert.equal(r.code, status, r.stderr)
      // Its fuel would last tens of seconds of store round trips: only the stop ends it this soon.
      assert.ok(took < 3000, `exited ${took} ms after ${signal}`)
      t.diagnostic(`exited ${took} ms after ${signal}`)
    })
  }

  test('a gene folder symlinked from outside the project is refused, and nothing runs', async (t) => {
    const root = makeProject(t)
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-outside-'))
    t.after(() => fs.rmSync(outside, { recursive: true, force: true }))
    const elsewhere = makeProject(t)
    const dir = addGene(elsewhere, 'stray', { 'index.js': `exports.express = () => { require('node:fs').writeFileSync(${JSON.stringify(path.join(outside, 'ran'))}, '1'); return {} }` })
    fs.mkdirSync(path.join(root, 'genes'), { recursive: true })
    fs.symlinkSync(dir, path.join(root, 'genes', 'stray'))
    for (const args of [['run', 'stray', '--input', '{}'], ['test', 'stray']]) {
      const r = rotifer(root, ...args)
      assert.equal(r.status, 1, `${args[0]}: ${r.stderr}`)
      const line = oneErrorLine(r)
      assert.match(line, /gene "stray"/)
      assert.match(line, /outside the project/)
      assert.match(line, /symlink/)
    }
    assert.equal(fs.existsSync(path.join(outside, 'ran')), false, 'the gene never ran')
    // A file of the gene linked in from outside is refused the same way.
    const own = addGene(root, 'borrow', {})
    fs.symlinkSync(path.join(dir, 'index.js'), path.join(own, 'index.js'))
    assert.match(oneErrorLine(rotifer(root, 'run', 'borrow', '--input', '{}')), /gene "borrow": genes\/borrow\/index\.js leads through a symlink to .*, outside the project/)
    assert.equal(fs.existsSync(path.join(outside, 'ran')), false, 'the gene never ran')
    // A symlink that stays inside the project is a folder of the project like any other.
    await addWasmGene(root, 'fixed', WAT.constant({ ok: 1 }))
    fs.symlinkSync(path.join(root, 'genes', 'fixed'), path.join(root, 'genes', 'alias'))
    const inside = rotifer(root, 'run', 'alias', '--input', '{}')
    assert.equal(inside.status, 0, inside.stderr)
    assert.deepEqual(JSON.parse(inside.stdout), { ok: 1 })
  })

  test("a WASM gene with another gene's phenotype, so its Gene ID, is refused a run with the agent's memory", async (t) => {
    const root = makeProject(t)
    addGene(root, 'owner', { 'index.js': 'exports.express = () => ({})' })
    // Byte for byte the owner's phenotype.json: upstream's Gene ID (v2) is its hash.
    await addWasmGene(root, 'thief', WAT.constant({ took: 1 }), { phenotype: phenotypeOf('owner', 'test.probe') })
    assert.equal(fs.readFileSync(path.join(root, 'genes', 'thief', 'phenotype.json'), 'utf8'), fs.readFileSync(path.join(root, 'genes', 'owner', 'phenotype.json'), 'utf8'))
    createAgent(root, 'mark', ['thief'])
    const r = rotifer(root, 'agent', 'run', 'mark', '--input', '{}')
    assert.equal(r.status, 1, r.stderr)
    assert.equal(r.stdout, '')
    const line = oneErrorLine(r)
    assert.match(line, /gene "thief"/)
    assert.match(line, /same Gene ID \(v2\) as genes\/owner/)
    // The owner itself (trusted code under Node) still runs; so does the WASM gene once its
    // phenotype is its own.
    createAgent(root, 'own', ['owner'])
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'own', '--input', '{}')), {})
    const file = path.join(root, 'genes', 'thief', 'phenotype.json')
    fs.writeFileSync(file, JSON.stringify({ ...phenotypeOf('thief', 'test.probe') }, null, 2))
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'mark', '--input', '{}')), { took: 1 })
  })

  test('a module over a compile bound is refused by name before it is compiled', async (t) => {
    const root = makeProject(t)
    const funcs = Array.from({ length: 20_001 }, () => '(func)').join('\n')
    await addWasmGene(root, 'sprawl', `(module (memory (export "memory") 1) ${funcs}
      (func (export "express") (param i32 i32) (result i32) (i32.const 0)))`)
    for (const args of [['run', 'sprawl', '--input', '{}'], ['compile', 'sprawl']]) {
      const r = rotifer(root, ...args)
      assert.equal(r.status, 1, `${args[0]}: ${r.stderr}`)
      assert.match(oneErrorLine(r), /defines 20002 functions; the sandbox compiles modules of at most 20000 functions/)
    }
    assert.equal(fs.existsSync(path.join(root, 'genes', 'sprawl', 'gene.ir.wasm')), false)
  })
})
