'use strict'
// What a hostile gene can make the logs hold (R-AUD-1/4, docs/decisions.md "Audit and telemetry"): a loop
// of refused calls adds a few lines per gene handle, through GeneMemoryAccess and through the
// WASM imports, and every refusal stays accounted for (a line each, or a summary's count).
// Also: a request in shared WASM memory is not copied before its length is checked.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { memory, tempRoot, geneId, auditLines, telemetryLines } = require('./helpers')

const N = 100_000
const KEY = '\u0001'.repeat(1024)
const AGENT = 'agent-bound'

/** The refusals a set of lines accounts for: one per line, `count` per summary line. */
const accounted = (lines, action) => lines.filter((l) => l.action === action).reduce((n, l) => n + (l.count ?? 1), 0)
const fileSize = (root, name) => {
  try {
    return fs.statSync(path.join(root, '.rotifer', name)).size
  } catch {
    return 0
  }
}

/**
 * Runs `body` (a function's source, given `memory`, `root`, `N`, `KEY`, `AGENT`, `geneId`) in a
 * child process that exits when it returns: the handles it made are still alive then, so what
 * they counted is written by the exit hook.
 */
function inChild(root, body) {
  const script = `
    const memory = require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))})
    const { createHash } = require('node:crypto')
    const geneId = (name) => 'v2:' + createHash('sha256').update(name).digest('hex')
    const [root, N, KEY, AGENT] = [${JSON.stringify(root)}, ${N}, ${JSON.stringify(KEY)}, ${JSON.stringify(AGENT)}]
    Promise.resolve((${body})(memory, root, N, KEY, AGENT, geneId)).then((r) => { process.stdout.write(JSON.stringify(r)) })
  `
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, ROTIFER_TELEMETRY: '1', DO_NOT_TRACK: '' } })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

test('100,000 denied writes with 1 KiB keys through GeneMemoryAccess add a few KiB, and all are counted (R-AUD-1/4)', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: AGENT, root, quota: '1KB' })
  const result = inChild(root, (memory, root, N, KEY, AGENT, geneId) => {
    const m = new memory.GeneMemoryAccess({ agentId: AGENT, geneId: geneId('hostile'), root })
    const shared = { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'ANONYMIZED_SHARE' }
    const codes = {}
    for (let i = 0; i < N; i++) {
      try {
        m.writeMemory(KEY, new Uint8Array(1), 'CACHE', shared)
      } catch (e) {
        codes[e.code] = (codes[e.code] || 0) + 1
      }
    }
    return codes
  })
  assert.deepEqual(result, { MEMORY_ACCESS_DENIED: N })
  const audit = auditLines(root)
  assert.ok(fileSize(root, 'audit.jsonl') < 8 * 1024, `audit.jsonl holds ${fileSize(root, 'audit.jsonl')} bytes`)
  assert.ok(fileSize(root, 'telemetry.jsonl') < 4 * 1024, `telemetry.jsonl holds ${fileSize(root, 'telemetry.jsonl')} bytes`)
  assert.ok(audit.length <= 4, `${audit.length} audit lines`)
  assert.equal(accounted(audit, 'memory.access_denied'), N, 'every denial is in the audit, one by one or counted')
  assert.equal(telemetryLines(root).reduce((n, l) => n + (l.count ?? 1), 0), N, 'and in telemetry')
  // The one full line shows a cut key; its entryId still names the whole key.
  const full = audit.find((l) => l.count === undefined)
  assert.ok(Buffer.byteLength(full.key) <= 64 + 3, full.key)
  const summary = audit.find((l) => l.count !== undefined)
  assert.equal(summary.actor, geneId('hostile'))
  assert.equal(summary.op, 'write')
  assert.equal(summary.code, 'MEMORY_ACCESS_DENIED')
  assert.match(summary.reason, /more denials/)
})

test('100,000 denied writes with 1 KiB keys through the WASM imports add a few KiB, and all are counted (R-AUD-1/4)', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: AGENT, root, quota: '1KB' })
  const result = inChild(root, async (memory, root, N, KEY, AGENT, geneId) => {
    const wabt = await require('wabt')()
    // A gene that sends the request at 0 `n` times and counts the calls answered -2.
    const mod = wabt.parseWat('spam.wat', `(module
      (import "rotifer" "writeMemory" (func $write (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "spam") (param $len i32) (param $n i32) (result i32) (local $denied i32)
        (loop $again
          (if (i32.eq (call $write (i32.const 0) (local.get $len) (i32.const 8192) (i32.const 4096)) (i32.const -2))
            (then (local.set $denied (i32.add (local.get $denied) (i32.const 1)))))
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (br_if $again (i32.gt_s (local.get $n) (i32.const 0))))
        (local.get $denied)))`)
    const bytes = mod.toBinary({}).buffer
    let instance
    const rotifer = memory.createMemoryImports({ agentId: AGENT, geneId: geneId('hostile-wasm'), root }, () => instance.exports.memory)
    ;({ instance } = await WebAssembly.instantiate(bytes, { rotifer }))
    const request = new TextEncoder().encode(JSON.stringify({
      key: KEY, value: 'AA==', category: 'CACHE',
      accessPolicy: { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'ANONYMIZED_SHARE' },
    }))
    new Uint8Array(instance.exports.memory.buffer).set(request, 0)
    return instance.exports.spam(request.length, N)
  })
  assert.equal(result, N, 'every call was denied')
  const audit = auditLines(root)
  assert.ok(fileSize(root, 'audit.jsonl') < 8 * 1024, `audit.jsonl holds ${fileSize(root, 'audit.jsonl')} bytes`)
  assert.ok(fileSize(root, 'telemetry.jsonl') < 4 * 1024, `telemetry.jsonl holds ${fileSize(root, 'telemetry.jsonl')} bytes`)
  assert.ok(audit.length <= 4, `${audit.length} audit lines`)
  assert.equal(accounted(audit, 'memory.access_denied'), N)
  assert.equal(telemetryLines(root).reduce((n, l) => n + (l.count ?? 1), 0), N)
})

test('each gene handle has a budget of its own: distinct refusals are written up to it, then counted (R-AUD-1)', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: AGENT, root, quota: '1KB' })
  const shared = { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'ANONYMIZED_SHARE' }
  const m = new memory.GeneMemoryAccess({ agentId: AGENT, geneId: geneId('g'), root })
  for (let i = 0; i < 30; i++) assert.throws(() => m.writeMemory(`k${i}`, new Uint8Array(1), 'CACHE', shared), { code: 'MEMORY_ACCESS_DENIED' })
  assert.equal(auditLines(root).length, 10)
  assert.deepEqual(auditLines(root).map((l) => l.key), Array.from({ length: 10 }, (_, i) => `k${i}`))
  const other = new memory.GeneMemoryAccess({ agentId: AGENT, geneId: geneId('g'), root })
  assert.throws(() => other.writeMemory('fresh', new Uint8Array(1), 'CACHE', shared), { code: 'MEMORY_ACCESS_DENIED' })
  assert.equal(auditLines(root).at(-1).key, 'fresh')
})

test('a request in shared WASM memory is refused by its length before it is copied (R-WASM-1)', async (t) => {
  const root = tempRoot(t)
  const wabt = await require('wabt')()
  const mod = wabt.parseWat('shared.wat', `(module
    (import "rotifer" "writeMemory" (func $write (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 160 160 shared)
    (func (export "write") (param i32 i32 i32 i32) (result i32)
      (call $write (local.get 0) (local.get 1) (local.get 2) (local.get 3))))`, { threads: true })
  const bytes = mod.toBinary({}).buffer
  let instance
  const rotifer = memory.createMemoryImports({ agentId: AGENT, geneId: geneId('g'), root }, () => instance.exports.memory)
  ;({ instance } = await WebAssembly.instantiate(bytes, { rotifer }))
  assert.equal(Object.prototype.toString.call(instance.exports.memory.buffer), '[object SharedArrayBuffer]')
  // Count the copies of anything longer than the limit: there must be none.
  const slice = Uint8Array.prototype.slice
  let bigCopies = 0
  Uint8Array.prototype.slice = function (...args) {
    if (this.length > 4 * 1024 * 1024) bigCopies++
    return slice.apply(this, args)
  }
  let code
  let small
  let message
  try {
    const reqLen = 5 * 1024 * 1024
    code = instance.exports.write(0, reqLen, 8 * 1024 * 1024, 4096)
    const out = new Uint8Array(instance.exports.memory.buffer, 8 * 1024 * 1024, 4096)
    message = JSON.parse(new TextDecoder().decode(out.subarray(0, out.indexOf(0)))).__rotifer_error.message
    // A request within the limit is still copied, and answered.
    const req = new TextEncoder().encode(JSON.stringify({ key: 'k', value: 'AA==', category: 'CACHE' }))
    new Uint8Array(instance.exports.memory.buffer).set(req, 16)
    small = instance.exports.write(16, req.length, 8 * 1024 * 1024, 4096)
  } finally {
    Uint8Array.prototype.slice = slice
  }
  assert.equal(bigCopies, 0, 'an over-long request was copied')
  assert.equal(code, -10)
  assert.match(message, /5242880 bytes; a request may be at most 4194304 bytes/)
  assert.ok(small > 0, `the small request was answered (${small})`)
})
