'use strict'
// Faults: a full disk under the audit log, a database overwritten or truncated while in use, the
// memory folder replaced by a file. Every call that would change memory (or must be audited)
// answers MEMORY_STORAGE_ERROR with nothing changed, the process does not crash, and no file is
// deleted or replaced. Each fault runs in a child process, so that what the process does when it
// exits (closing its database) is checked too.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const Database = require('better-sqlite3')
const { memory, tempRoot, auditLines } = require('./helpers')

const CHILD = path.join(__dirname, 'workers', 'fault-child.js')
const STORAGE = 'MEMORY_STORAGE_ERROR'
const CHANGING = ['writeNew', 'update', 'delete', 'deniedRead', 'quotaReject', 'noV2Id', 'expiryPurge', 'deployerDeleteKey', 'deployerDeleteCategory']

function child(root, scenario, limitKiB, extra = []) {
  const args = [CHILD, root, scenario, ...extra]
  const r =
    limitKiB === undefined
      ? spawnSync(process.execPath, args, { encoding: 'utf8' })
      : // A full disk: writes past the file-size limit fail with EFBIG (SIGXFSZ ignored).
        spawnSync('bash', ['-c', `ulimit -f ${limitKiB}; trap "" XFSZ; exec "$0" "$@"`, process.execPath, ...args], { encoding: 'utf8' })
  assert.equal(r.signal, null, `the child was not killed by a signal: ${r.stderr}`)
  assert.equal(r.status, 0, `the child did not crash: ${r.stderr}`)
  return r.stdout.trim() ? Object.fromEntries(JSON.parse(r.stdout).map(([name, code, message]) => [name, { code, message }])) : null
}

/** The stored state, read directly: agent row and every entry. */
function stored(dbPath) {
  const db = new Database(dbPath, { fileMustExist: true })
  try {
    assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }])
    return {
      agent: db.prepare('SELECT * FROM agent').get(),
      entries: db.prepare('SELECT * FROM entries ORDER BY key').all(),
    }
  } finally {
    db.close()
  }
}

/** The bytes of the one WAL kept aside in `dir` (R-HOST-1b: `a.db-wal.orphaned-…`). */
function orphanedWal(dir) {
  const kept = fs.readdirSync(dir).filter((n) => n.startsWith('a.db-wal.orphaned-'))
  assert.equal(kept.length, 1, `one WAL kept aside: ${fs.readdirSync(dir)}`)
  return fs.readFileSync(path.join(dir, kept[0]))
}

/** The newest committed version of each page in a WAL file: page number → bytes. */
function committedWalPages(wal) {
  const pages = new Map()
  if (wal.length < 32) return pages
  const pageSize = wal.readUInt32BE(8)
  const salts = wal.subarray(16, 24)
  let pending = []
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (!wal.subarray(at + 8, at + 16).equals(salts)) break // a frame of an earlier WAL generation
    pending.push([wal.readUInt32BE(at), wal.subarray(at + 24, at + 24 + pageSize)])
    if (wal.readUInt32BE(at + 4) !== 0) {
      for (const [page, bytes] of pending) pages.set(page, bytes) // a commit frame: the transaction counts
      pending = []
    }
  }
  return pages
}

/** Name → inode of every file under `dir` but SQLite's -wal/-shm, which come and go. */
function inodes(dir) {
  const out = {}
  const walk = (d) => {
    for (const name of fs.readdirSync(d)) {
      const p = path.join(d, name)
      const st = fs.lstatSync(p)
      if (!/-(wal|shm)$/.test(name)) out[path.relative(dir, p)] = st.ino
      if (st.isDirectory()) walk(p)
    }
  }
  walk(dir)
  return out
}

/** Pads the audit log with a valid JSON line to exactly `size` bytes. */
function padAudit(root, size) {
  const audit = path.join(root, '.rotifer', 'audit.jsonl')
  const have = fs.statSync(audit).size
  const overhead = '{"pad":""}\n'.length
  assert.ok(size - have > overhead)
  fs.appendFileSync(audit, `{"pad":"${'x'.repeat(size - have - overhead)}"}\n`)
  assert.equal(fs.statSync(audit).size, size)
  return audit
}

for (const [label, room] of [['no byte', 0], ['50 bytes', 50]]) {
  test(`a full disk with ${label} left for the audit log: changes fail with MEMORY_STORAGE_ERROR, nothing changes, no crash`, (t) => {
    const root = tempRoot(t)
    child(root, 'setup')
    const limit = 256 // KiB: the database, its WAL and shared memory stay well below it
    const audit = padAudit(root, limit * 1024 - room)
    const before = stored(path.join(root, '.rotifer', 'memory', 'a.db'))
    const bytesBefore = fs.readFileSync(audit)
    const files = inodes(root)

    const out = child(root, 'calls', limit)
    for (const name of ['read', 'query', 'list']) assert.equal(out[name].code, 'ok', `${name} changes nothing and needs no audit line: ${out[name].message}`)
    for (const name of CHANGING) {
      assert.equal(out[name].code, STORAGE, `${name} must fail: ${JSON.stringify(out[name])}`)
      assert.match(out[name].message, /audit log/, name)
    }

    assert.deepEqual(stored(path.join(root, '.rotifer', 'memory', 'a.db')), before, 'nothing changed in the database')
    assert.deepEqual(inodes(root), files, 'no file deleted, added or replaced')
    const bytesAfter = fs.readFileSync(audit)
    assert.ok(bytesAfter.subarray(0, bytesBefore.length).equals(bytesBefore), 'the audit log was only appended to')
    assert.ok(bytesAfter.length - bytesBefore.length <= room, 'at most a cut-short line')

    // With space again, the next line starts on a line of its own: every whole line parses.
    const m = new memory.GeneMemoryAccess({ agentId: 'a', geneId: 'v2:' + 'a'.repeat(64), domain: 'text', root, now: () => Date.parse('2026-11-30T00:00:01.000Z') })
    m.writeMemory('after', Buffer.from('x'), 'PREFERENCE')
    const text = fs.readFileSync(audit, 'utf8')
    const tail = text.slice(bytesBefore.length).split('\n').filter(Boolean)
    assert.equal(tail.length, room ? 2 : 1, 'a cut-short fragment (if any), then the new line')
    const last = JSON.parse(tail[tail.length - 1])
    assert.equal(last.action, 'memory.create')
    assert.equal(last.key, 'after')
    if (room) assert.throws(() => JSON.parse(tail[0]), 'the fragment stays apart and never merges with a whole line')
  })
}

/**
 * Every call fails with MEMORY_STORAGE_ERROR — except a caller with no valid v2 id, which is
 * denied before the store is opened ("identity first"); its denial is still audited.
 */
function checkOutcomes(out, label) {
  assert.ok(Object.keys(out).length >= 12)
  for (const [name, r] of Object.entries(out)) {
    assert.equal(r.code, name === 'noV2Id' ? 'MEMORY_ACCESS_DENIED' : STORAGE, `${label}${name}: ${JSON.stringify(r)}`)
  }
}

for (const scenario of ['garbage', 'truncate', 'folder', 'wal', 'shm']) {
  const what = {
    garbage: 'the database overwritten with garbage',
    truncate: 'the database truncated',
    folder: 'the memory folder replaced by a file',
    wal: 'the -wal file removed by hand',
    shm: 'the -shm file removed by hand',
  }[scenario]
  test(`${what} while in use: every call fails with MEMORY_STORAGE_ERROR, nothing changes, no file is replaced`, (t) => {
    const root = tempRoot(t)
    child(root, 'setup')
    const linesBefore = auditLines(root).length
    const out = child(root, scenario)
    checkOutcomes(out, '')
    assert.equal(auditLines(root).length, linesBefore + 2, 'only the write made before the fault, and the identity denial, were audited')

    const memoryDir = path.join(root, '.rotifer', 'memory')
    if (scenario === 'folder') {
      assert.equal(fs.readFileSync(memoryDir, 'utf8'), 'a file where the memory folder was', 'the file is left as it is')
      // The moved folder still holds the complete database, the write before the fault included.
      const s = stored(path.join(root, '.rotifer', 'memory.moved', 'a.db'))
      assert.deepEqual(s.entries.map((e) => e.key.toString()), ['fill', 'keep', 'midlife', 'private', 'short'])
    } else if (scenario === 'wal' || scenario === 'shm') {
      // The process did not write its WAL back when it exited; a new process finds a consistent
      // database: without the -wal, the state of the last checkpoint (the write made in that
      // process is lost, though audited); with the -wal kept, everything committed.
      const s = stored(path.join(memoryDir, 'a.db'))
      const keys = ['fill', 'keep', ...(scenario === 'shm' ? ['midlife'] : []), 'private', 'short']
      assert.deepEqual(s.entries.map((e) => e.key.toString()), keys)
      assert.equal(s.agent.used_bytes, s.entries.reduce((n, e) => n + e.size, 0))
      return
    } else {
      const db = fs.readFileSync(path.join(memoryDir, 'a.db'))
      if (scenario === 'garbage') assert.ok(db.every((b, i) => b === 'garbage!'.charCodeAt(i % 8)), 'the garbage was not overwritten, not even when the process exited')
      else assert.equal(db.length, 1000, 'the truncated file was left as it is')
      // The WAL, which holds the last committed changes, was written against the file that is no
      // longer there: it is kept, aside, and never replayed over what is (R-HOST-1b).
      assert.ok(!fs.existsSync(path.join(memoryDir, 'a.db-wal')), 'no WAL is left to be replayed')
      assert.ok(orphanedWal(memoryDir).length > 32, 'the WAL is kept aside, whole')
    }
    if (scenario !== 'truncate') {
      // A new process is refused too, and changes nothing.
      checkOutcomes(child(root, 'calls'), 'a new process, ')
      assert.equal(auditLines(root).length, linesBefore + 3)
    } else {
      // A file cut short behind its intact header is SQLite's to judge in a new process: the
      // WAL supplies the pages it holds, a page it lacks is SQLITE_CORRUPT, a
      // MEMORY_STORAGE_ERROR. Whether the WAL holds them all depends on what the commits before
      // the cut touched (with schema version 2 a write touches fewer pages: here not the expiry
      // index, which holds no entry that never expires). Either way the new process never
      // makes it worse: a database it can read passes the integrity check, and one it cannot
      // read is left as it is, its WAL included (a store that met SQLITE_CORRUPT does not
      // checkpoint when it closes): every page the WAL held is still there.
      const dbFile = path.join(memoryDir, 'a.db')
      const fileBefore = fs.readFileSync(dbFile)
      const walBefore = orphanedWal(memoryDir)
      const walPages = committedWalPages(walBefore)
      assert.ok(walPages.size > 0)
      const again = child(root, 'calls')
      for (const [name, r] of Object.entries(again)) assert.ok(r.code === 'ok' || r.code.startsWith('MEMORY_'), `${name}: ${JSON.stringify(r)}`)
      if (Object.values(again).some((r) => r.code === 'ok')) {
        stored(dbFile) // integrity_check: ok
      } else {
        checkOutcomes(again, 'a new process, ')
        for (const r of Object.values(again).filter((r) => r.code === STORAGE)) {
          assert.equal(r.message.split('memory database').length - 1, 1, r.message)
          assert.ok(r.message.includes(dbFile), `the message names the file: ${r.message}`)
        }
        assert.ok(fs.readFileSync(dbFile).equals(fileBefore), 'the damaged file was left as it is')
        const walAfter = committedWalPages(orphanedWal(memoryDir))
        for (const [page, bytes] of walPages) assert.ok(walAfter.get(page)?.equals(bytes), `page ${page} of the WAL was kept`)
      }
    }
  })
}

// A backup copied over the database in place while a process has it open (R-HOST-1): same inode,
// a valid header, the same or a larger size. Only a checkpoint ever writes to a WAL database's
// file; this write is not one, so every call fails and the process never writes its WAL into the
// restored file: it stays byte for byte what was copied.
for (const age of ['the same state the process opened', 'an older state']) {
  test(`a backup of ${age} copied over the database while in use: every call fails, the restored file stays as copied`, (t) => {
    const root = tempRoot(t)
    const db = path.join(root, '.rotifer', 'memory', 'a.db')
    child(root, 'setup')
    const backup = path.join(root, 'backup.db')
    fs.copyFileSync(db, backup)
    if (age === 'an older state') {
      child(root, 'calls') // changes and deletes entries; its clean exit checkpoints them into the file
      assert.ok(!fs.existsSync(db + '-wal'))
      assert.ok(!fs.readFileSync(db).equals(fs.readFileSync(backup)), 'the database moved on from the backup')
    }
    const inode = fs.statSync(db).ino
    const out = child(root, 'restore', undefined, [backup])
    checkOutcomes(out, '')
    assert.equal(fs.statSync(db).ino, inode, 'restored in place')
    assert.ok(fs.readFileSync(db).equals(fs.readFileSync(backup)), 'the restored file is exactly what was copied: no WAL was written into it')
    assert.ok(!fs.existsSync(db + '-wal'), 'no WAL is left beside the restored file for the next open to replay (R-HOST-1b)')
    assert.ok(orphanedWal(path.dirname(db)).length > 32, 'the WAL, with the write made before the restore, was kept apart')
  })
}

test('the memory folder replaced by a file before any process opens it: every call, the deployer\'s included, fails', (t) => {
  const root = tempRoot(t)
  fs.mkdirSync(path.join(root, '.rotifer'), { mode: 0o700 })
  fs.writeFileSync(path.join(root, '.rotifer', 'memory'), 'not a folder')
  checkOutcomes(child(root, 'calls'), '')
  assert.equal(fs.readFileSync(path.join(root, '.rotifer', 'memory'), 'utf8'), 'not a folder')
})

test('the WAL removed by hand after a crash: a clean older state, never a corrupt database', async (t) => {
  const { spawn } = require('node:child_process')
  const INDEX = path.join(__dirname, '..', 'index.js')
  const writer = (root, keys, hang) => `
    const m = require(${JSON.stringify(INDEX)});
    const g = new m.GeneMemoryAccess({ agentId: 'a', geneId: 'v2:' + 'a'.repeat(64), domain: 'text', root: ${JSON.stringify(root)} });
    for (const k of ${JSON.stringify(keys)}) g.writeMemory(k, new Uint8Array(100).fill(7), 'CACHE');
    ${hang ? "require('fs').writeSync(1, 'done\\n'); setInterval(() => {}, 1000);" : ''}`
  for (const removed of [['-wal'], ['-wal', '-shm']]) {
    const root = tempRoot(t)
    const db = path.join(root, '.rotifer', 'memory', 'a.db')
    // A clean run: its changes are checkpointed into the database when it exits.
    const clean = spawnSync(process.execPath, ['-e', writer(root, ['old1', 'old2'], false)], { encoding: 'utf8' })
    assert.equal(clean.status, 0, clean.stderr)
    assert.ok(!fs.existsSync(db + '-wal'), 'a clean exit leaves no WAL')
    // A run killed with SIGKILL: its committed changes are only in the WAL.
    const news = Array.from({ length: 20 }, (_, i) => `new${i}`)
    const p = spawn(process.execPath, ['-e', writer(root, news, true)], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise((resolve) => p.stdout.on('data', (d) => String(d).includes('done') && resolve()))
    p.kill('SIGKILL')
    await new Promise((resolve) => p.on('exit', resolve))
    assert.ok(fs.statSync(db + '-wal').size > 0, 'the committed changes are in the WAL')
    for (const suffix of removed) fs.rmSync(db + suffix)

    const r = spawnSync(process.execPath, ['-e', `
      const m = require(${JSON.stringify(INDEX)});
      try { console.log(JSON.stringify(m.listAgentMemory({ agentId: 'a', root: ${JSON.stringify(root)} }).map((l) => l.key))) }
      catch (e) { console.log(JSON.stringify(e.code)) }`], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const result = JSON.parse(r.stdout)
    if (result !== 'MEMORY_STORAGE_ERROR') {
      assert.deepEqual(result, ['old1', 'old2'], `without ${removed.join(' and ')}: the state of the last checkpoint`)
      const s = stored(db) // integrity_check: ok
      assert.equal(s.agent.used_bytes, s.entries.reduce((n, e) => n + e.size, 0), 'a consistent byte total')
      assert.equal(s.agent.last_seq, 2)
    }
    // The audit log still tells of the lost changes: it is written ahead of every commit.
    assert.equal(auditLines(root).filter((l) => l.action === 'memory.create').length, 22)
  }
})
