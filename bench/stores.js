'use strict'
// The two stores the benchmark compares, and the bulk filler that builds large agents fast.
//
// - Ours: the public API (`GeneMemoryAccess`, `createAgentMemory`) on an agent under a
//   temporary project root.
// - Baseline: what a user would hand-roll with better-sqlite3: the same `entries` table and
//   indexes as ours (copied from our database's own schema), WAL with synchronous=NORMAL, reads
//   with a prepared `get`, and every write in one transaction that also appends its audit line
//   with `fs.appendFileSync` (which opens and closes the file on every write, as our store does).
//   The baseline does no validation, no access check, no expiry, no quota and no lookup before a
//   write: the caller tells it whether the key exists.
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
    tool({ op: 'fill', dbPath: this.dbPath, agentId: this.agentId, template, count, keys, values })
  }

  /** The schema of the entries table and its indexes, as our store created it. */
  entriesSchema() {
    return tool({ op: 'schema', dbPath: this.dbPath }).sql
  }

  /** Whether any entry of `category` is left (through our API). */
  has(category) {
    return this.mem.queryMemory({ category, limit: 1 }).length > 0
  }
}

// ---------------------------------------------------------------------------------------------
// Baseline

const BASELINE_SELECT = 'SELECT * FROM entries WHERE key = ?'

class Baseline {
  /**
   * A database in `dir` with the same entries table as `ours`, for the same agent id (so that
   * entry ids and audit lines have the same length).
   */
  constructor(dir, ours) {
    fs.mkdirSync(dir, { recursive: true })
    this.agentId = ours.agentId
    this.ours = ours
    this.dbPath = path.join(dir, 'baseline.db')
    this.auditPath = path.join(dir, 'audit.jsonl')
    this.db = new Database(this.dbPath)
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('synchronous = NORMAL')
    this.db.exec(ours.entriesSchema().join(';\n'))
    this.seq = 0
    this.prepare()
  }

  prepare() {
    const db = this.db
    const cols = db.prepare('PRAGMA table_info(entries)').all().map((c) => c.name)
    this.cols = cols
    this.at = Object.fromEntries(cols.map((c, i) => [c, i]))
    this.getStmt = db.prepare(BASELINE_SELECT)
    const changed = ['category', 'value', 'size', 'last_accessed_by', 'updated_at', 'seq']
    this.upsertStmt = db.prepare(
      `INSERT INTO entries (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ` +
        `ON CONFLICT(key) DO UPDATE SET ${changed.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    )
    this.queryStmt = db.prepare(
      'SELECT * FROM entries WHERE key >= ? AND key < ? ORDER BY updated_at DESC, seq DESC LIMIT ?',
    )
    this.victimsStmt = db.prepare(
      'SELECT key, entry_id, size FROM entries WHERE category = ? ORDER BY updated_at, seq LIMIT ?',
    )
    this.deleteStmt = db.prepare('DELETE FROM entries WHERE key = ?')
    this.writeTx = db.transaction((row, line) => {
      this.upsertStmt.run(row)
      fs.appendFileSync(this.auditPath, line)
    })
    this.evictTx = db.transaction((row, line, victimCategory, victimName, n, ts) => {
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

  /** The same rows as `ours.fill`. */
  fill(category, count, keys, values) {
    const template = this.ours.template(category)
    const firstSeq = this.seq + 1
    R.bulkInsert(this.db, this.agentId, template, {
      count,
      keys: R.KEYS[keys],
      values: R.values(values),
      firstSeq,
      firstTime: template.updated_at - count - 1,
    })
    this.seq = firstSeq + count - 1
    this.db.pragma('wal_checkpoint(TRUNCATE)')
  }

  read(key) {
    return this.getStmt.get(Buffer.from(key))
  }

  /** A row for `key`, cloned from the template of `category`. */
  row(key, value, category, now) {
    const at = this.at
    this.bases ??= {}
    this.bases[category] ??= this.cols.map((c) => this.ours.template(category)[c])
    const row = this.bases[category].slice()
    const k = Buffer.from(key)
    const id = R.entryId(this.agentId, key)
    row[at.key] = k
    row[at.entry_id] = id
    row[at.value] = value
    row[at.size] = k.length + value.length
    row[at.seq] = ++this.seq
    row[at.created_at] = now
    row[at.updated_at] = now
    return { row, id, size: k.length + value.length }
  }

  /** Creates or updates `key` (the caller says which) and appends its audit line, in one transaction. */
  write(key, value, category, exists) {
    const now = Date.now()
    const { row, id, size } = this.row(key, value, category, now)
    const line = auditLine(new Date(now).toISOString(), this.agentId, exists ? 'memory.update' : 'memory.create', GENE_ID, key, id, category, size)
    this.writeTx(row, line)
  }

  query(prefix, limit) {
    return this.queryStmt.all(Buffer.from(prefix), prefixEnd(prefix), limit)
  }

  /** Deletes the `n` oldest entries of `victimCategory`, then creates `key`: one transaction, one append. */
  evictAndWrite(key, value, category, victimCategory, n) {
    const now = Date.now()
    const ts = new Date(now).toISOString()
    const { row, id, size } = this.row(key, value, category, now)
    const line = auditLine(ts, this.agentId, 'memory.create', GENE_ID, key, id, category, size)
    return this.evictTx(row, line, this.ours.template(victimCategory).category, victimCategory, n, ts)
  }

  remove(key) {
    this.deleteStmt.run(Buffer.from(key))
  }

  count(category) {
    return this.db.prepare('SELECT COUNT(*) AS n FROM entries WHERE category = ?').get(this.ours.template(category).category).n
  }

  close() {
    this.db.close()
  }

  /** What a user does to start: open the database with the pragmas and read one key. */
  static openAndRead(dbPath, key) {
    const db = new Database(dbPath)
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    const row = db.prepare(BASELINE_SELECT).get(Buffer.from(key))
    return { db, row }
  }
}

function auditLine(ts, agentId, action, actor, key, entryId, category, size) {
  return JSON.stringify({ ts, agentId, action, actor, key, entryId, category, size }) + '\n'
}

module.exports = { GENE_ID, DOMAIN, Ours, Baseline, prefixEnd, openDescriptors }
