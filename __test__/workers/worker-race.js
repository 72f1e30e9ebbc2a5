'use strict'
// Worker threads opening one agent at the same moment (R-HOST-5): the race that once dropped
// the process's POSIX locks on the database. Used by concurrency.test.js and, many rounds over,
// by scripts/worker-race-long.sh.
//
// One round: THREADS worker threads each construct a GeneMemoryAccess for the same agent, wait
// on a barrier and make their first call at once. Then the process must still hold a POSIX
// lock on the database (/proc/locks); a second process opens and closes the agent
// (listAgentMemory), which would checkpoint and delete the -wal if it believed itself the last
// user; more writes follow. Every acknowledged write must be on disk.

const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const INDEX = path.join(__dirname, '..', '..', 'index.js')
const AGENT = 'raced'

if (!isMainThread) {
  // A worker: open, wait for the others, first call at once; then more writes on request.
  const memory = require(INDEX)
  const { root, id, barrier } = workerData
  const g = new memory.GeneMemoryAccess({ agentId: AGENT, geneId: 'v2:' + id.toString(16).repeat(64), domain: 'd', root })
  const flag = new Int32Array(barrier)
  Atomics.add(flag, 1, 1)
  Atomics.wait(flag, 0, 0)
  const acked = []
  const errors = []
  const write = (key) => {
    try {
      g.writeMemory(key, new Uint8Array(64).fill(id), 'PREFERENCE')
      acked.push(key)
    } catch (e) {
      errors.push(`${e.code}: ${e.message}`)
    }
  }
  write(`w${id}-first`)
  parentPort.postMessage({ phase: 'opened' })
  parentPort.on('message', (n) => {
    for (let i = 0; i < n; i++) write(`w${id}-${i}`)
    parentPort.postMessage({ phase: 'done', acked, errors })
  })
  return
}

/**
 * The POSIX locks this process holds on the file `file`, from /proc/locks. The kernel lists the
 * locks of the whole machine in chunks: one read can skip lines while other processes lock and
 * unlock, so the most seen in five reads counts. A lock this process lost stays lost.
 */
function locksHeld(file) {
  const ino = fs.statSync(file).ino
  const read = () =>
    fs
      .readFileSync('/proc/locks', 'utf8')
      .split('\n')
      .filter((line) => {
        const f = line.trim().split(/\s+/)
        // "1: POSIX  ADVISORY  READ 1234 08:01:5678 128 128" (a blocked waiter has a "->" field)
        const i = f.indexOf('POSIX')
        return i >= 0 && f[i + 3] === String(process.pid) && f[i + 4].endsWith(`:${ino}`)
      }).length
  return Math.max(...Array.from({ length: 5 }, read))
}

/** One round in a fresh `root`; resolves to what happened. */
async function round(root, threads = 4, later = 20) {
  const memory = require(INDEX)
  memory.createAgentMemory({ agentId: AGENT, root })
  const db = path.join(root, '.rotifer', 'memory', `${AGENT}.db`)
  const barrier = new SharedArrayBuffer(8)
  const flag = new Int32Array(barrier)
  const workers = Array.from({ length: threads }, (_, i) => new Worker(__filename, { workerData: { root, id: i + 1, barrier } }))
  const next = (w) => new Promise((resolve, reject) => {
    w.once('message', resolve)
    w.once('error', reject)
  })
  const opened = workers.map(next)
  while (Atomics.load(flag, 1) < threads) await new Promise((r) => setTimeout(r, 1))
  Atomics.store(flag, 0, 1)
  Atomics.notify(flag, 0)
  await Promise.all(opened)

  const locks = locksHeld(db)
  // Another process opens and closes the agent: it must see that this process still uses it.
  const other = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(INDEX)}).listAgentMemory({ agentId: ${JSON.stringify(AGENT)}, root: ${JSON.stringify(root)} })`], { encoding: 'utf8' })
  const done = workers.map(next)
  for (const w of workers) w.postMessage(later)
  const results = await Promise.all(done)
  await Promise.all(workers.map((w) => w.terminate()))

  const acked = results.flatMap((r) => r.acked)
  const errors = results.flatMap((r) => r.errors)
  const onDisk = spawnSync(process.execPath, ['-e', `process.stdout.write(JSON.stringify(require(${JSON.stringify(INDEX)}).listAgentMemory({ agentId: ${JSON.stringify(AGENT)}, root: ${JSON.stringify(root)} }).map((l) => l.key)))`], { encoding: 'utf8' })
  const keys = onDisk.status === 0 ? JSON.parse(onDisk.stdout) : null
  return {
    locks,
    otherStatus: other.status,
    otherErr: other.stderr,
    acked,
    errors,
    onDisk: keys,
    readErr: onDisk.stderr,
  }
}

module.exports = { round, locksHeld, AGENT }
