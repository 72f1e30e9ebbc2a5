'use strict'
// Access control (R-ACC), data policy (R-POL), denial audit and telemetry (R-AUD-1, R-AUD-4).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { memory, enc, geneId, tempRoot, open, auditLines, telemetryLines, throwsCode, snapshot } = require('./helpers')

const DENIED = 'MEMORY_ACCESS_DENIED'
const SCOPES = ['CREATOR_GENE_ONLY', 'SAME_DOMAIN', 'ALL_GENES']

// Who calls: the creator; another gene of its domain; an upgraded creator (new id, same
// domain); a gene of another domain; a gene with no domain.
const CALLERS = {
  creator: ['creator', 'text.format'],
  sameDomain: ['sibling', 'text.format'],
  upgraded: ['creator@2', 'text.format'],
  otherDomain: ['stranger', 'image'],
  noDomain: ['nodomain', undefined],
}
const admits = (scope, who) =>
  scope === 'ALL_GENES' || who === 'creator' || (scope === 'SAME_DOMAIN' && (who === 'sameDomain' || who === 'upgraded'))

test('R-ACC-3 the full matrix: scope × caller × read, write, delete, query', (t) => {
  for (const readScope of SCOPES) {
    for (const writeScope of SCOPES) {
      for (const [who, [name, domain]] of Object.entries(CALLERS)) {
        const root = tempRoot(t)
        const creator = open(root, 'a', 'creator', 'text.format')
        const caller = open(root, 'a', name, domain)
        const ap = { readScope, writeScope, sharePolicy: 'PRIVATE' }
        creator.writeMemory('k', enc('v'), 'CACHE', ap)
        const label = `${readScope}/${writeScope} by ${who}`

        if (admits(readScope, who)) assert.equal(caller.readMemory('k').key, 'k', label)
        else throwsCode(assert, () => caller.readMemory('k'), DENIED, /readScope/)
        assert.equal(caller.queryMemory().length, admits(readScope, who) ? 1 : 0, `query ${label}`)

        if (admits(writeScope, who)) assert.equal(caller.writeMemory('k', enc('w'), 'CACHE').key, 'k', label)
        else throwsCode(assert, () => caller.writeMemory('k', enc('w'), 'CACHE'), DENIED, /writeScope/)

        if (admits(writeScope, who)) assert.equal(caller.deleteMemory('k'), undefined, label)
        else throwsCode(assert, () => caller.deleteMemory('k'), DENIED, /writeScope/)

        const lines = auditLines(root)
        const denials = lines.filter((l) => l.action === 'memory.access_denied')
        const expectDenials = [!admits(readScope, who), !admits(writeScope, who), !admits(writeScope, who)].filter(Boolean).length
        assert.equal(denials.length, expectDenials, `denials audited: ${label}`)
        for (const d of denials) {
          assert.equal(d.actor, geneId(name))
          assert.equal(d.code, DENIED)
          assert.ok(['read', 'write', 'delete'].includes(d.op))
          assert.equal(typeof d.reason, 'string')
          assert.equal(d.key, 'k')
        }
        // A denied write changed nothing.
        if (!admits(writeScope, who)) assert.equal(new TextDecoder().decode(creator.readMemory('k').value), 'v')
      }
    }
  }
})

test('R-ACC DEPLOYER_CONFIGURED is always denied, and a write that sets it is denied', (t) => {
  const root = tempRoot(t)
  const m = open(root, 'a', 'g', 'text')
  for (const ap of [
    { readScope: 'DEPLOYER_CONFIGURED', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' },
    { readScope: 'SAME_DOMAIN', writeScope: 'DEPLOYER_CONFIGURED', sharePolicy: 'PRIVATE' },
  ]) {
    throwsCode(assert, () => m.writeMemory('k', enc('v'), 'CACHE', ap), DENIED, /DEPLOYER_CONFIGURED/)
  }
  assert.equal(m.readMemory('k'), null)
  m.writeMemory('k', enc('v'), 'CACHE')
  throwsCode(assert, () => m.writeMemory('k', enc('v'), 'CACHE', { readScope: 'DEPLOYER_CONFIGURED', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' }), DENIED)
  assert.equal(m.readMemory('k').accessPolicy.readScope, 'SAME_DOMAIN')
})

test('R-ACC-4 no valid v2 id: every call denied, audited with actor null, nothing changes', (t) => {
  for (const badId of [null, undefined, 'v2:' + 'A'.repeat(64), 'v1:' + 'a'.repeat(64), 'v2:abc', 42]) {
    const root = tempRoot(t)
    open(root, 'a', 'owner', 'text').writeMemory('k', enc('v'), 'CACHE', { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'PRIVATE' })
    const m = new memory.GeneMemoryAccess({ agentId: 'a', geneId: badId, domain: 'text', root })
    throwsCode(assert, () => m.readMemory('k'), DENIED, /v2 id/)
    throwsCode(assert, () => m.writeMemory('k', enc('x'), 'CACHE'), DENIED, /v2 id/)
    throwsCode(assert, () => m.queryMemory(), DENIED, /v2 id/)
    throwsCode(assert, () => m.deleteMemory('k'), DENIED, /v2 id/)
    // Identity is checked first: even bad arguments are denied.
    throwsCode(assert, () => m.writeMemory('', 'not bytes', 'nope'), DENIED)
    const denials = auditLines(root).filter((l) => l.action === 'memory.access_denied')
    assert.deepEqual(denials.map((d) => d.op), ['read', 'write', 'query', 'delete', 'write'])
    assert.ok(denials.every((d) => d.actor === null && d.code === DENIED))
    assert.equal(new TextDecoder().decode(open(root, 'a', 'owner', 'text').readMemory('k').value), 'v')
  }
})

test('R-ACC-5 no agent: every call denied, and no file is touched', (t) => {
  const root = tempRoot(t)
  const before = snapshot(root)
  for (const agentId of [null, undefined]) {
    const m = new memory.GeneMemoryAccess({ agentId, geneId: geneId('g'), domain: 'text', root })
    throwsCode(assert, () => m.readMemory('k'), DENIED, /only inside an agent/)
    throwsCode(assert, () => m.writeMemory('k', enc('v'), 'CACHE'), DENIED, /only inside an agent/)
    throwsCode(assert, () => m.queryMemory(), DENIED)
    throwsCode(assert, () => m.deleteMemory('k'), DENIED)
  }
  assert.deepEqual(snapshot(root), before)
  assert.deepEqual(before, {})
})

test('R-API-2 policy changes: only the creator; identical policies and omitted ones are fine for others', (t) => {
  const root = tempRoot(t)
  const creator = open(root, 'a', 'creator', 'text')
  const other = open(root, 'a', 'other', 'text')
  const open_ = { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'PRIVATE' }
  const keep7 = { maxRetentionDays: 7, autoDeleteOnTermination: false, anonymizationSupported: false }
  creator.writeMemory('k', enc('1'), 'CACHE', open_, keep7)

  // Omitted → unchanged; identical → allowed.
  assert.deepEqual(other.writeMemory('k', enc('2'), 'CACHE').accessPolicy, open_)
  assert.deepEqual(other.writeMemory('k', enc('3'), 'CACHE', { ...open_ }, { ...keep7 }).retentionPolicy, keep7)
  // Different → denied for the non-creator, nothing written.
  throwsCode(assert, () => other.writeMemory('k', enc('4'), 'CACHE', { ...open_, readScope: 'SAME_DOMAIN' }), DENIED, /creator may change its accessPolicy/)
  throwsCode(assert, () => other.writeMemory('k', enc('4'), 'CACHE', undefined, { ...keep7, maxRetentionDays: 8 }), DENIED, /retentionPolicy/)
  throwsCode(assert, () => other.writeMemory('k', enc('4'), 'CACHE', undefined, null), DENIED, /retentionPolicy/)
  assert.equal(new TextDecoder().decode(creator.readMemory('k').value), '3')
  // The creator may change both; null means "back to the agent's policy".
  const changed = creator.writeMemory('k', enc('5'), 'CACHE', { ...open_, sharePolicy: 'PRIVATE', writeScope: 'CREATOR_GENE_ONLY' }, null)
  assert.equal(changed.accessPolicy.writeScope, 'CREATOR_GENE_ONLY')
  assert.equal(changed.retentionPolicy, null)
  // null when the stored one is already null is not a change.
  assert.equal(creator.writeMemory('k', enc('6'), 'CACHE', undefined, null).retentionPolicy, null)
  throwsCode(assert, () => other.writeMemory('k', enc('7'), 'CACHE'), DENIED, /writeScope CREATOR_GENE_ONLY/)
  // The creator's domain is recorded at creation and stays.
  const upgraded = open(root, 'a', 'creator@2', 'text')
  creator.writeMemory('s', enc(''), 'CACHE')
  open(root, 'a', 'third', 'text').writeMemory('s', enc('x'), 'CACHE')
  assert.equal(upgraded.readMemory('s').createdBy, geneId('creator'))
})

test('R-POL-1 sharing needs anonymization support; R-POL-2 retention over the agent maximum is denied', (t) => {
  const root = tempRoot(t)
  const share = (sharePolicy) => ({ readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy })
  const keep = (d) => ({ maxRetentionDays: d, autoDeleteOnTermination: false, anonymizationSupported: false })

  const closed = open(root, 'closed', 'g', 'text') // never created: default data policy
  throwsCode(assert, () => closed.writeMemory('k', enc(''), 'CACHE', share('ANONYMIZED_SHARE')), DENIED, /anonymization/)
  throwsCode(assert, () => closed.writeMemory('k', enc(''), 'CACHE', share('KNOWLEDGE_GENE')), DENIED, /anonymization/)
  assert.equal(closed.writeMemory('k', enc(''), 'CACHE', undefined, keep(null)).retentionPolicy.maxRetentionDays, null)

  memory.createAgentMemory({ agentId: 'open', root, dataPolicy: { anonymizationSupported: true, maxRetentionDays: 30 } })
  const m = open(root, 'open', 'g', 'text')
  assert.equal(m.writeMemory('s', enc(''), 'CACHE', share('KNOWLEDGE_GENE')).accessPolicy.sharePolicy, 'KNOWLEDGE_GENE')
  assert.equal(m.writeMemory('r', enc(''), 'CACHE', undefined, keep(30)).retentionPolicy.maxRetentionDays, 30)
  throwsCode(assert, () => m.writeMemory('r2', enc(''), 'CACHE', undefined, keep(31)), DENIED, /31 exceeds this agent's maximum of 30/)
  throwsCode(assert, () => m.writeMemory('r3', enc(''), 'CACHE', undefined, keep(null)), DENIED, /forever/)
  assert.equal(m.readMemory('r2'), null)
  const denials = auditLines(root).filter((l) => l.action === 'memory.access_denied')
  // The second denial of 'k' repeats the first (same op, code and key): it is counted, and
  // summarised later (docs/decisions.md "Audit and telemetry").
  assert.deepEqual(denials.map((d) => d.key), ['k', 'r2', 'r3'])
  assert.ok(denials.every((d) => d.op === 'write' && d.size === Buffer.byteLength(d.key)))
})

test('R-AUD-4 a denial appends a telemetry event without key or value; opt-outs keep the audit line', (t) => {
  const saved = { ROTIFER_TELEMETRY: process.env.ROTIFER_TELEMETRY, DO_NOT_TRACK: process.env.DO_NOT_TRACK }
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v
  })
  const cases = [
    [{}, true],
    [{ ROTIFER_TELEMETRY: '0' }, false],
    [{ ROTIFER_TELEMETRY: 'false' }, false],
    [{ ROTIFER_TELEMETRY: 'off' }, false],
    [{ ROTIFER_TELEMETRY: '1' }, true],
    [{ DO_NOT_TRACK: '1' }, false],
    [{ DO_NOT_TRACK: 'yes' }, false],
    [{ DO_NOT_TRACK: '0' }, true],
    [{ DO_NOT_TRACK: 'false' }, true],
    [{ DO_NOT_TRACK: '' }, true],
  ]
  for (const [env, enabled] of cases) {
    delete process.env.ROTIFER_TELEMETRY
    delete process.env.DO_NOT_TRACK
    Object.assign(process.env, env)
    const root = tempRoot(t)
    open(root, 'a', 'owner', 'text').writeMemory('secret-key', enc('secret-value'), 'CACHE', { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' })
    throwsCode(assert, () => open(root, 'a', 'intruder', 'text').readMemory('secret-key'), DENIED)
    const events = telemetryLines(root)
    assert.equal(events.length, enabled ? 1 : 0, JSON.stringify(env))
    assert.equal(auditLines(root).filter((l) => l.action === 'memory.access_denied').length, 1, 'audit regardless')
    if (enabled) {
      assert.deepEqual(Object.keys(events[0]).sort(), ['agentId', 'code', 'event', 'geneId', 'op', 'ts'])
      assert.deepEqual(
        { event: events[0].event, agentId: events[0].agentId, geneId: events[0].geneId, op: events[0].op, code: events[0].code },
        { event: 'memory.access_denied', agentId: 'a', geneId: geneId('intruder'), op: 'read', code: DENIED },
      )
      const raw = fs.readFileSync(path.join(root, '.rotifer', 'telemetry.jsonl'), 'utf8')
      assert.ok(!raw.includes('secret'))
    }
  }
})
