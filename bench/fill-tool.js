'use strict'
// Reads and fills one of OUR agent databases with better-sqlite3, in a process of its own.
//
//   node bench/fill-tool.js '<json>'   → one JSON line on stdout
//   { op: "template", dbPath, key }                       → { row } (Buffers as { $b64 })
//   { op: "schema", dbPath }                              → { sql: [...], columns: [...] } (entries table and its indexes; its columns)
//   { op: "fill", dbPath, agentId, template, count, keys, values } → { bytes }
//
// It must be another process: the benchmark process has our store (its own SQLite) open on the
// same file, and two SQLite libraries in one process break each other's POSIX locks, so that
// closing one connection can make the other lose its WAL.
//
// `fill` clones the template row (written by our store) and then advances the agent row's
// byte total and last sequence by what it added, exactly as our store would have.

const Database = require('better-sqlite3')
const R = require('./rows')

const args = JSON.parse(process.argv[2])
const db = new Database(args.dbPath)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.pragma('cache_size = -262144')
// Our store checkpoints its database itself, bracketed by its lineage stamp (R-HOST-1b): a
// checkpoint made here would be another program's, which it takes for a restore. Its frames
// stay in the WAL, which the store checkpoints at its next write.
if (args.ours) db.pragma('wal_autocheckpoint = 0')

function run() {
  switch (args.op) {
    case 'template': {
      const row = db.prepare('SELECT * FROM entries WHERE key = ?').get(Buffer.from(args.key))
      if (!row) throw new Error(`no entry ${args.key} in the entries table`)
      R.checkTemplate(row)
      return { row: R.encodeRow(row) }
    }
    case 'schema': {
      const sql = db
        .prepare("SELECT sql FROM sqlite_master WHERE tbl_name = 'entries' AND sql IS NOT NULL ORDER BY rowid")
        .all()
        .map((r) => r.sql)
      const columns = db.prepare('PRAGMA table_info(entries)').all().map(({ name, type, notnull }) => ({ name, type, notnull: !!notnull }))
      return { sql, columns }
    }
    case 'fill': {
      const agentCols = db.prepare('PRAGMA table_info(agent)').all().map((c) => c.name)
      for (const c of ['used_bytes', 'last_seq']) {
        if (!agentCols.includes(c)) throw new Error(`the agent table has no column ${c}; the benchmark must follow the schema`)
      }
      const template = R.decodeRow(args.template)
      let bytes = 0
      db.transaction(() => {
        const agent = db.prepare('SELECT used_bytes, last_seq FROM agent').get()
        const firstSeq = agent.last_seq + 1
        bytes = R.bulkInsert(db, args.agentId, template, {
          count: args.count,
          keys: R.KEYS[args.keys],
          values: R.values(args.values),
          firstSeq,
          firstTime: template.updated_at - args.count - 1,
        })
        db.prepare('UPDATE agent SET used_bytes = used_bytes + ?, last_seq = ?').run(bytes, firstSeq + args.count - 1)
      }).immediate()
      const check = db.prepare('SELECT (SELECT used_bytes FROM agent) AS used, (SELECT SUM(size) FROM entries) AS sum').get()
      if (check.used !== (check.sum ?? 0)) throw new Error(`agent byte total ${check.used} != sum of entry sizes ${check.sum}`)
      if (!args.ours) db.pragma('wal_checkpoint(TRUNCATE)')
      return { bytes }
    }
    default:
      throw new Error(`unknown op ${args.op}`)
  }
}

const result = run()
db.close()
process.stdout.write(JSON.stringify(result) + '\n')
