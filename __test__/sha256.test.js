'use strict'
// The addon's SHA-256 (lib/sha256.js), which gene ids (R-RUN-2) and the CLI's cache keys use in
// place of node:crypto, gives node:crypto's digests; the test gene id is the one documented.

const test = require('node:test')
const assert = require('node:assert/strict')
const { createHash } = require('node:crypto')
const { sha256Hex } = require('../lib/sha256')
const native = require('../lib/native')
const memory = require('..')

const nodeHex = (data) => createHash('sha256').update(data).digest('hex')

test('sha256Hex goes through the addon and matches node:crypto on strings and bytes', () => {
  assert.equal(typeof native.sha256Hex, 'function')
  const strings = ['', 'abc', 'é😀 \u0000 x', '\ud800 lone surrogate', 'x'.repeat(100_000)]
  for (const s of strings) assert.equal(sha256Hex(s), nodeHex(Buffer.from(s, 'utf8')), JSON.stringify(s.slice(0, 20)))
  const bytes = Buffer.from([0, 1, 2, 255, 254])
  assert.equal(sha256Hex(bytes), nodeHex(bytes))
  // A view into a larger buffer hashes only its own bytes.
  assert.equal(sha256Hex(new Uint8Array(bytes.buffer, bytes.byteOffset + 1, 3)), nodeHex(bytes.subarray(1, 4)))
})

test('TEST_GENE_ID is v2: + the SHA-256 of "rotifer:test-gene"', () => {
  assert.equal(memory.TEST_GENE_ID, `v2:${nodeHex('rotifer:test-gene')}`)
})
