'use strict'
// Runs one large query in a process of its own and reports how much it raised the peak RSS.
//
//   node --expose-gc bench/memory-child.js '<json>'
//   json: { side: "ours" | "baseline", root, agentId, geneId, domain, dbPath, prefix, limit }
//
// Before the query the store is opened and used once (so that code, connection and schema are
// loaded), the heap is collected and, on Linux, the kernel's peak RSS is reset to the current
// RSS (/proc/self/clear_refs). The rise is then `peak RSS after − RSS before`: everything the
// query held at its peak, including the result it returns.
//
// The peak is the process's own high-water mark (VmHWM in /proc/self/status), which the reset
// lowers. `process.resourceUsage().maxRSS` is recorded too, but it cannot serve: it also keeps
// the RSS of the parent at the time it forked this process (the kernel carries it over exec).

const fs = require('node:fs')

const args = JSON.parse(process.argv[2])
const gc = globalThis.gc || (() => {})

function resetPeak() {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5')
    return true
  } catch {
    return false
  }
}

function prefixEnd(prefix) {
  const b = Buffer.from(prefix)
  b[b.length - 1]++
  return b
}

/** The peak RSS in bytes: VmHWM where Linux has it, else maxRSS. */
function peakRss() {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))
    if (m) return { bytes: Number(m[1]) * 1024, source: 'VmHWM' }
  } catch {
    // not Linux
  }
  return { bytes: process.resourceUsage().maxRSS * 1024, source: 'maxRSS' }
}

let run
if (args.side === 'ours') {
  const { GeneMemoryAccess } = require('../index.js')
  const mem = new GeneMemoryAccess({ agentId: args.agentId, geneId: args.geneId, domain: args.domain, root: args.root })
  mem.queryMemory({ keyPrefix: 'warm-up/', limit: 1 })
  run = () => mem.queryMemory({ keyPrefix: args.prefix, limit: args.limit })
} else {
  const Database = require('better-sqlite3')
  const db = new Database(args.dbPath)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  const stmt = db.prepare('SELECT * FROM entries WHERE key >= ? AND key < ? ORDER BY updated_at DESC, seq DESC LIMIT ?')
  stmt.all(Buffer.from('warm-up/'), prefixEnd('warm-up/'), 1)
  run = () => stmt.all(Buffer.from(args.prefix), prefixEnd(args.prefix), args.limit)
}

gc()
gc()
const reset = resetPeak()
const peakBefore = peakRss()
const rssBefore = process.memoryUsage().rss
const result = run()
const peakAfter = peakRss()
const rssAfter = process.memoryUsage().rss
const maxRSS = process.resourceUsage().maxRSS * 1024

let bytes = 0
for (const e of result) bytes += Buffer.byteLength(typeof e.key === 'string' ? e.key : e.key.toString()) + e.value.length

process.stdout.write(
  JSON.stringify({
    side: args.side,
    entries: result.length,
    resultBytes: bytes,
    peakSource: peakAfter.source,
    peakResetToCurrent: reset,
    rssBefore,
    peakBefore: peakBefore.bytes,
    peakAfter: peakAfter.bytes,
    rssAfter,
    maxRSS,
    // The rise of the peak over what was resident just before the query (if the peak could not
    // be reset, over the peak before it, which is at least the RSS before it).
    peakRise: peakAfter.bytes - (reset ? rssBefore : peakBefore.bytes),
  }) + '\n',
)
