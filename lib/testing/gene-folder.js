'use strict'
// Where `runGene(folder)` and `geneId(folder)` look for a relative `folder`: in the project of
// the file that called them, so that a suite finds its genes whatever folder its runner was
// started from (vitest or `node --test` at the npm root, in the project, anywhere). The base is
// the nearest folder holding rotifer.json above the calling file; when the call does not come
// from a file (node -e, a REPL) or no rotifer.json is above it, the nearest one above the working
// directory; when there is none either, the working directory. An absolute folder is used as is.

const fs = require('node:fs')
const path = require('node:path')
const { fileURLToPath } = require('node:url')
const { CONFIG_FILE } = require('../formats/project-config')

/** This package's own files, which are never "the calling file". */
const PACKAGE_LIB = path.join(__dirname, '..') + path.sep

function isFile(p) {
  try {
    return fs.statSync(p).isFile()
  } catch {
    return false
  }
}

/** The nearest folder at or above `dir` holding rotifer.json, or null. */
function projectRootAbove(dir) {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (isFile(path.join(d, CONFIG_FILE))) return d
    if (path.dirname(d) === d) return null
  }
}

/** The file (a path) of the first stack frame outside this package, or null. */
function callerFile() {
  const prepare = Error.prepareStackTrace
  const limit = Error.stackTraceLimit
  let sites = []
  try {
    Error.prepareStackTrace = (_, stack) => stack
    Error.stackTraceLimit = 50
    const holder = {}
    Error.captureStackTrace(holder, callerFile)
    sites = holder.stack
  } finally {
    Error.prepareStackTrace = prepare
    Error.stackTraceLimit = limit
  }
  for (const site of Array.isArray(sites) ? sites : []) {
    let file = site.getFileName && site.getFileName()
    if (!file || file.startsWith('node:')) continue
    if (file.startsWith('file://')) {
      try {
        file = fileURLToPath(file.replace(/[?#].*$/, ''))
      } catch {
        continue
      }
    }
    file = file.replace(/[?#].*$/, '')
    if (!path.isAbsolute(file) || file.startsWith(PACKAGE_LIB)) continue
    return file
  }
  return null
}

/**
 * `folder` resolved by the rule above: `{ dir, base, from }`, `from` saying where `base` came
 * from (for messages).
 */
function resolveGeneFolder(folder) {
  if (path.isAbsolute(folder)) return { dir: path.normalize(folder), base: null, from: 'an absolute path' }
  const file = callerFile()
  const fromFile = file && projectRootAbove(path.dirname(file))
  if (fromFile) return { dir: path.resolve(fromFile, folder), base: fromFile, from: `the project root ${fromFile} (the nearest ${CONFIG_FILE} above ${file})` }
  const fromCwd = projectRootAbove(process.cwd())
  if (fromCwd) return { dir: path.resolve(fromCwd, folder), base: fromCwd, from: `the project root ${fromCwd} (the nearest ${CONFIG_FILE} above the working directory)` }
  return { dir: path.resolve(folder), base: process.cwd(), from: `the working directory ${process.cwd()} (no ${CONFIG_FILE} above ${file || 'it'})` }
}

module.exports = { resolveGeneFolder, projectRootAbove }
