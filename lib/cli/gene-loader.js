'use strict'
// Loads a gene's code in this thread so that its `express` can be called with a real
// `ctx.memory`. Works the same on the main thread and in a worker thread.
//
// A gene's entry is loaded with `import()`, so a gene may be an ES module (`import`/`export`,
// top-level `await`, ES-module-only packages from the project's node_modules) or CommonJS:
// - `.ts` files are transpiled to ES modules by TypeScript's `transpileModule` (Node 20 cannot
//   strip types itself): type-only imports disappear, so a gene runs exactly as written. The
//   output is cached under `.rotifer/cache/ts/` by content (see transpile.js), so a gene seen
//   before starts without loading TypeScript.
// - A gene's own `.js` files may use `import`/`export` without "type": "module".
// - `@rotifer/playground/memory` always resolves to this package, so a `MemoryError` a gene
//   imports is the very class `ctx.memory` throws, even in a project that does not install it.
// ES modules get this from the hooks in gene-hooks.mjs; CommonJS files (a gene's `require`)
// from the require hooks below. Source maps are enabled so a failure points at the `.ts` line.
//
// The ES module hooks run on a thread of their own (Node 20's `module.register`), which takes
// as long to start as a thread: a gene that imports nothing but types, this package's memory
// module and Node's own modules (the gene `rotifer init` writes) is loaded with `require`
// instead, its `.ts` through the require hook, so no hooks thread is started for it (one that
// does not compile as CommonJS, such as one with a top-level `await`, is imported as above).

const fs = require('node:fs')
const path = require('node:path')
const Module = require('node:module')
const { pathToFileURL, fileURLToPath } = require('node:url')
const { CliError, describeError } = require('./errors')
const { transpile, parsesAsCommonJs, cacheDirOf, displayPath } = require('./transpile')

const MEMORY_MODULE = require.resolve('../../index.js')
const MEMORY_ESM = pathToFileURL(require.resolve('../../index.mjs')).href
const MEMORY_REQUEST = '@rotifer/playground/memory'

const genesDirs = new Set()
let installed = false
let requireHooks = false
let cacheDir = null

function isGeneSource(filename) {
  if (filename.split(path.sep).includes('node_modules')) return false
  for (const dir of genesDirs) if (filename.startsWith(dir + path.sep)) return true
  return false
}

/**
 * Hooks for this thread, ES modules' and CommonJS's; the transpile cache is that of the first
 * project loaded from.
 */
function install(root) {
  if (installed) return
  if (typeof Module.register !== 'function') {
    throw new CliError(`genes need Node.js 20.6 or later (module hooks); this is ${process.version}`)
  }
  installed = true
  installRequireHooks(root)
  Module.register(pathToFileURL(path.join(__dirname, 'gene-hooks.mjs')), { data: { memoryUrl: MEMORY_ESM, cacheDir } })
}

/** The CommonJS hooks alone (in this thread, nothing to start). */
function installRequireHooks(root) {
  if (requireHooks) return
  requireHooks = true
  cacheDir = cacheDirOf(root)
  process.setSourceMapsEnabled(true)

  // CommonJS: what a gene's `require` reaches.
  const resolve = Module._resolveFilename
  Module._resolveFilename = function (request, ...rest) {
    if (request === MEMORY_REQUEST) return MEMORY_MODULE
    return resolve.call(this, request, ...rest)
  }

  Module._extensions['.ts'] = function (module, filename) {
    module._compile(transpile(fs.readFileSync(filename, 'utf8'), filename, 'cjs', cacheDir), filename)
  }

  const loadJs = Module._extensions['.js']
  Module._extensions['.js'] = function (module, filename) {
    if (!isGeneSource(filename)) return loadJs.call(this, module, filename)
    const source = fs.readFileSync(filename, 'utf8')
    module._compile(parsesAsCommonJs(source, filename) ? source : transpile(source, filename, 'cjs', cacheDir), filename)
  }
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
    const file = m[1].startsWith('file://') ? fileURLToPath(m[1]) : m[1]
    if (file.startsWith(dir + path.sep)) return `${displayPath(file)}:${m[2]}:${m[3]}`
  }
  return null
}

/**
 * `express` of a module namespace: the named export, the default export (or its `express`), or
 * `main`, as upstream's `rotifer run` accepts (`express || default || main`).
 */
function expressOf(ns) {
  if (typeof ns.express === 'function') return ns.express
  const d = ns.default
  if (typeof d === 'function') return d
  if (d && typeof d.express === 'function') return d.express
  if (typeof ns.main === 'function') return ns.main
  if (d && typeof d.main === 'function') return d.main
  return null
}

/**
 * Loads `gene` (from `readGene`) and resolves to its `express` function. A gene may export it
 * by name, as its default export (`export default function express`), as a property of its
 * default export, or as `main`.
 */
async function loadExpress(gene) {
  genesDirs.add(path.dirname(gene.dir))
  let ns
  try {
    if (importsNothing(gene)) {
      installRequireHooks(gene.root)
      ns = require(gene.entry)
    } else {
      install(gene.root)
      ns = await import(pathToFileURL(gene.entry).href)
    }
  } catch (e) {
    if (e instanceof CliError) throw e
    const where = locate(e, gene.dir)
    throw new CliError(`gene "${gene.name}" (${gene.id}) could not be loaded: ${describeError(e)}${where ? ` (at ${where})` : ''}`, { cause: e })
  }
  const express = expressOf(ns)
  if (typeof express !== 'function') {
    throw new CliError(`gene "${gene.name}" (${gene.id}): ${displayPath(gene.entry)} does not export a function named "express" (export function express, export default function express, or export function main)`)
  }
  return express
}

/** What a gene loaded with `require` may require: this package's memory module and Node's own. */
const REQUIRABLE = (request) => request === MEMORY_REQUEST || request.startsWith('node:')

/**
 * True when `gene` can be loaded with `require`, so that nothing it loads needs the ES module
 * hooks: a `.js` file with no `import` anywhere in it that compiles as CommonJS, or a `.ts` file
 * whose CommonJS transpilation imports nothing but `@rotifer/playground/memory` and `node:`
 * modules (`import type` disappears) and has no `import` left (`import()`, `import.meta`; a top-
 * level `await` does not compile). The test is plain and errs towards importing. Nothing of the
 * gene runs here.
 */
function importsNothing(gene) {
  const entry = gene.entry
  if (!entry.endsWith('.ts') && !entry.endsWith('.js')) return false
  try {
    const source = fs.readFileSync(entry, 'utf8')
    if (entry.endsWith('.js')) return !/\bimport\b/.test(source) && parsesAsCommonJs(source, entry)
    const code = transpile(source, entry, 'cjs', cacheDirOf(gene.root))
    const body = code.replace(/\/\/# sourceMappingURL=.*$/gm, '')
    if (/\bimport\b/.test(body)) return false
    const requests = [...body.matchAll(/\brequire\(\s*(["'])([^"']*)\1\s*\)/g)].map((m) => m[2])
    if (/\brequire\b/.test(body.replace(/\brequire\(\s*(["'])[^"']*\1\s*\)/g, '')) || !requests.every(REQUIRABLE)) return false
    return parsesAsCommonJs(code, entry)
  } catch {
    // Unreadable, or not valid TypeScript: the import says why.
    return false
  }
}

module.exports = { install, loadExpress, locate, displayPath, importsNothing }
