#!/usr/bin/env node
'use strict'
// How long opening a schema-version-1 database takes when it migrates it to version 2.
//
//   node bench/migrate-v1.js <package dir of a version-1 build> [entries]   (default 100,000)
//
// The version-1 build writes one entry; the fill tool (another process, better-sqlite3) clones
// it into `entries` entries of 100 bytes; then this package opens the database, which migrates
// it, and reads one entry: timed. A second process opens the migrated database the same way,
// for the cost of an open alone.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const V1 = path.resolve(process.argv[2] ?? '')
const ENTRIES = Number(process.argv[3] ?? 100_000)
const OURS = path.join(__dirname, '..')
const GENE = 'v2:' + 'a'.repeat(64)

function node(code) {
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(r.stderr)
  return r.stdout
}

/** In a process of its own: opens the agent with `pkg`, reads one key; answers the milliseconds. */
function timedOpen(pkg, root) {
  return Number(
    node(`
      const memory = require(${JSON.stringify(pkg)})
      const t = process.hrtime.bigint()
      const e = memory.getAgentMemory({ agentId: 'bench', root: ${JSON.stringify(root)}, key: 'seed' })
      if (!e) throw new Error('no seed entry')
      process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6))`),
  )
}

function main() {
  if (!fs.existsSync(path.join(V1, 'index.js'))) throw new Error('usage: node bench/migrate-v1.js <package dir of a version-1 build> [entries]')
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-migrate-v1-'))
  try {
    node(`
      const memory = require(${JSON.stringify(V1)})
      memory.createAgentMemory({ agentId: 'bench', root: ${JSON.stringify(root)}, quota: '1GB' })
      new memory.GeneMemoryAccess({ agentId: 'bench', geneId: '${GENE}', root: ${JSON.stringify(root)} }).writeMemory('seed', new Uint8Array(100), 'CONTEXT')`)
    const dbPath = path.join(root, '.rotifer', 'memory', 'bench.db')
    const tool = (args) => JSON.parse(node(`process.argv[2] = ${JSON.stringify(JSON.stringify(args))}; require(${JSON.stringify(path.join(__dirname, 'fill-tool.js'))})`))
    const { row } = tool({ op: 'template', dbPath, key: 'seed' })
    tool({ op: 'fill', dbPath, agentId: 'bench', template: row, count: ENTRIES - 1, keys: 'group', values: { bytes: 100 } })
    const size = fs.statSync(dbPath).size
    const migrate = timedOpen(OURS, root)
    const open = timedOpen(OURS, root)
    process.stdout.write(
      JSON.stringify({ entries: ENTRIES, databaseBytes: size, firstOpenMs: +migrate.toFixed(1), openAfterMs: +open.toFixed(1), migrationMs: +(migrate - open).toFixed(1) }) + '\n',
    )
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

main()
