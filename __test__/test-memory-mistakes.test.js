'use strict'
// Mistakes in tests fail at once and say what was wrong: a test memory's gene id, a call on a
// disposed test memory, a MemoryError with a code that does not exist.

const test = require('node:test')
const assert = require('node:assert/strict')
const { createTestMemory, MemoryError, MEMORY_ERROR_CODES } = require('../index.js')
const { geneId } = require('./helpers')

const enc = (s) => new TextEncoder().encode(s)

test('R-HOST-4 createTestMemory with a geneId that is not a v2 id is MEMORY_INVALID_INPUT at once', () => {
  for (const bad of ['prefs', 'v2:ABC', null, 42]) {
    assert.throws(() => createTestMemory({ geneId: bad }), (e) => {
      assert.ok(e instanceof MemoryError)
      assert.equal(e.code, 'MEMORY_INVALID_INPUT')
      assert.match(e.message, /geneId/)
      return true
    }, String(bad))
  }
  const t = createTestMemory({ geneId: geneId('ok') })
  assert.throws(() => t.forGene('prefs'), { code: 'MEMORY_INVALID_INPUT', message: /"prefs" is not a v2 gene id.*rotifer gene id/ })
  assert.equal(t.forGene(geneId('other')).queryMemory().length, 0)
  t.dispose()
})

test('R-HOST-4 every call on a disposed test memory says it was disposed', () => {
  const t = createTestMemory()
  const other = t.forGene(geneId('other'))
  t.memory.writeMemory('k', enc('v'), 'CACHE')
  t.dispose()
  const disposed = { code: 'MEMORY_STORAGE_ERROR', message: /test memory was disposed/ }
  for (const handle of [t.memory, other]) {
    assert.throws(() => handle.readMemory('k'), disposed)
    assert.throws(() => handle.writeMemory('k', enc('v'), 'CACHE'), disposed)
    assert.throws(() => handle.queryMemory(), disposed)
    assert.throws(() => handle.deleteMemory('k'), disposed)
  }
  assert.throws(() => t.forGene(geneId('late')), disposed)
})

test('R-ERR-1 new MemoryError with an unknown code throws a TypeError naming the codes', () => {
  assert.throws(() => new MemoryError('NOPE', 'x'), { name: 'TypeError', message: /MEMORY_NOT_FOUND.*"NOPE"/ })
  assert.throws(() => new MemoryError(undefined, 'x'), TypeError)
  for (const code of MEMORY_ERROR_CODES) assert.equal(new MemoryError(code, 'm').code, code)
})
