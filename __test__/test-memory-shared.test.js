'use strict'
// R-HOST-4 with a test memory made for speed (an image written in place, no syncs, no reserve,
// closed without a checkpoint): it is still one file that another thread and another process
// reach by its root, read and write, and it never touches an agent's files.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { Worker } = require('node:worker_threads')
const memory = require('../index.js')

const INDEX = path.join(__dirname, '..', 'index.js')
const GENE = 'v2:' + 'b'.repeat(64)
const bytes = (s) => new TextEncoder().encode(s)
const text = (e) => (e ? new TextDecoder().decode(e.value) : null)

test('R-HOST-4 a test memory is shared with a worker thread and a child process, both ways', async (t) => {
  const tm = memory.createTestMemory({ geneId: GENE, domain: 'demo.shared' })
  t.after(() => tm.dispose())
  tm.memory.writeMemory('from/parent', bytes('p'), 'CONTEXT')

  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads')
     const m = require(workerData.index)
     const g = new m.GeneMemoryAccess({ agentId: workerData.agentId, root: workerData.root, geneId: workerData.gene, domain: 'demo.shared' })
     const seen = g.readMemory('from/parent')
     g.writeMemory('from/thread', new TextEncoder().encode('t'), 'CONTEXT')
     parentPort.postMessage(seen ? new TextDecoder().decode(seen.value) : null)`,
    { eval: true, workerData: { index: INDEX, agentId: tm.agentId, root: tm.root, gene: GENE } },
  )
  const exited = new Promise((resolve) => worker.once('exit', resolve))
  const seenByThread = await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject))
  await exited
  assert.equal(seenByThread, 'p')
  assert.equal(text(tm.memory.readMemory('from/thread')), 't')

  const child = spawnSync(process.execPath, ['-e', `
    const m = require(${JSON.stringify(INDEX)})
    const g = new m.GeneMemoryAccess({ agentId: ${JSON.stringify(tm.agentId)}, root: ${JSON.stringify(tm.root)}, geneId: ${JSON.stringify(GENE)}, domain: 'demo.shared' })
    const seen = [g.readMemory('from/parent'), g.readMemory('from/thread')].map((e) => e && new TextDecoder().decode(e.value))
    g.writeMemory('from/child', new TextEncoder().encode('c'), 'CONTEXT')
    console.log(JSON.stringify(seen))`], { encoding: 'utf8' })
  assert.equal(child.status, 0, child.stderr)
  assert.deepEqual(JSON.parse(child.stdout), ['p', 't'])
  assert.equal(text(tm.memory.readMemory('from/child')), 'c', 'the child process\'s commit is seen here')
  assert.equal(tm.memory.queryMemory({}).length, 3)
})

test('R-HOST-4 a test memory starts empty with the limits asked for, and leaves nothing behind', (t) => {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-tm-shared-')))
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }))
  // In a process of its own, with a temporary folder of its own: every folder it made is gone at exit.
  const r = spawnSync(process.execPath, ['-e', `
    const m = require(${JSON.stringify(INDEX)})
    const out = []
    for (let i = 0; i < 30; i++) {
      const tm = m.createTestMemory({ quota: i % 2 ? '1KB' : undefined })
      out.push(tm.memory.queryMemory({}).length)
      let code = null
      try { tm.memory.writeMemory('big', new Uint8Array(2000), 'CACHE') } catch (e) { code = e.code }
      out.push(code)
      if (i % 3) tm.dispose() // the others are deleted at exit
    }
    console.log(JSON.stringify(out))`], { encoding: 'utf8', env: { ...process.env, TMPDIR: tmp } })
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  for (let i = 0; i < 30; i++) {
    assert.equal(out[2 * i], 0, `memory ${i} starts empty`)
    assert.equal(out[2 * i + 1], i % 2 ? 'MEMORY_QUOTA_EXCEEDED' : null, `memory ${i}: its quota`)
  }
  assert.deepEqual(fs.readdirSync(tmp), [])
})
