'use strict'
// A database made by version 1 of this package (schema version 1, the committed fixture made
// by fixtures/v1/make-v1-fixture.js) opens through the public API: it is migrated to schema
// version 2 on open and every entry reads back as version 1 wrote it (R-HOST-1); processes
// opening it at the same moment all work; a newer version is refused and left as it is.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { memory, tempRoot, runNode } = require('./helpers')

const FIXTURE = path.join(__dirname, 'fixtures', 'v1')
const expected = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'agent-v1.json'), 'utf8'))
const AGENT = expected.agentId
const INDEX = path.join(__dirname, '..', 'index.js')

/** A project root holding a copy of the version-1 database, with the modes the trust checks want. */
function v1Root(t) {
  const root = tempRoot(t)
  const dir = path.join(root, '.rotifer', 'memory')
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  fs.chmodSync(path.join(root, '.rotifer'), 0o700)
  fs.chmodSync(dir, 0o700)
  const db = path.join(dir, `${AGENT}.db`)
  fs.copyFileSync(path.join(FIXTURE, `${AGENT}.db`), db)
  fs.chmodSync(db, 0o600)
  return { root, db }
}

/** `PRAGMA user_version` of `db`, read by another SQLite in another process. */
function userVersion(db) {
  const code = `const D = require('better-sqlite3'); const d = new D(${JSON.stringify(db)}); process.stdout.write(String(d.pragma('user_version', { simple: true }))); d.close()`
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', cwd: path.join(__dirname, '..') })
  assert.equal(r.status, 0, r.stderr)
  return Number(r.stdout)
}

const plain = (e) => ({ ...e, value: Buffer.from(e.value).toString('base64') })
const now = () => expected.now + 60_000

test('a database made by version 1 opens, is migrated, and every entry reads back as it was written (R-HOST-1)', (t) => {
  const { root, db } = v1Root(t)
  assert.equal(userVersion(db), 1)
  for (const e of expected.entries) {
    assert.deepEqual(plain(memory.getAgentMemory({ agentId: AGENT, root, key: e.key, now })), e, e.key)
  }
  assert.equal(userVersion(db), 2, 'migrated on open')
  assert.deepEqual(memory.inspectAgentMemory({ agentId: AGENT, root, now }), expected.usage, 'byte totals and expiries kept')
  // A gene's calls: recency order over all categories, a category, a prefix; then a write.
  const writer = new memory.GeneMemoryAccess({ agentId: AGENT, geneId: expected.genes.writer, domain: 'test.fixture', root, now })
  const byRecency = [...expected.entries].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
  const readable = writer.queryMemory({ limit: 1000 }).map(plain)
  assert.equal(readable.length, expected.entries.length, 'the writer reads them all (same domain, or its own)')
  assert.deepEqual(readable.map((e) => e.key), byRecency.map((e) => e.key))
  assert.deepEqual(
    writer.queryMemory({ category: 'CACHE', limit: 3 }).map((e) => e.key),
    byRecency.filter((e) => e.category === 'CACHE').slice(0, 3).map((e) => e.key),
  )
  assert.deepEqual(writer.queryMemory({ keyPrefix: '記憶/' }).map((e) => e.key), ['記憶/キー'])
  const written = writer.writeMemory('after-migration', new Uint8Array([9]), 'CONTEXT')
  assert.deepEqual(plain(writer.readMemory('after-migration')), plain(written))
  assert.equal(memory.inspectAgentMemory({ agentId: AGENT, root, now }).used, expected.usage.used + Buffer.byteLength('after-migration') + 1)
})

test('processes opening a version-1 database at the same moment all work: one migrates, the others find version 2', async (t) => {
  const { root, db } = v1Root(t)
  const start = Date.now() + 500
  // Each waits for the same moment, then opens, reads every entry and writes its own key. A
  // second migration of the migrated file would fail (the version-1 schema check refuses it),
  // so four successes mean the lock and the version read inside it did their job.
  const child = (i) => `
    while (Date.now() < ${start});
    const memory = require(${JSON.stringify(INDEX)})
    const m = new memory.GeneMemoryAccess({ agentId: ${JSON.stringify(AGENT)}, geneId: ${JSON.stringify(expected.genes.writer)}, domain: 'test.fixture', root: ${JSON.stringify(root)} })
    const n = m.queryMemory({ limit: 1000 }).length
    m.writeMemory('child-${i}', new Uint8Array([${i}]), 'CACHE')
    process.stdout.write(String(n))
  `
  const results = await Promise.all([0, 1, 2, 3].map((i) => runNode('-e', [child(i)])))
  for (const r of results) {
    assert.equal(r.code, 0, r.err)
    assert.ok(Number(r.out) >= expected.entries.length, r.out)
  }
  assert.equal(userVersion(db), 2)
  const listed = memory.listAgentMemory({ agentId: AGENT, root, now: Date.now }).map((l) => l.key)
  for (const e of expected.entries) assert.ok(listed.includes(e.key), e.key)
  for (const i of [0, 1, 2, 3]) assert.ok(listed.includes(`child-${i}`))
  assert.equal(listed.length, expected.entries.length + 4)
})

test('a database of a newer schema version is refused with a message that says to upgrade, and left byte for byte', (t) => {
  const { root, db } = v1Root(t)
  // Another SQLite, in this process, before any connection of ours to this file exists.
  const Database = require('better-sqlite3')
  const d = new Database(db)
  d.pragma('user_version = 3')
  d.close()
  const before = fs.readFileSync(db)
  let err
  try {
    memory.getAgentMemory({ agentId: AGENT, root, key: 'cache/03', now })
  } catch (e) {
    err = e
  }
  assert.ok(err instanceof memory.MemoryError, String(err))
  assert.equal(err.code, 'MEMORY_STORAGE_ERROR')
  assert.ok(err.message.includes(db), err.message)
  assert.match(err.message, /schema version 3.*reads schema version 2.*upgrade @rotifer\/playground/)
  assert.ok(fs.readFileSync(db).equals(before), 'the file was left as it is')
})
