'use strict'
// The deployer's library calls beyond list and delete: inspectAgentMemory, getAgentMemory,
// exportAgentMemory, importAgentMemory (R-MIG), and keyPrefix on list/delete (R-HOST-2).
// The bundle rules themselves are tested in core/tests/bundle.rs; these check the JS surface.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const memory = require('../index.js')
const { enc, dec, geneId, tempRoot, clock, open, auditLines } = require('./helpers')

const INDEX = path.join(__dirname, '..', 'index.js')

function seeded(t, c = clock()) {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'src', root, quota: '1MB' })
  const g = open(root, 'src', 'writer', 'text', { now: c.now })
  g.writeMemory('pref/a', enc('A'), 'PREFERENCE')
  c.t += 1
  g.writeMemory('cache/b', enc('B'), 'CACHE', undefined, { maxRetentionDays: 1, autoDeleteOnTermination: false, anonymizationSupported: false })
  return { root, c }
}

test('R-MIG export and import round trip through the JS API; the bundle may be a Buffer or text', (t) => {
  const { root, c } = seeded(t)
  const bundle = memory.exportAgentMemory({ agentId: 'src', root, includeCache: true, now: c.now })
  assert.ok(Buffer.isBuffer(bundle))
  const [header, ...lines] = bundle.toString('utf8').trimEnd().split('\n').map((l) => JSON.parse(l))
  assert.deepEqual(header.counts, { PREFERENCE: 1, PATTERN: 0, CONTEXT: 0, CACHE: 1 })
  assert.equal(header.exportedAt, new Date(c.t).toISOString())
  assert.deepEqual(lines.map((l) => [l.key, l.creatorDomain, l.value]), [['pref/a', 'text', 'QQ=='], ['cache/b', 'text', 'Qg==']])

  const target = tempRoot(t)
  memory.createAgentMemory({ agentId: 'dst', root: target })
  assert.deepEqual(memory.importAgentMemory({ agentId: 'dst', root: target, bundle, now: c.now }), { created: 2, updated: 0, skipped: 0, expired: 0 })
  assert.deepEqual(memory.importAgentMemory({ agentId: 'dst', root: target, bundle: bundle.toString('utf8'), onConflict: 'replace', now: c.now }),
    { created: 0, updated: 2, skipped: 0, expired: 0 })
  const e = memory.getAgentMemory({ agentId: 'dst', root: target, key: 'cache/b', now: c.now })
  assert.equal(dec(e.value), 'B')
  assert.equal(e.createdBy, geneId('writer'))
  assert.deepEqual(e.retentionPolicy, { maxRetentionDays: 1, autoDeleteOnTermination: false, anonymizationSupported: false })
  // The retention clock runs from the kept updatedAt: a day later the entry is gone.
  c.t += 86_400_000
  assert.equal(memory.getAgentMemory({ agentId: 'dst', root: target, key: 'cache/b', now: c.now }), null)
  // Without includeCache, CACHE stays behind; with output, the file is the same bundle, 0600.
  const out = path.join(target, 'b.jsonl')
  const again = memory.exportAgentMemory({ agentId: 'src', root, output: out, now: () => c.t - 86_400_000 })
  assert.deepEqual(fs.readFileSync(out), again)
  assert.equal(fs.statSync(out).mode & 0o777, 0o600)
  assert.equal(again.toString().trimEnd().split('\n').length, 2)
})

test('R-MIG bad arguments are MEMORY_INVALID_INPUT naming the argument; refused imports change nothing', (t) => {
  const { root, c } = seeded(t)
  const bad = [
    [() => memory.importAgentMemory({ agentId: 'src', root, bundle: 42 }), /bundle must be the bundle's bytes/],
    [() => memory.importAgentMemory({ agentId: 'src', root }), /bundle must be .* not undefined/],
    [() => memory.importAgentMemory({ agentId: 'src', root, bundle: '', onConflict: 'merge' }), /onConflict "merge" is unknown/],
    [() => memory.importAgentMemory({ agentId: 'src', root, bundle: '' }), /the bundle is empty/],
    [() => memory.importAgentMemory({ agentId: 'src', root, bundle: 'x', extra: 1 }), /unknown field "extra"/],
    [() => memory.importAgentMemory(null), /options must be an object/],
    [() => memory.exportAgentMemory({ agentId: 'src', root, includeCache: 'yes' }), /includeCache must be a boolean/],
    [() => memory.exportAgentMemory({ agentId: 'src', root, output: '' }), /output must be a file path/],
    [() => memory.getAgentMemory({ agentId: 'src', root }), /key must be a string/],
    [() => memory.listAgentMemory({ agentId: 'src', root, keyPrefix: 3 }), /keyPrefix must be a string/],
    [() => memory.deleteAgentMemory({ agentId: 'src', root, keyPrefix: '' }), /keyPrefix must not be empty/],
    [() => memory.deleteAgentMemory({ agentId: 'src', root, key: 'pref/a', keyPrefix: 'p' }), /give exactly one of: key \(alone\), or category and\/or keyPrefix/],
  ]
  for (const [call, message] of bad) {
    assert.throws(call, (e) => e instanceof memory.MemoryError && e.code === 'MEMORY_INVALID_INPUT' && message.test(e.message), String(message))
  }
  const missing = () => memory.exportAgentMemory({ agentId: 'never', root })
  assert.throws(missing, (e) => e.code === 'MEMORY_NOT_FOUND' && /nothing to export/.test(e.message))
  assert.equal(fs.existsSync(path.join(root, '.rotifer', 'memory', 'never.db')), false)
  assert.deepEqual(memory.listAgentMemory({ agentId: 'src', root, now: c.now }).map((l) => l.key), ['cache/b', 'pref/a'])
})

test('R-HOST-1 inspectAgentMemory: the figures the database enforces; reads only, never creates', (t) => {
  const { root, c } = seeded(t)
  const audit = auditLines(root).length
  memory.createAgentMemory({ agentId: 'src', root, quota: '2MB', dataPolicy: { maxRetentionDays: 5 } })
  const u = memory.inspectAgentMemory({ agentId: 'src', root, now: c.now })
  assert.deepEqual(u, {
    agentId: 'src',
    quota: 2 * 1024 * 1024,
    used: 15,
    available: 2 * 1024 * 1024 - 15,
    entries: 2,
    evictableBytes: 8,
    nextExpiry: new Date(c.t + 86_400_000).toISOString(),
    dataPolicy: { anonymizationSupported: false, maxRetentionDays: 5 },
    categories: {
      PREFERENCE: { entries: 1, bytes: 7, evictableBytes: 0, nextExpiry: new Date(c.t - 1 + 5 * 86_400_000).toISOString() },
      PATTERN: { entries: 0, bytes: 0, evictableBytes: 0, nextExpiry: null },
      CONTEXT: { entries: 0, bytes: 0, evictableBytes: 0, nextExpiry: null },
      CACHE: { entries: 1, bytes: 8, evictableBytes: 8, nextExpiry: new Date(c.t + 86_400_000).toISOString() },
    },
  })
  assert.equal(memory.inspectAgentMemory({ agentId: 'ghost', root }), null)
  assert.equal(memory.getAgentMemory({ agentId: 'ghost', root, key: 'k' }), null)
  assert.equal(fs.existsSync(path.join(root, '.rotifer', 'memory', 'ghost.db')), false)
  // getAgentMemory ignores the access policy and leaves lastAccessedBy alone; nothing is audited.
  const reader = open(root, 'src', 'reader', 'other', { now: c.now })
  assert.throws(() => reader.readMemory('pref/a'), (e) => e.code === 'MEMORY_ACCESS_DENIED')
  const audited = auditLines(root).length
  const e = memory.getAgentMemory({ agentId: 'src', root, key: 'pref/a', now: c.now })
  assert.equal(e.lastAccessedBy, geneId('writer'))
  assert.equal(auditLines(root).length, audited)
  assert.ok(audited > audit, 'the denied read was audited, the deployer reads were not')
})

test('R-HOST-2 keyPrefix on listAgentMemory and deleteAgentMemory: a plain prefix, audited deletes', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'a', root })
  const g = open(root, 'a', 'writer')
  for (const k of ['s/1', 's/2', 's_', 'x']) g.writeMemory(k, enc('v'), 'CACHE')
  assert.deepEqual(memory.listAgentMemory({ agentId: 'a', root, keyPrefix: 's/' }).map((l) => l.key), ['s/1', 's/2'])
  assert.deepEqual(memory.listAgentMemory({ agentId: 'a', root, keyPrefix: 's_' }).map((l) => l.key), ['s_'], '_ is no wildcard')
  assert.equal(memory.deleteAgentMemory({ agentId: 'a', root, keyPrefix: 's/' }), 2)
  assert.equal(memory.deleteAgentMemory({ agentId: 'a', root, keyPrefix: 's', category: 'PREFERENCE' }), 0)
  assert.deepEqual(memory.listAgentMemory({ agentId: 'a', root }).map((l) => l.key), ['s_', 'x'])
  const deletes = auditLines(root).filter((l) => l.action === 'memory.delete')
  assert.deepEqual(deletes.map((l) => [l.key, l.actor]), [['s/1', 'deployer'], ['s/2', 'deployer']])
})

test('R-ERR-2 without the native binding the new calls throw "native binding unavailable"', () => {
  const script = `
    const m = require(${JSON.stringify(INDEX)});
    const out = [];
    for (const c of [() => m.inspectAgentMemory({ agentId: 'a' }), () => m.getAgentMemory({ agentId: 'a', key: 'k' }),
      () => m.exportAgentMemory({ agentId: 'a' }), () => m.importAgentMemory({ agentId: 'a', bundle: '' })]) {
      try { c(); out.push('no error') } catch (e) { out.push([e instanceof m.MemoryError, e.code, e.message]) }
    }
    console.log(JSON.stringify(out));`
  const r = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: path.join(os.tmpdir(), 'no-such-binding.node') },
  })
  assert.equal(r.status, 0, r.stderr)
  for (const res of JSON.parse(r.stdout)) assert.deepEqual(res, [true, 'MEMORY_STORAGE_ERROR', 'native binding unavailable'])
})
