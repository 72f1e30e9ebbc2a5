'use strict'
// The deployer's view of agents and moving memory between bindings (R-HOST-1/2, R-MIG), driven
// through the real bin: agent list/show, memory get/log/export/import, --key-prefix, --yes.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const memory = require('../index.js')
const { BIN, rotifer, json, makeProject, addGene, PROBE, steps, createAgent, oneErrorLine } = require('./cli-harness')
const { formatSize } = require('../lib/cli/format')
const { rotiferTty } = require('./cli-tty')

const A = 'v2:' + 'a'.repeat(64)
const B = 'v2:' + 'b'.repeat(64)
const BIG = Buffer.alloc(1024 * 1024, 0xab) // a 1 MiB value
const ALL = { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'PRIVATE' }
const keep = (days) => ({ maxRetentionDays: days, autoDeleteOnTermination: true, anonymizationSupported: false })

function gene(root, agent, geneId, domain) {
  return new memory.GeneMemoryAccess({ agentId: agent.id, geneId, domain, root })
}

/** A project with agent "src": entries of every category, scope, share policy and retention. */
function source(t) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'src', ['probe'], '--memory-quota=8MB', '--allow-anonymization')
  const a = gene(root, agent, A, 'text.format')
  const b = gene(root, agent, B)
  a.writeMemory('pref/indent', Buffer.from('4'), 'PREFERENCE', { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' })
  b.writeMemory('pattern/big', BIG, 'PATTERN', { readScope: 'ALL_GENES', writeScope: 'SAME_DOMAIN', sharePolicy: 'KNOWLEDGE_GENE' }, keep(null))
  a.writeMemory('context/doc', Buffer.from('héllo\nworld'), 'CONTEXT', { readScope: 'SAME_DOMAIN', writeScope: 'ALL_GENES', sharePolicy: 'ANONYMIZED_SHARE' }, keep(30))
  b.writeMemory('cache/bin', Buffer.from([0, 1, 2, 27, 255]), 'CACHE', ALL, null)
  return { root, agent }
}

function target(t, ...options) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'dst', ['probe'], ...options)
  return { root, agent }
}

function list(root, name) {
  return json(rotifer(root, 'agent', 'memory', 'list', name, '--json'))
}

/** `rotifer agent memory get --json`, with room for a 1 MiB value in base64. */
function getJson(root, name, key) {
  const r = spawnSync(process.execPath, [BIN, 'agent', 'memory', 'get', name, key, '--json'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 })
  return json({ status: r.status, stdout: r.stdout, stderr: r.stderr })
}

function auditText(root) {
  const p = path.join(root, '.rotifer', 'audit.jsonl')
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : ''
}

describe('rotifer agent memory export / import (R-MIG)', () => {
  test('round trip: keys, values, creators, policies and times survive; CACHE only with the flag', (t) => {
    const src = source(t)
    const file = path.join(src.root, 'src.memory.jsonl')
    const r = rotifer(src.root, 'agent', 'memory', 'export', 'src', '--output', file)
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Exported 3 entries of agent "src" to .*\(PREFERENCE 1, PATTERN 1, CONTEXT 1, CACHE 0; \d+(\.\d)? (B|KB|MB)\)\n$/)
    assert.equal(fs.statSync(file).mode & 0o777, 0o600)
    const header = JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[0])
    assert.equal(header.format, 'rotifer-memory-bundle')
    assert.equal(header.agentId, src.agent.id)
    assert.deepEqual(header.dataPolicy, { anonymizationSupported: true, maxRetentionDays: null })
    // Without --output the bundle goes to stdout, byte for byte the same entries.
    const toStdout = spawnSync(process.execPath, [BIN, 'agent', 'memory', 'export', 'src'], { cwd: src.root, encoding: 'utf8', maxBuffer: 1 << 26 })
    assert.equal(toStdout.status, 0, toStdout.stderr)
    assert.equal(JSON.parse(toStdout.stdout.split('\n')[0]).entriesSha256, header.entriesSha256)
    assert.match(toStdout.stderr, /^Exported 3 entries/)

    const dst = target(t, '--memory-quota=8MB', '--allow-anonymization')
    const imported = json(rotifer(dst.root, 'agent', 'memory', 'import', 'dst', file, '--json'))
    assert.deepEqual(imported, { created: 3, updated: 0, skipped: 0, expired: 0 })

    const before = list(src.root, 'src').filter((e) => e.category !== 'CACHE')
    const after = list(dst.root, 'dst')
    assert.deepEqual(after.map(({ key, category, size, createdBy, updatedAt }) => ({ key, category, size, createdBy, updatedAt })),
      before.map(({ key, category, size, createdBy, updatedAt }) => ({ key, category, size, createdBy, updatedAt })))
    for (const { key } of before) {
      const s = getJson(src.root, 'src', key)
      const d = getJson(dst.root, 'dst', key)
      for (const field of ['key', 'category', 'value', 'createdBy', 'createdAt', 'updatedAt', 'accessPolicy', 'retentionPolicy']) {
        assert.deepEqual(d[field], s[field], `${key}.${field}`)
      }
      assert.equal(d.lastAccessedBy, s.createdBy, 'lastAccessedBy becomes the creator')
      assert.notEqual(d.entryId, s.entryId, 'entryId is recomputed for the target agent')
    }
    assert.equal(Buffer.from(getJson(dst.root, 'dst', 'pattern/big').value, 'base64').equals(BIG), true)
    const lines = auditText(dst.root).trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.actor === 'deployer')
    assert.deepEqual(lines.map((l) => l.action), ['memory.create', 'memory.create', 'memory.create'])

    // --include-cache brings CACHE along.
    const withCache = path.join(src.root, 'all.jsonl')
    assert.equal(rotifer(src.root, 'agent', 'memory', 'export', 'src', '--output', withCache, '--include-cache').status, 0)
    const dst2 = target(t, '--memory-quota=8MB', '--allow-anonymization')
    const text = rotifer(dst2.root, 'agent', 'memory', 'import', 'dst', withCache)
    assert.equal(text.status, 0, text.stderr)
    assert.match(text.stdout, /^Imported 4 entries into agent "dst": 4 created, 0 updated\n$/)
    assert.deepEqual(getJson(dst2.root, 'dst', 'cache/bin').value, Buffer.from([0, 1, 2, 27, 255]).toString('base64'))
  })

  test('tampered, truncated, over-quota, policy-violating and conflicting bundles leave the target unchanged', (t) => {
    const src = source(t)
    const file = path.join(src.root, 'b.jsonl')
    assert.equal(rotifer(src.root, 'agent', 'memory', 'export', 'src', '--output', file).status, 0)
    const good = fs.readFileSync(file)
    const variant = (name, bytes) => {
      const p = path.join(src.root, name)
      fs.writeFileSync(p, bytes)
      return p
    }
    const text = good.toString('utf8')
    const cases = [
      ['tampered', variant('tampered', text.replace('NA==', 'NQ==')), null, /entriesSha256.*edited/],
      ['truncated', variant('truncated', good.subarray(0, good.length - 20)), null, /bundle line 4: .*truncated/],
      ['newer', variant('newer', text.replace('"version":1', '"version":7')), null, /bundle line 1: .*newer/],
      ['over quota', file, ['--memory-quota=1MB', '--allow-anonymization'], /MEMORY_QUOTA_EXCEEDED: bundle line 3 \(key "pattern\/big"\).*quota of 1048576/],
      ['policy', file, [], /MEMORY_ACCESS_DENIED: bundle line 3 \(key "pattern\/big"\).*data policy/],
    ]
    for (const [what, bundle, options, message] of cases) {
      const dst = target(t, ...(options || ['--allow-anonymization']))
      const r = rotifer(dst.root, 'agent', 'memory', 'import', 'dst', bundle)
      assert.equal(r.status, 1, what)
      assert.match(oneErrorLine(r), message, what)
      assert.deepEqual(list(dst.root, 'dst'), [], `${what}: nothing imported`)
      assert.equal(auditText(dst.root), '', `${what}: no audit line`)
    }

    // Conflicts: fail (default) changes nothing; skip keeps the target's; replace takes the bundle's.
    const dst = target(t, '--memory-quota=8MB', '--allow-anonymization')
    gene(dst.root, dst.agent, B).writeMemory('pref/indent', Buffer.from('2'), 'PREFERENCE', ALL)
    const audit = auditText(dst.root)
    const r = rotifer(dst.root, 'agent', 'memory', 'import', 'dst', file)
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /bundle line 2 \(key "pref\/indent"\): the target agent has this key already; import with --on-conflict skip \(keep the target's\) or --on-conflict replace \(take the bundle's\)/)
    assert.deepEqual(list(dst.root, 'dst').map((e) => e.key), ['pref/indent'])
    assert.equal(auditText(dst.root), audit)
    assert.deepEqual(json(rotifer(dst.root, 'agent', 'memory', 'import', 'dst', file, '--on-conflict', 'skip', '--json')),
      { created: 2, updated: 0, skipped: 1, expired: 0 })
    assert.equal(getJson(dst.root, 'dst', 'pref/indent').value, Buffer.from('2').toString('base64'))
    assert.deepEqual(json(rotifer(dst.root, 'agent', 'memory', 'import', 'dst', file, '--on-conflict=replace', '--yes', '--json')),
      { created: 0, updated: 3, skipped: 0, expired: 0 })
    assert.equal(getJson(dst.root, 'dst', 'pref/indent').createdBy, A)
    const bad = rotifer(dst.root, 'agent', 'memory', 'import', 'dst', file, '--on-conflict', 'merge')
    assert.equal(bad.status, 2)
    assert.match(oneErrorLine(bad), /invalid --on-conflict "merge": use fail, skip or replace/)
    const missing = rotifer(dst.root, 'agent', 'memory', 'import', 'dst', path.join(dst.root, 'nope.jsonl'))
    assert.equal(missing.status, 1)
    assert.match(oneErrorLine(missing), /cannot read the bundle/)
  })
  test('import into an agent whose database was deleted recreates it from the record, not the defaults', (t) => {
    // R-HOST-1: deleting a database never lifts the agent's limits.
    const src = source(t)
    const file = path.join(src.root, 'b.jsonl')
    assert.equal(rotifer(src.root, 'agent', 'memory', 'export', 'src', '--output', file).status, 0)
    const dst = target(t, '--memory-quota=512KB', '--allow-anonymization')
    const db = path.join(dst.root, '.rotifer', 'memory', `${dst.agent.id}.db`)
    for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true })
    const r = rotifer(dst.root, 'agent', 'memory', 'import', 'dst', file)
    assert.equal(r.status, 1)
    const [note, error, ...more] = r.stderr.split('\n')
    assert.match(note, /^note: agent "dst" had no memory database; created an empty one with the quota and data policy of its record$/)
    assert.match(error, /^error: MEMORY_QUOTA_EXCEEDED: .*quota of 524288 bytes/)
    assert.deepEqual(more, [''])
    assert.equal(json(rotifer(dst.root, 'agent', 'show', 'dst', '--json')).memory.quota, 512 * 1024)
  })
})

describe('rotifer agent list / show', () => {
  test('list shows genes, composition, memory used / quota and entries; --json the figures', (t) => {
    const src = source(t)
    createAgent(src.root, 'empty', ['probe'])
    const rows = json(rotifer(src.root, 'agent', 'list', '--json'))
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]))
    assert.deepEqual(byName.src.genome, ['probe'])
    assert.deepEqual(byName.src.composition, { type: 'Single' })
    assert.equal(byName.src.binding, 'sqlite')
    assert.equal(byName.src.memory.quota, 8 * 1024 * 1024)
    assert.equal(byName.src.memory.entries, 4)
    const sizes = list(src.root, 'src').reduce((n, e) => n + e.size, 0)
    assert.equal(byName.src.memory.used, sizes)
    assert.equal(byName.empty.memory.entries, 0)
    const r = rotifer(src.root, 'agent', 'list')
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    assert.match(lines[0], /^NAME\s+ID\s+GENES\s+COMPOSITION\s+ENTRIES\s+MEMORY\s+USED$/)
    const row = lines.find((l) => l.startsWith('src '))
    // Sizes for people (not a terminal: the percentage, no bar); --json above has the bytes.
    const human = formatSize(sizes)
    assert.match(human, /^\d+(\.\d)? (B|KB|MB)$/)
    const pct = `${((sizes / (8 * 1024 * 1024)) * 100).toFixed(1)}%`
    assert.match(row, new RegExp(`^src\\s+${src.agent.id}\\s+probe\\s+Single\\(probe\\)\\s+4\\s+${human.replace('.', '\\.')} / 8 MB\\s+${pct.replace('.', '\\.')}$`))
  })

  test('show: record, data policy and per-category usage; never creates a missing database', (t) => {
    const src = source(t)
    const shown = json(rotifer(src.root, 'agent', 'show', 'src', '--json'))
    assert.equal(shown.agent.id, src.agent.id)
    const m = shown.memory
    assert.deepEqual(m.dataPolicy, { anonymizationSupported: true, maxRetentionDays: null })
    assert.deepEqual(Object.keys(m.categories), ['PREFERENCE', 'PATTERN', 'CONTEXT', 'CACHE'])
    assert.equal(m.categories.PATTERN.bytes, 'pattern/big'.length + BIG.length)
    assert.equal(m.categories.PREFERENCE.evictableBytes, 0)
    assert.equal(m.categories.CACHE.evictableBytes, m.categories.CACHE.bytes)
    assert.match(m.categories.CONTEXT.nextExpiry, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    assert.equal(m.categories.PREFERENCE.nextExpiry, null)
    assert.equal(m.evictableBytes, m.used - m.categories.PREFERENCE.bytes)
    const r = rotifer(src.root, 'agent', 'show', 'src')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /data policy {3}anonymization supported, no retention limit/)
    assert.match(r.stdout, /\n {2}quota {9}8MB \(8388608 bytes\)\n/)
    assert.match(r.stdout, new RegExp(`memory {8}${formatSize(m.used).replace('.', '\\.')} used \\(\\d+\\.\\d%\\), 4 entries, `))
    const pattern = formatSize(m.categories.PATTERN.bytes).replace('.', '\\.')
    assert.match(r.stdout, new RegExp(`\\nPATTERN\\s+1\\s+${pattern}\\s+${pattern}\\s+-\\s+\\d+\\.\\d%\\n`))

    // A database deleted by hand is reported as not created, and not recreated by looking.
    const db = path.join(src.root, '.rotifer', 'memory', `${src.agent.id}.db`)
    for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true })
    const gone = rotifer(src.root, 'agent', 'show', 'src')
    assert.equal(gone.status, 0, gone.stderr)
    assert.match(gone.stdout, /memory {8}not created yet/)
    assert.equal(json(rotifer(src.root, 'agent', 'list', '--json'))[0].memory, null)
    assert.equal(fs.existsSync(db), false)
  })

  test('agent memory list shows the quota the database enforces, not the record\'s', (t) => {
    // R-HOST-1: createAgentMemory reconfigured the agent after `rotifer agent create`.
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const agent = createAgent(root, 'keeper', ['probe'], '--memory-quota=64KB')
    memory.createAgentMemory({ agentId: agent.id, root, quota: '128KB' })
    const r = rotifer(root, 'agent', 'memory', 'list', 'keeper')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Agent "keeper" \([0-9a-f-]{36}\)\n0 entries, 0 bytes of 128KB quota\n$/)
  })
})

describe('rotifer agent memory get', () => {
  test('text when printable, base64 otherwise, --json always base64; not audited, lastAccessedBy kept', (t) => {
    const src = source(t)
    const audit = auditText(src.root)
    const doc = rotifer(src.root, 'agent', 'memory', 'get', 'src', 'context/doc')
    assert.equal(doc.status, 0, doc.stderr)
    assert.match(doc.stdout, /^key {13}context\/doc\n/m)
    assert.match(doc.stdout, /^value \(text\) {4}héllo\nworld\n$/m)
    assert.match(doc.stdout, /^accessPolicy {4}read SAME_DOMAIN, write ALL_GENES, share ANONYMIZED_SHARE$/m)
    assert.match(doc.stdout, /^retentionPolicy {1}kept 30 days after its last update/m)
    const bin = rotifer(src.root, 'agent', 'memory', 'get', 'src', 'cache/bin')
    assert.match(bin.stdout, /^value \(base64\)  AAECG\/8=$/m)
    assert.ok(!bin.stdout.includes('\u001b'))
    assert.match(bin.stdout, /^retentionPolicy {1}follows the agent's data policy$/m)
    const e = getJson(src.root, 'src', 'pref/indent')
    assert.deepEqual(Object.keys(e).sort(), ['accessPolicy', 'category', 'createdAt', 'createdBy', 'entryId', 'key', 'lastAccessedBy', 'retentionPolicy', 'updatedAt', 'value'])
    assert.equal(e.value, Buffer.from('4').toString('base64'))
    // A gene reads another's ALL_GENES entry: lastAccessedBy moves for it, never for the deployer.
    assert.equal(getJson(src.root, 'src', 'cache/bin').lastAccessedBy, B)
    assert.equal(auditText(src.root), audit, 'reading is not audited')
    const missing = rotifer(src.root, 'agent', 'memory', 'get', 'src', 'nope')
    assert.equal(missing.status, 1)
    assert.match(oneErrorLine(missing), /agent "src" has no entry with key "nope"/)
  })
})

describe('rotifer agent memory log', () => {
  test('the agent\'s audit lines, filtered, newest last; garbage lines are skipped and counted', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    createAgent(root, 'keeper', ['probe'])
    createAgent(root, 'other', ['probe'])
    json(rotifer(root, 'agent', 'run', 'keeper', '--input', steps([{ write: 'user/1' }, { write: 'user/2' }, { write: 'misc' }])))
    json(rotifer(root, 'agent', 'run', 'other', '--input', steps([{ write: 'user/9' }])))
    assert.equal(rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--key', 'user/1').status, 0)
    const file = path.join(root, '.rotifer', 'audit.jsonl')
    fs.appendFileSync(file, 'not json\n{"half":')

    const all = rotifer(root, 'agent', 'memory', 'log', 'keeper', '--json')
    assert.equal(all.status, 0, all.stderr)
    assert.match(all.stderr, /^note: skipped 2 lines of .*audit\.jsonl that are not audit lines\n$/)
    const lines = JSON.parse(all.stdout)
    assert.deepEqual(lines.map((l) => [l.action, l.key]), [
      ['memory.create', 'user/1'], ['memory.create', 'user/2'], ['memory.create', 'misc'], ['memory.delete', 'user/1'],
    ])
    const deletes = json(rotifer(root, 'agent', 'memory', 'log', 'keeper', '--action', 'delete', '--json'))
    assert.deepEqual(deletes.map((l) => [l.actor, l.key]), [['deployer', 'user/1']])
    assert.deepEqual(json(rotifer(root, 'agent', 'memory', 'log', 'keeper', '--key-prefix', 'user/', '--json')).length, 3)
    assert.deepEqual(json(rotifer(root, 'agent', 'memory', 'log', 'keeper', '--since', '2999-01-01T00:00:00Z', '--json')), [])
    assert.equal(json(rotifer(root, 'agent', 'memory', 'log', 'keeper', '--since', lines[3].ts, '--json')).length, 1)
    // A date is its midnight UTC: the day of the lines keeps them all, the next day none.
    const day = lines[0].ts.slice(0, 10)
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
    assert.equal(json(rotifer(root, 'agent', 'memory', 'log', 'keeper', '--since', day, '--json')).length, 4)
    assert.deepEqual(json(rotifer(root, 'agent', 'memory', 'log', 'keeper', '--since', next, '--json')), [])

    const text = rotifer(root, 'agent', 'memory', 'log', 'keeper', '--action', 'memory.create')
    assert.equal(text.status, 0, text.stderr)
    const rows = text.stdout.trimEnd().split('\n')
    // Time in UTC to the second, and the size for people (6 bytes: the key "user/1", no value).
    // No detail to show: the DETAIL column gives its room to the gene's name.
    assert.match(rows[0], /^TIME\s+ACTION\s+ACTOR\s+KEY\s+CATEGORY\s+SIZE$/)
    assert.equal(rows[1], `${lines[0].ts.slice(0, 10)} ${lines[0].ts.slice(11, 19)}  create  ${lines[0].actor.slice(0, 11)}… (probe)  user/1  CACHE      6 B`)
    assert.equal(rows.length, 4)
    for (const [flag, value, message] of [['--action', 'rename', /invalid --action "rename"/], ['--since', 'yesterday', /invalid --since "yesterday": give a date such as 2026-11-30 \(midnight UTC\) or an RFC 3339 time/], ['--since', '2026-02-30', /invalid --since "2026-02-30"/]]) {
      const r = rotifer(root, 'agent', 'memory', 'log', 'keeper', flag, value)
      assert.equal(r.status, 2)
      assert.match(oneErrorLine(r), message)
    }
  })
})

describe('rotifer agent memory log: summary lines', () => {
  test('a summary of refusals counted past a handle\'s bound shows its count, not undefined figures (R-AUD-1)', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const agent = createAgent(root, 'tight', ['probe'], '--memory-quota=1KB')
    // One gene handle refused 15 times: 10 lines in full (the first one, then repeats are
    // counted), then one summary line when the process exits.
    const script = `const m = require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))})
      const g = new m.GeneMemoryAccess({ agentId: ${JSON.stringify(agent.id)}, geneId: 'v2:' + 'a'.repeat(64), root: ${JSON.stringify(root)} })
      for (let i = 0; i < 15; i++) { try { g.writeMemory('k', new Uint8Array(2000), 'CACHE') } catch (e) { if (e.code !== 'MEMORY_QUOTA_EXCEEDED') throw e } }`
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
    assert.equal(child.status, 0, child.stderr)
    const lines = json(rotifer(root, 'agent', 'memory', 'log', 'tight', '--action', 'quota_reject', '--json'))
    const counted = lines.reduce((n, l) => n + (l.count ?? 1), 0)
    assert.equal(counted, 15, 'every refusal is accounted for')
    const summary = lines.find((l) => l.count !== undefined)
    assert.ok(summary, 'a summary line')
    const text = rotifer(root, 'agent', 'memory', 'log', 'tight', '--action', 'quota_reject')
    assert.equal(text.status, 0, text.stderr)
    assert.doesNotMatch(text.stdout, /undefined/)
    assert.match(text.stdout, new RegExp(`${summary.count} more quota rejections since ${summary.since.replace(/\./g, '\\.')}`))
  })

  test('--key-prefix keeps the refusals that may concern the prefix: a cut key, a summary (R-AUD-1)', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const agent = createAgent(root, 'tight', ['probe'], '--memory-quota=1KB')
    const long = 'user/' + 'x'.repeat(100)
    const script = `const m = require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))})
      const g = new m.GeneMemoryAccess({ agentId: ${JSON.stringify(agent.id)}, geneId: 'v2:' + 'a'.repeat(64), root: ${JSON.stringify(root)} })
      for (let i = 0; i < 15; i++) { try { g.writeMemory(${JSON.stringify(long)}, new Uint8Array(2000), 'CACHE') } catch (e) { if (e.code !== 'MEMORY_QUOTA_EXCEEDED') throw e } }
      g.writeMemory('other/1', new Uint8Array(1), 'CACHE')`
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
    assert.equal(child.status, 0, child.stderr)
    const log = (prefix) => json(rotifer(root, 'agent', 'memory', 'log', 'tight', '--key-prefix', prefix, '--json'))
    const all = json(rotifer(root, 'agent', 'memory', 'log', 'tight', '--json'))
    const cut = all.filter((l) => typeof l.key === 'string' && l.key.endsWith('…'))
    const summaries = all.filter((l) => l.count !== undefined)
    assert.ok(cut.length >= 1 && summaries.length >= 1, 'the log holds cut keys and a summary')
    // A prefix longer than what a refusal line keeps: the cut lines and the summaries.
    assert.deepEqual(log(long.slice(0, 80)), [...cut, ...summaries].sort((a, b) => all.indexOf(a) - all.indexOf(b)))
    // A prefix the cut key disagrees with: the summaries only (their keys are unknown).
    assert.deepEqual(log('other/'), all.filter((l) => l.key === 'other/1' || l.count !== undefined))
    assert.deepEqual(log('user/' + 'y'.repeat(80)), summaries)
  })
})

describe('--key-prefix on agent memory list and delete', () => {
  function seeded(t) {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    createAgent(root, 'keeper', ['probe'])
    const writes = ['user/1', 'user/2', 'user%', 'users', 'other'].map((k) => ({ write: k, value: 'x', category: k === 'user/2' ? 'PREFERENCE' : 'CACHE' }))
    json(rotifer(root, 'agent', 'run', 'keeper', '--input', steps(writes)))
    return root
  }
  const keys = (root, ...args) => json(rotifer(root, 'agent', 'memory', 'list', 'keeper', ...args, '--json')).map((e) => e.key)

  test('a plain prefix, alone or with a category', (t) => {
    const root = seeded(t)
    assert.deepEqual(keys(root, '--key-prefix', 'user/'), ['user/1', 'user/2'])
    assert.deepEqual(keys(root, '--key-prefix', 'user%'), ['user%'], '% is no wildcard')
    assert.deepEqual(keys(root, '--key-prefix', 'user/', '--category', 'CACHE'), ['user/1'])
    const r = rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--key-prefix', 'user/', '--category', 'CACHE', '--yes')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Deleted 1 entry \(category CACHE, keys starting "user\/"\)/)
    // Not a terminal: no question, --yes says it (cli-confirm.test.js: refused without).
    const many = rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--key-prefix', 'user', '--yes')
    assert.match(many.stdout, /^Deleted 3 entries \(keys starting "user"\)/)
    assert.deepEqual(keys(root), ['other'])
  })

  test('on a terminal, a delete of more than one entry asks first; --yes does not', (t) => {
    const root = seeded(t)
    const viaTty = (args, opts) => rotiferTty(root, ['agent', 'memory', 'delete', 'keeper', ...args], opts)
    const declined = viaTty(['--key-prefix', 'user'], { answer: 'n' })
    assert.equal(declined.status, 1, declined.tty)
    assert.match(declined.tty, /Delete 4 entries \(keys starting "user", \d+ B\) from agent "keeper"\? \[y\/N\] /)
    assert.match(declined.tty, /error: not confirmed: nothing was deleted from agent "keeper"/)
    assert.equal(keys(root).length, 5, 'nothing deleted')
    // One entry, or one key: nothing to ask.
    const one = viaTty(['--key-prefix', 'users'])
    assert.equal(one.status, 0, one.tty)
    assert.doesNotMatch(one.tty, /\[y\/N\]/)
    const accepted = viaTty(['--key-prefix', 'user/'], { answer: 'y' })
    assert.equal(accepted.status, 0, accepted.tty)
    assert.match(accepted.tty, /Deleted 2 entries \(keys starting "user\/"\)/)
    const confirmed = viaTty(['--key-prefix', 'user', '--yes'])
    assert.equal(confirmed.status, 0, confirmed.tty)
    assert.doesNotMatch(confirmed.tty, /\[y\/N\]/)
    assert.deepEqual(keys(root), ['other'])
  })
})
