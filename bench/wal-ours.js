#!/usr/bin/env node
'use strict'
// WAL written by OUR store per writeMemory update and per create, in an agent of `entries`
// entries: the counterpart of wal-pages.js for the store itself.
//
//   node bench/wal-ours.js [entries] [package dir] [value bytes]   (default 10,000; this package; 100)
//
// Passing another build's folder (e.g. a checkout of an older version) measures that build:
// the way to compare schema versions. A second process holds a read transaction on the
// database (better-sqlite3: two SQLite libraries must not share a process), taken right after a
// TRUNCATE checkpoint, so no checkpoint runs meanwhile and the -wal file's growth is exactly
// what the writes appended. A frame is one page plus a 24-byte header.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const R = require('./rows')

const ENTRIES = Number(process.argv[2] ?? 10_000)
const PKG = path.resolve(process.argv[3] ?? path.join(__dirname, '..'))
const VALUE = Number(process.argv[4] ?? 100)
const WRITES = 200
const FRAME = 4096 + 24

/** A process that checkpoints the WAL away, then holds a read snapshot until told to stop. */
function holdSnapshot(db) {
  const code = `
    const D = require(${JSON.stringify(require.resolve('better-sqlite3'))})
    const d = new D(${JSON.stringify(db)}, { timeout: 30000 })
    d.pragma('wal_checkpoint(TRUNCATE)')
    d.exec('BEGIN'); d.prepare('SELECT COUNT(*) FROM agent').get()
    process.stdout.write('held\\n')
    process.stdin.on('data', () => { d.exec('COMMIT'); d.close(); process.exit(0) })`
  const p = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    p.stdout.once('data', () => resolve({ release: () => new Promise((r) => (p.on('exit', r), p.stdin.write('x'))) }))
    p.on('error', reject)
  })
}

async function main() {
  const memory = require(PKG)
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-wal-ours-'))
  try {
    memory.createAgentMemory({ agentId: 'bench', root, quota: '1GB' })
    const m = new memory.GeneMemoryAccess({ agentId: 'bench', geneId: 'v2:' + 'a'.repeat(64), root })
    const value = new Uint8Array(VALUE).fill(0x61)
    for (let i = 0; i < ENTRIES; i++) m.writeMemory(R.KEYS.group(i), value, 'CONTEXT')
    const db = path.join(root, '.rotifer', 'memory', 'bench.db')
    const wal = () => fs.statSync(`${db}-wal`).size
    const per = async (write) => {
      const holder = await holdSnapshot(db)
      const before = wal()
      for (let i = 0; i < WRITES; i++) write(i)
      const bytes = (wal() - Math.max(before, 32)) / WRITES
      await holder.release()
      return { bytes: Math.round(bytes), frames: +(bytes / FRAME).toFixed(2) }
    }
    // Updates of entries spread over the agent; creates of keys that land all over key order.
    const update = await per((i) => m.writeMemory(R.KEYS.group((i * 7919) % ENTRIES), value, 'CONTEXT'))
    const create = await per((i) => m.writeMemory(R.KEYS.missing((i * 7919) % ENTRIES), value, 'CONTEXT'))
    process.stdout.write(JSON.stringify({ package: PKG, entries: ENTRIES, valueBytes: VALUE, update, create }) + '\n')
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
