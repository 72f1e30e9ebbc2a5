'use strict'
// Quota and eviction (R-QUO), quota text (R-QUO-2).

const test = require('node:test')
const assert = require('node:assert/strict')
const { memory, enc, tempRoot, clock, open, auditLines, throwsCode } = require('./helpers')

const bytes = (n) => new Uint8Array(n)

/** An agent with `quota` bytes and a clock; keys are one byte so sizes are easy to count. */
function agent(t, quota) {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'a', root, quota })
  const c = clock()
  const m = open(root, 'a', 'g', 'text', { now: c.now })
  const write = (key, size, category) => {
    c.t += 1
    return m.writeMemory(key, bytes(size - Buffer.byteLength(key)), category)
  }
  const keys = () => m.queryMemory({ limit: 1000 }).map((e) => e.key).sort()
  return { root, m, c, write, keys }
}

test('R-QUO-2 parseMemoryQuota accepts the documented forms and floors', () => {
  assert.equal(memory.parseMemoryQuota('512KB'), 512 * 1024)
  assert.equal(memory.parseMemoryQuota('50MB'), 50 * 1024 * 1024)
  assert.equal(memory.parseMemoryQuota('50 mb'), 50 * 1024 * 1024)
  assert.equal(memory.parseMemoryQuota(' 1.5GB '), 1.5 * 1024 ** 3)
  assert.equal(memory.parseMemoryQuota('0.5kb'), 512)
  assert.equal(memory.parseMemoryQuota('1.0009KB'), 1024)
  assert.equal(memory.parseMemoryQuota('1024GB'), 1024 ** 4)
})

test('R-QUO-2 parseMemoryQuota rejects with a message showing the accepted forms', () => {
  for (const bad of ['100', '0MB', '-5MB', '2TB', '1025GB', '1e3MB', 'lots', '', '0.0001KB', '5 MiB', '5 M B', 50]) {
    throwsCode(assert, () => memory.parseMemoryQuota(bad), 'MEMORY_INVALID_INPUT', /512KB/)
  }
})

test('R-QUO-1 the default quota is 10 MiB', (t) => {
  const root = tempRoot(t)
  const m = open(root, 'fresh', 'g', 'text')
  const mib = new Uint8Array(1048576)
  for (let i = 0; i < 9; i++) m.writeMemory(`p${i}`, mib, 'PREFERENCE')
  // 9 MiB + 18 key bytes used; 1 MiB - 18 bytes left.
  m.writeMemory('x', new Uint8Array(1048576 - 18 - 1), 'PREFERENCE')
  throwsCode(assert, () => m.writeMemory('y', new Uint8Array(0), 'PREFERENCE'), 'MEMORY_QUOTA_EXCEEDED')
})

test('R-QUO-3 eviction order: CACHE, then PATTERN, then CONTEXT, each least recently updated first; never PREFERENCE', (t) => {
  const { root, write, keys, c, m } = agent(t, '1KB')
  write('c1', 100, 'CACHE')
  write('p1', 100, 'PATTERN')
  write('x1', 100, 'CONTEXT')
  write('c2', 100, 'CACHE')
  write('f1', 100, 'PREFERENCE')
  write('p2', 100, 'PATTERN')
  write('x2', 100, 'CONTEXT')
  write('c3', 100, 'CACHE')
  // A rewrite counts as new: c1 becomes the newest CACHE entry.
  write('c1', 100, 'CACHE')
  write('f2', 100, 'PREFERENCE') // 9 keys, 900 of 1024 bytes
  assert.equal(keys().length, 9)

  write('n1', 150, 'PREFERENCE') // needs 26: evicts c2, the least recently updated CACHE entry
  assert.deepEqual(keys(), ['c1', 'c3', 'f1', 'f2', 'n1', 'p1', 'p2', 'x1', 'x2'])
  write('n2', 250, 'PREFERENCE') // needs 176: c3, then c1 (rewritten, so newest)
  assert.deepEqual(keys(), ['f1', 'f2', 'n1', 'n2', 'p1', 'p2', 'x1', 'x2'])
  write('n3', 150, 'CONTEXT') // needs 126: CACHE is empty, so PATTERN p1, p2
  assert.deepEqual(keys(), ['f1', 'f2', 'n1', 'n2', 'n3', 'x1', 'x2'])
  write('n4', 200, 'CONTEXT') // needs 126: CONTEXT x1, x2, oldest first (n3 is newer)
  assert.deepEqual(keys(), ['f1', 'f2', 'n1', 'n2', 'n3', 'n4'])

  const evicted = auditLines(root).filter((l) => l.action === 'memory.evict').map((l) => l.key)
  assert.deepEqual(evicted, ['c2', 'c3', 'c1', 'p1', 'p2', 'x1', 'x2'])
  const line = auditLines(root).find((l) => l.action === 'memory.evict')
  assert.equal(line.actor, null)
  assert.equal(line.size, 100)
  assert.equal(line.category, 'CACHE')
  void c
  void m
})

test('R-QUO-4 all or nothing: when evicting everything would not make room, nothing changes', (t) => {
  const { root, write, keys, m } = agent(t, '1KB')
  write('f1', 500, 'PREFERENCE')
  write('c1', 200, 'CACHE')
  write('x1', 200, 'CONTEXT')
  const before = keys()
  const linesBefore = auditLines(root).length
  throwsCode(assert, () => write('big', 700, 'CACHE'), 'MEMORY_QUOTA_EXCEEDED', /nothing was written or evicted/)
  assert.deepEqual(keys(), before)
  assert.equal(m.readMemory('big'), null)
  const after = auditLines(root).slice(linesBefore)
  assert.equal(after.length, 1)
  assert.equal(after[0].action, 'memory.quota_reject')
  assert.equal(after[0].key, 'big')
  assert.equal(after[0].size, 700)
  assert.equal(after[0].quota, 1024)
  assert.equal(after[0].used, 900)
  assert.equal(after[0].evictable, 400)
  // A value larger than the whole quota is refused the same way.
  throwsCode(assert, () => write('huge', 2000, 'CACHE'), 'MEMORY_QUOTA_EXCEEDED')
  assert.deepEqual(keys(), before)
})

test('R-QUO-3 a rewrite credits its old size and is never evicted to make room for itself', (t) => {
  const { write, keys, root } = agent(t, '1KB')
  write('c1', 1000, 'CACHE')
  // Rewriting c1 larger: its old 1000 bytes are credited, so 1024 fits without evicting c1.
  write('c1', 1024, 'CACHE')
  assert.deepEqual(keys(), ['c1'])
  throwsCode(assert, () => write('c1', 1025, 'CACHE'), 'MEMORY_QUOTA_EXCEEDED')
  assert.equal(keys().length, 1)
  assert.equal(auditLines(root).filter((l) => l.action === 'memory.evict').length, 0)
})

test('R-QUO-5 eviction ignores who wrote an entry and its access policy', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'a', root, quota: 1024 })
  const other = open(root, 'a', 'private-gene', 'image')
  const m = open(root, 'a', 'g', 'text')
  other.writeMemory('o', bytes(599), 'CACHE', { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' })
  m.writeMemory('m', bytes(599), 'PREFERENCE')
  assert.equal(other.readMemory('o'), null)
})

test('R-QUO quota freed by deletes and rewrites to smaller values', (t) => {
  const { write, m } = agent(t, '1KB')
  write('a', 1000, 'PREFERENCE')
  throwsCode(assert, () => write('b', 100, 'PREFERENCE'), 'MEMORY_QUOTA_EXCEEDED')
  write('a', 500, 'PREFERENCE')
  write('b', 500, 'PREFERENCE')
  m.deleteMemory('a')
  write('c', 520, 'PREFERENCE')
  assert.deepEqual(m.queryMemory().map((e) => e.key).sort(), ['b', 'c'])
})

test('createAgentMemory accepts quota text or bytes and rejects bad ones, creating nothing', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'n', root, quota: 2048 })
  memory.createAgentMemory({ agentId: 't', root, quota: '2KB' })
  for (const bad of ['100', '0MB', '-5MB', '2TB', 0, -1, 1.5, true]) {
    throwsCode(assert, () => memory.createAgentMemory({ agentId: 'bad', root, quota: bad }), 'MEMORY_INVALID_INPUT', /quota/)
  }
  throwsCode(assert, () => memory.createAgentMemory({ agentId: 'bad', root, dataPolicy: { maxRetentionDays: 0 } }), 'MEMORY_INVALID_INPUT')
  throwsCode(assert, () => memory.createAgentMemory({ agentId: 'bad', root, dataPolicy: { unknown: 1 } }), 'MEMORY_INVALID_INPUT')
  throwsCode(assert, () => memory.createAgentMemory({ agentId: 'bad', root, extra: 1 }), 'MEMORY_INVALID_INPUT')
  // Each database with its lineage stamp (R-HOST-1b), nothing for the refused ones.
  assert.deepEqual(require('node:fs').readdirSync(require('node:path').join(root, '.rotifer', 'memory')).sort(), ['n.db', 'n.db-lineage', 't.db', 't.db-lineage'])
})

// R-QUO-3 after the quota is lowered under the bytes already stored: eviction happens only when a
// write would push the total past the quota, and then only as much as needed.
test('R-QUO-3 a memory over a lowered quota: a rewrite that does not grow the total evicts nothing and is accepted', (t) => {
  const { root, write, keys } = agent(t, 4096)
  for (let i = 0; i < 7; i++) write(`c${i}`, 100, 'CACHE')
  write('p', 1000, 'PREFERENCE')
  memory.createAgentMemory({ agentId: 'a', root, quota: 1024 }) // 1700 bytes stored, quota 1024
  const before = auditLines(root).length
  write('p', 1000, 'PREFERENCE') // same size
  write('p', 900, 'PREFERENCE') // smaller
  write('c0', 100, 'CACHE') // a same-size rewrite of a CACHE entry
  assert.deepEqual(keys(), ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'p'], 'nothing was evicted')
  assert.deepEqual(auditLines(root).slice(before).map((l) => l.action), ['memory.update', 'memory.update', 'memory.update'])
})

test('R-QUO-3 a memory over a lowered quota: a write that grows the total evicts down to the quota, oldest first, or is refused', (t) => {
  const { root, write, keys, m } = agent(t, 4096)
  for (let i = 0; i < 7; i++) write(`c${i}`, 100, 'CACHE')
  write('p', 1000, 'PREFERENCE')
  memory.createAgentMemory({ agentId: 'a', root, quota: 1500 }) // 1700 bytes stored
  // 1700 + 1 byte more: 201 bytes over the quota, so the three oldest CACHE entries go (300 ≥ 201).
  write('p', 1001, 'PREFERENCE')
  assert.deepEqual(keys(), ['c3', 'c4', 'c5', 'c6', 'p'])
  const evicted = auditLines(root).filter((l) => l.action === 'memory.evict').map((l) => l.key)
  assert.deepEqual(evicted, ['c0', 'c1', 'c2'])
  // A write that cannot be brought within the quota changes nothing.
  memory.createAgentMemory({ agentId: 'a', root, quota: 1024 })
  throwsCode(assert, () => write('q', 500, 'PREFERENCE'), 'MEMORY_QUOTA_EXCEEDED', /\(500 bytes\) does not fit in the quota of 1KB \(1024 bytes\), even after evicting every CACHE, PATTERN and CONTEXT entry/)
  assert.deepEqual(keys(), ['c3', 'c4', 'c5', 'c6', 'p'], 'nothing was evicted by the refused write')
  const reject = auditLines(root).filter((l) => l.action === 'memory.quota_reject').pop()
  assert.equal(reject.needed, 1401 + 500 - 1024)
  assert.equal(reject.evictable, 400)
  assert.ok(m)
})
