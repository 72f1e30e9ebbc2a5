'use strict'
// Compiles WebAssembly text (WAT) to a binary module with the `wabt` dev dependency: the WASM
// genes of examples/ and of the tests are written as WAT and compiled when needed, never
// committed as binaries.

let wabt = null

/** The binary module of `text`; `filename` names it in errors. */
async function compileWat(text, filename = 'gene.wat') {
  wabt = wabt || (await require('wabt')())
  const module = wabt.parseWat(filename, text)
  try {
    module.resolveNames()
    module.validate()
    return Buffer.from(module.toBinary({}).buffer)
  } finally {
    module.destroy()
  }
}

module.exports = { compileWat }
