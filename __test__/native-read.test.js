'use strict'
// readMemory goes through a plain Node-API function (src/read.rs) on a type-tagged handle, with
// the entry factory bound once (R-API-1, R-ERR-3): what it answers is what the API promises, and
// anything but its own handle is a MEMORY_STORAGE_ERROR, never a crash.

const test = require('node:test')
const assert = require('node:assert/strict')
const native = require('../lib/native')
const { memory, tempRoot, clock, open, enc, dec } = require('./helpers')

test('R-API-1 readMemory answers entries, misses and category filters, with and without a test clock', (t) => {
  const root = tempRoot(t)
  const c = clock()
  const timed = open(root, 'a', 'g', 'text', { now: c.now })
  const plain = open(root, 'a', 'g', 'text')
  timed.writeMemory('k', enc('v'), 'CACHE')
  for (const m of [timed, plain]) {
    const e = m.readMemory('k')
    assert.equal(dec(e.value), 'v')
    assert.equal(e.category, 'CACHE')
    assert.equal(m.readMemory('k', 'CONTEXT'), null)
    assert.equal(m.readMemory('missing'), null)
  }
  assert.equal(timed.readMemory('k').updatedAt, '2026-11-30T00:00:00.000Z')
  assert.throws(() => plain.readMemory(42), (e) => e instanceof memory.MemoryError && e.code === 'MEMORY_INVALID_INPUT')
})

test('R-ERR-3 the native read refuses anything but its own handle, and a factory that is not a function', () => {
  const read = native.readFunction(() => ({}))
  const handle = new native.NativeGeneMemory({ agentId: null, geneId: null })
  for (const wrong of [undefined, null, 42, 'h', {}, handle, read]) {
    assert.throws(() => read(wrong, 'k'), (e) => e.code === 'MEMORY_STORAGE_ERROR' && /without its handle/.test(e.message), String(wrong))
  }
  assert.throws(() => native.readFunction(42), (e) => e.code === 'MEMORY_STORAGE_ERROR' && /entry factory/.test(e.message))
  // Its own handle: a memory without an agent denies, as every call does.
  assert.throws(() => read(handle.readHandle(), 'k'), (e) => e.code === 'MEMORY_ACCESS_DENIED')
})
