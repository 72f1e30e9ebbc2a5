'use strict'
// R-HOST-1b: a backup copied (`cp`) or renamed (`mv`) over an agent's database by hand, while a
// process has the agent open, is never undone and never mixed by the processes that open the
// agent next: whether the process that had it open made a call after the restore or not, and
// whether it exited or was killed. The WAL it wrote against the replaced file is kept aside under
// a name saying `orphaned`, never replayed.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const Database = require('better-sqlite3')
const { memory, tempRoot, geneId, throwsCode } = require('./helpers')

const INDEX = JSON.stringify(path.join(__dirname, '..', 'index.js'))

/** Runs `body` (a script using `m`, the gene's memory, and `memory`) in a new process; its stdout. */
function inProcess(root, body) {
  const script = `
    const memory = require(${INDEX})
    const m = new memory.GeneMemoryAccess({ agentId: 'a', geneId: ${JSON.stringify(geneId('g'))}, domain: 'd', root: ${JSON.stringify(root)} })
    ${body}`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return { stdout: r.stdout, stderr: r.stderr }
}

/** What a new process sees of the agent: every entry (key → size and updatedAt), as JSON. */
function seenByANewProcess(root) {
  const { stdout, stderr } = inProcess(root, `
    const list = memory.listAgentMemory({ agentId: 'a', root: ${JSON.stringify(root)} })
    const reads = list.map((e) => [e.key, e.size, m.readMemory(e.key).updatedAt])
    process.stdout.write(JSON.stringify(reads))`)
  return { entries: JSON.parse(stdout), stderr }
}

/** The database as SQLite checks it: integrity, the stored byte total against the entries. */
function checkDatabase(db) {
  const conn = new Database(db, { fileMustExist: true })
  try {
    const integrity = conn.pragma('integrity_check', { simple: true })
    const { used } = conn.prepare('SELECT used_bytes AS used FROM agent').get()
    const { sum, n } = conn.prepare('SELECT COALESCE(SUM(size), 0) AS sum, COUNT(*) AS n FROM entries').get()
    return { integrity, used, sum, n }
  } finally {
    conn.close()
  }
}

/**
 * A process that opens the agent, makes `changes` changes (updates of k0…k99, and a deletion
 * every fourth), prints `ready`, then on stdin `call` makes one more write (printing what it
 * threw), and on `exit` exits.
 */
function writer(t, root, changes) {
  const script = `
    const memory = require(${INDEX})
    const m = new memory.GeneMemoryAccess({ agentId: 'a', geneId: ${JSON.stringify(geneId('g'))}, domain: 'd', root: ${JSON.stringify(root)} })
    for (let i = 0; i < ${changes}; i++) {
      const key = 'k' + (i % 100)
      if (i % 4 === 3) { try { m.deleteMemory(key) } catch {} }
      else m.writeMemory(key, new Uint8Array(300).fill(i % 251), 'CONTEXT')
    }
    process.stdout.write('ready\\n')
    process.stdin.on('data', (d) => {
      for (const cmd of String(d).split('\\n').filter(Boolean)) {
        if (cmd === 'call') {
          try { m.writeMemory('after', new Uint8Array(1), 'CONTEXT'); process.stdout.write('wrote\\n') }
          catch (e) { process.stdout.write('threw ' + e.code + ' ' + JSON.stringify(e.message) + '\\n') }
        }
        if (cmd === 'exit') process.exit(0)
      }
    })`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.after(() => child.kill('SIGKILL')) // a failed assertion must not leave it waiting
  let out = ''
  const waitFor = (what) =>
    new Promise((resolve, reject) => {
      const look = () => out.includes(what) && resolve(out)
      child.stdout.on('data', (d) => { out += d; look() })
      child.on('exit', (code) => (out.includes(what) ? resolve(out) : reject(new Error(`the writer exited (${code}) before ${what}: ${out}`))))
      look()
    })
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal || code)))
  return { child, waitFor, exited, send: (cmd) => child.stdin.write(cmd + '\n') }
}

const orphans = (root) => fs.readdirSync(path.join(root, '.rotifer', 'memory')).filter((n) => n.includes('orphaned')).sort()

const cases = []
for (const changes of [200, 3000]) {
  for (const how of ['cp', 'mv']) {
    for (const call of [true, false]) {
      for (const end of ['exit', 'kill']) {
        if (changes === 3000 && call && end === 'kill') continue // covered by its 200-change twin
        cases.push({ changes, how, call, end })
      }
    }
  }
}

for (const { changes, how, call, end } of cases) {
  const name = `a backup restored by ${how} after ${changes} changes, ${call ? 'with a call after it' : 'with no call after it'}, the process ${end === 'exit' ? 'exiting' : 'killed'}: the next two processes see exactly the backup (R-HOST-1b)`
  test(name, async (t) => {
    const root = tempRoot(t)
    memory.createAgentMemory({ root, agentId: 'a' })
    inProcess(root, `for (let i = 0; i < 100; i++) m.writeMemory('k' + i, new Uint8Array(200).fill(i), 'CONTEXT')`)
    const db = path.join(root, '.rotifer', 'memory', 'a.db')
    const backup = path.join(root, 'backup.db')
    fs.copyFileSync(db, backup) // the last process closed: the file is complete, no WAL beside it
    const atBackup = seenByANewProcess(root).entries

    const w = writer(t, root, changes)
    await w.waitFor('ready')
    assert.ok(fs.statSync(db + '-wal').size > 32, 'the writer left its changes in the WAL')
    if (how === 'cp') fs.copyFileSync(backup, db)
    else {
      fs.copyFileSync(backup, db + '.incoming')
      fs.renameSync(db + '.incoming', db)
    }
    if (call) {
      w.send('call')
      const out = await w.waitFor('threw')
      assert.match(out, /threw MEMORY_STORAGE_ERROR/)
      assert.match(out, /orphaned/, 'the error names where the WAL went')
    }
    if (end === 'exit') w.send('exit')
    else w.child.kill('SIGKILL')
    await w.exited

    const first = seenByANewProcess(root)
    assert.deepEqual(first.entries, atBackup, 'the first process after the restore sees exactly the backup')
    const second = seenByANewProcess(root)
    assert.deepEqual(second.entries, atBackup, 'and so does the next one')
    const checked = checkDatabase(db)
    assert.equal(checked.integrity, 'ok')
    assert.equal(checked.used, checked.sum, 'the stored byte total is the entries\' sizes')
    assert.equal(checked.n, atBackup.length)
    const kept = orphans(root)
    assert.ok(kept.some((n) => n.startsWith('a.db-wal.orphaned-')), `the WAL was kept aside: ${kept}`)
    const wal = kept.find((n) => n.startsWith('a.db-wal.orphaned-'))
    assert.ok(fs.statSync(path.join(root, '.rotifer', 'memory', wal)).size > 32, 'with the frames it held')
  })
}

test('a backup copied over a database no process has open, with no WAL beside it, is used as it is and the restore is audited (R-HOST-1b)', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ root, agentId: 'a' })
  inProcess(root, `m.writeMemory('k', new Uint8Array(3), 'CONTEXT')`)
  const db = path.join(root, '.rotifer', 'memory', 'a.db')
  const backup = path.join(root, 'backup.db')
  fs.copyFileSync(db, backup)
  inProcess(root, `m.writeMemory('later', new Uint8Array(3), 'CONTEXT')`)
  fs.copyFileSync(backup, db)
  const seen = seenByANewProcess(root)
  assert.deepEqual(seen.entries.map((e) => e[0]), ['k'])
  assert.match(seen.stderr, /not the file its last checkpoint left/)
  const lines = fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  const restore = lines.filter((l) => l.action === 'memory.restore')
  assert.equal(restore.length, 1, 'one restore line')
  assert.equal(restore[0].actor, null)
  assert.ok(restore[0].tx > Math.max(...lines.filter((l) => l.action !== 'memory.restore' && l.tx).map((l) => l.tx)), 'numbered past every transaction before it')
  assert.deepEqual(orphans(root), [], 'there was no WAL to keep aside')
  // Only the owner's mode changed: no restore is reported.
  fs.chmodSync(db, 0o600)
  assert.doesNotMatch(seenByANewProcess(root).stderr, /checkpoint/)
})

test('a backup made by backupAgentMemory (no WAL, another journal mode) copied by hand: used as it is, and written on past checkpoints with no false alarm (R-HOST-1b)', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ root, agentId: 'a' })
  inProcess(root, `m.writeMemory('k', new Uint8Array(3), 'CONTEXT')`)
  const db = path.join(root, '.rotifer', 'memory', 'a.db')
  const backup = path.join(root, 'made.db')
  memory.backupAgentMemory({ agentId: 'a', root, file: backup })
  inProcess(root, `m.writeMemory('later', new Uint8Array(3), 'CONTEXT')`)
  fs.copyFileSync(backup, db)
  // Enough writes for several checkpoints (1,000 WAL frames each), in one process, then another.
  const { stderr } = inProcess(root, `for (let i = 0; i < 1500; i++) m.writeMemory('w' + (i % 50), new Uint8Array(2000), 'CONTEXT')`)
  assert.match(stderr, /not the file its last checkpoint left/, 'the restore is reported once')
  const seen = seenByANewProcess(root)
  assert.doesNotMatch(seen.stderr, /warning/, 'and not again')
  assert.deepEqual(seen.entries.map((e) => e[0]).sort(), ['k', ...Array.from({ length: 50 }, (_, i) => 'w' + i)].sort())
  assert.equal(checkDatabase(db).integrity, 'ok')
  const restores = fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'), 'utf8').split('\n').filter((l) => l.includes('memory.restore'))
  assert.equal(restores.length, 1)
})

for (const how of ['the project copied whole', 'the stamp removed (a database of an earlier version)']) {
  test(`a WAL left by a killed process is replayed, never moved aside, with ${how} (R-HOST-1b)`, async (t) => {
    const root = tempRoot(t)
    memory.createAgentMemory({ root, agentId: 'a' })
    inProcess(root, `for (let i = 0; i < 100; i++) m.writeMemory('k' + i, new Uint8Array(200).fill(i), 'CONTEXT')`)
    const w = writer(t, root, 200)
    await w.waitFor('ready')
    w.child.kill('SIGKILL')
    await w.exited
    const db = path.join(root, '.rotifer', 'memory', 'a.db')
    assert.ok(fs.statSync(db + '-wal').size > 32, 'the killed writer left its changes in the WAL')
    let target = root
    if (how.startsWith('the project')) {
      target = tempRoot(t)
      fs.cpSync(path.join(root, '.rotifer'), path.join(target, '.rotifer'), { recursive: true }) // new inodes, every file
    } else {
      fs.rmSync(db + '-lineage')
    }
    const seen = seenByANewProcess(target)
    assert.doesNotMatch(seen.stderr, /warning/)
    assert.deepEqual(orphans(target), [])
    // The writer's last changes (k99 rewritten with fill 98 % 251 … ) are there: 75 of k0…k99 left
    // after its deletions, every fourth change being one.
    assert.equal(seen.entries.length, 100 - 25, 'the deletions in the WAL were replayed')
    assert.equal(checkDatabase(path.join(target, '.rotifer', 'memory', 'a.db')).integrity, 'ok')
  })
}

test('a backup copied over the database right after its own checkpoint, the process idle since, is noticed at its next write (R-HOST-1b)', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ root, agentId: 'a' })
  const m = new memory.GeneMemoryAccess({ agentId: 'a', geneId: geneId('g'), domain: 'd', root })
  const db = path.join(root, '.rotifer', 'memory', 'a.db')
  for (let i = 0; i < 100; i++) m.writeMemory('k' + i, new Uint8Array(300).fill(1), 'CONTEXT')
  m.writeMemory('onlyInBackup', new Uint8Array(300).fill(9), 'CONTEXT')
  // Writes until this process's own checkpoint writes the file.
  const untilCheckpoint = (fill) => {
    const t0 = fs.statSync(db).mtimeMs
    for (let i = 0; fs.statSync(db).mtimeMs === t0; i++) m.writeMemory('k' + (i % 100), new Uint8Array(300).fill(fill), 'CONTEXT')
  }
  untilCheckpoint(2)
  const backup = path.join(root, 'backup.db')
  fs.copyFileSync(db, backup)
  m.deleteMemory('onlyInBackup')
  m.writeMemory('onlyLive', new Uint8Array(300).fill(7), 'CONTEXT')
  untilCheckpoint(3)
  assert.equal(fs.statSync(db).size, fs.statSync(backup).size, 'the same size: nothing but the bytes tells them apart')
  fs.copyFileSync(backup, db) // no call of the process in between
  throwsCode(assert, () => m.writeMemory('after', new Uint8Array(1), 'CONTEXT'), 'MEMORY_STORAGE_ERROR', /orphaned/)
  assert.ok(fs.readFileSync(db).equals(fs.readFileSync(backup)), 'the restored file stays exactly as copied')
  const seen = seenByANewProcess(root).entries.map((e) => e[0])
  assert.ok(seen.includes('onlyInBackup') && !seen.includes('onlyLive'), 'a new process sees the backup')
  assert.equal(checkDatabase(db).integrity, 'ok')
})

test('an owner, mode or link change of the database after a crash keeps its WAL (R-HOST-1b)', async (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ root, agentId: 'a' })
  const w = writer(t, root, 200)
  await w.waitFor('ready')
  w.child.kill('SIGKILL')
  await w.exited
  const db = path.join(root, '.rotifer', 'memory', 'a.db')
  assert.ok(fs.statSync(db + '-wal').size > 32)
  fs.chmodSync(db, 0o600) // a new change time, nothing else
  fs.linkSync(db, db + '.link')
  fs.unlinkSync(db + '.link')
  const seen = seenByANewProcess(root)
  assert.doesNotMatch(seen.stderr, /warning/)
  assert.equal(seen.entries.length, 75, 'every acknowledged write is there')
  assert.deepEqual(orphans(root), [])
})

test('a database and its stamp saved together and moved back over a WAL written since: the WAL is never replayed (R-HOST-1b)', async (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ root, agentId: 'a' })
  inProcess(root, `for (let i = 0; i < 100; i++) m.writeMemory('k' + i, new Uint8Array(200).fill(i), 'CONTEXT')`)
  const dir = path.join(root, '.rotifer', 'memory')
  const saved = path.join(root, 'saved')
  fs.mkdirSync(saved)
  for (const name of ['a.db', 'a.db-lineage']) fs.copyFileSync(path.join(dir, name), path.join(saved, name))
  const atBackup = seenByANewProcess(root).entries
  const w = writer(t, root, 300)
  await w.waitFor('ready')
  w.child.kill('SIGKILL')
  await w.exited
  for (const name of ['a.db', 'a.db-lineage']) fs.renameSync(path.join(saved, name), path.join(dir, name))
  assert.deepEqual(seenByANewProcess(root).entries, atBackup, 'exactly the saved state')
  assert.ok(orphans(root).some((n) => n.startsWith('a.db-wal.orphaned-')))
  assert.equal(checkDatabase(path.join(dir, 'a.db')).integrity, 'ok')
})
