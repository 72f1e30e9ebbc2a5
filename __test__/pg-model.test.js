'use strict'
// The model-based test of __test__/model.test.js on PostgreSQL (R-BIND-2): the same random call
// sequences, through the JS calls and the WASM host functions, with the memory on a server; every
// result, error code, audit row and telemetry event, and the final state in the server's tables,
// must agree with the reference model of the specification.
//
// Reproduce a failure with the seed it prints:
//   MODEL_SEED=<seed> MODEL_SEQUENCES=1 node scripts/pg-cluster.js -- node --test __test__/pg-model.test.js
const test = require('node:test')
const assert = require('node:assert/strict')
const { unavailable, database } = require('./pg/server')
const { runSequence } = require('./model/runner')

const skip = unavailable() || false
const SEQUENCES = Number(process.env.MODEL_SEQUENCES || 4)
const OPS = Number(process.env.MODEL_OPS || 200)
const BASE_SEED = Number(process.env.MODEL_SEED || 20261202)

test(`${SEQUENCES} random call sequences of ${OPS} operations on PostgreSQL agree with the reference model (seeds ${BASE_SEED}…)`, { skip }, (t) => {
  const total = {}
  for (let i = 0; i < SEQUENCES; i++) {
    const { admin, roles } = database(t, [`m${i}`])
    for (const [k, v] of Object.entries(runSequence(BASE_SEED + i, OPS, { url: roles[`m${i}`], admin }))) total[k] = (total[k] || 0) + v
  }
  if (process.env.MODEL_SEED) return
  const want = [
    'write:ok', 'write:MEMORY_ACCESS_DENIED', 'write:MEMORY_QUOTA_EXCEEDED', 'write:MEMORY_INVALID_INPUT',
    'read:ok', 'read:MEMORY_ACCESS_DENIED', 'query:ok', 'delete:ok', 'delete:MEMORY_NOT_FOUND',
    'wasm:ok', 'wasm:MEMORY_ACCESS_DENIED', 'list:ok', 'ddelete:ok', 'configure:ok',
    'memory.create', 'memory.update', 'memory.delete', 'memory.evict', 'memory.expire', 'memory.quota_reject', 'memory.access_denied',
  ]
  for (const k of want) assert.ok(total[k] > 0, `the sequences covered ${k}: ${JSON.stringify(total)}`)
})
