'use strict'
// WASM genes for the runtime tests, written as WAT and compiled with wabt (scripts/wat.js).

const fs = require('node:fs')
const path = require('node:path')
const { compileWat } = require('../scripts/wat')
const { addGene, REPO } = require('./cli-harness')

/** `text` as a WAT string literal: every byte outside plain ASCII, `"` and `\` escaped. */
function watString(text) {
  return '"' + [...Buffer.from(text, 'utf8')].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${b.toString(16).padStart(2, '0')}`)).join('') + '"'
}

const WAT = {
  /** Returns `value` (JSON) whatever its input. */
  constant: (value) => `(module (memory (export "memory") 1)
    (data (i32.const 1024) ${watString(JSON.stringify(value) + '\0')})
    (func (export "express") (param i32 i32) (result i32) (i32.const 1024)))`,
  /** Returns its input (written at 0: no alloc). */
  echo: () => `(module (memory (export "memory") 1)
    (func (export "express") (param $p i32) (param $n i32) (result i32)
      (i32.store8 (i32.add (local.get $p) (local.get $n)) (i32.const 0))
      (local.get $p)))`,
  /** Reports failure `code` with `message` through the error envelope. */
  reject: (code, message) => WAT.constant({ __rotifer_error: { code, message } }),
  /** Returns the negative code `n`. */
  negative: (n) => `(module (memory (export "memory") 1)
    (func (export "express") (param i32 i32) (result i32) (i32.const ${n})))`,
  /** Never returns, and never calls the host. */
  loop: () => `(module (memory (export "memory") 1)
    (func (export "express") (param i32 i32) (result i32) (loop $forever (br $forever)) (i32.const 0)))`,
  /** Imports a function the host does not provide. */
  unknownImport: () => `(module
    (import "rotifer" "readMemory" (func (param i32 i32 i32 i32) (result i32)))
    (import "env" "clock" (func (result i64)))
    (memory (export "memory") 1)
    (func (export "express") (param i32 i32) (result i32) (i32.const 0)))`,
  /** A WASI command copying stdin to stdout; with `memory`, it also imports rotifer.readMemory. */
  wasiEcho: ({ memory = false } = {}) => `(module
    (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
    ${memory ? '(import "rotifer" "readMemory" (func (param i32 i32 i32 i32) (result i32)))' : ''}
    (memory (export "memory") 1)
    (func (export "_start")
      (i32.store (i32.const 0) (i32.const 1024))
      (i32.store (i32.const 4) (i32.const 60000))
      (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
      (i32.store (i32.const 4) (i32.load (i32.const 16)))
      (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 20)))))`,
}

/** Writes genes/<name>/ with a phenotype and the gene.wasm compiled from `wat`. */
async function addWasmGene(root, name, wat, options) {
  const dir = addGene(root, name, {}, options)
  fs.writeFileSync(path.join(dir, 'gene.wasm'), await compileWat(wat, `${name}.wat`))
  return dir
}

/** Copies the example counter gene (WAT) into the project, compiled. */
async function addCounter(root) {
  const src = path.join(REPO, 'examples', 'formatter', 'genes', 'counter')
  const dir = path.join(root, 'genes', 'counter')
  fs.mkdirSync(dir, { recursive: true })
  for (const f of ['phenotype.json', 'testsuite.json', 'gene.wat']) fs.copyFileSync(path.join(src, f), path.join(dir, f))
  fs.writeFileSync(path.join(dir, 'gene.wasm'), await compileWat(fs.readFileSync(path.join(src, 'gene.wat'), 'utf8'), 'counter.wat'))
  return dir
}

module.exports = { WAT, addWasmGene, addCounter }
