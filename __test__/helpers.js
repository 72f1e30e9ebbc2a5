'use strict'
// Shared fixtures for the JS tests: temporary project roots, gene ids, audit reading.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createHash } = require('node:crypto')
const { spawn } = require('node:child_process')
const memory = require('../index.js')

const enc = (s) => new TextEncoder().encode(s)
const dec = (u8) => new TextDecoder().decode(u8)

/** A deterministic valid v2 id per name. */
const geneId = (name) => 'v2:' + createHash('sha256').update(name).digest('hex')

/** A fresh project root, removed when the test ends. */
function tempRoot(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-memory-test-'))
  if (t) t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  return root
}

/** A settable test clock. */
function clock(start = Date.parse('2026-11-30T00:00:00.000Z')) {
  const c = { t: start }
  c.now = () => c.t
  return c
}

/** A gene's memory in `root` for `agentId`. */
function open(root, agentId, name, domain, extra = {}) {
  return new memory.GeneMemoryAccess({ agentId, geneId: name === null ? null : geneId(name), domain, root, ...extra })
}

/** The JSON lines of `.rotifer/<name>` under `root` ([] when there is no such file). */
function jsonLines(root, name) {
  const p = path.join(root, '.rotifer', name)
  if (!fs.existsSync(p)) return []
  return fs
    .readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
}

const auditLines = (root) => jsonLines(root, 'audit.jsonl')
const telemetryLines = (root) => jsonLines(root, 'telemetry.jsonl')

/** Asserts that `fn` throws a MemoryError with `code` (and a message matching `re`). */
function throwsCode(assert, fn, code, re) {
  let err
  try {
    fn()
  } catch (e) {
    err = e
  }
  assert.ok(err, `expected ${code}, but nothing was thrown`)
  assert.ok(err instanceof memory.MemoryError, `expected a MemoryError, got ${err && err.stack}`)
  assert.equal(err.name, 'MemoryError')
  assert.equal(err.code, code, err.message)
  if (re) assert.match(err.message, re)
  return err
}

/** Every file and folder under `dir` with its mode, for "nothing changed" checks. */
function snapshot(dir) {
  const out = {}
  const walk = (d) => {
    for (const name of fs.readdirSync(d)) {
      const p = path.join(d, name)
      const st = fs.lstatSync(p)
      out[path.relative(dir, p)] = st.isDirectory() ? 'dir' : st.size
      if (st.isDirectory()) walk(p)
    }
  }
  if (fs.existsSync(dir)) walk(dir)
  return out
}

/** Runs `node script ...args` to its end: `{ code, signal, out, err }` (stdout and stderr). */
function runNode(script, args, env = process.env) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [script, ...args.map(String)], { stdio: ['ignore', 'pipe', 'pipe'], env })
    let out = ''
    let err = ''
    p.stdout.on('data', (d) => (out += d))
    p.stderr.on('data', (d) => (err += d))
    p.on('error', reject)
    p.on('exit', (code, signal) => resolve({ code, signal, out, err }))
  })
}

module.exports = { runNode, memory, enc, dec, geneId, tempRoot, clock, open, auditLines, telemetryLines, throwsCode, snapshot }
