'use strict'
// R-HOST-1b, crash consistency with other live processes: two processes write small entries
// about every millisecond while writers of 64 KiB values are SIGKILLed at random moments, often
// inside a checkpoint (their commits fill the WAL). A checkpoint cut short, of a process that
// is gone, is not a restore: after the run every live process still works, no WAL was moved
// aside (`*.orphaned-*`), every acknowledged write is stored, and the database passes
// `PRAGMA integrity_check`. On a tmpfs (/dev/shm) and on the disk under the temporary folder.
//
// Bounded here (CHECKPOINT_KILLS, default 25 per file system); the long form:
// ROTIFER_LONG_TESTS=1 (300 kills per file system). CHECKPOINT_ON=tmpfs or disk runs one.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const Database = require('better-sqlite3')
const memory = require('../index.js')

const LONG = process.env.ROTIFER_LONG_TESTS === '1'
const KILLS = Number(process.env.CHECKPOINT_KILLS || (LONG ? 300 : 25))
const SEED = Number(process.env.CHECKPOINT_SEED || Date.now() % 1e9)
const AGENT = 'ckpt'
const SMALL = path.join(__dirname, 'workers', 'small-writer.js')
const BIG = path.join(__dirname, 'workers', 'big-writer.js')
const TMPFS = 0x01021994

let s = SEED >>> 0
const rand = () => {
  s = (s * 1103515245 + 12345) >>> 0
  return s / 4294967296
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A child process, with its stdout collected and a promise of its exit. */
function start(t, script, args) {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  t.after(() => child.kill('SIGKILL')) // a failed assertion must leave nothing running
  const p = { child, out: '', err: '' }
  child.stdout.on('data', (d) => (p.out += d))
  child.stderr.on('data', (d) => (p.err += d))
  p.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal || code)))
  p.waitFor = (what) =>
    new Promise((resolve, reject) => {
      const look = () => p.out.includes(what) && resolve(p.out)
      child.stdout.on('data', look)
      p.exited.then((how) => (p.out.includes(what) ? resolve(p.out) : reject(new Error(`${script} ended (${how}) before "${what}": ${p.err}`))))
      look()
    })
  return p
}

/** Where the runs go: a tmpfs and the disk, each only if it is there. */
function places() {
  const out = []
  try {
    if (fs.statfsSync('/dev/shm').type === TMPFS) out.push({ name: 'tmpfs', base: fs.realpathSync('/dev/shm') })
  } catch {}
  const tmp = fs.realpathSync(os.tmpdir())
  if (fs.statfsSync(tmp).type !== TMPFS) out.push({ name: 'disk', base: tmp })
  return out
}

const ONLY = process.env.CHECKPOINT_ON // 'tmpfs' or 'disk': that one alone
for (const place of places().filter((p) => !ONLY || p.name === ONLY)) {
  test(`${KILLS} writers of 64 KiB values SIGKILLed while two other processes write: no false restore, nothing lost, integrity_check ok, on ${place.name} (R-HOST-1b, seed ${SEED})`, async (t) => {
    const root = fs.mkdtempSync(path.join(place.base, 'rotifer-memory-test-'))
    t.after(() => (process.env.CHECKPOINT_KEEP ? t.diagnostic(`kept ${root}`) : fs.rmSync(root, { recursive: true, force: true })))
    memory.createAgentMemory({ root, agentId: AGENT, quota: '1GB' })
    const dir = path.join(root, '.rotifer', 'memory')
    const live = [0, 1].map((id) => start(t, SMALL, [root, AGENT, String(id)]))
    await Promise.all(live.map((p) => p.waitFor('ready')))

    // Two big writers at a time, each killed 0.3–1 s after it started writing. The first thing
    // found wrong stops the run; the live processes report what they saw either way.
    let kills = 0
    let started = 0
    let wrong = null
    const cycle = async () => {
      while (started < KILLS && !wrong) {
        started++
        const big = start(t, BIG, [root, AGENT])
        await big.waitFor('ready').catch(() => {})
        await sleep(300 + Math.floor(rand() * 700))
        big.child.kill('SIGKILL')
        const how = await big.exited
        if (how !== 'SIGKILL') wrong = wrong || `after ${kills} kills, a big writer failed before its kill (${how}): ${big.err}`
        else kills++
        if (big.err) wrong = wrong || `after ${kills} kills, a big writer said: ${big.err}`
        const orphaned = fs.readdirSync(dir).filter((n) => n.includes('orphaned'))
        if (orphaned.length) wrong = wrong || `after ${kills} kills, a WAL was moved aside although nobody restored anything: ${orphaned}`
      }
    }
    await Promise.all([cycle(), cycle()])

    const reports = []
    for (const p of live) {
      p.child.stdin.write('stop\n')
      await p.waitFor('}')
      reports.push(JSON.parse(p.out.trim().split('\n').pop()))
      assert.equal(await p.exited, 0, p.err)
    }
    const failures = reports.map((r, id) => r.failures.map((f) => `live process ${id}: ${f}`)).flat()
    assert.equal(wrong, null, [wrong, ...failures].join('\n'))
    t.diagnostic(`${kills} kills; acknowledged writes of the live processes: ${reports.map((r) => r.acked).join(', ')}`)
    for (const [id, r] of reports.entries()) {
      assert.deepEqual(r.failures, [], `live process ${id} kept working through ${kills} kills`)
      assert.ok(r.acked > 50, `live process ${id} did real work (${r.acked} writes)`)
    }
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.includes('orphaned')), [], 'no WAL was moved aside')

    const db = new Database(path.join(dir, `${AGENT}.db`), { fileMustExist: true, readonly: true })
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok')
      const get = db.prepare('SELECT value FROM entries WHERE key = ?')
      for (const [id, r] of reports.entries()) {
        for (let n = 0; n < r.acked; n++) {
          const key = `w${id}-${n}`
          const row = get.get(Buffer.from(key))
          assert.ok(row, `the acknowledged write of ${key} is stored`)
          assert.equal(Buffer.from(row.value).toString(), `value of ${key}`)
        }
      }
    } finally {
      db.close()
    }
  })
}
