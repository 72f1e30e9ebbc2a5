'use strict'
// TypeScript (and `import`/`export` in a CommonJS context) to runnable JavaScript, with a
// content-addressed cache so that a gene seen before starts without loading `typescript`.
//
// The cache lives in `<root>/.rotifer/cache/ts/`: one file per transpiled source, named by the
// SHA-256 of everything the output depends on (this file's format version, the TypeScript
// version, the output module format, the file's path and its source). A changed source is a new
// name, so an entry is never stale; old ones are simply unused. Folders are 0700, files 0600,
// written under a temporary name then renamed; a cached file is used only if it is a regular
// file (not a link) owned by this user and writable by no one else. When the cache cannot be
// written (a read-only project) the output is used from memory.

const fs = require('node:fs')
const path = require('node:path')
const { sha256Hex } = require('../sha256')
const vm = require('node:vm')
const Module = require('node:module')

/** Bump when the compiler options below change: old entries then stop matching. */
const FORMAT = 1

let ts = null
let tsVersion = null

/** TypeScript's version, read from its package.json (cheap; loading TypeScript is not). */
function typescriptVersion() {
  if (tsVersion === null) {
    tsVersion = JSON.parse(fs.readFileSync(require.resolve('typescript/package.json'), 'utf8')).version
  }
  return tsVersion
}

/** Paths in messages are shown relative to the working directory when that is shorter. */
function displayPath(file) {
  const rel = path.relative(process.cwd(), file)
  return rel && !rel.startsWith('..') && rel.length < file.length ? rel : file
}

/**
 * `source` of `filename` as JavaScript in `format` ('esm' or 'cjs'), with an inline source map
 * so that stack traces point at the lines as written. A syntax error throws a `SyntaxError`
 * whose message starts with `file:line:col:`.
 */
function compile(source, filename, format) {
  // Loaded on first use: TypeScript is large, and a cache hit never needs it.
  ts = ts || require('typescript')
  const out = ts.transpileModule(source, {
    fileName: filename,
    reportDiagnostics: true,
    compilerOptions: {
      module: format === 'esm' ? ts.ModuleKind.ESNext : ts.ModuleKind.CommonJS,
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
    throw new SyntaxError(`${displayPath(filename)}${at}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`)
  }
  return out.outputText
}

/**
 * A cached file's text, or null: only a regular file (not a link) owned by this user and
 * writable by no one else is trusted (the schema cache uses it too).
 */
function readCached(file) {
  let fd
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
    const st = fs.fstatSync(fd)
    if (!st.isFile() || st.uid !== process.getuid() || (st.mode & 0o022) !== 0) return null
    return fs.readFileSync(fd, 'utf8')
  } catch {
    return null
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** Writes `text` to `file` in `cacheDir` (made 0700, under .rotifer/cache/): whole or not at all. */
function writeCached(cacheDir, file, text) {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  try {
    // Required here: only a cache miss writes, and the CLI's helpers are not needed before.
    const { ensurePrivateDir } = require('./agents')
    ensurePrivateDir(path.dirname(path.dirname(cacheDir)))
    ensurePrivateDir(path.dirname(cacheDir))
    ensurePrivateDir(cacheDir)
    const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW
    const fd = fs.openSync(tmp, flags, 0o600)
    try {
      fs.writeFileSync(fd, text)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(tmp, file)
  } catch {
    // The cache only saves time: a project that cannot hold it still runs.
    try {
      fs.rmSync(tmp, { force: true })
    } catch {
      // no temporary file was made
    }
  }
}

/**
 * `source` of `filename` transpiled to `format` ('esm' or 'cjs'), from `cacheDir`
 * (`<root>/.rotifer/cache/ts`) when it holds it; `cacheDir` null: no cache.
 */
function transpile(source, filename, format, cacheDir) {
  if (!cacheDir) return compile(source, filename, format)
  const key = sha256Hex(`${JSON.stringify([FORMAT, typescriptVersion(), format, filename])}\0${source}`)
  const file = path.join(cacheDir, `${key}.js`)
  const cached = readCached(file)
  if (cached !== null) return cached
  const text = compile(source, filename, format)
  writeCached(cacheDir, file, text)
  return text
}

/** True when `source` compiles as CommonJS: false for `import`/`export` (ES module syntax). */
function parsesAsCommonJs(source, filename) {
  try {
    new vm.Script(Module.wrap(source.replace(/^#!.*/, '')), { filename })
    return true
  } catch (e) {
    if (e instanceof SyntaxError) return false
    throw e
  }
}

/** The cache folder of the project at `root`. */
function cacheDirOf(root) {
  return path.join(root, '.rotifer', 'cache', 'ts')
}

module.exports = { transpile, parsesAsCommonJs, cacheDirOf, displayPath, readCached, writeCached }
