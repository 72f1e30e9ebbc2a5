'use strict'
// WASM genes reach memory through the four host functions of the module `rotifer` (R-WASM-1..6).
// Every test compiles real WAT, instantiates it with Node's WebAssembly and calls the imports
// from inside the module.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createHash } = require('node:crypto')
const {
  createMemoryImports,
  createAgentMemory,
  GeneMemoryAccess,
  MemoryError,
} = require('../index.js')

const wabtReady = require('wabt')()
const enc = (s) => new TextEncoder().encode(s)
const dec = (u8) => new TextDecoder().decode(u8)
const b64 = (u8) => Buffer.from(u8).toString('base64')
const geneId = (name) => 'v2:' + createHash('sha256').update(name).digest('hex')
const T0 = Date.parse('2026-11-30T01:38:19.123Z')

const A = geneId('gene-a')
const B = geneId('gene-b')
const AGENT = 'agent-wasm'

/** A module that forwards its exports `read`, `write`, `query`, `delete` to the imports. */
const PROBE = `(module
  (import "rotifer" "readMemory"   (func $read   (param i32 i32 i32 i32) (result i32)))
  (import "rotifer" "writeMemory"  (func $write  (param i32 i32 i32 i32) (result i32)))
  (import "rotifer" "queryMemory"  (func $query  (param i32 i32 i32 i32) (result i32)))
  (import "rotifer" "deleteMemory" (func $delete (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 4)
  (func (export "read") (param i32 i32 i32 i32) (result i32)
    (call $read (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
  (func (export "write") (param i32 i32 i32 i32) (result i32)
    (call $write (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
  (func (export "query") (param i32 i32 i32 i32) (result i32)
    (call $query (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
  (func (export "delete") (param i32 i32 i32 i32) (result i32)
    (call $delete (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
)`

const REQ = 16 // not 0, so that pointer arithmetic is exercised
const OUT = 128 * 1024
const PAD = 16 // bytes after `out` that must never be written
const FILL = 0xaa

async function compile(wat) {
  const wabt = await wabtReady
  const mod = wabt.parseWat('gene.wat', wat)
  try {
    mod.validate()
    return mod.toBinary({}).buffer
  } finally {
    mod.destroy()
  }
}

/** Instantiates `wat` with memory imports for `options`; the imports find the memory later. */
async function instantiate(wat, options) {
  let instance
  const rotifer = createMemoryImports(options, () => instance.exports.memory)
  ;({ instance } = await WebAssembly.instantiate(await compile(wat), { rotifer }))
  return instance
}

/** A probe gene: `call(fn, request, { outCap, reqPtr, outPtr })` → `{ code, out }`. */
async function probe(options) {
  const instance = await instantiate(PROBE, options)
  const memory = instance.exports.memory
  return {
    instance,
    memory,
    call(fn, request, { outCap = 64 * 1024, reqPtr = REQ, outPtr = OUT, reqLen } = {}) {
      const bytes =
        request instanceof Uint8Array ? request : enc(typeof request === 'string' ? request : JSON.stringify(request))
      const mem = new Uint8Array(memory.buffer)
      const end = Math.min(mem.length, outPtr + outCap + PAD)
      if (outPtr < mem.length) mem.fill(FILL, outPtr, end)
      mem.set(bytes, reqPtr) // after the fill: the request may lie inside `out`
      const code = instance.exports[fn](reqPtr, reqLen === undefined ? bytes.length : reqLen, outPtr, outCap)
      return { code, out: new Uint8Array(memory.buffer).slice(outPtr, end) }
    },
  }
}

/** A success: `code` bytes of JSON, and nothing written after them. */
function json(r) {
  assert.ok(r.code >= 0, `expected success, got ${r.code}: ${dec(r.out.subarray(0, 200))}`)
  assert.equal(r.out[r.code], FILL, 'nothing written past the response')
  return JSON.parse(dec(r.out.subarray(0, r.code)))
}

/** A failure with its envelope and NUL (R-WASM-3); returns the message. */
function envelope(r, code, name) {
  assert.equal(r.code, code, dec(r.out.subarray(0, 200)))
  const nul = r.out.indexOf(0)
  assert.ok(nul > 0, 'the envelope ends with a NUL')
  assert.equal(r.out[nul + 1], FILL, 'nothing written past the NUL')
  const body = JSON.parse(dec(r.out.subarray(0, nul)))
  assert.deepEqual(Object.keys(body), ['__rotifer_error'])
  assert.deepEqual(Object.keys(body.__rotifer_error), ['code', 'message'])
  assert.equal(body.__rotifer_error.code, name)
  assert.equal(typeof body.__rotifer_error.message, 'string')
  assert.ok(body.__rotifer_error.message.length > 10)
  return body.__rotifer_error.message
}

function untouched(r) {
  assert.ok(r.out.every((b) => b === FILL), 'out is untouched')
}

function tempRoot(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-wasm-test-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  return root
}

function auditLines(root) {
  const p = path.join(root, '.rotifer', 'audit.jsonl')
  if (!fs.existsSync(p)) return []
  return fs.readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
}

const actions = (root, action) => auditLines(root).filter((l) => l.action === action)

/** An agent with a memory in a fresh root. */
function agent(t, extra = {}) {
  const root = tempRoot(t)
  createAgentMemory({ agentId: AGENT, root, ...extra })
  return root
}

function writeRequest(key, bytes, category, more = {}) {
  return { key, value: b64(bytes), category, ...more }
}

const NULL_REPLY = [...enc('null')]

test('R-WASM-1 R-WASM-2 R-WASM-6: a write through WASM is what ctx.memory reads, and back', async (t) => {
  const root = agent(t)
  const clock = { t: T0 }
  const gene = await probe({ agentId: AGENT, geneId: A, domain: 'text', root, now: () => clock.t })
  const ctx = new GeneMemoryAccess({ agentId: AGENT, geneId: B, domain: 'text', root, now: () => clock.t })

  const written = json(gene.call('write', writeRequest('shared', [0, 1, 2, 255], 'PATTERN')))
  assert.deepEqual(Object.keys(written), [
    'entryId', 'category', 'key', 'value', 'createdBy', 'lastAccessedBy', 'createdAt', 'updatedAt', 'accessPolicy',
    'retentionPolicy',
  ])
  assert.equal(written.value, 'AAEC/w==')
  assert.equal(written.createdAt, '2026-11-30T01:38:19.123Z', 'the test clock applies')
  assert.equal(written.createdBy, A)

  clock.t += 1
  const seen = ctx.readMemory('shared')
  assert.deepEqual([...seen.value], [0, 1, 2, 255])
  assert.deepEqual(
    { ...seen, value: b64(seen.value), lastAccessedBy: undefined },
    { ...written, lastAccessedBy: undefined },
    'the same entry, field for field',
  )
  assert.equal(seen.lastAccessedBy, B)

  clock.t += 1
  const policy = { maxRetentionDays: 30, autoDeleteOnTermination: false, anonymizationSupported: false }
  ctx.writeMemory('from-js', enc('héllo'), 'CONTEXT', undefined, policy)
  const read = json(gene.call('read', { key: 'from-js' }))
  assert.equal(dec(Buffer.from(read.value, 'base64')), 'héllo')
  assert.equal(read.createdBy, B)
  assert.equal(read.lastAccessedBy, A)
  assert.deepEqual(read.retentionPolicy, policy)
  assert.deepEqual(read.accessPolicy, { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' })
  assert.equal(ctx.readMemory('from-js').lastAccessedBy, B, 'ctx.memory sees the WASM read, then its own')
})

test('R-WASM-1: an absent retentionPolicy leaves it, an explicit null is a change', async (t) => {
  const root = agent(t)
  const policy = { maxRetentionDays: 7, autoDeleteOnTermination: true, anonymizationSupported: false }
  const creator = new GeneMemoryAccess({ agentId: AGENT, geneId: A, domain: 'text', root })
  creator.writeMemory('k', enc('v'), 'CONTEXT', undefined, policy)
  const peer = await probe({ agentId: AGENT, geneId: B, domain: 'text', root })

  assert.deepEqual(json(peer.call('write', writeRequest('k', [1], 'CONTEXT'))).retentionPolicy, policy)
  const message = envelope(
    peer.call('write', writeRequest('k', [2], 'CONTEXT', { retentionPolicy: null })),
    -2,
    'MEMORY_ACCESS_DENIED',
  )
  assert.match(message, /retentionPolicy|creator/)
  assert.deepEqual([...creator.readMemory('k').value], [1], 'the denied write changed nothing')

  const wasmCreator = await probe({ agentId: AGENT, geneId: A, domain: 'text', root })
  assert.equal(json(wasmCreator.call('write', writeRequest('k', [3], 'CONTEXT', { retentionPolicy: null }))).retentionPolicy, null)
})

test('R-WASM-2: a read miss is JSON null, 4 bytes', async (t) => {
  const root = agent(t)
  const gene = await probe({ agentId: AGENT, geneId: A, root })
  const r = gene.call('read', { key: 'never-written' })
  assert.equal(r.code, 4)
  assert.deepEqual([...r.out.subarray(0, 4)], NULL_REPLY)
  assert.ok(r.out.subarray(4).every((b) => b === FILL))
  // With a category that does not match, too.
  new GeneMemoryAccess({ agentId: AGENT, geneId: A, root }).writeMemory('k', enc('v'), 'CACHE')
  assert.equal(gene.call('read', { key: 'k', category: 'PREFERENCE' }).code, 4)
  assert.equal(json(gene.call('read', { key: 'k', category: null })).key, 'k', 'a null category is not given')
})

test('R-WASM-2: query answers an array of entries, delete answers null', async (t) => {
  const root = agent(t)
  const clock = { t: T0 }
  const gene = await probe({ agentId: AGENT, geneId: A, domain: 'text', root, now: () => clock.t })
  for (const [i, key] of ['task:1', 'task:2', 'other'].entries()) {
    clock.t = T0 + i
    json(gene.call('write', writeRequest(key, [i], i === 2 ? 'CACHE' : 'CONTEXT')))
  }
  const tasks = json(gene.call('query', { filter: { keyPrefix: 'task:' } }))
  assert.deepEqual(tasks.map((e) => e.key), ['task:2', 'task:1'], 'most recently updated first')
  assert.deepEqual(tasks.map((e) => e.value), ['AQ==', 'AA=='])
  assert.deepEqual(json(gene.call('query', {})).map((e) => e.key), ['other', 'task:2', 'task:1'])
  assert.deepEqual(json(gene.call('query', { filter: null })).length, 3)
  assert.deepEqual(json(gene.call('query', { filter: { category: 'CACHE', limit: 1 } })).map((e) => e.key), ['other'])
  assert.deepEqual(json(gene.call('query', { filter: { keyPrefix: 'none' } })), [])

  const del = gene.call('delete', { key: 'task:1' })
  assert.equal(del.code, 4)
  assert.deepEqual([...del.out.subarray(0, 4)], NULL_REPLY)
  const ctx = new GeneMemoryAccess({ agentId: AGENT, geneId: A, domain: 'text', root })
  assert.equal(ctx.readMemory('task:1'), null)
  assert.equal(actions(root, 'memory.delete').length, 1)
})

test('R-WASM-3: every error code comes with its envelope and NUL', async (t) => {
  const root = agent(t, { quota: '1KB' })
  const owner = new GeneMemoryAccess({ agentId: AGENT, geneId: A, domain: 'a', root })
  const only = { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' }
  owner.writeMemory('private', enc('p'), 'PREFERENCE', only)
  const gene = await probe({ agentId: AGENT, geneId: B, domain: 'b', root })

  assert.match(envelope(gene.call('delete', { key: 'missing' }), -12, 'MEMORY_NOT_FOUND'), /missing/)
  envelope(gene.call('read', { key: 'private' }), -2, 'MEMORY_ACCESS_DENIED')
  envelope(gene.call('delete', { key: 'private' }), -2, 'MEMORY_ACCESS_DENIED')
  assert.match(
    envelope(gene.call('write', writeRequest('huge', new Uint8Array(2048), 'PREFERENCE')), -8, 'MEMORY_QUOTA_EXCEEDED'),
    /quota/,
  )
  envelope(gene.call('read', '{"key":'), -10, 'MEMORY_INVALID_INPUT')

  // A project root that is a file: the store cannot open.
  const file = path.join(tempRoot(t), 'not-a-folder')
  fs.writeFileSync(file, '')
  const broken = await probe({ agentId: AGENT, geneId: A, root: file })
  envelope(broken.call('read', { key: 'k' }), -13, 'MEMORY_STORAGE_ERROR')

  // The envelope is written only when it and its NUL fit.
  const full = gene.call('delete', { key: 'missing' })
  const size = full.out.indexOf(0) + 1
  assert.deepEqual(gene.call('delete', { key: 'missing' }, { outCap: size }).out.subarray(0, size), full.out.subarray(0, size))
  for (const outCap of [size - 1, 8, 0]) {
    const r = gene.call('delete', { key: 'missing' }, { outCap })
    assert.equal(r.code, -12)
    untouched(r)
  }
  assert.deepEqual([...owner.readMemory('private').value], [...enc('p')])
  assert.equal(actions(root, 'memory.quota_reject').length, 1)
})

test('R-WASM-1: malformed requests are -10, and nothing is written', async (t) => {
  const root = agent(t)
  const gene = await probe({ agentId: AGENT, geneId: A, domain: 'text', root })
  const cases = [
    ['read', 'not json', /could not be read/],
    ['read', '[]', /JSON object/],
    ['read', 'null', /JSON object/],
    ['read', '{"key":"k","extra":true}', /unknown field "extra"/],
    ['read', '{"key":"k","key":"j"}', /twice/],
    ['read', '{}', /lacks the field "key"/],
    ['read', new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]), /could not be read/],
    ['delete', '{"key":"k","category":"CACHE"}', /unknown field "category"/],
    ['query', '{"limit":3}', /unknown field "limit"/],
    ['query', '{"filter":{"limit":0}}', /limit/],
    ['write', '{"key":"k","value":"AQ","category":"CACHE"}', /base64/],
    ['write', '{"key":"k","value":"AQ==\\n","category":"CACHE"}', /base64/],
    ['write', '{"key":"k","value":5,"category":"CACHE"}', /base64/],
    ['write', '{"key":"k","value":"AQ==","category":"cache"}', /category/],
    ['write', '{"key":"k","value":"AQ==","category":"CACHE","accessPolicy":{"readScope":"ALL_GENES"}}', /accessPolicy/],
  ]
  for (const [fn, request, re] of cases) {
    assert.match(envelope(gene.call(fn, request), -10, 'MEMORY_INVALID_INPUT'), re, `${fn} ${request}`)
  }
  assert.deepEqual(json(gene.call('query', {})), [])
  assert.equal(actions(root, 'memory.create').length, 0)
})

test('R-WASM-5 R-ACC-4: a gene with no v2 id gets -2 on every call', async (t) => {
  const root = agent(t)
  for (const id of [null, undefined, 'v1:abc', A.toUpperCase()]) {
    const gene = await probe({ agentId: AGENT, geneId: id, root })
    envelope(gene.call('read', { key: 'k' }), -2, 'MEMORY_ACCESS_DENIED')
    envelope(gene.call('write', writeRequest('k', [1], 'CACHE')), -2, 'MEMORY_ACCESS_DENIED')
    envelope(gene.call('query', {}), -2, 'MEMORY_ACCESS_DENIED')
    envelope(gene.call('delete', { key: 'k' }), -2, 'MEMORY_ACCESS_DENIED')
    // Denied before the request is looked at.
    assert.match(envelope(gene.call('write', 'garbage'), -2, 'MEMORY_ACCESS_DENIED'), /v2 id/)
  }
  const ctx = new GeneMemoryAccess({ agentId: AGENT, geneId: A, root })
  assert.deepEqual(ctx.queryMemory(), [])
  assert.equal(actions(root, 'memory.access_denied').length, 20)
})

test('R-WASM-5 R-ACC-5: a gene with no agent gets -2 and touches no file', async (t) => {
  const root = tempRoot(t)
  const gene = await probe({ agentId: null, geneId: A, root })
  envelope(gene.call('read', { key: 'k' }), -2, 'MEMORY_ACCESS_DENIED')
  envelope(gene.call('write', writeRequest('k', [1], 'CACHE')), -2, 'MEMORY_ACCESS_DENIED')
  envelope(gene.call('query', {}), -2, 'MEMORY_ACCESS_DENIED')
  assert.match(envelope(gene.call('delete', '{"nonsense"'), -2, 'MEMORY_ACCESS_DENIED'), /agent/)
  assert.deepEqual(fs.readdirSync(root), [])
})

test('R-WASM-3 R-WASM-4: -1 keeps the response; the identical retry gets it without a second write', async (t) => {
  const root = agent(t)
  const clock = { t: T0 }
  const gene = await probe({ agentId: AGENT, geneId: A, domain: 'text', root, now: () => clock.t })
  const request = writeRequest('big', new Uint8Array(600).fill(7), 'CACHE')

  const first = gene.call('write', request, { outCap: 300 })
  assert.match(envelope(first, -1, 'MEMORY_INVALID_INPUT'), /out holds only 300/)
  assert.equal(actions(root, 'memory.create').length, 1, 'the write ran once')
  clock.t += 10
  const tiny = gene.call('write', request, { outCap: 16 })
  assert.equal(tiny.code, -1)
  untouched(tiny)

  clock.t += 10
  const retry = gene.call('write', request, { outCap: 4096 })
  const entry = json(retry)
  assert.equal(entry.updatedAt, new Date(T0).toISOString(), 'the kept response')
  assert.equal(Buffer.from(entry.value, 'base64').length, 600)
  const audit = auditLines(root)
  assert.equal(audit.filter((l) => l.action === 'memory.create').length, 1)
  assert.equal(audit.filter((l) => l.action === 'memory.update').length, 0, 'never applied twice')

  // Delivered: the same request again is a new write.
  json(gene.call('write', request, { outCap: 4096 }))
  assert.equal(actions(root, 'memory.update').length, 1)
})

test('R-WASM-4: only the very next, byte-identical call of the same function gets the kept response', async (t) => {
  const root = agent(t)
  const gene = await probe({ agentId: AGENT, geneId: A, domain: 'text', root })
  const request = writeRequest('k', [1, 2, 3], 'CACHE')
  assert.equal(gene.call('write', request, { outCap: 8 }).code, -1)
  // The same bytes to another function run that function.
  assert.equal(gene.call('read', request).code, -10)
  json(gene.call('write', request))
  assert.equal(actions(root, 'memory.update').length, 1, 'the kept response was discarded, so it ran again')

  assert.equal(gene.call('write', request, { outCap: 8 }).code, -1)
  json(gene.call('write', JSON.stringify(request, null, 1)))
  assert.equal(actions(root, 'memory.update').length, 3, 'other spacing is another request')
})

test('R-WASM-3: -4 at the deadline, checked first, out untouched, nothing run', async (t) => {
  const root = agent(t)
  const clock = { t: T0 }
  const deadline = T0 + 1000
  const gene = await probe({ agentId: AGENT, geneId: A, domain: 'text', root, now: () => clock.t, deadline })
  json(gene.call('write', writeRequest('before', [1], 'CACHE')))

  clock.t = deadline
  for (const [fn, request] of [
    ['write', writeRequest('after', [2], 'CACHE')],
    ['read', { key: 'before' }],
    ['query', {}],
    ['delete', { key: 'before' }],
    ['read', 'not json'],
  ]) {
    const r = gene.call(fn, request)
    assert.equal(r.code, -4, fn)
    untouched(r)
  }
  // Even pointers outside memory get -4, not -10.
  assert.equal(gene.call('read', { key: 'k' }, { outPtr: 0xfffff000, outCap: 4096 }).code, -4)
  const noId = await probe({ agentId: AGENT, geneId: null, root, now: () => clock.t, deadline })
  untouched(noId.call('read', { key: 'k' }))

  const ctx = new GeneMemoryAccess({ agentId: AGENT, geneId: A, domain: 'text', root })
  assert.deepEqual(ctx.queryMemory().map((e) => e.key), ['before'])
  assert.equal(actions(root, 'memory.access_denied').length, 0)
  assert.equal(actions(root, 'memory.delete').length, 0)

  // With the system clock, a deadline in the past.
  const late = await probe({ agentId: AGENT, geneId: A, root, deadline: Date.now() - 1 })
  assert.equal(late.call('read', { key: 'before' }).code, -4)
})

test('R-WASM-6: pointers outside the memory are -10 and write nothing', async (t) => {
  const root = agent(t)
  const gene = await probe({ agentId: AGENT, geneId: A, domain: 'text', root })
  json(gene.call('write', writeRequest('k', [1], 'CACHE')))
  const size = gene.memory.buffer.byteLength
  const before = new Uint8Array(gene.memory.buffer).slice()
  const calls = [
    [REQ, size, OUT, 64], // request runs past the end
    [size - 2, 11, OUT, 64],
    [REQ, 11, size - 10, 64], // out runs past the end
    [REQ, 11, -1, 64], // 0xffffffff
    [REQ, 11, OUT, -1],
    [-16, 11, OUT, 64],
  ]
  for (const [reqPtr, reqLen, outPtr, outCap] of calls) {
    // The request `{"key":"k"}` sits at REQ, so only the pointers are wrong.
    new Uint8Array(gene.memory.buffer).set(enc('{"key":"k"}'), REQ)
    for (const fn of ['read', 'write', 'query', 'delete']) {
      assert.equal(gene.instance.exports[fn](reqPtr, reqLen, outPtr, outCap), -10, `${fn} ${reqPtr} ${reqLen} ${outPtr} ${outCap}`)
    }
  }
  const after = new Uint8Array(gene.memory.buffer)
  before.set(enc('{"key":"k"}'), REQ)
  assert.ok(Buffer.compare(Buffer.from(before), Buffer.from(after)) === 0, 'memory unchanged')
  // The entry is still there: the out-of-range delete did nothing.
  assert.equal(json(gene.call('read', { key: 'k' })).key, 'k')
  // An empty out at the very end is in range.
  assert.equal(gene.instance.exports.read(REQ, 11, size, 0), -1)
})

test('R-WASM-6: request and out may overlap, and a grown memory is followed', async (t) => {
  const root = agent(t)
  const gene = await probe({ agentId: AGENT, geneId: A, domain: 'text', root })
  const request = writeRequest('k', [9, 9], 'CACHE')
  const written = json(gene.call('write', request, { reqPtr: OUT, outPtr: OUT }))
  assert.equal(written.value, 'CQk=')

  const pages = gene.instance.exports.grow(1)
  assert.equal(pages, 4)
  const far = 4 * 65536 + 100
  assert.equal(json(gene.call('read', { key: 'k' }, { reqPtr: far, outPtr: far + 64, outCap: 1024 })).value, 'CQk=')
})

test('R-WASM-6: test clock failures reach the gene as codes, not exceptions', async (t) => {
  const root = agent(t)
  const thrower = await probe({
    agentId: AGENT,
    geneId: A,
    root,
    now: () => {
      throw new Error('clock broke')
    },
  })
  assert.match(envelope(thrower.call('read', { key: 'k' }), -13, 'MEMORY_STORAGE_ERROR'), /clock broke/)
  const fractional = await probe({ agentId: AGENT, geneId: A, root, now: () => T0 + 0.5 })
  envelope(fractional.call('read', { key: 'k' }), -10, 'MEMORY_INVALID_INPUT')
})

test('R-WASM-6: createMemoryImports checks its arguments', (t) => {
  const root = tempRoot(t)
  const throwsCode = (fn, code) =>
    assert.throws(fn, (e) => e instanceof MemoryError && e.name === 'MemoryError' && e.code === code)
  throwsCode(() => createMemoryImports({ agentId: AGENT, geneId: A, root }), 'MEMORY_INVALID_INPUT')
  throwsCode(() => createMemoryImports({ agentId: AGENT, geneId: A, root }, {}), 'MEMORY_INVALID_INPUT')
  throwsCode(() => createMemoryImports({ agentId: '../x', geneId: A, root }, () => null), 'MEMORY_INVALID_INPUT')
  throwsCode(() => createMemoryImports({ agentId: AGENT, geneId: A, root, deadline: 'soon' }, () => null), 'MEMORY_INVALID_INPUT')
  throwsCode(() => createMemoryImports({ agentId: AGENT, geneId: A, root, now: 5 }, () => null), 'MEMORY_INVALID_INPUT')
  throwsCode(() => createMemoryImports({ agentId: AGENT, geneId: A, root, extra: 1 }, () => null), 'MEMORY_INVALID_INPUT')
  const imports = createMemoryImports({ agentId: AGENT, geneId: A, root, deadline: T0 }, () => null)
  assert.deepEqual(Object.keys(imports), ['readMemory', 'writeMemory', 'queryMemory', 'deleteMemory'])
  assert.ok(Object.values(imports).every((f) => typeof f === 'function' && f.length === 4))
})

test('R-WASM-6: a host whose memory() gives no memory is told so, through the gene', async (t) => {
  const root = agent(t)
  const bytes = await compile(PROBE)
  for (const memory of [() => null, () => ({ buffer: [] }), () => undefined.exports]) {
    const rotifer = createMemoryImports({ agentId: AGENT, geneId: A, root }, memory)
    const { instance } = await WebAssembly.instantiate(bytes, { rotifer })
    assert.throws(
      () => instance.exports.read(REQ, 11, OUT, 64),
      (e) => e instanceof MemoryError && e.code === 'MEMORY_INVALID_INPUT' && /memory\(\)/.test(e.message),
    )
  }
})

for (const docFile of [path.join('docs', 'gene-authors.md'), path.join('docs', 'wasm.md')]) test(`R-WASM: the example gene of ${docFile} runs as described`, async (t) => {
  const doc = fs.readFileSync(path.join(__dirname, '..', docFile), 'utf8')
  const blocks = [...doc.matchAll(/```wat\n([\s\S]*?)```/g)].map((m) => m[1])
  const wat = blocks.find((b) => b.trimStart().startsWith('(module'))
  assert.ok(wat, 'the documentation has a complete module')
  const root = agent(t)
  const gene = await instantiate(wat, { agentId: AGENT, geneId: A, domain: 'text.greeting', root })
  const memory = gene.exports.memory
  const text = (n) => dec(new Uint8Array(memory.buffer, 1024, n))

  const n = gene.exports.remember()
  assert.ok(n > 0)
  assert.equal(JSON.parse(text(n)).value, 'aGVsbG8=')
  const ctx = new GeneMemoryAccess({ agentId: AGENT, geneId: B, domain: 'text.greeting', root })
  assert.equal(dec(ctx.readMemory('greeting', 'PREFERENCE').value), 'hello')

  const recalled = gene.exports.recall(16) // too small at first: -1, then the kept response
  const entry = JSON.parse(text(recalled))
  assert.equal(entry.key, 'greeting')
  assert.equal(entry.lastAccessedBy, A)
  assert.deepEqual(JSON.parse(text(gene.exports.list())).map((e) => e.key), ['greeting'])
  assert.equal(gene.exports.forget(), 4)
  assert.equal(text(4), 'null')
  assert.equal(gene.exports.forget(), -12)
  const bytes = new Uint8Array(memory.buffer, 1024, 4096)
  assert.equal(JSON.parse(dec(bytes.subarray(0, bytes.indexOf(0)))).__rotifer_error.code, 'MEMORY_NOT_FOUND')
  assert.equal(gene.exports.recall(16), 4, 'a miss is null')
})
