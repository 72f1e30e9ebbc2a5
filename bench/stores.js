'use strict'
// The stores the benchmark compares, and the bulk filler that builds large agents fast.
//
// - Ours: the public API (`GeneMemoryAccess`, `createAgentMemory`) on an agent under a
//   temporary project root.
// - Lean (the baseline every ratio and verdict is against): the lean store a user would
//   hand-roll with better-sqlite3 to support the same calls: a key-ordered `WITHOUT ROWID`
//   entries table with the same columns as ours, a recency index, a category index for
//   eviction, a partial expiry index (only rows that expire), an agent row with the quota, the
//   byte total and the last sequence number; WAL with synchronous=NORMAL. A write is one
//   immediate transaction: look up the old size, advance the agent row (refusing a write over
//   the quota), upsert the row, and append the audit line to a descriptor opened once.
// - SchemaCopy (for reference): the same entries table and indexes as ours (copied from our
//   database's own schema), and every write appends its audit line with `fs.appendFileSync`
//   (which opens and closes the file on every write). It does no lookup before a write (the
//   caller tells it whether the key exists) and keeps no agent row: it inherits our schema's
//   costs instead of measuring them.
// Neither hand-rolled store validates, checks access or purges expired entries.
// - Filling: rows are cloned from a template row that our own store wrote, so they have exactly
//   the shape our store writes; in our database the agent row's byte total and sequence are
//   advanced to match. Our database is only ever opened with better-sqlite3 in a child process
//   (fill-tool.js): two SQLite libraries in one process break each other's POSIX locks.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { createHash } = require('node:crypto')
const Database = require('better-sqlite3')
const memory = require('../index.js')
const R = require('./rows')

/** The gene that reads and writes in every benchmark. */
const GENE_ID = 'v2:' + createHash('sha256').update('rotifer-bench-gene').digest('hex')
const DOMAIN = 'bench'

/** The smallest byte string above every string that starts with `prefix` (for key ranges). */
function prefixEnd(prefix) {
  const b = Buffer.from(prefix)
  let i = b.length - 1
  while (i >= 0 && b[i] === 0xff) i--
  if (i < 0) return null
  const end = Buffer.from(b.subarray(0, i + 1))
  end[i]++
  return end
}

/** The SQLite version that last wrote a database file (its header, offset 96). */
function fileSqliteVersion(dbPath) {
  const fd = fs.openSync(dbPath, 'r')
  try {
    const b = Buffer.alloc(4)
    fs.readSync(fd, b, 0, 4, 96)
    const n = b.readUInt32BE(0)
    return `${Math.floor(n / 1e6)}.${Math.floor(n / 1e3) % 1000}.${n % 1000}`
  } finally {
    fs.closeSync(fd)
  }
}

/** How many of this process's file descriptors point at `file` (Linux; `null` elsewhere). */
function openDescriptors(file) {
  let names
  try {
    names = fs.readdirSync('/proc/self/fd')
  } catch {
    return null
  }
  let n = 0
  for (const fd of names) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === file) n++
    } catch {
      // closed meanwhile
    }
  }
  return n
}

/** Runs the fill tool on one of our databases, in a child process (see fill-tool.js). */
function tool(args) {
  const p = spawnSync(process.execPath, [path.join(__dirname, 'fill-tool.js'), JSON.stringify(args)], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  if (p.status !== 0) throw new Error(`fill tool (${args.op}) failed: ${p.stderr || p.error}`)
  return JSON.parse(p.stdout)
}

// ---------------------------------------------------------------------------------------------
// Ours

class Ours {
  /** Creates the agent's memory under `root` with `quota` (bytes). */
  constructor(root, agentId, quota) {
    fs.mkdirSync(root, { recursive: true })
    this.root = root
    this.agentId = agentId
    this.quota = quota
    memory.createAgentMemory({ agentId, root, quota })
    this.dbPath = path.join(root, '.rotifer', 'memory', `${agentId}.db`)
    this.sqliteVersion = fileSqliteVersion(this.dbPath)
    this.mem = this.open()
    this.templates = {}
  }

  open() {
    return new memory.GeneMemoryAccess({ agentId: this.agentId, geneId: GENE_ID, domain: DOMAIN, root: this.root })
  }

  /** The row our store writes for an entry of `category` (written, read back, deleted). */
  template(category) {
    if (this.templates[category]) return this.templates[category]
    const key = `~template/${category}`
    this.mem.writeMemory(key, new Uint8Array(1), category)
    const row = R.decodeRow(tool({ op: 'template', dbPath: this.dbPath, key }).row)
    if (row.entry_id !== R.entryId(this.agentId, key)) throw new Error('entry ids do not follow R-ENT; the benchmark must follow the store')
    this.mem.deleteMemory(key)
    this.templates[category] = row
    return row
  }

  /**
   * Adds `count` entries of `category` straight into the database (keys: a scheme of
   * rows.KEYS; values: a spec of rows.values), advancing the agent row to match.
   */
  fill(category, count, keys, values) {
    const template = R.encodeRow(this.template(category))
    tool({ op: 'fill', dbPath: this.dbPath, agentId: this.agentId, template, count, keys, values, ours: true })
    // A write of ours: it checkpoints what the tool left in the WAL, before anything is timed.
    this.mem.writeMemory('~fill', new Uint8Array(1), category)
    this.mem.deleteMemory('~fill')
  }

  /** The entries table and its indexes as our store created them: `{ sql: [...], columns: [...] }`. */
  entriesSchema() {
    this.schemaInfo ??= tool({ op: 'schema', dbPath: this.dbPath })
    return this.schemaInfo
  }

  /** Whether any entry of `category` is left (through our API). */
  has(category) {
    return this.mem.queryMemory({ category, limit: 1 }).length > 0
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-rolled baselines

const BASELINE_SELECT = 'SELECT * FROM entries WHERE key = ?'
const RANGE_SELECT = 'SELECT * FROM entries WHERE key >= ? AND key < ? ORDER BY updated_at DESC, seq DESC LIMIT ?'
const NEWEST_SELECT = 'SELECT * FROM entries ORDER BY updated_at DESC, seq DESC LIMIT ?'

/** What a user sets on every connection: WAL, synchronous=NORMAL, a wait for the write lock. */
function openBaselineDb(dbPath) {
  const db = new Database(dbPath, { timeout: 30_000 })
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  return db
}

/**
 * What both hand-rolled stores share. `source` is what they need of ours: `agentId` (so that
 * entry ids and audit lines have the same length), `quota`, `template(category)` (the row our
 * store writes) and `entriesSchema()` (our entries table: `{ sql, columns }`).
 */
class HandRolled {
  constructor(dir, source, { create = true } = {}) {
    fs.mkdirSync(dir, { recursive: true })
    this.agentId = source.agentId
    this.source = source
    this.dir = dir
    this.dbPath = path.join(dir, 'baseline.db')
    this.auditPath = path.join(dir, 'audit.jsonl')
    this.db = openBaselineDb(this.dbPath)
    if (create) this.db.exec(this.schema())
    const db = this.db
    this.cols = db.prepare('PRAGMA table_info(entries)').all().map((c) => c.name)
    this.at = Object.fromEntries(this.cols.map((c, i) => [c, i]))
    this.getStmt = db.prepare(BASELINE_SELECT)
    const changed = ['category', 'value', 'size', 'last_accessed_by', 'updated_at', 'seq']
    this.upsertStmt = db.prepare(
      `INSERT INTO entries (${this.cols.join(', ')}) VALUES (${this.cols.map(() => '?').join(', ')}) ` +
        `ON CONFLICT(key) DO UPDATE SET ${changed.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    )
    this.queryStmt = db.prepare(RANGE_SELECT)
    this.newestStmt = db.prepare(NEWEST_SELECT)
    this.victimsStmt = db.prepare('SELECT key, entry_id, size FROM entries WHERE category = ? ORDER BY updated_at, seq LIMIT ?')
    this.deleteStmt = db.prepare('DELETE FROM entries WHERE key = ?')
    this.prepare()
  }

  /** A row for `key` (a Buffer; `name` its text), cloned from the template of `category`. */
  row(k, name, value, category, now, seq) {
    const at = this.at
    this.bases ??= {}
    this.bases[category] ??= this.cols.map((c) => this.source.template(category)[c])
    const row = this.bases[category].slice()
    const id = R.entryId(this.agentId, name)
    row[at.key] = k
    row[at.entry_id] = id
    row[at.value] = value
    row[at.size] = k.length + value.length
    row[at.seq] = seq
    row[at.created_at] = now
    row[at.updated_at] = now
    return { row, id, size: k.length + value.length }
  }

  /** Bulk-inserts the same rows as `Ours.fill` (first sequence number `firstSeq`); answers the bytes. */
  insertRows(category, count, keys, values, firstSeq) {
    const template = this.source.template(category)
    return R.bulkInsert(this.db, this.agentId, template, {
      count,
      keys: R.KEYS[keys],
      values: R.values(values),
      firstSeq,
      firstTime: template.updated_at - count - 1,
    })
  }

  read(key) {
    return this.getStmt.get(Buffer.from(key))
  }

  query(prefix, limit) {
    return this.queryStmt.all(Buffer.from(prefix), prefixEnd(prefix), limit)
  }

  /** The `limit` most recently updated entries, whatever their key or category. */
  newest(limit) {
    return this.newestStmt.all(limit)
  }

  count(category) {
    return this.db.prepare('SELECT COUNT(*) AS n FROM entries WHERE category = ?').get(this.source.template(category).category).n
  }

  close() {
    this.db.close()
  }

  /** What a user does to start: open the database with the pragmas and read one key. */
  static openAndRead(dbPath, key) {
    const db = openBaselineDb(dbPath)
    const row = db.prepare(BASELINE_SELECT).get(Buffer.from(key))
    return { db, row }
  }
}

/** The lean hand-rolled store: every ratio and verdict is against this one. */
class Lean extends HandRolled {
  schema() {
    const def = this.source
      .entriesSchema()
      .columns.map((c) => `${c.name} ${c.type}${c.notnull ? ' NOT NULL' : ''}${c.name === 'key' ? ' PRIMARY KEY' : ''}`)
    return [
      'CREATE TABLE agent (id INTEGER PRIMARY KEY CHECK (id = 1), quota INTEGER NOT NULL, used_bytes INTEGER NOT NULL, last_seq INTEGER NOT NULL)',
      `INSERT INTO agent VALUES (1, ${Number(this.source.quota)}, 0, 0)`,
      `CREATE TABLE entries (${def.join(', ')}) WITHOUT ROWID`,
      'CREATE INDEX entries_by_recency ON entries (updated_at, seq)',
      'CREATE INDEX entries_by_category ON entries (category, updated_at, seq)',
      'CREATE INDEX entries_by_expiry ON entries (expires_at) WHERE expires_at IS NOT NULL',
    ].join(';\n')
  }

  prepare() {
    const db = this.db
    this.sizeStmt = db.prepare('SELECT size FROM entries WHERE key = ?').pluck()
    this.agentStmt = db.prepare(
      'UPDATE agent SET used_bytes = used_bytes + ?, last_seq = last_seq + 1 WHERE id = 1 RETURNING used_bytes, quota, last_seq',
    )
    this.auditFd = fs.openSync(this.auditPath, 'a', 0o600)
    this.writeTx = db.transaction((key, value, category) => this.writeIn(key, value, category, [], null))
    this.evictTx = db.transaction((key, value, category, victimCategory, n) => {
      const ts = new Date().toISOString()
      const victims = this.victimsStmt.all(this.source.template(victimCategory).category, n).map((v) => ({ ...v, category: victimCategory }))
      this.writeIn(key, value, category, victims, ts)
      return victims.length
    })
    this.removeTx = db.transaction((k) => {
      const old = this.sizeStmt.get(k)
      if (old === undefined) return
      this.deleteStmt.run(k)
      db.prepare('UPDATE agent SET used_bytes = used_bytes - ? WHERE id = 1').run(old)
    })
  }

  /**
   * The body of a write, inside its transaction: deletes the `victims` rows, looks up the old
   * size, advances the agent row (refusing a write over the quota), upserts the row and appends
   * the audit lines with one `write` to the open descriptor.
   */
  writeIn(key, value, category, victims, ts) {
    let freed = 0
    let lines = ''
    for (const v of victims) {
      this.deleteStmt.run(v.key)
      freed += v.size
      lines += auditLine(ts, this.agentId, 'memory.evict', null, v.key.toString(), v.entry_id, v.category, v.size)
    }
    const k = Buffer.from(key)
    const old = this.sizeStmt.get(k)
    const size = k.length + value.length
    const a = this.agentStmt.get(size - (old ?? 0) - freed)
    if (a.used_bytes > a.quota) throw new Error(`quota exceeded: ${a.used_bytes} > ${a.quota}`)
    const now = Date.now()
    const { row, id } = this.row(k, key, value, category, now, a.last_seq)
    this.upsertStmt.run(row)
    const action = old === undefined ? 'memory.create' : 'memory.update'
    fs.writeSync(this.auditFd, lines + auditLine(ts ?? new Date(now).toISOString(), this.agentId, action, GENE_ID, key, id, category, size))
  }

  fill(category, count, keys, values) {
    this.db.transaction(() => {
      const a = this.db.prepare('SELECT last_seq FROM agent').get()
      const bytes = this.insertRows(category, count, keys, values, a.last_seq + 1)
      this.db.prepare('UPDATE agent SET used_bytes = used_bytes + ?, last_seq = last_seq + ?').run(bytes, count)
    }).immediate()
    this.db.pragma('wal_checkpoint(TRUNCATE)')
  }

  /** Creates or updates `key`; the store itself finds out which. */
  write(key, value, category) {
    this.writeTx.immediate(key, value, category)
  }

  /** Deletes the `n` oldest entries of `victimCategory`, then creates `key`: one transaction, one append. */
  evictAndWrite(key, value, category, victimCategory, n) {
    return this.evictTx.immediate(key, value, category, victimCategory, n)
  }

  remove(key) {
    this.removeTx.immediate(Buffer.from(key))
  }

  close() {
    fs.closeSync(this.auditFd)
    super.close()
  }
}

/** The hand-rolled store with our schema copied, for reference (see the top of this file). */
class SchemaCopy extends HandRolled {
  schema() {
    return this.source.entriesSchema().sql.join(';\n')
  }

  prepare() {
    this.seq = 0
    this.writeTx = this.db.transaction((row, line) => {
      this.upsertStmt.run(row)
      fs.appendFileSync(this.auditPath, line)
    })
    this.evictTx = this.db.transaction((row, line, victimCategory, victimName, n, ts) => {
      const victims = this.victimsStmt.all(victimCategory, n)
      let lines = ''
      for (const v of victims) {
        this.deleteStmt.run(v.key)
        lines += auditLine(ts, this.agentId, 'memory.evict', null, v.key.toString(), v.entry_id, victimName, v.size)
      }
      this.upsertStmt.run(row)
      fs.appendFileSync(this.auditPath, lines + line)
      return victims.length
    })
  }

  fill(category, count, keys, values) {
    const firstSeq = this.seq + 1
    this.db.transaction(() => this.insertRows(category, count, keys, values, firstSeq))()
    this.seq = firstSeq + count - 1
    this.db.pragma('wal_checkpoint(TRUNCATE)')
  }

  /** Creates or updates `key` (the caller says which) and appends its audit line, in one transaction. */
  write(key, value, category, exists) {
    const now = Date.now()
    const { row, id, size } = this.row(Buffer.from(key), key, value, category, now, ++this.seq)
    const line = auditLine(new Date(now).toISOString(), this.agentId, exists ? 'memory.update' : 'memory.create', GENE_ID, key, id, category, size)
    this.writeTx(row, line)
  }

  evictAndWrite(key, value, category, victimCategory, n) {
    const now = Date.now()
    const ts = new Date(now).toISOString()
    const { row, id, size } = this.row(Buffer.from(key), key, value, category, now, ++this.seq)
    const line = auditLine(ts, this.agentId, 'memory.create', GENE_ID, key, id, category, size)
    return this.evictTx(row, line, this.source.template(victimCategory).category, victimCategory, n)
  }

  remove(key) {
    this.deleteStmt.run(Buffer.from(key))
  }
}

function auditLine(ts, agentId, action, actor, key, entryId, category, size) {
  return JSON.stringify({ ts, agentId, action, actor, key, entryId, category, size }) + '\n'
}

/** What a hand-rolled store needs of ours, in a process that has no `Ours` (see writer-child.js). */
function plainSource({ agentId, quota, templates }) {
  const rows = Object.fromEntries(Object.entries(templates).map(([c, r]) => [c, R.decodeRow(r)]))
  return { agentId, quota, template: (c) => rows[c] }
}

module.exports = { GENE_ID, DOMAIN, Ours, Lean, SchemaCopy, HandRolled, plainSource, prefixEnd, openDescriptors, fileSqliteVersion }
