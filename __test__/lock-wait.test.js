'use strict'
// A changing call may wait for the write lock (another process writing) for up to the busy
// timeout. What happens to the files meanwhile is judged once the lock is held (R-HOST-1,
// R-AUD-2): a log moved during the wait gets none of the call's lines, and a database restored
// in place during the wait gets no write on top of it.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { memory, enc, tempRoot, open, auditLines, throwsCode } = require('./helpers')

/**
 * Starts a process that holds the write lock of `db` (`BEGIN IMMEDIATE` through better-sqlite3),
 * then, 300 ms later, runs `action` (a shell command; none if `null`) and releases the lock
 * `hold` ms after that. Resolves `locked` once the lock is held; `done` when the process has
 * exited, with its exit code and the time (ms since the epoch) it took just before releasing.
 */
function holdWriteLock(db, action, hold = 200) {
  const script = `
    const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))})
    const { execFileSync } = require('node:child_process')
    const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
    const db = new Database(${JSON.stringify(db)}, { fileMustExist: true, timeout: 30000 })
    db.exec('BEGIN IMMEDIATE')
    process.stdout.write('locked\\n')
    sleep(300)
    const action = ${JSON.stringify(action)}
    if (action !== null) execFileSync('sh', ['-c', action])
    sleep(${hold})
    const releasing = Date.now()
    db.exec('ROLLBACK')
    process.stdout.write('released ' + releasing + '\\n')
    db.close()`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  const done = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
  const released = done.then(() => Number(/released (\d+)/.exec(out)?.[1]))
  const locked = new Promise((resolve, reject) => {
    child.stdout.on('data', () => out.includes('locked') && resolve())
    child.on('exit', (code) => reject(new Error(`the lock holder exited (${code}) before locking`)))
  })
  return { locked, done, released }
}

test('a log moved while a write waits for the write lock gets none of its lines (R-AUD-2)', async (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ root, agentId: 'a' })
  const m = open(root, 'a', 'g', 'd')
  // The logs are open from here on; the second write finds them as the first left them (the
  // first created telemetry.jsonl, a change in their folder that makes the second reopen them).
  m.writeMemory('first', enc('1'), 'CONTEXT')
  m.writeMemory('first', enc('2'), 'CONTEXT')
  const audit = path.join(root, '.rotifer', 'audit.jsonl')
  const moved = `${audit}.1`
  const db = path.join(root, '.rotifer', 'memory', 'a.db')
  const holder = holdWriteLock(db, `mv '${audit}' '${moved}'`)
  await holder.locked
  m.writeMemory('second', enc('2'), 'CONTEXT') // waits for the lock, through the move
  assert.equal(await holder.done, 0)
  const old = fs.readFileSync(moved, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  assert.deepEqual(old.map((l) => l.key), ['first', 'first'], 'the moved log got no line of the waiting write')
  assert.deepEqual(auditLines(root).map((l) => [l.action, l.key]), [['memory.create', 'second']], 'its line is in a new log at the path')
})

test('a database restored in place while a write waits for the write lock gets no write on top (R-HOST-1)', async (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ root, agentId: 'a' })
  const m = open(root, 'a', 'g', 'd')
  m.writeMemory('first', enc('1'), 'CONTEXT')
  const db = path.join(root, '.rotifer', 'memory', 'a.db')
  // A backup of the file as it is: the write above is still in the WAL.
  const backup = path.join(root, 'backup.db')
  fs.copyFileSync(db, backup)
  m.writeMemory('fill', new Uint8Array(200_000), 'CONTEXT')
  // Enough pages for SQLite's automatic checkpoint: the file now differs from the backup.
  for (let i = 0; i < 40; i++) m.writeMemory(`more${i}`, new Uint8Array(100_000), 'CONTEXT')
  assert.ok(!fs.readFileSync(db).equals(fs.readFileSync(backup)), 'the database moved on from the backup')
  const linesBefore = auditLines(root).length
  const holder = holdWriteLock(db, `cp '${backup}' '${db}'`)
  await holder.locked
  throwsCode(assert, () => m.writeMemory('second', enc('2'), 'CONTEXT'), 'MEMORY_STORAGE_ERROR', /(written over|truncated) while in use/)
  assert.equal(await holder.done, 0)
  assert.equal(auditLines(root).length, linesBefore, 'the refused write was not audited')
  assert.ok(fs.readFileSync(db).equals(fs.readFileSync(backup)), 'the restored file is exactly what was copied')
})

test('a write that waits 1.5 s for another process\'s lock stores a time taken after the lock was released (R-ENT-4)', async (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ root, agentId: 'a' })
  const m = open(root, 'a', 'g', 'd')
  m.writeMemory('k', enc('1'), 'CONTEXT')
  const db = path.join(root, '.rotifer', 'memory', 'a.db')
  const holder = holdWriteLock(db, null, 1200)
  await holder.locked
  const called = Date.now()
  const e = m.writeMemory('k', enc('2'), 'CONTEXT') // waits for the lock
  assert.equal(await holder.done, 0)
  const released = await holder.released
  assert.ok(released - called >= 1000, `the write waited (${released - called} ms)`)
  assert.ok(Date.parse(e.updatedAt) >= released, `updatedAt ${e.updatedAt} is before the lock was released (${new Date(released).toISOString()})`)
  assert.ok(e.updatedAt >= e.createdAt)
})
