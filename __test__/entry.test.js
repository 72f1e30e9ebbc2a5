'use strict'
// The entry model and the four calls' basic contract (R-ENT, R-API).

const test = require('node:test')
const assert = require('node:assert/strict')
const { createHash } = require('node:crypto')
const { memory, enc, dec, geneId, tempRoot, clock, open, auditLines, throwsCode } = require('./helpers')

test('R-ENT entryId is sha256(agentId ‖ 0x00 ‖ key), lowercase hex', (t) => {
  const root = tempRoot(t)
  const m = open(root, 'agent-1', 'g', 'text')
  const e = m.writeMemory('formatter/indent', enc('4'), 'PREFERENCE')
  const expected = createHash('sha256').update(Buffer.concat([Buffer.from('agent-1'), Buffer.from([0]), Buffer.from('formatter/indent')])).digest('hex')
  assert.equal(e.entryId, expected)
  assert.match(e.entryId, /^[0-9a-f]{64}$/)
})

test('R-ENT times are RFC 3339 UTC with exactly millisecond precision and Z', (t) => {
  const root = tempRoot(t)
  const c = clock(Date.parse('2026-11-30T01:38:19.123Z'))
  const m = open(root, 'a', 'g', 'text', { now: c.now })
  const e = m.writeMemory('k', enc('v'), 'CACHE')
  assert.equal(e.createdAt, '2026-11-30T01:38:19.123Z')
  assert.equal(e.updatedAt, '2026-11-30T01:38:19.123Z')
  c.t = Date.parse('2026-11-30T01:38:20.000Z')
  const e2 = m.writeMemory('k', enc('w'), 'CACHE')
  assert.equal(e2.updatedAt, '2026-11-30T01:38:20.000Z')
  assert.equal(e2.createdAt, '2026-11-30T01:38:19.123Z')
  // The system clock gives the same shape.
  const real = open(root, 'b', 'g', 'text').writeMemory('k', enc('v'), 'CACHE')
  assert.match(real.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
})

test('R-ENT a new entry has every field, default policies, lastAccessedBy = createdBy', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  const e = m.writeMemory('k', enc('hello'), 'CONTEXT')
  assert.deepEqual(Object.keys(e).sort(), [
    'accessPolicy', 'category', 'createdAt', 'createdBy', 'entryId', 'key', 'lastAccessedBy', 'retentionPolicy', 'updatedAt', 'value',
  ])
  assert.equal(e.category, 'CONTEXT')
  assert.equal(e.key, 'k')
  assert.ok(e.value instanceof Uint8Array)
  assert.equal(dec(e.value), 'hello')
  assert.equal(e.createdBy, geneId('g'))
  assert.equal(e.lastAccessedBy, geneId('g'))
  // R-ACC-1 default policy; R-API-2 omitted retention = null
  assert.deepEqual(e.accessPolicy, { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' })
  assert.equal(e.retentionPolicy, null)
})

test('R-ENT-1 R-API-2 a rewrite keeps entryId, createdAt, createdBy and moves the category', (t) => {
  const root = tempRoot(t)
  const c = clock()
  const a = open(root, 'a', 'ga', 'text', { now: c.now })
  const b = open(root, 'a', 'gb', 'text', { now: c.now })
  const first = a.writeMemory('k', enc('1'), 'CACHE')
  c.t += 5
  const second = b.writeMemory('k', enc('22'), 'PREFERENCE')
  assert.equal(second.entryId, first.entryId)
  assert.equal(second.createdAt, first.createdAt)
  assert.equal(second.createdBy, geneId('ga'))
  assert.equal(second.lastAccessedBy, geneId('gb'))
  assert.equal(second.category, 'PREFERENCE')
  assert.notEqual(second.updatedAt, first.updatedAt)
  assert.equal(a.readMemory('k', 'CACHE'), null, 'the entry left CACHE')
  assert.equal(dec(a.readMemory('k', 'PREFERENCE').value), '22')
  assert.equal(a.queryMemory().length, 1, 'one entry per key')
  const actions = auditLines(root).map((l) => l.action)
  assert.deepEqual(actions, ['memory.create', 'memory.update'])
})

test('R-API-1 read: null when missing, null for another category, category null/undefined = not given', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  assert.equal(m.readMemory('nope'), null)
  m.writeMemory('k', enc('v'), 'PATTERN')
  assert.equal(m.readMemory('k', 'CACHE'), null)
  assert.equal(m.readMemory('k', 'PATTERN').key, 'k')
  assert.equal(m.readMemory('k', null).key, 'k')
  assert.equal(m.readMemory('k', undefined).key, 'k')
  assert.equal(m.readMemory('k').key, 'k')
})

test('R-API-1 a read sets lastAccessedBy (not updatedAt) and returns it; queries do not', (t) => {
  const root = tempRoot(t)
  const c = clock()
  const a = open(root, 'a', 'ga', 'text', { now: c.now })
  const b = open(root, 'a', 'gb', 'text', { now: c.now })
  const w = a.writeMemory('k', enc('v'), 'CACHE')
  c.t += 1000
  const r = b.readMemory('k')
  assert.equal(r.lastAccessedBy, geneId('gb'))
  assert.equal(r.updatedAt, w.updatedAt)
  assert.equal(a.queryMemory()[0].lastAccessedBy, geneId('gb'), 'a query shows it and does not change it')
  assert.equal(b.queryMemory()[0].lastAccessedBy, geneId('gb'))
  assert.equal(a.readMemory('k').lastAccessedBy, geneId('ga'))
  // Reads are not audited (R-AUD-1).
  assert.deepEqual(auditLines(root).map((l) => l.action), ['memory.create'])
})

test('R-API-5 values are copies in and out', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  const input = enc('abc')
  const written = m.writeMemory('k', input, 'CACHE')
  input[0] = 0x7a
  written.value[1] = 0x7a
  const read = m.readMemory('k')
  assert.equal(dec(read.value), 'abc')
  read.value[2] = 0x7a
  assert.equal(dec(m.queryMemory()[0].value), 'abc')
  assert.equal(dec(m.readMemory('k').value), 'abc')
})

test('R-LIM-2 a Buffer is a Uint8Array; empty values are allowed; subarrays write only their view', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  assert.equal(dec(m.writeMemory('b', Buffer.from('buf'), 'CACHE').value), 'buf')
  assert.equal(m.writeMemory('e', new Uint8Array(0), 'CACHE').value.length, 0)
  const big = enc('0123456789')
  assert.equal(dec(m.writeMemory('s', big.subarray(2, 5), 'CACHE').value), '234')
})

test('R-API-4 delete removes the entry; deleting again is MEMORY_NOT_FOUND', (t) => {
  const root = tempRoot(t)
  const m = open(root, 'a', 'g', 'text')
  m.writeMemory('k', enc('v'), 'CACHE')
  assert.equal(m.deleteMemory('k'), undefined)
  assert.equal(m.readMemory('k'), null)
  throwsCode(assert, () => m.deleteMemory('k'), 'MEMORY_NOT_FOUND', /"k"/)
  throwsCode(assert, () => m.deleteMemory('never'), 'MEMORY_NOT_FOUND')
  assert.deepEqual(auditLines(root).map((l) => l.action), ['memory.create', 'memory.delete'])
})

test('R-ERR-1 MemoryError is exported, instanceof Error, with name, code and a helpful message', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  const e = throwsCode(assert, () => m.writeMemory('k', 'text', 'CACHE'), 'MEMORY_INVALID_INPUT', /Uint8Array/)
  assert.ok(e instanceof Error)
  assert.ok(e.stack.includes('MemoryError'))
  assert.deepEqual(memory.MEMORY_ERROR_CODES, [
    'MEMORY_NOT_FOUND', 'MEMORY_ACCESS_DENIED', 'MEMORY_QUOTA_EXCEEDED', 'MEMORY_INVALID_INPUT', 'MEMORY_STORAGE_ERROR',
  ])
})

test('R-AUD-3 audit lines have the documented fields and never the value', (t) => {
  const root = tempRoot(t)
  const c = clock(Date.parse('2026-11-30T01:38:19.123Z'))
  const m = open(root, 'agent-x', 'g', 'text', { now: c.now })
  m.writeMemory('k', enc('SECRET-VALUE'), 'CACHE')
  const [line] = auditLines(root)
  assert.deepEqual(
    { ts: line.ts, agentId: line.agentId, action: line.action, actor: line.actor, key: line.key, category: line.category, size: line.size },
    { ts: '2026-11-30T01:38:19.123Z', agentId: 'agent-x', action: 'memory.create', actor: geneId('g'), key: 'k', category: 'CACHE', size: 13 },
  )
  assert.match(line.entryId, /^[0-9a-f]{64}$/)
  const raw = require('node:fs').readFileSync(require('node:path').join(root, '.rotifer', 'audit.jsonl'), 'utf8')
  assert.ok(!raw.includes('SECRET-VALUE'))
  assert.ok(!raw.includes(Buffer.from('SECRET-VALUE').toString('base64')))
})
