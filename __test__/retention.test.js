'use strict'
// Retention and expiry (R-RET) with the test clock.

const test = require('node:test')
const assert = require('node:assert/strict')
const { memory, enc, tempRoot, clock, open, auditLines, throwsCode } = require('./helpers')

const DAY = 86400000
const keep = (d) => ({ maxRetentionDays: d, autoDeleteOnTermination: false, anonymizationSupported: false })

test('R-RET-1 an entry expires exactly at updatedAt + N days; R-RET-3 expired is gone; R-RET-4 purge is audited', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'a', root, quota: '1KB' })
  const c = clock(Date.parse('2026-01-01T00:00:00.000Z'))
  const m = open(root, 'a', 'g', 'text', { now: c.now })
  m.writeMemory('short', new Uint8Array(500), 'PREFERENCE', undefined, keep(2))
  m.writeMemory('forever', enc('v'), 'PREFERENCE', undefined, keep(null))

  c.t += 2 * DAY - 1
  assert.equal(m.readMemory('short').key, 'short', 'one millisecond before: still there')
  assert.equal(auditLines(root).filter((l) => l.action === 'memory.expire').length, 0)

  c.t += 1
  assert.equal(m.readMemory('short'), null, 'at the instant: gone')
  const expired = auditLines(root).filter((l) => l.action === 'memory.expire')
  assert.equal(expired.length, 1)
  assert.equal(expired[0].key, 'short')
  assert.equal(expired[0].actor, null)
  assert.equal(expired[0].size, 505)
  assert.equal(expired[0].ts, '2026-01-03T00:00:00.000Z')

  assert.equal(m.queryMemory().map((e) => e.key).join(), 'forever')
  throwsCode(assert, () => m.deleteMemory('short'), 'MEMORY_NOT_FOUND')
  // Its quota is free again: 1000 more bytes fit beside "forever" (8 bytes).
  m.writeMemory('big', new Uint8Array(1013), 'PREFERENCE')
  c.t += 10000 * DAY
  assert.equal(m.readMemory('forever').key, 'forever')
})

test('R-RET-1 rewriting restarts the clock', (t) => {
  const root = tempRoot(t)
  const c = clock()
  const m = open(root, 'a', 'g', 'text', { now: c.now })
  m.writeMemory('k', enc('1'), 'CACHE', undefined, keep(1))
  c.t += DAY - 10
  m.writeMemory('k', enc('2'), 'CACHE')
  c.t += DAY - 10
  assert.equal(new TextDecoder().decode(m.readMemory('k').value), '2')
  c.t += 10
  assert.equal(m.readMemory('k'), null)
})

test('R-RET-2 retentionPolicy null follows the agent data policy; the default never expires', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'limited', root, dataPolicy: { maxRetentionDays: 3 } })
  const c = clock()
  const limited = open(root, 'limited', 'g', 'text', { now: c.now })
  const unlimited = open(root, 'default', 'g', 'text', { now: c.now })
  limited.writeMemory('k', enc('v'), 'CACHE')
  limited.writeMemory('own', enc('v'), 'CACHE', undefined, keep(1))
  unlimited.writeMemory('k', enc('v'), 'CACHE')
  c.t += DAY
  assert.equal(limited.readMemory('own'), null)
  assert.ok(limited.readMemory('k'))
  c.t += 2 * DAY
  assert.equal(limited.readMemory('k'), null)
  c.t += 100000 * DAY
  assert.ok(unlimited.readMemory('k'))
})

test('R-RET-3 a write of an expired key creates a brand-new entry', (t) => {
  const root = tempRoot(t)
  const c = clock()
  const a = open(root, 'a', 'first', 'text', { now: c.now })
  const b = open(root, 'a', 'second', 'text', { now: c.now })
  const old = a.writeMemory('k', enc('1'), 'CACHE', { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'PRIVATE' }, keep(1))
  c.t += DAY
  const fresh = b.writeMemory('k', enc('2'), 'PATTERN')
  assert.equal(fresh.createdBy, b.readMemory('k').lastAccessedBy)
  assert.notEqual(fresh.createdBy, old.createdBy)
  assert.notEqual(fresh.createdAt, old.createdAt)
  assert.deepEqual(fresh.accessPolicy, { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' })
  assert.equal(fresh.retentionPolicy, null)
  assert.deepEqual(auditLines(root).map((l) => l.action), ['memory.create', 'memory.expire', 'memory.create'])
})

test('R-RET-4 purge runs at the start of query, write, delete and the deployer list, even when the call fails', (t) => {
  const root = tempRoot(t)
  const c = clock()
  const m = open(root, 'a', 'g', 'text', { now: c.now })
  const seed = () => {
    m.writeMemory('e', enc('v'), 'CACHE', undefined, keep(1))
    c.t += DAY
  }
  const expires = () => auditLines(root).filter((l) => l.action === 'memory.expire').length
  seed()
  m.queryMemory()
  assert.equal(expires(), 1)
  seed()
  throwsCode(assert, () => m.writeMemory('x', 'bad', 'CACHE'), 'MEMORY_INVALID_INPUT')
  assert.equal(expires(), 2, 'purged before validation')
  seed()
  throwsCode(assert, () => m.deleteMemory('missing'), 'MEMORY_NOT_FOUND')
  assert.equal(expires(), 3)
  seed()
  assert.deepEqual(memory.listAgentMemory({ agentId: 'a', root, now: c.now }), [])
  assert.equal(expires(), 4)
  seed()
  assert.equal(memory.deleteAgentMemory({ agentId: 'a', root, category: 'CACHE', now: c.now }), 0)
  assert.equal(expires(), 5)
})

test('R-RET-6 autoDeleteOnTermination is stored and returned, and changes nothing else', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  const e = m.writeMemory('k', enc('v'), 'CACHE', undefined, { maxRetentionDays: null, autoDeleteOnTermination: true, anonymizationSupported: false })
  assert.equal(e.retentionPolicy.autoDeleteOnTermination, true)
  assert.equal(m.readMemory('k').retentionPolicy.autoDeleteOnTermination, true)
})

test('R-RET-4 an entry another process wrote is purged by this process\'s next read once it expires', (t) => {
  const { spawnSync } = require('node:child_process')
  const root = tempRoot(t)
  const c = clock()
  const m = open(root, 'a', 'reader', 'text', { now: c.now })
  assert.equal(m.readMemory('other'), null) // this process now knows nothing can expire
  const script = `
    const m = require(${JSON.stringify(require('node:path').join(__dirname, '..', 'index.js'))});
    new m.GeneMemoryAccess({ agentId: 'a', geneId: 'v2:' + 'b'.repeat(64), domain: 'text', root: ${JSON.stringify(root)}, now: () => ${c.t} })
      .writeMemory('brief', new Uint8Array(1), 'CACHE', undefined, { maxRetentionDays: 1, autoDeleteOnTermination: false, anonymizationSupported: false });`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  c.t += DAY - 1
  assert.equal(m.readMemory('other'), null)
  assert.equal(auditLines(root).filter((l) => l.action === 'memory.expire').length, 0)
  c.t += 1
  assert.equal(m.readMemory('other'), null)
  assert.deepEqual(auditLines(root).filter((l) => l.action === 'memory.expire').map((l) => l.key), ['brief'])
})
