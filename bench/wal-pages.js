#!/usr/bin/env node
'use strict'
// Where the WAL bytes of an update come from: the lean store's schema (see stores.js) with one
// piece taken out at a time, and with 1 KiB pages instead of 4 KiB.
//
//   node bench/wal-pages.js [entries]     (default 10,000)
//
// Each variant gets `entries` rows like the benchmark's (15-byte keys, 100-byte values), a
// checkpoint, five warm-up updates, then 100 updates of the value, `updated_at` and `seq` (and
// the agent row's byte total and sequence): the -wal file's growth ÷ 100 is the WAL written per
// update (no checkpoint runs: 100 updates stay far below SQLite's 1,000-page auto-checkpoint).
// A frame is one page plus a 24-byte header.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const Database = require('better-sqlite3')
const R = require('./rows')

const ENTRIES = Number(process.argv[2] ?? 10_000)
const UPDATES = 100
const COLUMNS =
  'key BLOB PRIMARY KEY NOT NULL, entry_id TEXT NOT NULL, category INTEGER NOT NULL, value BLOB NOT NULL, size INTEGER NOT NULL, ' +
  'created_by TEXT NOT NULL, creator_domain TEXT, last_accessed_by TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, ' +
  'seq INTEGER NOT NULL, read_scope INTEGER NOT NULL, write_scope INTEGER NOT NULL, share_policy INTEGER NOT NULL, ret_set INTEGER NOT NULL, ' +
  'ret_days INTEGER, ret_auto_delete INTEGER NOT NULL, ret_anonymization INTEGER NOT NULL, expires_at INTEGER'

function measure(dir, name, { page = 4096, recency = true, category = true, agent = true }) {
  const file = path.join(dir, `${name}.db`)
  const db = new Database(file)
  db.pragma(`page_size = ${page}`)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec(`
    CREATE TABLE agent (id INTEGER PRIMARY KEY, used_bytes INTEGER NOT NULL, last_seq INTEGER NOT NULL);
    INSERT INTO agent VALUES (1, 0, 0);
    CREATE TABLE entries (${COLUMNS}) WITHOUT ROWID;
    ${recency ? 'CREATE INDEX entries_by_recency ON entries (updated_at, seq);' : ''}
    ${category ? 'CREATE INDEX entries_by_category ON entries (category, updated_at, seq);' : ''}
    CREATE INDEX entries_by_expiry ON entries (expires_at) WHERE expires_at IS NOT NULL;`)
  const gene = 'v2:' + 'a'.repeat(64)
  const insert = db.prepare(`INSERT INTO entries VALUES (${Array(19).fill('?').join(', ')})`)
  const value = Buffer.alloc(100, 0x61)
  db.transaction(() => {
    for (let i = 0; i < ENTRIES; i++) {
      const key = R.KEYS.group(i)
      insert.run(Buffer.from(key), R.entryId('bench', key), 3, value, 115, gene, 'bench', gene, i, i, i, 1, 1, 0, 0, null, 0, 0, null)
    }
  })()
  db.pragma('wal_checkpoint(TRUNCATE)')
  const update = db.prepare('UPDATE entries SET value = ?, updated_at = ?, seq = ?, last_accessed_by = ? WHERE key = ?')
  const advance = db.prepare('UPDATE agent SET used_bytes = used_bytes + 0, last_seq = last_seq + 1')
  let seq = ENTRIES
  const tx = db.transaction((i) => {
    seq++
    update.run(value, 1e12 + seq, seq, gene, Buffer.from(R.KEYS.group(i)))
    if (agent) advance.run()
  })
  const walSize = () => fs.statSync(`${file}-wal`).size
  for (let i = 0; i < 5; i++) tx((i * 37) % ENTRIES)
  const before = walSize()
  for (let i = 0; i < UPDATES; i++) tx((i * 7919) % ENTRIES)
  const bytes = (walSize() - before) / UPDATES
  db.close()
  return { name, page, bytes, frames: bytes / (page + 24) }
}

const VARIANTS = [
  ['lean store', {}],
  ['without the agent row update', { agent: false }],
  ['without the category index', { category: false }],
  ['without the recency index', { recency: false }],
  ['the entries table alone', { recency: false, category: false, agent: false }],
  ['lean store, 1 KiB pages', { page: 1024 }],
]

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-wal-pages-'))
try {
  process.stdout.write(`WAL written per update, ${ENTRIES.toLocaleString('en-US')} entries:\n\n`)
  process.stdout.write('| variant | page | bytes per update | frames per update |\n|:--|--:|--:|--:|\n')
  for (const [name, v] of VARIANTS) {
    const r = { ...measure(dir, name.replace(/\W+/g, '-'), v), name }
    process.stdout.write(`| ${r.name} | ${r.page} | ${Math.round(r.bytes).toLocaleString('en-US')} | ${r.frames.toFixed(2)} |\n`)
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
