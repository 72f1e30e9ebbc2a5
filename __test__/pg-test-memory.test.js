'use strict'
// Test memories and PostgreSQL (R-HOST-4, R-BIND-1): createTestMemory({ url }) is an agent of its
// own on the server, reached by agentId and root like any test memory and dropped by dispose();
// without a url a test memory is a file, whatever ROTIFER_MEMORY_URL says.
const test = require('node:test')
const assert = require('node:assert/strict')
const { unavailable, ok, database } = require('./pg/server')
const memory = require('../index.js')

const skip = unavailable() || false
const bytes = (s) => new TextEncoder().encode(s)
const rows = (admin, agentId) => ok(admin, `SELECT key FROM rotifer.entries WHERE agent_id = '${agentId}' ORDER BY key`).split('\n').filter(Boolean)

test('createTestMemory({ url }): an agent of its own on the server, reached by agentId and root, dropped by dispose()', { skip }, (t) => {
  const { admin, roles } = database(t, ['tm'])
  const a = memory.createTestMemory({ url: roles.tm, quota: '1KB' })
  const b = memory.createTestMemory({ url: roles.tm })
  assert.notEqual(a.agentId, b.agentId, 'each test memory is an agent of its own')
  a.memory.writeMemory('notes/1', bytes('hello'), 'CONTEXT')
  assert.deepEqual(rows(admin, a.agentId), ['notes/1'], 'the entry is on the server')
  assert.deepEqual(rows(admin, b.agentId), [])
  const again = new memory.GeneMemoryAccess({ agentId: a.agentId, root: a.root, geneId: memory.TEST_GENE_ID })
  assert.equal(new TextDecoder().decode(again.readMemory('notes/1').value), 'hello', 'agentId and root reach the same memory')
  const other = a.forGene('v2:' + 'b'.repeat(64), 'other')
  assert.throws(() => other.readMemory('notes/1'), { code: 'MEMORY_ACCESS_DENIED' }, 'scopes hold')
  assert.throws(() => a.memory.writeMemory('big', new Uint8Array(2000), 'CACHE'), { code: 'MEMORY_QUOTA_EXCEEDED' }, 'its quota holds')
  assert.equal(ok(admin, `SELECT quota FROM rotifer.agents WHERE agent_id = '${a.agentId}'`), '1024')
  a.dispose()
  b.dispose()
  assert.deepEqual(rows(admin, a.agentId), [], 'dispose dropped its rows')
  assert.equal(ok(admin, `SELECT count(*) FROM rotifer.agents WHERE agent_id IN ('${a.agentId}', '${b.agentId}')`), '0')
  assert.throws(() => a.memory.readMemory('notes/1'), { code: 'MEMORY_STORAGE_ERROR' })
  assert.throws(() => memory.createTestMemory({ url: 'mysql://u:hunter2@h/db' }), (e) => e.code === 'MEMORY_INVALID_INPUT' && !e.message.includes('hunter2'))
})

test('without a url a test memory stays a file, whatever ROTIFER_MEMORY_URL says', { skip }, (t) => {
  const { admin, roles } = database(t, ['env'])
  process.env.ROTIFER_MEMORY_URL = roles.env
  t.after(() => delete process.env.ROTIFER_MEMORY_URL)
  const tm = memory.createTestMemory()
  t.after(() => tm.dispose())
  tm.memory.writeMemory('k', bytes('v'), 'CONTEXT')
  new memory.GeneMemoryAccess({ agentId: tm.agentId, root: tm.root, geneId: memory.TEST_GENE_ID }).writeMemory('k2', bytes('v'), 'CONTEXT')
  assert.equal(ok(admin, 'SELECT count(*) FROM rotifer.entries'), '0', 'nothing reached the server')
  assert.deepEqual(memory.listAgentMemory({ agentId: tm.agentId, root: tm.root, url: 'sqlite' }).map((l) => l.key), ['k', 'k2'])
})
