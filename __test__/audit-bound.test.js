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

/** Every audit file of the project: the log, its rotated files and the kept file. */
function auditFiles(root) {
  const dir = path.join(root, '.rotifer')
  return fs.readdirSync(dir).filter((f) => /^audit(\.\d+|\.kept)?\.jsonl$/.test(f)).map((f) => ({ name: f, size: fs.statSync(path.join(dir, f)).size }))
}

test("a WASM gene rewriting a 1 KiB key of U+0001 never removes another agent's lines, and each change costs a bounded line (R-AUD-3, R-AUD-7)", (t) => {
  const root = tempRoot(t)
  // Small files, so that the flood rotates through them many times.
  fs.writeFileSync(path.join(root, 'rotifer.json'), JSON.stringify({ audit: { maxSize: '16KB', keep: 2, keepPerAgent: '64KB' } }))
  memory.createAgentMemory({ agentId: 'quiet', root })
  memory.createAgentMemory({ agentId: AGENT, root })
  const quiet = new memory.GeneMemoryAccess({ agentId: 'quiet', geneId: geneId('quiet'), root })
  for (let i = 0; i < 15; i++) quiet.writeMemory(`q${i}`, new Uint8Array(1), 'CACHE')
  const quietLines = () => memory.readAgentAuditLog({ agentId: 'quiet', root }).lines
  assert.equal(quietLines().length, 15)
  const M = 4000
  const result = inChild(root, async (memory, root, N, KEY, AGENT, geneId) => {
    const wabt = await require('wabt')()
    // Two requests (values AA== and AQ==) at 0 and 8192, sent in turn `n` times: no kept
    // response answers a retry, each is a real update.
    const mod = wabt.parseWat('flood.wat', `(module
      (import "rotifer" "writeMemory" (func $write (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "flood") (param $len i32) (param $n i32) (result i32) (local $ok i32)
        (loop $again
          (if (i32.gt_s (call $write (i32.mul (i32.and (local.get $n) (i32.const 1)) (i32.const 8192)) (local.get $len) (i32.const 16384) (i32.const 32768)) (i32.const 0))
            (then (local.set $ok (i32.add (local.get $ok) (i32.const 1)))))
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (br_if $again (i32.gt_s (local.get $n) (i32.const 0))))
        (local.get $ok)))`)
    let instance
    const rotifer = memory.createMemoryImports({ agentId: AGENT, geneId: geneId('flood'), root }, () => instance.exports.memory)
    ;({ instance } = await WebAssembly.instantiate(mod.toBinary({}).buffer, { rotifer }))
    const request = (value) => new TextEncoder().encode(JSON.stringify({ key: KEY, value, category: 'CACHE' }))
    const [a, b] = [request('AA=='), request('AQ==')]
    new Uint8Array(instance.exports.memory.buffer).set(a, 0)
    new Uint8Array(instance.exports.memory.buffer).set(b, 8192)
    return instance.exports.flood(a.length, 4000)
  })
  assert.equal(result, M, 'every write succeeded')
  // The other agent's lines are all still there, and judged committed.
  const lines = quietLines()
  assert.deepEqual(lines.map((l) => l.key), Array.from({ length: 15 }, (_, i) => `q${i}`))
  assert.ok(lines.every((l) => l.committed === true))
  // The flood's lines: bounded each (6.8 KB before), its newest kept, none missing in between.
  const flood = memory.readAgentAuditLog({ agentId: AGENT, root }).lines
  assert.ok(flood.length > 64 && flood.length < M, `${flood.length} lines of the flood kept`)
  assert.equal(flood.at(-1).tx, M)
  assert.ok(flood.every((l, i) => i === 0 || l.tx === flood[i - 1].tx + 1), 'contiguous')
  for (const l of flood) {
    assert.equal(l.keyBytes, 1024)
    assert.ok(Buffer.byteLength(JSON.stringify(l)) < 700, `${Buffer.byteLength(JSON.stringify(l))} bytes`)
  }
  // Disk: keep + 1 files of about 16 KB, and 64 KB per agent kept.
  const files = auditFiles(root)
  const total = files.reduce((n, f) => n + f.size, 0)
  assert.ok(files.some((f) => f.name === 'audit.kept.jsonl'), JSON.stringify(files))
  assert.ok(total < 3 * 17 * 1024 + 2 * 64 * 1024 + 1024, `${total} bytes in ${JSON.stringify(files)}`)
})


test('rotifer agent memory log --key-prefix finds a change line whose long key is shown cut (R-AUD-3)', (t) => {
  const { rotifer, json, makeProject, addGene, PROBE, createAgent } = require('./cli-harness')
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'a1', ['probe'])
  const m = new memory.GeneMemoryAccess({ agentId: agent.id, geneId: geneId('long'), root })
  const long = 'notes/' + '\u0001'.repeat(600)
  m.writeMemory(long, new Uint8Array(1), 'CACHE')
  m.writeMemory('other', new Uint8Array(1), 'CACHE')
  const log = (prefix) => json(rotifer(root, 'agent', 'memory', 'log', 'a1', '--json', '--key-prefix', prefix))
  const [line] = log('notes/\u0001\u0001')
  assert.equal(line.keyBytes, Buffer.byteLength(long))
  assert.ok(line.key.endsWith('…') && long.startsWith(line.key.slice(0, -1)), line.key)
  assert.ok(Buffer.byteLength(JSON.stringify(line.key)) <= 256 + 2, 'at most 256 bytes of JSON')
  assert.deepEqual(log('notes/').map((l) => l.keyBytes), [Buffer.byteLength(long)])
  // A prefix longer than what the line shows may still match it; one that disagrees does not.
  assert.equal(log(long).length, 1)
  assert.equal(log('notes/x').length, 0)
  assert.deepEqual(log('oth').map((l) => l.key), ['other'])
})
