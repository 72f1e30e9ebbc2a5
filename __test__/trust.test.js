'use strict'
// Memory trusts only its own files (docs/threat-model.md): folders, databases, -wal, -shm and
// logs under `.rotifer/` owned by another user, writable by group or others, or with another
// name (a hard link) are refused with MEMORY_STORAGE_ERROR naming the path and the fix; so is
// a database whose schema holds anything this package did not create (R-HOST-1, R-AUD).
// The tests run as root, which the kernel lets through anyway: they test the checks.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { memory, enc, dec, tempRoot, open, auditLines, telemetryLines, throwsCode, geneId } = require('./helpers')

const STORAGE = 'MEMORY_STORAGE_ERROR'
const OTHER_UID = 12345
const AGENT = 'agent-t'
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A root whose agent memory exists with one entry, written by a child: not open here. */
function made(t) {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: AGENT, root })
  assert.deepEqual(childWrite(root, { key: 'k' }), { ok: true })
  return root
}
const rotifer = (root, ...p) => path.join(root, '.rotifer', ...p)
const db = (root, suffix = '') => rotifer(root, 'memory', `${AGENT}.db${suffix}`)

/**
 * Runs the gene's write in a child process: this process keeps agent databases open (the
 * store is shared), so only a fresh process opens the files anew.
 */
function childWrite(root, { key = 'k2', cwd, rootOption = true } = {}) {
  const script = `
    const memory = require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))})
    let out
    try {
      const m = new memory.GeneMemoryAccess({ agentId: ${JSON.stringify(AGENT)}, geneId: ${JSON.stringify(geneId('g'))}, domain: 'text'${rootOption ? `, root: ${JSON.stringify(root)}` : ''} })
      m.writeMemory(${JSON.stringify(key)}, new Uint8Array([1]), 'CACHE')
      out = { ok: true }
    } catch (e) {
      out = { code: e.code, message: e.message }
    }
    process.stdout.write(JSON.stringify(out))
  `
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: cwd || root })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

function refused(r, file, re) {
  assert.equal(r.code, STORAGE, JSON.stringify(r))
  assert.ok(r.message.includes(file), `the message names ${file}: ${r.message}`)
  assert.match(r.message, re)
}

const FOREIGN = /owned by user id 12345.*chown/
const WRITABLE = /written by its group or by others.*chmod go-w/
const LINKED = /2 names \(hard links\)/

for (const [label, target] of [
  ['.rotifer/', (root) => rotifer(root)],
  ['.rotifer/memory/', (root) => rotifer(root, 'memory')],
  ['the database', (root) => db(root)],
  ['audit.jsonl', (root) => rotifer(root, 'audit.jsonl')],
]) {
  test(`${label} owned by another user is refused, and nothing is written`, (t) => {
    const root = made(t)
    const p = target(root)
    const before = auditLines(root).length
    fs.chownSync(p, OTHER_UID, OTHER_UID)
    refused(childWrite(root), p, FOREIGN)
    fs.chownSync(p, process.getuid(), process.getgid())
    assert.equal(auditLines(root).length, before, 'no audit line')
    assert.deepEqual(memory.listAgentMemory({ agentId: AGENT, root }).map((l) => l.key), ['k'])
  })

  test(`${label} writable by group or others is refused`, (t) => {
    const root = made(t)
    const p = target(root)
    const mode = fs.statSync(p).mode & 0o777
    fs.chmodSync(p, mode | 0o022)
    refused(childWrite(root), p, WRITABLE)
    fs.chmodSync(p, mode | 0o002)
    refused(childWrite(root), p, WRITABLE)
    fs.chmodSync(p, mode)
    assert.deepEqual(childWrite(root), { ok: true }, 'with its mode restored, it works')
  })
}

for (const suffix of ['-wal', '-shm']) {
  test(`a planted ${suffix} owned by another user, writable by others, or not a file is refused before SQLite opens it`, (t) => {
    const root = made(t)
    const p = db(root, suffix)
    fs.writeFileSync(p, '', { mode: 0o600 })
    fs.chownSync(p, OTHER_UID, OTHER_UID)
    refused(childWrite(root), p, FOREIGN)
    fs.chownSync(p, process.getuid(), process.getgid())
    fs.chmodSync(p, 0o666)
    refused(childWrite(root), p, WRITABLE)
    fs.chmodSync(p, 0o400)
    refused(childWrite(root), p, /not readable and writable by its owner \(mode 0400\).*chmod u\+rw/)
    fs.rmSync(p)
    spawnSync('mkfifo', ['-m', '600', p])
    refused(childWrite(root), p, /not a regular file/)
    fs.rmSync(p)
    assert.deepEqual(childWrite(root), { ok: true })
  })
}

test('hard links: a hard-linked audit.jsonl, database, -wal or -shm is refused and the other name is not written', (t) => {
  const root = made(t)
  const outside = tempRoot(t)
  for (const [name, p] of [
    ['audit', rotifer(root, 'audit.jsonl')],
    ['db', db(root)],
    ['wal', db(root, '-wal')],
    ['shm', db(root, '-shm')],
  ]) {
    const other = path.join(outside, name)
    if (!fs.existsSync(p)) fs.writeFileSync(p, '', { mode: 0o600 })
    fs.linkSync(p, other)
    const before = fs.readFileSync(other)
    refused(childWrite(root), p, LINKED)
    assert.ok(fs.readFileSync(other).equals(before), `${name}: the other name was not written`)
    fs.rmSync(other)
    if (name === 'wal' || name === 'shm') fs.rmSync(p)
    assert.deepEqual(childWrite(root, { key: `after-${name}` }), { ok: true }, `${name}: one name again, it works`)
  }
})

test('a hard-linked database of another program is refused before it is switched to WAL mode', (t) => {
  const Database = require('better-sqlite3')
  const outside = tempRoot(t)
  const theirs = path.join(outside, 'theirs.db')
  const other = new Database(theirs)
  other.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)')
  other.close()
  const root = tempRoot(t)
  fs.mkdirSync(rotifer(root, 'memory'), { recursive: true, mode: 0o700 })
  fs.linkSync(theirs, db(root))
  const before = fs.readFileSync(theirs)
  refused(childWrite(root), db(root), LINKED)
  assert.ok(fs.readFileSync(theirs).equals(before), 'their database is untouched (still in rollback mode)')
  assert.equal(before[18], 1, 'rollback journal mode in the header')
})

test('a hard-linked telemetry.jsonl gets no events; the denial is still audited and answered', (t) => {
  const root = made(t)
  const outside = path.join(tempRoot(t), 'elsewhere')
  fs.writeFileSync(outside, 'theirs\n', { mode: 0o600 })
  fs.linkSync(outside, rotifer(root, 'telemetry.jsonl'))
  const intruder = open(root, AGENT, 'intruder', 'image')
  open(root, AGENT, 'owner', 'text').writeMemory('private', enc('v'), 'CACHE', { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' })
  throwsCode(assert, () => intruder.readMemory('private'), 'MEMORY_ACCESS_DENIED')
  assert.equal(fs.readFileSync(outside, 'utf8'), 'theirs\n')
  assert.equal(auditLines(root).at(-1).action, 'memory.access_denied')
})

test('a project root found upwards whose .rotifer/ another user owns or others may write is refused', (t) => {
  const parent = tempRoot(t)
  fs.writeFileSync(path.join(parent, 'rotifer.json'), '{}')
  fs.mkdirSync(path.join(parent, '.rotifer'), { mode: 0o777 })
  fs.chmodSync(path.join(parent, '.rotifer'), 0o777)
  const below = path.join(parent, 'work', 'gene')
  fs.mkdirSync(below, { recursive: true })
  let r = childWrite(null, { cwd: below, rootOption: false })
  refused(r, path.join(parent, '.rotifer'), WRITABLE)
  assert.match(r.message, new RegExp(`project root ${esc(parent)} \\(found upwards`))
  fs.chmodSync(path.join(parent, '.rotifer'), 0o700)
  fs.chownSync(path.join(parent, '.rotifer'), OTHER_UID, OTHER_UID)
  r = childWrite(null, { cwd: below, rootOption: false })
  refused(r, path.join(parent, '.rotifer'), FOREIGN)
  assert.ok(!fs.existsSync(path.join(parent, '.rotifer', 'memory')), 'nothing was created in it')
  fs.chownSync(path.join(parent, '.rotifer'), process.getuid(), process.getgid())
  assert.deepEqual(childWrite(null, { cwd: below, rootOption: false }), { ok: true })
  assert.ok(fs.existsSync(db(parent)))
})

for (const [kind, sql] of [
  ['trigger', "CREATE TRIGGER share_all AFTER INSERT ON entries BEGIN UPDATE entries SET read_scope = 2 WHERE key = NEW.key; END"],
  ['view', 'CREATE VIEW everything AS SELECT key, value FROM entries'],
  ['table', 'CREATE TABLE stolen (x)'],
  ['index', 'CREATE INDEX entries_by_creator ON entries (created_by)'],
]) {
  test(`a database whose schema holds a planted ${kind} is refused, and left as it is`, (t) => {
    const root = made(t)
    const Database = require('better-sqlite3')
    const d = new Database(db(root))
    d.exec(sql)
    d.close()
    const before = fs.readFileSync(db(root))
    const r = childWrite(root)
    refused(r, db(root), new RegExp(`holds a ${kind} .*did not create`))
    assert.ok(fs.readFileSync(db(root)).equals(before), 'the file was left as it is')
  })
}

test('a database missing an index this package creates is refused', (t) => {
  const root = made(t)
  const Database = require('better-sqlite3')
  const d = new Database(db(root))
  d.exec('DROP INDEX entries_by_expiry')
  d.close()
  refused(childWrite(root), db(root), /lacks the index "entries_by_expiry"/)
})

test('a foreign SQLite database is named once, without a doubled prefix', (t) => {
  const root = tempRoot(t)
  fs.mkdirSync(rotifer(root, 'memory'), { recursive: true, mode: 0o700 })
  const Database = require('better-sqlite3')
  const d = new Database(db(root))
  d.pragma('user_version = 1')
  d.exec('CREATE TABLE agent (x)')
  d.close()
  fs.chmodSync(db(root), 0o600)
  const r = childWrite(root)
  assert.equal(r.code, STORAGE)
  assert.equal(r.message.split('memory database').length - 1, 1, r.message)
  assert.ok(r.message.includes(db(root)), r.message)
})

test('the quota rejection a gene receives is the same whether or not an entry it cannot read exists (R-QUO-4)', (t) => {
  const message = (hidden) => {
    const root = tempRoot(t)
    memory.createAgentMemory({ agentId: AGENT, root, quota: '1KB' })
    if (hidden) {
      open(root, AGENT, 'other', 'image').writeMemory('secret', new Uint8Array(300), 'PREFERENCE', { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' })
    }
    const m = open(root, AGENT, 'g', 'text')
    const err = throwsCode(assert, () => m.writeMemory('mine', new Uint8Array(2000), 'PREFERENCE'), 'MEMORY_QUOTA_EXCEEDED')
    // The audit line keeps the full figures for the deployer.
    const line = auditLines(root).at(-1)
    assert.equal(line.action, 'memory.quota_reject')
    assert.equal(line.used, hidden ? 300 + Buffer.byteLength('secret') : 0)
    return err.message
  }
  const without = message(false)
  const withHidden = message(true)
  assert.equal(withHidden, without)
  assert.match(without, /"mine" \(2004 bytes\) does not fit in the quota of 1KB \(1024 bytes\)/)
})

for (const [label, target] of [
  ['the database', (root) => db(root)],
  ['its -wal', (root) => db(root, '-wal')],
  ['its -shm', (root) => db(root, '-shm')],
  ['.rotifer/memory/', (root) => rotifer(root, 'memory')],
  ['.rotifer/', (root) => rotifer(root)],
]) {
  test(`${label} made untrusted while open: the next call is refused, and works again once it is ours again`, (t) => {
    const root = made(t)
    const m = open(root, AGENT, 'g', 'text')
    m.writeMemory('open', enc('1'), 'CONTEXT') // the database, its -wal and -shm are open now
    const p = target(root)
    const mode = fs.statSync(p).mode & 0o777
    const before = auditLines(root).length

    fs.chmodSync(p, mode | 0o002)
    throwsCode(assert, () => m.writeMemory('k2', enc('2'), 'CONTEXT'), STORAGE, new RegExp(`${esc(p)} can be written by its group or by others`))
    throwsCode(assert, () => m.readMemory('open'), STORAGE, WRITABLE)
    fs.chmodSync(p, mode)
    assert.equal(dec(m.readMemory('open').value), '1', 'with its mode restored, it works')

    fs.chownSync(p, OTHER_UID, OTHER_UID)
    throwsCode(assert, () => m.writeMemory('k2', enc('2'), 'CONTEXT'), STORAGE, FOREIGN)
    fs.chownSync(p, process.getuid(), process.getgid())

    if (!fs.statSync(p).isDirectory()) {
      const other = path.join(root, 'elsewhere')
      fs.linkSync(p, other)
      throwsCode(assert, () => m.writeMemory('k2', enc('2'), 'CONTEXT'), STORAGE, LINKED)
      fs.rmSync(other)
    }

    assert.equal(auditLines(root).length, before, 'no refused call was audited')
    m.writeMemory('k2', enc('2'), 'CONTEXT')
    assert.deepEqual(memory.listAgentMemory({ agentId: AGENT, root }).map((l) => l.key).sort(), ['k', 'k2', 'open'])
  })
}
