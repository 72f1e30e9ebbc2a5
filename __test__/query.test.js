'use strict'
// queryMemory (R-API-3, R-LIM-3, R-LIM-4, R-ENT-3).

const test = require('node:test')
const assert = require('node:assert/strict')
const { enc, tempRoot, clock, open, throwsCode } = require('./helpers')

test('R-API-3 R-ENT-3 most recently updated first; same-millisecond writes by write order', (t) => {
  const root = tempRoot(t)
  const c = clock()
  const m = open(root, 'a', 'g', 'text', { now: c.now })
  m.writeMemory('a', enc(''), 'CACHE')
  m.writeMemory('b', enc(''), 'CACHE') // same millisecond as a
  c.t += 1
  m.writeMemory('c', enc(''), 'CACHE')
  m.writeMemory('d', enc(''), 'CACHE')
  m.writeMemory('a', enc('again'), 'CACHE') // rewrite moves it to the front
  assert.deepEqual(m.queryMemory().map((e) => e.key), ['a', 'd', 'c', 'b'])
  // R-ENT-4: a clock that goes back is floored at the latest stored time, so the write made
  // last is still the newest; ties are broken by write order.
  c.t -= 100
  const old = m.writeMemory('old', enc(''), 'CACHE')
  assert.equal(old.updatedAt, m.readMemory('a').updatedAt)
  assert.deepEqual(m.queryMemory().map((e) => e.key), ['old', 'a', 'd', 'c', 'b'])
})

test('R-API-3 filters: category, since (inclusive), until (exclusive), limit, since >= until is empty', (t) => {
  const root = tempRoot(t)
  const c = clock(Date.parse('2026-11-30T00:00:00.000Z'))
  const m = open(root, 'a', 'g', 'text', { now: c.now })
  for (let i = 0; i < 5; i++) {
    m.writeMemory(`k${i}`, enc(''), i % 2 ? 'PATTERN' : 'CACHE')
    c.t += 1000
  }
  const keys = (f) => m.queryMemory(f).map((e) => e.key)
  assert.deepEqual(keys({ category: 'PATTERN' }), ['k3', 'k1'])
  assert.deepEqual(keys({ since: '2026-11-30T00:00:02.000Z' }), ['k4', 'k3', 'k2'])
  assert.deepEqual(keys({ until: '2026-11-30T00:00:02.000Z' }), ['k1', 'k0'])
  assert.deepEqual(keys({ since: '2026-11-30T00:00:01.000Z', until: '2026-11-30T00:00:03.000Z' }), ['k2', 'k1'])
  assert.deepEqual(keys({ since: '2026-11-30T01:00:01.000+01:00', until: '2026-11-30T00:00:01.001Z' }), ['k1'], 'offsets')
  assert.deepEqual(keys({ since: '2026-11-30T00:00:01.0005Z' }), ['k4', 'k3', 'k2'], 'sub-millisecond since rounds up')
  // Past nine fraction digits too (chrono keeps nanoseconds only): any non-zero digit rounds up.
  assert.deepEqual(keys({ since: '2026-11-30T00:00:01.0000000001Z' }), ['k4', 'k3', 'k2'], 'a 10th fraction digit rounds since up')
  assert.deepEqual(keys({ until: '2026-11-30T00:00:01.0000000001Z' }), ['k1', 'k0'], 'a 10th fraction digit rounds until up')
  assert.deepEqual(keys({ since: '2026-11-30T00:00:01.0000000000Z' }), ['k4', 'k3', 'k2', 'k1'], 'zeros do not round')
  assert.deepEqual(keys({ since: '2026-11-30T00:00:03.000Z', until: '2026-11-30T00:00:03.000Z' }), [])
  assert.deepEqual(keys({ since: '2026-11-30T00:00:04.000Z', until: '2026-11-30T00:00:01.000Z' }), [])
  assert.deepEqual(keys({ limit: 2 }), ['k4', 'k3'])
  assert.deepEqual(keys({ category: 'CACHE', limit: 1 }), ['k4'])
})

test('R-API-3 default limit is 100, maximum 1000', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  for (let i = 0; i < 1005; i++) m.writeMemory(`k${i}`, enc(''), 'CACHE')
  assert.equal(m.queryMemory().length, 100)
  assert.equal(m.queryMemory({}).length, 100)
  assert.equal(m.queryMemory({ limit: 1000 }).length, 1000)
})

test('R-API-3 keyPrefix is a literal prefix: %, _, \\, * and ? are not wildcards', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  const all = ['a%b', 'axb', 'a_b', 'a\\b', 'a\\\\b', 'a*b', 'a?b', 'ab', '%', '_x', 'A%b', 'a%', 'é%', 'é']
  for (const k of all) m.writeMemory(k, enc(''), 'CACHE')
  const keys = (keyPrefix) => m.queryMemory({ keyPrefix, limit: 1000 }).map((e) => e.key).sort()
  assert.deepEqual(keys('a%'), ['a%', 'a%b'])
  assert.deepEqual(keys('a_'), ['a_b'])
  assert.deepEqual(keys('a\\'), ['a\\\\b', 'a\\b'])
  assert.deepEqual(keys('a\\\\'), ['a\\\\b'])
  assert.deepEqual(keys('a*'), ['a*b'])
  assert.deepEqual(keys('a?'), ['a?b'])
  assert.deepEqual(keys('%'), ['%'])
  assert.deepEqual(keys('_'), ['_x'])
  assert.deepEqual(keys('a'), ['a%', 'a%b', 'a*b', 'a?b', 'a\\\\b', 'a\\b', 'a_b', 'ab', 'axb'].sort())
  assert.deepEqual(keys('é'), ['é', 'é%'])
  assert.equal(keys('').length, all.length, 'an empty prefix matches everything')
  assert.deepEqual(keys('zzz'), [])
})

test('R-API-3 unreadable entries are skipped without shortening the result', (t) => {
  const root = tempRoot(t)
  const c = clock()
  const mine = open(root, 'a', 'mine', 'text', { now: c.now })
  const theirs = open(root, 'a', 'theirs', 'image', { now: c.now })
  for (let i = 0; i < 10; i++) {
    c.t += 1
    mine.writeMemory(`m${i}`, enc(''), 'CACHE')
    c.t += 1
    theirs.writeMemory(`t${i}`, enc(''), 'CACHE') // SAME_DOMAIN: unreadable to "mine"
  }
  assert.deepEqual(mine.queryMemory({ limit: 5 }).map((e) => e.key), ['m9', 'm8', 'm7', 'm6', 'm5'])
  assert.equal(mine.queryMemory({ limit: 1000 }).length, 10)
  assert.equal(theirs.queryMemory({ keyPrefix: 'm' }).length, 0)
})

test('R-LIM-4 more than 4 MiB of matching entries fails, never a partial result', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  const MiB = 1048576
  // Four entries of exactly 1 MiB each (key + value) total exactly 4 MiB: allowed.
  for (const k of ['k1', 'k2', 'k3', 'k4']) m.writeMemory(k, new Uint8Array(MiB - 2), 'CACHE')
  assert.equal(m.queryMemory().length, 4)
  m.writeMemory('k5', new Uint8Array(0), 'CACHE') // 2 more bytes: over 4 MiB
  throwsCode(assert, () => m.queryMemory(), 'MEMORY_INVALID_INPUT', /4 MiB.*lower filter\.limit/)
  assert.equal(m.queryMemory({ limit: 4 }).length, 4)
  assert.equal(m.queryMemory({ keyPrefix: 'k5' }).length, 1)
})
