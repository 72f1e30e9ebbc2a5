'use strict'
// Updates entries of one agent from a process of its own, for the rows that need one:
//
//   node bench/writer-child.js '<json>'   → one JSON line on stdout
//   json: { mode, side: "ours" | "lean" | "copy", root, agentId, dir, quota, templates,
//           entries, count, seed, walCount? }
//
// mode "updates" (WAL bytes and syscalls per update):
//   1. a few warm-up updates;
//   2. `walCount` updates, each followed by the size of the -wal file: the growth per update is
//      the WAL written per update (SQLite appends frames until a checkpoint lets it restart
//      from the start of the file; the counts are small enough that it does not, and the
//      median of the growths is taken should it have);
//   3. `count` updates between two marker calls (`access` of a path that does not exist), so
//      that `strace -f` output can be cut to them: checkpoints happen here as they would.
// mode "writers" (N processes writing one agent): makes 20 warm-up updates, prints "ready",
//   waits for a line on stdin, makes `count` updates, and answers when it started and ended
//   (milliseconds since the epoch).
//
// Keys are drawn from the agent's `entries` keys (rows.KEYS.group), so every write is an
// update of a 100-byte value.

const fs = require('node:fs')
const path = require('node:path')
const { picks } = require('./measure')
const S = require('./stores')
const R = require('./rows')

const args = JSON.parse(process.argv[2])
const VALUE = Buffer.alloc(100, 0x61)
const CATEGORY = 'CONTEXT'
const MARK = '/rotifer-bench-mark'

function store() {
  if (args.side === 'ours') {
    const memory = require('../index.js')
    const mem = new memory.GeneMemoryAccess({ agentId: args.agentId, geneId: S.GENE_ID, domain: S.DOMAIN, root: args.root })
    return {
      dbPath: path.join(args.root, '.rotifer', 'memory', `${args.agentId}.db`),
      update: (k) => {
        if (mem.writeMemory(k, VALUE, CATEGORY) === null) throw new Error('ours: write refused')
      },
    }
  }
  const Store = args.side === 'lean' ? S.Lean : S.SchemaCopy
  const st = new Store(args.dir, S.plainSource(args), { create: false })
  return { dbPath: st.dbPath, update: (k) => st.write(k, VALUE, CATEGORY, true) }
}

const mark = (what) => {
  try {
    fs.accessSync(`${MARK}/${what}`)
  } catch {
    // the point is the system call
  }
}

const walSize = (dbPath) => {
  try {
    return fs.statSync(`${dbPath}-wal`).size
  } catch {
    return 0
  }
}

/** The page size in a database file's header (offset 16; 1 means 65,536). */
function pageSize(dbPath) {
  const fd = fs.openSync(dbPath, 'r')
  try {
    const b = Buffer.alloc(2)
    fs.readSync(fd, b, 0, 2, 16)
    const n = b.readUInt16BE(0)
    return n === 1 ? 65536 : n
  } finally {
    fs.closeSync(fd)
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

function updates(st) {
  const keys = picks(args.seed, 10 + args.walCount + args.count, args.entries).map(R.KEYS.group)
  let i = 0
  for (; i < 10; i++) st.update(keys[i])
  const growths = []
  let before = walSize(st.dbPath)
  for (let j = 0; j < args.walCount; j++, i++) {
    st.update(keys[i])
    const after = walSize(st.dbPath)
    growths.push(after - before)
    before = after
  }
  const restarted = growths.some((g) => g <= 0)
  const walBytes = restarted ? median(growths.filter((g) => g > 0)) : growths.reduce((a, b) => a + b, 0) / growths.length
  mark('begin')
  for (let j = 0; j < args.count; j++, i++) st.update(keys[i])
  mark('end')
  const page = pageSize(st.dbPath)
  return { walBytes, walFrames: walBytes / (page + 24), pageSize: page, walRestarted: restarted }
}

async function writers(st) {
  const keys = picks(args.seed, args.count, args.entries).map(R.KEYS.group)
  // Warm-up off the clock (statements prepared, JavaScript compiled), as in every other row.
  for (const k of keys.slice(0, 20)) st.update(k)
  process.stdout.write('ready\n')
  await new Promise((resolve) => process.stdin.once('data', resolve))
  const start = performance.timeOrigin + performance.now()
  for (const k of keys) st.update(k)
  const end = performance.timeOrigin + performance.now()
  process.stdin.pause()
  return { start, end, writes: keys.length }
}

async function main() {
  const st = store()
  const result = args.mode === 'updates' ? updates(st) : await writers(st)
  process.stdout.write(JSON.stringify(result) + '\n')
}

main().catch((e) => {
  process.stderr.write(`${e.stack || e}\n`)
  process.exitCode = 1
})
