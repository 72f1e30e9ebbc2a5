'use strict'
// The `testmem` section: what a test that takes a fresh test memory pays for it, against what
// the same test would pay for a fresh better-sqlite3 file database of its own. One round:
// `perRound` times, create, one write, dispose. Target: ≤ 1 ms per test memory, on its own
// clock (a suite of 1,000 cases that each take one spends at most a second on them).

const fs = require('node:fs')
const path = require('node:path')
const Database = require('better-sqlite3')
const memory = require('../index.js')
const { alternate, startTimer } = require('./measure')

const LIMIT_US = 1000
const VALUE = Buffer.alloc(100, 0x61)

/**
 * A fresh file database as a hand-rolled test helper would make it: its own folder, WAL. It is
 * made in the folder test memories are (a tmpfs when there is one), so both pay the same file
 * system.
 */
function freshDatabase(folder) {
  const dir = fs.mkdtempSync(path.join(folder, 'bench-fresh-db-'))
  const db = new Database(path.join(dir, 'test.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, category TEXT NOT NULL)')
  return { db, dir }
}

async function testMemorySection(cfg, tmp, out, { progress, timeRow }) {
  const perRound = cfg.mode === 'quick' ? 5 : 20
  const probe = memory.createTestMemory()
  const folder = path.dirname(probe.root)
  probe.dispose()
  progress(`testmem: createTestMemory() + one write + dispose(), ${perRound} per round, vs a fresh better-sqlite3 file database`)
  const m = await alternate({
    rounds: cfg.rounds,
    warmup: cfg.warmup,
    ours: async () => {
      const stop = startTimer()
      for (let i = 0; i < perRound; i++) {
        const t = memory.createTestMemory()
        t.memory.writeMemory('k', VALUE, 'CACHE')
        t.dispose()
      }
      return { ...stop(), calls: perRound }
    },
    baseline: async () => {
      const stop = startTimer()
      for (let i = 0; i < perRound; i++) {
        const { db, dir } = freshDatabase(folder)
        db.prepare('INSERT INTO entries (key, value, category) VALUES (?, ?, ?)').run('k', VALUE, 'CACHE')
        db.close()
        fs.rmSync(dir, { recursive: true, force: true })
      }
      return { ...stop(), calls: perRound }
    },
  })
  // The target is absolute, 1 ms, shown as the ratio it amounts to against the baseline's median
  // in the same run; the verdict follows the ratio as every row's does.
  const limit = +(LIMIT_US / m.baselineUs).toFixed(3)
  const row = timeRow('test-memory', 'createTestMemory() + one write + dispose() vs a fresh better-sqlite3 file database', m, limit)
  row.target = `≤ ${limit} (${LIMIT_US / 1000} ms)`
  row.baselineIs = 'a fresh better-sqlite3 file database (mkdtemp, WAL, one table, one insert, close, rm)'
  row.folder = folder
  out.rows.push(row)
  out.details.testMemory = { ...m, perRound, folder }
}

module.exports = { testMemorySection }
