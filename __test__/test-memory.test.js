'use strict'
// R-HOST-4 test memories under `node --test`'s default concurrency: test files run in parallel
// processes, each creating test memories, and each creation sweeps the folders of dead
// processes. A sweep must never take a folder that another process is still setting up.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { tempRoot, runNode } = require('./helpers')

const PROCESSES = Number(process.env.TEST_MEMORY_PROCESSES || 6)
const ROUNDS = Number(process.env.TEST_MEMORY_ROUNDS || 300)
const WORKER = path.join(__dirname, 'workers', 'churn-worker.js')

function run(tmp) {
  return runNode(WORKER, [ROUNDS], { ...process.env, TMPDIR: tmp })
}

test(`R-HOST-4 ${PROCESSES} processes × ${ROUNDS} test memories created and disposed at once: no failure, nothing left`, async (t) => {
  // A temporary folder of its own: only these processes sweep it.
  const tmp = tempRoot(t)
  const results = await Promise.all(Array.from({ length: PROCESSES }, () => run(tmp)))
  const failures = []
  let created = 0
  for (const r of results) {
    assert.equal(r.code, 0, `a worker exited with ${r.code ?? r.signal}: ${r.err}`)
    const report = JSON.parse(r.out)
    created += report.created
    failures.push(...report.failures)
  }
  assert.deepEqual(failures, [], `${failures.length} of ${PROCESSES * ROUNDS} creations failed`)
  assert.equal(created, PROCESSES * ROUNDS)
  assert.deepEqual(fs.readdirSync(tmp), [], 'every test memory was deleted')
})
