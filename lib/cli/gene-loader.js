'use strict'
// Loads a gene's code in this Node process so that its `express` can be called with a real
// `ctx.memory`.
//
// - `.ts` files are transpiled to CommonJS with TypeScript's `transpileModule` (Node 20 cannot
//   strip types itself). Type-only imports such as `import type { GeneMemoryAccess } from
//   "@rotifer/playground/memory"` disappear, so a gene runs exactly as written.
// - A gene's own `.js` files may use `export`/`import` syntax: files that do not parse as
//   CommonJS are transpiled the same way. Files in node_modules are left to Node.
// - `@rotifer/playground/memory` always resolves to this package, so a `MemoryError` a gene
//   imports is the very class `ctx.memory` throws, even in a project that does not install it.
// Source maps are enabled so that a failure points at the line of the `.ts` file.

const fs = require('node:fs')
const path = require('node:path')
const vm = require('node:vm')
const Module = require('node:module')
const { CliError, describeError } = require('./errors')

const MEMORY_MODULE = require.resolve('../../index.js')
const MEMORY_REQUEST = '@rotifer/playground/memory'

let ts = null
const genesDirs = new Set()
let installed = false

function transpile(source, filename) {
  // Loaded on first use: TypeScript is large, and JavaScript genes never need it.
  ts = ts || require('typescript')
  const out = ts.transpileModule(source, {
    fileName: filename,
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      inlineSourceMap: true,
      inlineSources: true,
    },
  })
  const errors = (out.diagnostics || []).filter((d) => d.category === ts.DiagnosticCategory.Error)
  if (errors.length > 0) {
    const d = errors[0]
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null
    const at = where ? `:${where.line + 1}:${where.character + 1}` : ''
    throw new CliError(`${displayPath(filename)}${at}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`)
  }
  return out.outputText
}

function parsesAsCommonJs(source, filename) {
  try {
    new vm.Script(Module.wrap(source.replace(/^#!.*/, '')), { filename })
    return true
  } catch (e) {
    if (e instanceof SyntaxError) return false
    throw e
  }
}

function isGeneSource(filename) {
  if (filename.split(path.sep).includes('node_modules')) return false
  for (const dir of genesDirs) if (filename.startsWith(dir + path.sep)) return true
  return false
}

function install() {
  if (installed) return
  installed = true
  process.setSourceMapsEnabled(true)

  const resolve = Module._resolveFilename
  Module._resolveFilename = function (request, ...rest) {
    if (request === MEMORY_REQUEST) return MEMORY_MODULE
    return resolve.call(this, request, ...rest)
  }

  Module._extensions['.ts'] = function (module, filename) {
    module._compile(transpile(fs.readFileSync(filename, 'utf8'), filename), filename)
  }

  const loadJs = Module._extensions['.js']
  Module._extensions['.js'] = function (module, filename) {
    if (!isGeneSource(filename)) return loadJs.call(this, module, filename)
    const source = fs.readFileSync(filename, 'utf8')
    module._compile(parsesAsCommonJs(source, filename) ? source : transpile(source, filename), filename)
  }
}

/** Paths in messages are shown relative to the working directory when that is shorter. */
function displayPath(file) {
  const rel = path.relative(process.cwd(), file)
  return rel && !rel.startsWith('..') && rel.length < file.length ? rel : file
}

/**
 * The first place in `error`'s stack inside folder `dir`, as `file:line:col`, or null. With
 * source maps on, positions in `.ts` files are those of the source as written.
 */
function locate(error, dir) {
  const stack = error && typeof error.stack === 'string' ? error.stack : ''
  for (const line of stack.split('\n')) {
    // `at fn (/path/file.ts:12:5)` or `at /path/file.ts:12:5`; paths may hold spaces.
    const m = /(?:\(|at )((?:\/|file:\/\/).*):(\d+):(\d+)\)?\s*$/.exec(line)
    if (!m) continue
    const file = m[1].startsWith('file://') ? new URL(m[1]).pathname : m[1]
    if (file.startsWith(dir + path.sep)) return `${displayPath(file)}:${m[2]}:${m[3]}`
  }
  return null
}

/**
 * Loads `gene` (from `readGene`) and returns its `express` function. A gene may export it by
 * name, or as a property of its default export.
 */
function loadExpress(gene) {
  genesDirs.add(path.dirname(gene.dir))
  install()
  let exported
  try {
    exported = require(gene.entry)
  } catch (e) {
    if (e instanceof CliError) throw e
    const where = locate(e, gene.dir)
    throw new CliError(`gene "${gene.name}" (${gene.id}) could not be loaded: ${describeError(e)}${where ? ` (at ${where})` : ''}`, { cause: e })
  }
  const express = exported && (exported.express || (exported.default && exported.default.express))
  if (typeof express !== 'function') {
    throw new CliError(`gene "${gene.name}" (${gene.id}): ${displayPath(gene.entry)} does not export a function named "express"`)
  }
  return express
}

module.exports = { loadExpress, locate, displayPath }
