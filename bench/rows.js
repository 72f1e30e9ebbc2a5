'use strict'
// Rows and keys shared by the benchmark process and its fill tool: key schemes, values, entry
// ids, and the bulk insert that clones a template row our store wrote.

const { createHash } = require('node:crypto')

const pad = (n, width) => String(n).padStart(width, '0')

/** R-ENT: lowercase hex SHA-256 of agentId ‖ 0x00 ‖ key. */
function entryId(agentId, key) {
  return createHash('sha256').update(`${agentId}\0${key}`).digest('hex')
}

/** Keys in groups of `GROUP` consecutive entries, so that a prefix selects one group at any size. */
const GROUP = 200
const groupPrefix = (g) => `s${pad(g, 6)}/`
const groupCount = (n) => Math.max(1, Math.floor(n / GROUP))

/** Key schemes, by name (the fill tool gets names, not functions). */
const KEYS = {
  /** 15 bytes: `s000042/0008417`. */
  group: (i) => `${groupPrefix(Math.floor(i / GROUP))}${pad(i, 7)}`,
  /** 15 bytes, never written: `z000042/0008417`. */
  missing: (i) => `z${pad(Math.floor(i / GROUP), 6)}/${pad(i, 7)}`,
  /** 9 bytes: `ev/000042`. */
  evict: (i) => `ev/${pad(i, 6)}`,
  /** 7 bytes: `big/042`. */
  big: (i) => `big/${pad(i, 3)}`,
}

/** Values: `{ bytes, fill }` (every value alike) or `{ bytes, byIndex: true }` (filled with i). */
function values(spec) {
  if (spec.byIndex) return (i) => Buffer.alloc(spec.bytes, i & 0xff)
  const v = Buffer.alloc(spec.bytes, spec.fill ?? 0x61)
  return () => v
}

const REQUIRED_COLUMNS = ['key', 'entry_id', 'category', 'value', 'size', 'seq', 'created_at', 'updated_at']

function checkTemplate(template) {
  for (const c of REQUIRED_COLUMNS) {
    if (!(c in template)) throw new Error(`the entries table has no column ${c}; the benchmark must follow the schema`)
  }
}

/**
 * Inserts `count` rows cloned from `template` (one transaction): row i gets key `keys(i)`,
 * value `values(i)`, its entry id and size (R-ENT-2), sequence `firstSeq + i` and time
 * `firstTime + i`. Answers the bytes added.
 */
function bulkInsert(db, agentId, template, { count, keys, values, firstSeq, firstTime }) {
  checkTemplate(template)
  const cols = Object.keys(template)
  const at = Object.fromEntries(cols.map((c, i) => [c, i]))
  const base = cols.map((c) => template[c])
  const insert = db.prepare(`INSERT INTO entries (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`)
  let bytes = 0
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const key = keys(i)
      const k = Buffer.from(key)
      const v = values(i)
      const row = base.slice()
      row[at.key] = k
      row[at.entry_id] = entryId(agentId, key)
      row[at.value] = v
      row[at.size] = k.length + v.length
      row[at.seq] = firstSeq + i
      row[at.created_at] = firstTime + i
      row[at.updated_at] = firstTime + i
      insert.run(row)
      bytes += k.length + v.length
    }
  })()
  return bytes
}

/** Row objects through JSON: Buffers as `{ $b64 }`. */
const encodeRow = (row) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Buffer.isBuffer(v) ? { $b64: v.toString('base64') } : v]))
const decodeRow = (row) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v && typeof v === 'object' && '$b64' in v ? Buffer.from(v.$b64, 'base64') : v]))

module.exports = { pad, entryId, GROUP, groupPrefix, groupCount, KEYS, values, checkTemplate, bulkInsert, encodeRow, decodeRow }
