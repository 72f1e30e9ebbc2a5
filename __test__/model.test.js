'use strict'
// Model-based test: random call sequences over several genes, domains and agents, run against
// the store and against a reference model of the specification (__test__/model/reference.js).
// A share of the gene calls goes through the WASM host functions (R-WASM) instead of JS. Every
// result, error code, audit line and telemetry event, and the final stored state, must
// agree. CI runs a bounded number of fixed seeds; scripts/model-long.sh runs many more.
//
// Reproduce a failure with the seed it prints:
//   MODEL_SEED=<seed> MODEL_SEQUENCES=1 node --test __test__/model.test.js

const test = require('node:test')
const assert = require('node:assert/strict')
const { runSequence } = require('./model/runner')

const SEQUENCES = Number(process.env.MODEL_SEQUENCES || 12)
const OPS = Number(process.env.MODEL_OPS || 250)
const BASE_SEED = Number(process.env.MODEL_SEED || 20261130)

test(`${SEQUENCES} random call sequences of ${OPS} operations agree with the reference model (seeds ${BASE_SEED}…)`, () => {
  const total = {}
  for (let i = 0; i < SEQUENCES; i++) {
    for (const [k, v] of Object.entries(runSequence(BASE_SEED + i, OPS))) total[k] = (total[k] || 0) + v
  }
  if (process.env.MODEL_SEED) return // a single reproduction need not cover everything
  // The generator really exercises every path: each call both succeeds and fails, and every
  // kind of audit line appears.
  const want = [
    'write:ok', 'write:MEMORY_ACCESS_DENIED', 'write:MEMORY_QUOTA_EXCEEDED', 'write:MEMORY_INVALID_INPUT',
    'read:ok', 'read:MEMORY_ACCESS_DENIED', 'read:MEMORY_INVALID_INPUT',
    'query:ok', 'query:MEMORY_INVALID_INPUT', 'query:MEMORY_ACCESS_DENIED',
    'delete:ok', 'delete:MEMORY_NOT_FOUND', 'delete:MEMORY_ACCESS_DENIED',
    'wasm:ok', 'wasm:MEMORY_ACCESS_DENIED', 'wasm:MEMORY_INVALID_INPUT', 'wasm:MEMORY_NOT_FOUND',
    'list:ok', 'ddelete:ok', 'ddelete:MEMORY_NOT_FOUND', 'configure:ok', 'configure:MEMORY_INVALID_INPUT',
    'memory.create', 'memory.update', 'memory.delete', 'memory.evict', 'memory.expire', 'memory.quota_reject', 'memory.access_denied',
  ]
  for (const k of want) assert.ok(total[k] > 0, `the sequences covered ${k}: ${JSON.stringify(total)}`)
})
