#!/usr/bin/env bash
# The long form of the worker-thread race (concurrency.test.js): many rounds of 4 worker threads
# opening one agent at the same moment, then a second process opening and closing it, then more
# writes. Every round must keep the process's POSIX lock on the database, and every
# acknowledged write must be on disk. Usage: scripts/worker-race-long.sh [rounds=200]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f rotifer-memory.linux-x64-gnu.node ] || npm run build
exec node -e '
const fs = require("node:fs"), os = require("node:os"), path = require("node:path")
const { round } = require("./__test__/workers/worker-race.js")
;(async () => {
  const rounds = Number(process.argv[1])
  let acked = 0, failed = 0
  for (let i = 0; i < rounds; i++) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "rotifer-worker-race-"))
    try {
      const r = await round(root)
      acked += r.acked.length
      const onDisk = new Set(r.onDisk || [])
      const lost = r.acked.filter((k) => !onDisk.has(k)).length
      if (r.locks === 0 || lost || r.errors.length || !r.onDisk || r.onDisk.length !== r.acked.length) {
        failed++
        console.log(`round ${i}: locks ${r.locks}, acknowledged ${r.acked.length}, on disk ${r.onDisk && r.onDisk.length}, lost ${lost}, errors ${r.errors.length} ${r.errors[0] || ""} ${r.readErr}`)
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
  console.log(`${rounds - failed} passed, ${failed} failed (${acked} acknowledged writes, all checked on disk)`)
  process.exitCode = failed ? 1 : 0
})()
' "${1:-200}"
