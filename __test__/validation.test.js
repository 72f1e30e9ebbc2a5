'use strict'
// Every MEMORY_INVALID_INPUT row (R-LIM, R-CAT-1, R-ACC-2, R-RET-5, R-API-3, R-HOST-1, R-ACC-6),
// and "nothing is lost": a rejected call changes nothing.

const test = require('node:test')
const assert = require('node:assert/strict')
const { memory, enc, tempRoot, open, auditLines, throwsCode } = require('./helpers')

const INVALID = 'MEMORY_INVALID_INPUT'
const policy = (readScope = 'SAME_DOMAIN', writeScope = 'SAME_DOMAIN', sharePolicy = 'PRIVATE') => ({ readScope, writeScope, sharePolicy })
const keep = (maxRetentionDays, autoDeleteOnTermination = false, anonymizationSupported = false) => ({
  maxRetentionDays, autoDeleteOnTermination, anonymizationSupported,
})

test('R-LIM-1 keys: 1024 UTF-8 bytes pass, 1025 fail; empty, NUL, lone surrogates and non-strings fail', (t) => {
  const root = tempRoot(t)
  const m = open(root, 'a', 'g', 'text')
  assert.equal(m.writeMemory('k'.repeat(1024), enc(''), 'CACHE').key.length, 1024)
  throwsCode(assert, () => m.writeMemory('k'.repeat(1025), enc(''), 'CACHE'), INVALID, /1025 UTF-8 bytes.*1024/)
  // Multi-byte: 341 × 3 bytes = 1023 (+1 = 1024) passes; 1025 bytes fails.
  assert.ok(m.writeMemory('€'.repeat(341) + 'x', enc(''), 'CACHE'))
  throwsCode(assert, () => m.writeMemory('€'.repeat(341) + 'xy', enc(''), 'CACHE'), INVALID)
  throwsCode(assert, () => m.writeMemory('', enc(''), 'CACHE'), INVALID, /empty/)
  throwsCode(assert, () => m.writeMemory('a\0b', enc(''), 'CACHE'), INVALID, /NUL/)
  throwsCode(assert, () => m.writeMemory('bad\uD800', enc(''), 'CACHE'), INVALID, /surrogate/)
  throwsCode(assert, () => m.writeMemory('\uDC00bad', enc(''), 'CACHE'), INVALID, /surrogate/)
  // A real U+FFFD and a proper surrogate pair are fine.
  assert.equal(m.writeMemory('ok\uFFFD', enc(''), 'CACHE').key, 'ok\uFFFD')
  assert.equal(m.writeMemory('emoji\uD83D\uDE00', enc(''), 'CACHE').key, 'emoji😀')
  for (const bad of [undefined, null, 1, true, {}, ['k'], Symbol('k')]) {
    throwsCode(assert, () => m.writeMemory(bad, enc(''), 'CACHE'), INVALID, /key must be a string/)
    throwsCode(assert, () => m.readMemory(bad), INVALID)
    throwsCode(assert, () => m.deleteMemory(bad), INVALID)
  }
  throwsCode(assert, () => m.readMemory('x\uD800'), INVALID)
  assert.equal(m.queryMemory({ limit: 1000 }).length, 4)
})

test('R-LIM-2 values: 1 MiB passes, 1 MiB + 1 fails; strings, arrays, ArrayBuffers and other typed arrays fail', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  assert.equal(m.writeMemory('max', new Uint8Array(1048576), 'CACHE').value.length, 1048576)
  throwsCode(assert, () => m.writeMemory('over', new Uint8Array(1048577), 'CACHE'), INVALID, /1048577 bytes.*1048576/)
  for (const bad of ['text', [1, 2], new ArrayBuffer(2), new Uint16Array(2), new Int8Array(2), new Uint8ClampedArray(2), new DataView(new ArrayBuffer(2)), null, undefined, 5, {}]) {
    throwsCode(assert, () => m.writeMemory('k', bad, 'CACHE'), INVALID, /value must be a Uint8Array/)
  }
  assert.equal(m.readMemory('over'), null)
  assert.equal(m.readMemory('k'), null)
})

test('R-CAT-1 categories are upper case only', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  for (const c of ['PREFERENCE', 'PATTERN', 'CONTEXT', 'CACHE']) assert.equal(m.writeMemory(c, enc(''), c).category, c)
  for (const bad of ['cache', 'Cache', 'OTHER', '', 1, null, undefined, {}]) {
    throwsCode(assert, () => m.writeMemory('k', enc(''), bad), INVALID, /category/)
  }
  throwsCode(assert, () => m.readMemory('CACHE', 'cache'), INVALID, /category "cache" is unknown/)
  throwsCode(assert, () => m.queryMemory({ category: 'Pattern' }), INVALID)
})

test('R-ACC-2 accessPolicy must have exactly the three fields, each a known value', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  assert.ok(m.writeMemory('ok', enc(''), 'CACHE', policy('ALL_GENES', 'CREATOR_GENE_ONLY', 'PRIVATE')))
  const bads = [
    null, 'SAME_DOMAIN', [], {},
    { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN' },
    { ...policy(), extra: 1 },
    policy('same_domain'), policy('SAME_DOMAIN', 'EVERYONE'), policy('SAME_DOMAIN', 'SAME_DOMAIN', 'PUBLIC'),
    { readScope: 1, writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' },
  ]
  for (const bad of bads) throwsCode(assert, () => m.writeMemory('k', enc(''), 'CACHE', bad), INVALID, /accessPolicy/)
  assert.equal(m.readMemory('k'), null)
})

test('R-RET-5 retentionPolicy: exactly three fields; maxRetentionDays integer 1..2147483647 or null; booleans', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  assert.deepEqual(m.writeMemory('a', enc(''), 'CACHE', undefined, keep(1)).retentionPolicy, keep(1))
  assert.deepEqual(m.writeMemory('b', enc(''), 'CACHE', undefined, keep(2147483647, true, true)).retentionPolicy, keep(2147483647, true, true))
  assert.deepEqual(m.writeMemory('c', enc(''), 'CACHE', undefined, keep(null)).retentionPolicy, keep(null))
  const bads = [
    keep(0), keep(-1), keep(2.5), keep(2147483648), keep(NaN), keep(Infinity), keep('7'), keep(undefined),
    keep(1, 'no'), keep(1, false, 0), { maxRetentionDays: 1, autoDeleteOnTermination: false },
    { ...keep(1), extra: true }, {}, 'forever', 7, [],
  ]
  for (const bad of bads) throwsCode(assert, () => m.writeMemory('k', enc(''), 'CACHE', undefined, bad), INVALID, /retentionPolicy/)
  assert.equal(m.readMemory('k'), null)
})

test('R-LIM-3 R-API-3 filters: limit 1..1000 integer, unknown fields, wrong types, bad times', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  m.writeMemory('k', enc(''), 'CACHE')
  assert.equal(m.queryMemory({ limit: 1 }).length, 1)
  assert.equal(m.queryMemory({ limit: 1000 }).length, 1)
  for (const limit of [0, 1001, 2.5, -1, NaN, Infinity, '10', true]) {
    throwsCode(assert, () => m.queryMemory({ limit }), INVALID, /limit/)
  }
  throwsCode(assert, () => m.queryMemory({ prefix: 'k' }), INVALID, /unknown field "prefix"/)
  throwsCode(assert, () => m.queryMemory({ keyPrefix: 5 }), INVALID, /keyPrefix/)
  throwsCode(assert, () => m.queryMemory({ keyPrefix: 'a\uDFFF' }), INVALID, /surrogate/)
  for (const bad of ['yesterday', '2026-11-30', '2026-11-30T25:00:00Z', '2026-11-30T00:00:00', 1700000000000, {}]) {
    throwsCode(assert, () => m.queryMemory({ since: bad }), INVALID, /since/)
    throwsCode(assert, () => m.queryMemory({ until: bad }), INVALID, /until/)
  }
  for (const bad of ['all', 5, [], true]) throwsCode(assert, () => m.queryMemory(bad), INVALID, /filter must be an object/)
  // undefined and null fields count as not given
  assert.equal(m.queryMemory({ category: undefined, keyPrefix: null, since: null, until: undefined, limit: null }).length, 1)
  assert.equal(m.queryMemory(null).length, 1)
  assert.equal(m.queryMemory(undefined).length, 1)
})

test('R-HOST-1 agent ids are validated; R-ACC-6 domains are validated', (t) => {
  const root = tempRoot(t)
  for (const bad of ['../x', 'a/b', '.hidden', '-x', '', 'x'.repeat(129), 'a b', 'é', 5]) {
    throwsCode(assert, () => new memory.GeneMemoryAccess({ agentId: bad, geneId: null, root }), INVALID, /agentId/)
    throwsCode(assert, () => memory.createAgentMemory({ agentId: bad, root }), INVALID, /agentId/)
    throwsCode(assert, () => memory.listAgentMemory({ agentId: bad, root }), INVALID, /agentId/)
    throwsCode(assert, () => memory.deleteAgentMemory({ agentId: bad, root, category: 'CACHE' }), INVALID, /agentId/)
  }
  for (const bad of ['Text', 'text.', 'a..b', 'a-b', '', 5]) {
    throwsCode(assert, () => new memory.GeneMemoryAccess({ agentId: 'a', geneId: null, domain: bad, root }), INVALID, /domain/)
  }
  const typo = throwsCode(assert, () => new memory.GeneMemoryAccess({ agentId: 'a', geneId: null, root, agentID: 'typo' }), INVALID, /unknown field "agentID"/)
  assert.doesNotMatch(typo.message, /deadline/, 'the accepted options of GeneMemoryAccess do not include the WASM-only deadline')
  // `deadline` is an option of createMemoryImports (WASM genes) only; here it would be ignored.
  throwsCode(assert, () => new memory.GeneMemoryAccess({ agentId: 'a', geneId: null, root, deadline: Date.now() }), INVALID, /unknown field "deadline"/)
  throwsCode(assert, () => new memory.GeneMemoryAccess('a'), INVALID, /options must be an object/)
  throwsCode(assert, () => new memory.GeneMemoryAccess({ agentId: 'a', geneId: null, root, now: 5 }), INVALID, /now/)
  const m = new memory.GeneMemoryAccess({ agentId: 'a', geneId: 'v2:' + 'a'.repeat(64), root, now: () => 1.5 })
  throwsCode(assert, () => m.readMemory('k'), INVALID, /now\(\)/)
  // Nothing was created for any of the rejected ids.
  assert.deepEqual(require('node:fs').readdirSync(root), [])
})

test('nothing is written by a rejected write, and nothing is audited for invalid input', (t) => {
  const root = tempRoot(t)
  const m = open(root, 'a', 'g', 'text')
  m.writeMemory('k', enc('original'), 'CACHE')
  throwsCode(assert, () => m.writeMemory('k', enc('new'), 'cache'), INVALID)
  throwsCode(assert, () => m.writeMemory('k', 'new', 'CACHE'), INVALID)
  throwsCode(assert, () => m.writeMemory('k', enc('new'), 'CACHE', policy('X')), INVALID)
  assert.equal(new TextDecoder().decode(m.readMemory('k').value), 'original')
  assert.deepEqual(auditLines(root).map((l) => l.action), ['memory.create'])
})
