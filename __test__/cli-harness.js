'use strict'
// Shared by the cli-*.test.js files: temporary projects and a runner for the real `rotifer`
// bin (a child process, exactly as a user runs it).

const { spawnSync } = require('node:child_process')
const { createHash } = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const REPO = path.join(__dirname, '..')
const BIN = path.join(REPO, 'bin', 'rotifer.js')
const FORMATTER = path.join(REPO, 'examples', 'formatter', 'genes', 'formatter')

/** Runs `rotifer ...args` in `cwd`; returns { status, stdout, stderr }. */
function rotifer(cwd, ...args) {
  return rotiferWithEnv(cwd, {}, ...args)
}

/** `rotifer` with extra environment variables. */
function rotiferWithEnv(cwd, env, ...args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env } })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Parses the stdout of a successful run, or fails with its stderr. */
function json(result) {
  if (result.status !== 0) throw new Error(`rotifer exited ${result.status}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

/** A new empty project (with rotifer.json), removed when `t` ends. */
function makeProject(t) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-cli-test-')))
  fs.writeFileSync(path.join(root, 'rotifer.json'), '{}\n')
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  return root
}

function phenotypeOf(name, domain) {
  return { name, domain, version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }
}

/** Writes genes/<name>/ with a phenotype in `domain` and `files` ({ 'index.js': source, … }). */
function addGene(root, name, files, { domain = 'test.probe', phenotype = phenotypeOf(name, domain) } = {}) {
  const dir = path.join(root, 'genes', name)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'phenotype.json'), JSON.stringify(phenotype, null, 2))
  for (const [file, text] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, file), typeof text === 'string' ? text : JSON.stringify(text, null, 2))
  }
  return dir
}

/** Copies the example formatter gene (TypeScript) into the project. */
function addFormatter(root) {
  fs.cpSync(FORMATTER, path.join(root, 'genes', 'formatter'), { recursive: true })
}

/**
 * A CommonJS gene driven by its input: `{ steps: [ops of gene 1, ops of gene 2, …] }`. It performs
 * the first list of memory calls, records what each gave (`{ wrote }`, `{ value }` as text or
 * null, `{ deleted }`, or `{ error }` with the MemoryError code), and passes the other lists on,
 * so an agent of several probes shows what each gene could do. A write stores `value`, or `size`
 * bytes of "x" (values too large for a command line). With `rethrow: true` an error escapes the
 * gene instead. Other input fields pass through unchanged.
 */
const PROBE = `
exports.express = function express(input, ctx) {
  const { steps = [], results = [], ...rest } = input
  const rethrow = rest.rethrow === true
  const [ops = [], ...later] = steps
  const mine = []
  for (const op of ops) {
    try {
      if ('write' in op) {
        const value = op.size === undefined ? Buffer.from(op.value || '') : Buffer.alloc(op.size, 120)
        const e = ctx.memory.writeMemory(op.write, value, op.category || 'CACHE', op.accessPolicy, op.retentionPolicy)
        mine.push({ wrote: e.key })
      } else if ('read' in op) {
        const e = ctx.memory.readMemory(op.read)
        mine.push({ value: e ? Buffer.from(e.value).toString() : null })
      } else if ('delete' in op) {
        ctx.memory.deleteMemory(op.delete)
        mine.push({ deleted: op.delete })
      }
    } catch (e) {
      if (rethrow) throw e
      mine.push({ error: e.code })
    }
  }
  return { ...rest, steps: later, results: [...results, mine] }
}
`

/** The `--input` for probes: one list of memory calls per gene. */
function steps(...lists) {
  return JSON.stringify({ steps: lists })
}

/** The v2 id of a phenotype, computed independently of the CLI: sorted keys, no irHash. */
function v2IdOf(canonicalText) {
  return 'v2:' + createHash('sha256').update(canonicalText, 'utf8').digest('hex')
}

function agentFiles(root) {
  const dir = path.join(root, '.rotifer', 'agents')
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json') && !f.endsWith('.fitness.json')) : []
}

function readAgent(root, id) {
  return JSON.parse(fs.readFileSync(path.join(root, '.rotifer', 'agents', `${id}.json`), 'utf8'))
}

/** Creates agent `name` of `genes` and returns its record. */
function createAgent(root, name, genes, ...options) {
  const r = rotifer(root, 'agent', 'create', name, '--genes', ...genes, ...options)
  if (r.status !== 0) throw new Error(`agent create failed: ${r.stderr}`)
  const id = /id\s+([0-9a-f-]{36})/.exec(r.stdout)[1]
  return readAgent(root, id)
}

/**
 * Everything under `.rotifer/` but the transpile cache (`.rotifer/cache/`): the memory, logs and
 * agent records a command may not touch when it must not.
 */
function stateFiles(root) {
  const out = []
  const walk = (dir) => {
    for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      const p = path.join(dir, f)
      if (p === path.join(root, '.rotifer', 'cache')) continue
      if (fs.statSync(p).isDirectory()) walk(p)
      else out.push(path.relative(root, p))
    }
  }
  walk(path.join(root, '.rotifer'))
  return out
}

/** stderr of a failure: exactly one line. */
function oneErrorLine(result) {
  const lines = result.stderr.split('\n').filter((l) => l !== '')
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got ${JSON.stringify(result.stderr)}`)
  return lines[0]
}

module.exports = {
  REPO, BIN, rotifer, rotiferWithEnv, json, makeProject, addGene, addFormatter, phenotypeOf, PROBE, steps, v2IdOf,
  agentFiles, readAgent, createAgent, oneErrorLine, stateFiles,
}
