'use strict'
// R-AUD-2 on a real full disk (a small tmpfs mounted on .rotifer): an append that fails for lack
// of space says so, with the path; and the deployer's delete still runs, its audit line written
// first, through the audit reserve (.rotifer/audit.reserve), which is made again once there is room.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { rotifer, json, addGene, PROBE, createAgent } = require('./cli-harness')
const { memory, geneId } = require('./helpers')

const RESERVE_BYTES = 1024 * 1024

function fill(dir) {
  const filler = path.join(dir, 'filler')
  const fd = fs.openSync(filler, 'w')
  for (const size of [64 * 1024, 1]) {
    try {
      for (;;) fs.writeSync(fd, Buffer.alloc(size, 1))
    } catch (e) {
      assert.equal(e.code, 'ENOSPC')
    }
  }
  fs.closeSync(fd)
  return filler
}

test('R-AUD-2: on a full disk the error says so, and a deployer delete still runs with its audit line first', (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-full-disk-')))
  fs.writeFileSync(path.join(root, 'rotifer.json'), '{}\n')
  const dot = path.join(root, '.rotifer')
  fs.mkdirSync(dot, { mode: 0o700 })
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', dot], { encoding: 'utf8' })
  t.after(() => {
    if (m.status === 0) spawnSync('umount', ['-l', dot]) // lazily: this process holds files open
    fs.rmSync(root, { recursive: true, force: true })
  })
  if (m.status !== 0) return t.skip('mount is not allowed here (needs root)')

  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'a1', ['probe'])
  memory.createAgentMemory({ agentId: agent.id, root })
  const g = new memory.GeneMemoryAccess({ agentId: agent.id, geneId: geneId('w'), domain: 'test.probe', root })
  for (const k of ['k1', 'k2', 'k3']) g.writeMemory(k, Buffer.alloc(20 * 1024, 1), 'PREFERENCE')
  const reserve = path.join(dot, 'audit.reserve')
  assert.equal(fs.statSync(reserve).blocks * 512, RESERVE_BYTES, 'the reserve holds its bytes')
  const filler = fill(dot)

  assert.throws(() => g.writeMemory('k4', Buffer.from('x'), 'PREFERENCE'), (e) => {
    assert.equal(e.code, 'MEMORY_STORAGE_ERROR')
    // The database or the audit log, whichever needed room first: either says so, with its path.
    assert.match(e.message, /the disk is full/)
    assert.ok(e.message.includes(dot), e.message)
    assert.doesNotMatch(e.message, /make it a writable regular file/)
    return true
  })

  const del = rotifer(root, 'agent', 'memory', 'delete', 'a1', '--key', 'k1')
  assert.equal(del.status, 0, del.stderr)
  assert.deepEqual(memory.listAgentMemory({ agentId: agent.id, root }).map((e) => e.key).sort(), ['k2', 'k3'])
  const lines = json(rotifer(root, 'agent', 'memory', 'log', 'a1', '--json'))
  const last = lines[lines.length - 1]
  assert.deepEqual([last.action, last.key, last.actor, last.committed], ['memory.delete', 'k1', 'deployer', true])
  assert.ok(!fs.existsSync(reserve), 'the reserve was given up, and there is no room to make it again')

  // With room again, the next process that opens the log makes the reserve again.
  fs.rmSync(filler)
  const again = rotifer(root, 'agent', 'memory', 'delete', 'a1', '--key', 'k2')
  assert.equal(again.status, 0, again.stderr)
  assert.equal(fs.statSync(reserve).blocks * 512, RESERVE_BYTES)
})
