'use strict'
// Security: policy changes across the whole access matrix, keys that try to forge audit lines,
// keyPrefix with SQL wildcards over a large keyset, agent ids that try path traversal,
// symlinks planted under .rotifer/, and telemetry that never carries keys or values.
// (The read/write/delete/query matrix, a symlink at audit.jsonl or at a database path, and file
// modes are in access.test.js and host.test.js.)

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { createHash } = require('node:crypto')
const { memory, enc, dec, geneId, tempRoot, clock, open, auditLines, telemetryLines, throwsCode, snapshot } = require('./helpers')

const DENIED = 'MEMORY_ACCESS_DENIED'
const STORAGE = 'MEMORY_STORAGE_ERROR'
const SCOPES = ['CREATOR_GENE_ONLY', 'SAME_DOMAIN', 'ALL_GENES']

// Who tries: the creator, a gene of its domain, an upgraded creator (new id, same domain), a
// gene of another domain, a gene with no domain, a gene with no v2 id, a gene run with no agent.
const CALLERS = {
  creator: { name: 'creator', domain: 'text.format' },
  sameDomain: { name: 'sibling', domain: 'text.format' },
  upgraded: { name: 'creator@2', domain: 'text.format' },
  otherDomain: { name: 'stranger', domain: 'image' },
  noDomain: { name: 'nodomain', domain: undefined },
  noV2Id: { name: null, domain: 'text.format' },
  noAgent: { name: 'creator', domain: 'text.format', noAgent: true },
}
const writable = (writeScope, who) =>
  who === 'creator' || writeScope === 'ALL_GENES' || (writeScope === 'SAME_DOMAIN' && (who === 'sameDomain' || who === 'upgraded'))

const keep = (d) => ({ maxRetentionDays: d, autoDeleteOnTermination: false, anonymizationSupported: false })

test('R-API-2 policy changes: every scope pair × every caller × every kind of change', (t) => {
  const other = (s) => SCOPES[(SCOPES.indexOf(s) + 1) % SCOPES.length]
  let cases = 0
  for (const readScope of SCOPES) {
    for (const writeScope of SCOPES) {
      const root = tempRoot(t)
      memory.createAgentMemory({ agentId: 'a', root, dataPolicy: { anonymizationSupported: true } })
      const creator = open(root, 'a', 'creator', 'text.format')
      const ap = { readScope, writeScope, sharePolicy: 'PRIVATE' }
      // [label, accessPolicy, retentionPolicy, is it a change?]
      const CHANGES = [
        ['omitted', undefined, undefined, false],
        ['identical', { ...ap }, keep(7), false],
        ['readScope', { ...ap, readScope: other(readScope) }, undefined, true],
        ['writeScope', { ...ap, writeScope: other(writeScope) }, undefined, true],
        ['sharePolicy', { ...ap, sharePolicy: 'KNOWLEDGE_GENE' }, undefined, true],
        ['retention days', undefined, keep(8), true],
        ['retention flag', undefined, { ...keep(7), autoDeleteOnTermination: true }, true],
        ['retention to null', undefined, null, true],
      ]
      for (const [who, c] of Object.entries(CALLERS)) {
        for (const [change, access, retention, isChange] of CHANGES) {
          const key = `k/${who}/${change}`
          const original = creator.writeMemory(key, enc('original'), 'CACHE', ap, keep(7))
          const caller = new memory.GeneMemoryAccess({ agentId: c.noAgent ? null : 'a', geneId: c.name === null ? null : geneId(c.name), domain: c.domain, root })
          const label = `${readScope}/${writeScope}, ${who}, ${change}`
          const linesBefore = auditLines(root).length
          const allowed = !c.noAgent && c.name !== null && writable(writeScope, who) && (who === 'creator' || !isChange)
          if (allowed) {
            const e = caller.writeMemory(key, enc('changed'), 'CACHE', access, retention)
            assert.deepEqual(e.accessPolicy, access ?? ap, label)
            assert.deepEqual(e.retentionPolicy, retention === undefined ? keep(7) : retention, label)
            assert.equal(e.createdBy, geneId('creator'), `${label}: the creator stays`)
          } else {
            const err = throwsCode(assert, () => caller.writeMemory(key, enc('changed'), 'CACHE', access, retention), DENIED)
            const lines = auditLines(root).slice(linesBefore)
            if (c.noAgent) {
              assert.match(err.message, /only inside an agent/)
              assert.equal(lines.length, 0, `${label}: no agent, no file touched`)
            } else {
              assert.equal(lines.length, 1, `${label}: the denial is audited`)
              assert.equal(lines[0].action, 'memory.access_denied')
              assert.equal(lines[0].op, 'write')
              assert.equal(lines[0].actor, c.name === null ? null : geneId(c.name))
              assert.equal(lines[0].key, key)
            }
            const now = creator.readMemory(key)
            assert.equal(dec(now.value), 'original', `${label}: nothing written`)
            assert.deepEqual([now.accessPolicy, now.retentionPolicy, now.updatedAt], [original.accessPolicy, original.retentionPolicy, original.updatedAt], label)
          }
          cases++
        }
      }
    }
  }
  assert.equal(cases, 9 * 7 * 8)
})

test('R-AUD-3 keys that try to forge audit lines: every line stays one JSON object with its own action', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'a', root, quota: '4KB' })
  const c = clock()
  const owner = open(root, 'a', 'owner', 'text', { now: c.now })
  const intruder = open(root, 'a', 'intruder', 'image', { now: c.now })
  const nobody = new memory.GeneMemoryAccess({ agentId: 'a', geneId: 'not-a-v2-id', root, now: c.now })
  const fake = '{"ts":"2026-01-01T00:00:00.000Z","agentId":"a","action":"memory.delete","actor":"deployer","key":"victim"}'
  const EVIL = [
    `x"}\n${fake}\n{"a":"`,
    `x\r\n${fake}`,
    `x\u2028${fake}\u2029y`,
    `x\u0085${fake}`,
    `\\"},${fake}`,
    '\u001b[2K\rfake terminal line',
    '\u0001\u0002\u001f\u007f',
    "'; DROP TABLE entries; --",
    '{}',
    '😀\u200b\ufeff',
  ]
  const entryId = (agentId, key) => createHash('sha256').update(`${agentId}\0${key}`).digest('hex')
  const expected = []
  for (const key of EVIL) {
    c.t += 1
    owner.writeMemory(key, enc('v'), 'CACHE', { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' })
    owner.writeMemory(key, enc('w'), 'CACHE')
    throwsCode(assert, () => intruder.readMemory(key), DENIED)
    throwsCode(assert, () => nobody.deleteMemory(key), DENIED)
    throwsCode(assert, () => owner.writeMemory(key, new Uint8Array(5000), 'CACHE'), 'MEMORY_QUOTA_EXCEEDED')
    assert.equal(dec(owner.readMemory(key).value), 'w', 'the key round-trips exactly')
    assert.equal(owner.queryMemory({ keyPrefix: key }).length, 1)
    owner.deleteMemory(key)
    // Refusal lines cut long keys; the entryId names every line's whole key.
    expected.push(...['create', 'update', 'access_denied', 'access_denied', 'quota_reject', 'delete'].map((a) => [`memory.${a}`, entryId('a', key)]))
  }
  const raw = fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'))
  // Not even a reader that also splits on U+2028, U+2029 or U+0085 (Python's splitlines, some
  // log shippers) can be fooled: those never appear raw.
  for (const sep of ['\u2028', '\u2029', '\u0085', '\r']) assert.ok(!raw.includes(Buffer.from(sep)), `no raw ${JSON.stringify(sep)} in the audit log`)
  const lines = raw.toString('utf8').split(/\r\n|\n|\r|\u2028|\u2029|\u0085/).filter(Boolean)
  assert.equal(lines.length, expected.length, 'one line per audited event')
  const parsed = lines.map((l) => JSON.parse(l))
  assert.deepEqual(parsed.map((l) => [l.action, l.entryId]), expected)
  for (const l of parsed) assert.equal(typeof l, 'object')
  assert.ok(!parsed.some((l) => l.actor === 'deployer' || l.key === 'victim'), 'no forged line')
})

test('keyPrefix with SQL wildcards and quotes over a large keyset is a plain byte prefix', (t) => {
  const m = open(tempRoot(t), 'a', 'g', 'text')
  const ALPHABET = ['a', '%', '_', '\\', '[', '*', '?', "'", 'é']
  const keys = []
  for (const x of ALPHABET) {
    keys.push(x)
    for (const y of ALPHABET) {
      keys.push(x + y)
      for (const z of ALPHABET) keys.push(x + y + z)
    }
  }
  assert.ok(keys.length > 800 && keys.length <= 1000)
  for (const k of keys) m.writeMemory(k, new Uint8Array(0), 'CACHE')
  const prefixes = ['', ...ALPHABET, ...ALPHABET.flatMap((x) => ALPHABET.map((y) => x + y)), '%%%', '_a_', "''", 'a%_', '\u{10FFFF}', 'é%', 'e']
  for (const keyPrefix of prefixes) {
    const want = keys.filter((k) => Buffer.from(k).subarray(0, Buffer.byteLength(keyPrefix)).equals(Buffer.from(keyPrefix))).sort()
    const got = m.queryMemory({ keyPrefix, limit: 1000 }).map((e) => e.key).sort()
    assert.deepEqual(got, want, `keyPrefix ${JSON.stringify(keyPrefix)}`)
  }
})

test('R-HOST-1 agent ids cannot name a path: nothing is created outside the memory folder', (t) => {
  const parent = tempRoot(t)
  const root = path.join(parent, 'project')
  fs.mkdirSync(root)
  const before = snapshot(parent)
  const BAD = ['..', '../x', '../../escape', 'a/../../b', '/tmp/abs', 'a\\..\\b', '.', '.rotifer', '.hidden', 'x\u0000y', 'a/b', '~', '~root', ' a', 'a ', 'é', '-rf', 'x'.repeat(129), '']
  for (const agentId of BAD) {
    const label = JSON.stringify(agentId)
    throwsCode(assert, () => new memory.GeneMemoryAccess({ agentId, geneId: geneId('g'), root }), 'MEMORY_INVALID_INPUT', /agentId/)
    throwsCode(assert, () => memory.createAgentMemory({ agentId, root }), 'MEMORY_INVALID_INPUT', /agentId/)
    throwsCode(assert, () => memory.listAgentMemory({ agentId, root }), 'MEMORY_INVALID_INPUT', /agentId/)
    throwsCode(assert, () => memory.deleteAgentMemory({ agentId, root, key: 'k' }), 'MEMORY_INVALID_INPUT', /agentId/)
    assert.deepEqual(snapshot(parent), before, `${label}: nothing created`)
  }
  // Odd but valid ids stay files inside .rotifer/memory, and never collide with a database's
  // companions (-wal, -shm) or another agent's database.
  const ODD = ['a', 'a.db', 'a.db-wal', 'a.db-shm', 'a..b', 'a.db.init-1-2-3', 'A', 'a_', 'a-']
  for (const agentId of ODD) open(root, agentId, 'g', 'text').writeMemory('who', enc(agentId), 'CACHE')
  for (const agentId of ODD) assert.equal(dec(open(root, agentId, 'g', 'text').readMemory('who').value), agentId)
  const outside = Object.keys(snapshot(parent)).filter((p) => !p.startsWith(path.join('project', '.rotifer')))
  assert.deepEqual(outside, ['project'])
  const dbs = fs.readdirSync(path.join(root, '.rotifer', 'memory')).filter((f) => f.endsWith('.db'))
  assert.deepEqual(dbs.sort(), ODD.map((a) => `${a}.db`).sort())
})

test('a symlink planted at .rotifer or .rotifer/memory is never followed', (t) => {
  for (const planted of ['.rotifer', '.rotifer/memory']) {
    const root = tempRoot(t)
    const outside = tempRoot(t)
    // The outside folder even holds a real memory, to lure the store into it.
    open(outside, 'a', 'g', 'text').writeMemory('k', enc('outside'), 'CACHE')
    const lure = planted === '.rotifer' ? path.join(outside, '.rotifer') : path.join(outside, '.rotifer', 'memory')
    if (planted === '.rotifer/memory') fs.mkdirSync(path.join(root, '.rotifer'), { mode: 0o700 })
    fs.symlinkSync(lure, path.join(root, planted))
    const before = snapshot(outside)
    const beforeBytes = fs.readFileSync(path.join(outside, '.rotifer', 'audit.jsonl'))
    const m = open(root, 'a', 'g', 'text')
    throwsCode(assert, () => m.readMemory('k'), STORAGE, /symlink/)
    throwsCode(assert, () => m.writeMemory('k', enc('v'), 'CACHE'), STORAGE)
    throwsCode(assert, () => m.queryMemory(), STORAGE)
    throwsCode(assert, () => m.deleteMemory('k'), STORAGE)
    throwsCode(assert, () => memory.createAgentMemory({ agentId: 'b', root }), STORAGE)
    throwsCode(assert, () => memory.listAgentMemory({ agentId: 'a', root }), STORAGE)
    throwsCode(assert, () => memory.deleteAgentMemory({ agentId: 'a', root, category: 'CACHE' }), STORAGE)
    // A caller with no v2 id is denied before the memory folder is looked at, and must be
    // audited: through a linked .rotifer that is refused too.
    throwsCode(assert, () => open(root, 'a', null, 'text').readMemory('k'), planted === '.rotifer' ? STORAGE : DENIED)
    assert.deepEqual(snapshot(outside), before, `${planted}: nothing written through the link`)
    assert.ok(fs.readFileSync(path.join(outside, '.rotifer', 'audit.jsonl')).equals(beforeBytes))
    assert.equal(fs.lstatSync(path.join(root, planted)).isSymbolicLink(), true, 'the link is left as it is')
  }
})

test('a symlink planted at a database\'s -wal or -shm, or at telemetry.jsonl, is never followed', (t) => {
  const { spawnSync } = require('node:child_process')
  const INDEX = JSON.stringify(path.join(__dirname, '..', 'index.js'))
  for (const planted of ['memory/a.db-wal', 'memory/a.db-shm', 'telemetry.jsonl']) {
    const root = tempRoot(t)
    const target = path.join(tempRoot(t), 'victim')
    fs.writeFileSync(target, 'precious')
    // Each step in its own process: a database's -wal and -shm can only be planted while no
    // process has it open.
    const run = (body) => {
      const r = spawnSync(process.execPath, ['-e', `
        const m = require(${INDEX});
        const g = (n) => new m.GeneMemoryAccess({ agentId: 'a', geneId: 'v2:' + n.repeat(64), domain: 'text', root: ${JSON.stringify(root)} });
        const out = {};
        const run = (name, fn) => { try { fn(); out[name] = 'ok' } catch (e) { out[name] = e.code } };
        ${body}
        console.log(JSON.stringify(out));`], { encoding: 'utf8' })
      assert.equal(r.status, 0, r.stderr)
      return JSON.parse(r.stdout)
    }
    const locked = "{ readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' }"
    assert.deepEqual(run(`run('setup', () => g('a').writeMemory('k', new Uint8Array(1), 'CACHE', ${locked}))`), { setup: 'ok' })
    fs.symlinkSync(target, path.join(root, '.rotifer', planted))
    const out = run(`run('write', () => g('a').writeMemory('k2', new Uint8Array(3), 'CACHE')); run('denied', () => g('b').readMemory('k'))`)
    if (planted === 'telemetry.jsonl') {
      // Telemetry is best effort: the calls answer as usual and the denial is audited.
      assert.deepEqual(out, { write: 'ok', denied: DENIED })
      assert.equal(auditLines(root).filter((l) => l.action === 'memory.access_denied').length, 1)
    } else {
      assert.deepEqual(out, { write: STORAGE, denied: STORAGE }, `${planted}: refused`)
    }
    assert.equal(fs.readFileSync(target, 'utf8'), 'precious', `${planted}: the link's target is untouched`)
    assert.equal(fs.lstatSync(path.join(root, '.rotifer', planted)).isSymbolicLink(), true, 'the link is left as it is')
  }
})

test('R-AUD-4 telemetry never carries keys or values, whatever the denial', (t) => {
  const saved = { ROTIFER_TELEMETRY: process.env.ROTIFER_TELEMETRY, DO_NOT_TRACK: process.env.DO_NOT_TRACK }
  delete process.env.ROTIFER_TELEMETRY
  delete process.env.DO_NOT_TRACK
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v
  })
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'a', root, dataPolicy: { maxRetentionDays: 30 } })
  const owner = open(root, 'a', 'owner', 'text')
  const intruder = open(root, 'a', 'intruder', 'image')
  const SECRET_KEY = 'SECRETKEY-7f3a'
  const SECRET_VALUE = 'SECRETVALUE-9b1c'
  const locked = { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' }
  owner.writeMemory(SECRET_KEY, enc(SECRET_VALUE), 'CACHE', locked, keep(30))
  const attempts = [
    () => intruder.readMemory(SECRET_KEY),
    () => intruder.writeMemory(SECRET_KEY, enc(SECRET_VALUE), 'CACHE'),
    () => intruder.deleteMemory(SECRET_KEY),
    () => owner.writeMemory(SECRET_KEY + '2', enc(SECRET_VALUE), 'CACHE', { ...locked, sharePolicy: 'KNOWLEDGE_GENE' }),
    () => owner.writeMemory(SECRET_KEY + '3', enc(SECRET_VALUE), 'CACHE', undefined, keep(31)),
    () => owner.writeMemory(SECRET_KEY + '4', enc(SECRET_VALUE), 'CACHE', { ...locked, readScope: 'DEPLOYER_CONFIGURED' }),
    () => open(root, 'a', null, 'text').readMemory(SECRET_KEY),
    () => open(root, 'a', null, 'text').writeMemory(SECRET_KEY, enc(SECRET_VALUE), 'CACHE'),
    () => open(root, 'a', null, 'text').queryMemory({ keyPrefix: SECRET_KEY }),
  ]
  for (const a of attempts) throwsCode(assert, a, DENIED)
  const raw = fs.readFileSync(path.join(root, '.rotifer', 'telemetry.jsonl'), 'utf8')
  const events = telemetryLines(root)
  assert.equal(events.length, attempts.length, 'one event per denial')
  for (const e of events) assert.deepEqual(Object.keys(e).sort(), ['agentId', 'code', 'event', 'geneId', 'op', 'ts'])
  for (const secret of [SECRET_KEY, SECRET_VALUE, Buffer.from(SECRET_VALUE).toString('base64'), Buffer.from(SECRET_VALUE).toString('hex'), 'SECRET']) {
    assert.ok(!raw.includes(secret), `telemetry never carries ${secret}`)
  }
  assert.ok(!fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'), 'utf8').includes('SECRETVALUE'), 'nor does the audit log carry values')
})
