'use strict'
// R-MIG-4: `rotifer agent migrate` and migrateAgentMemory, SQLite → PostgreSQL → SQLite, through
// the real bin and the library in child processes: the same entriesSha256 after the round trip,
// CACHE left behind unless asked, a memory.migrate line on both sides, the moved copy refusing
// every call, a writer that waited for the move refused rather than lost, and a SIGKILL after
// each step leaving exactly one binding in use with every acknowledged write.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync, spawn } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const memory = require('../index.js')
const { BIN, makeProject, addGene, PROBE } = require('./cli-harness')
const { unavailable, ok, database } = require('./pg/server')

const skip = unavailable() || false
const INDEX = path.join(__dirname, '..', 'index.js')
const A = 'v2:' + 'a'.repeat(64)
const B = 'v2:' + 'b'.repeat(64)
const ALL = { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'PRIVATE' }
const MINE = { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' }

/** A database with a deployment role, over TCP with its password: { admin, url, shown, password }. */
function server(t) {
  const { admin, roles } = database(t, ['dep'])
  const u = new URL(roles.dep)
  const url = `postgresql://${u.username}:${u.password}@127.0.0.1:${process.env.ROTIFER_TEST_PG_PORT}${u.pathname}?sslmode=disable`
  return { admin, url, password: u.password, shown: url.replace(`:${u.password}@`, ':***@') }
}

function run(root, ...args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

function okRun(root, ...args) {
  const r = run(root, ...args)
  assert.equal(r.status, 0, `rotifer ${args.join(' ')}: ${r.stderr}`)
  return r
}

/** A project with one agent `mover` on the SQLite file: { root, id }. */
function project(t) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  okRun(root, 'agent', 'create', 'mover', '--genes', 'probe', '--memory-quota=1MB', '--max-retention-days=30')
  const id = fs.readdirSync(path.join(root, '.rotifer', 'agents')).find((f) => f.endsWith('.json')).replace(/\.json$/, '')
  return { root, id }
}

/** Entries of each category; every entry read only by its creator (lastAccessedBy stays createdBy). */
function seed(root, agentId, { cache = 3 } = {}) {
  const a = new memory.GeneMemoryAccess({ agentId, root, geneId: A, domain: 'text.format' })
  const b = new memory.GeneMemoryAccess({ agentId, root, geneId: B, domain: 'text.other' })
  a.writeMemory('pref/indent', Buffer.from('4'), 'PREFERENCE', MINE)
  b.writeMemory("pattern/it's 100%_odd ✓", Buffer.from('r'.repeat(300)), 'PATTERN', ALL, { maxRetentionDays: 10, autoDeleteOnTermination: true, anonymizationSupported: false })
  a.writeMemory('context/doc', Buffer.from('héllo\nworld'), 'CONTEXT', ALL)
  for (let i = 0; i < cache; i++) b.writeMemory(`cache/${i}`, Buffer.from(`c${i}`), 'CACHE', ALL)
}

const valueOf = (entry) => Buffer.from(entry.value).toString('utf8')
const recordOf = (root, id) => JSON.parse(fs.readFileSync(path.join(root, '.rotifer', 'agents', `${id}.json`), 'utf8'))
const shaOf = (bundle) => JSON.parse(bundle.subarray(0, bundle.indexOf(10)).toString('utf8')).entriesSha256
const fileAudit = (root, id) =>
  fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.agentId === id)

describe('rotifer agent migrate (R-MIG-4)', { skip }, () => {
  test('SQLite → PostgreSQL → SQLite keeps entriesSha256; CACHE stays behind; both sides audited; the moved copy refuses', (t) => {
    const { root, id } = project(t)
    const pg = server(t)
    seed(root, id)
    const before = shaOf(memory.exportAgentMemory({ agentId: id, root }))

    const refused = run(root, 'agent', 'migrate', 'mover', '--to', pg.url)
    assert.equal(refused.status, 2, 'without a terminal, --yes is required')
    assert.match(refused.stderr, /--yes/)
    assert.equal(memory.agentMemoryBinding({ agentId: id, root }), 'sqlite', 'nothing moved without --yes')

    const there = JSON.parse(okRun(root, 'agent', 'migrate', 'mover', '--to', pg.url, '--yes', '--json').stdout)
    assert.deepEqual(
      { from: there.from, to: there.to, counts: there.counts, cacheLeft: there.cacheLeft, created: there.created, sha: there.entriesSha256 },
      { from: 'sqlite', to: pg.shown, counts: { PREFERENCE: 1, PATTERN: 1, CONTEXT: 1, CACHE: 0 }, cacheLeft: 3, created: 3, sha: before },
    )
    const record = recordOf(root, id)
    assert.equal(record.memoryUrl, pg.url, 'the record names the server')
    assert.equal(record.memoryMove, undefined, 'the move settled')
    assert.equal(fs.statSync(path.join(root, '.rotifer', 'agents', `${id}.json`)).mode & 0o777, 0o600, 'a record holding a password stays 0600')
    assert.ok(!fs.existsSync(path.join(root, '.rotifer', 'agents', `${id}.json.next`)))
    assert.equal(memory.agentMemoryBinding({ agentId: id, root }), pg.shown)
    assert.equal(shaOf(memory.exportAgentMemory({ agentId: id, root })), before, 'the server holds what the file held')
    assert.equal(ok(pg.admin, `SELECT fence IS NULL FROM rotifer.agents WHERE agent_id = '${id}'`), 't', 'the target is in use')
    assert.equal(ok(pg.admin, `SELECT quota || ',' || max_retention_days FROM rotifer.agents WHERE agent_id = '${id}'`), '1048576,30', 'the limits went with it (1MB is 2^20 bytes)')

    // The source is kept, and refuses every call: writes, reads, the deployer's views.
    assert.ok(fs.existsSync(path.join(root, '.rotifer', 'memory', `${id}.db`)), 'never deleted')
    const onFile = new memory.GeneMemoryAccess({ agentId: id, root, geneId: A, url: 'sqlite' })
    for (const call of [() => onFile.writeMemory('late', Buffer.from('x'), 'CONTEXT', ALL), () => onFile.readMemory('pref/indent')]) {
      assert.throws(call, (e) => e.code === 'MEMORY_STORAGE_ERROR' && e.message.includes(`moved to ${pg.shown}`) && !e.message.includes(pg.password))
    }
    for (const view of [memory.exportAgentMemory, memory.listAgentMemory, memory.inspectAgentMemory, (o) => memory.getAgentMemory({ ...o, key: 'pref/indent' })]) {
      assert.throws(() => view({ agentId: id, root, url: 'sqlite' }), /moved to/, "the deployer's views refuse the moved file too")
    }
    // The new binding answers the gene.
    const gene = new memory.GeneMemoryAccess({ agentId: id, root, geneId: A })
    assert.equal(valueOf(gene.readMemory('pref/indent')), '4')

    const arrived = JSON.parse(okRun(root, 'agent', 'memory', 'log', 'mover', '--json').stdout).filter((l) => l.action === 'memory.migrate')
    assert.equal(arrived.length, 1)
    assert.equal(arrived[0].actor, 'deployer')
    assert.match(arrived[0].reason, /arrived from sqlite .*3 entries/)
    const left = fileAudit(root, id).filter((l) => l.action === 'memory.migrate')
    assert.equal(left.length, 1)
    assert.equal(left[0].actor, 'deployer')
    assert.ok(left[0].reason.includes(`moved to ${pg.shown}`) && left[0].reason.includes(before) && left[0].reason.includes('3 CACHE entries stayed here'), left[0].reason)
    assert.equal(typeof left[0].tx, 'number', 'a change of the file, committed with its transaction')

    const back = run(root, 'agent', 'migrate', 'mover', '--to', 'sqlite', '--yes')
    assert.equal(back.status, 0, back.stderr)
    assert.match(back.stdout, new RegExp(`Moved the memory of agent "mover" from ${pg.shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} to sqlite`))
    assert.match(back.stdout, /replaced +6 entries an earlier move had left on the target/)
    assert.equal(recordOf(root, id).memoryUrl, 'sqlite')
    assert.equal(memory.agentMemoryBinding({ agentId: id, root }), 'sqlite')
    assert.equal(shaOf(memory.exportAgentMemory({ agentId: id, root })), before, 'the round trip gives the same entriesSha256')
    assert.equal(new memory.GeneMemoryAccess({ agentId: id, root, geneId: B }).readMemory("pattern/it's 100%_odd ✓").value.length, 300)
    assert.throws(() => new memory.GeneMemoryAccess({ agentId: id, root, geneId: A, url: pg.url }).readMemory('pref/indent'), (e) => e.code === 'MEMORY_STORAGE_ERROR' && /moved to sqlite/.test(e.message))
    assert.equal(ok(pg.admin, `SELECT fence->>'state' FROM rotifer.agents WHERE agent_id = '${id}'`), 'moved')
    const gone = { agentId: id, root, url: pg.url }
    for (const view of [memory.exportAgentMemory, memory.listAgentMemory, memory.inspectAgentMemory, (o) => memory.getAgentMemory({ ...o, key: 'pref/indent' }),
      (o) => memory.backupAgentMemory({ ...o, file: path.join(root, 'moved.backup') }), (o) => memory.deleteAgentMemory({ ...o, key: 'pref/indent' })]) {
      assert.throws(() => view(gone), (e) => e.code === 'MEMORY_STORAGE_ERROR' && /moved to sqlite/.test(e.message), "the deployer's views and changes refuse the moved copy on the server")
    }
    assert.equal(ok(pg.admin, `SELECT count(*) FROM rotifer.entries WHERE agent_id = '${id}'`), '3', 'the copy is kept whole (its three entries: CACHE never came)')
    assert.equal(run(root, 'agent', 'migrate', 'mover', '--to', 'sqlite', '--yes').status, 1, 'moving to where it is already is refused')
  })

  test('--include-cache moves CACHE entries too; a target holding the agent in use follows --on-conflict', (t) => {
    const { root, id } = project(t)
    const pg = server(t)
    seed(root, id, { cache: 2 })
    new memory.GeneMemoryAccess({ agentId: id, root, geneId: A, url: pg.url }).writeMemory('pref/indent', Buffer.from('8'), 'PREFERENCE', MINE)
    const clash = run(root, 'agent', 'migrate', 'mover', '--to', pg.url, '--include-cache', '--yes')
    assert.equal(clash.status, 1)
    assert.match(clash.stderr, /has this key already/)
    assert.equal(memory.agentMemoryBinding({ agentId: id, root }), 'sqlite', 'a refused import moves nothing')
    assert.equal(new memory.GeneMemoryAccess({ agentId: id, root, geneId: A }).writeMemory('still/here', Buffer.from('y'), 'CONTEXT', ALL).key, 'still/here', 'the file is in use again')
    const r = JSON.parse(okRun(root, 'agent', 'migrate', 'mover', '--to', pg.url, '--include-cache', '--on-conflict', 'skip', '--yes', '--json').stdout)
    assert.deepEqual([r.counts.CACHE, r.cacheLeft, r.skipped, r.created], [2, 0, 1, 5])
    const gene = new memory.GeneMemoryAccess({ agentId: id, root, geneId: A })
    assert.equal(valueOf(gene.readMemory('pref/indent')), '8', "skip keeps the target's entry")
    assert.equal(valueOf(gene.readMemory('still/here')), 'y')
    assert.equal(valueOf(new memory.GeneMemoryAccess({ agentId: id, root, geneId: B }).readMemory('cache/1')), 'c1')
  })

  test('one server to another: the record names the second, the first refuses, the entries are the same', (t) => {
    const { root, id } = project(t)
    const [one, two] = [server(t), server(t)]
    seed(root, id, { cache: 1 })
    okRun(root, 'agent', 'migrate', 'mover', '--to', one.url, '--include-cache', '--yes')
    const there = shaOf(memory.exportAgentMemory({ agentId: id, root, includeCache: true }))
    const r = JSON.parse(okRun(root, 'agent', 'migrate', 'mover', '--to', two.url, '--yes', '--json').stdout)
    assert.deepEqual([r.from, r.to, r.cacheLeft], [one.shown, two.shown, 1])
    assert.equal(recordOf(root, id).memoryUrl, two.url)
    assert.equal(ok(one.admin, `SELECT fence->>'state' FROM rotifer.agents WHERE agent_id = '${id}'`), 'moved')
    assert.equal(ok(two.admin, `SELECT fence IS NULL FROM rotifer.agents WHERE agent_id = '${id}'`), 't')
    assert.throws(() => new memory.GeneMemoryAccess({ agentId: id, root, geneId: A, url: one.url }).writeMemory('late', Buffer.from('x'), 'CONTEXT', ALL),
      (e) => e.code === 'MEMORY_STORAGE_ERROR' && e.message.includes(`moved to ${two.shown}`))
    assert.equal(valueOf(new memory.GeneMemoryAccess({ agentId: id, root, geneId: A }).readMemory('context/doc')), 'héllo\nworld')
    assert.notEqual(shaOf(memory.exportAgentMemory({ agentId: id, root, includeCache: true })), there, 'CACHE stayed on the first server')
    assert.equal(ok(one.admin, `SELECT count(*) FROM rotifer.entries WHERE agent_id = '${id}' AND category = 'CACHE'`), '1')
  })

  test("a move outlasts a gene's deadlines: the role's statement_timeout and the client's call deadline do not cut it", (t) => {
    const { root, id } = project(t)
    const pg = server(t)
    okRun(root, 'agent', 'update', 'mover', '--memory-quota', '64MB')
    const gene = new memory.GeneMemoryAccess({ agentId: id, root, geneId: A })
    const value = Buffer.alloc(1000, 'x')
    for (let i = 0; i < 3000; i++) gene.writeMemory(`k/${String(i).padStart(4, '0')}`, value, 'CONTEXT', ALL)
    const before = shaOf(memory.exportAgentMemory({ agentId: id, root }))
    // Deadlines a bulk import of 3,000 entries cannot meet; a gene's calls are held to them.
    ok(pg.admin, `ALTER ROLE ${new URL(pg.url).username} SET statement_timeout = '100ms'`)
    const r = spawnSync(process.execPath, [BIN, 'agent', 'migrate', 'mover', '--to', pg.url, '--yes', '--json'],
      { cwd: root, encoding: 'utf8', env: { ...process.env, ROTIFER_PG_CALL_TIMEOUT_MS: '100' } })
    assert.equal(r.status, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout).counts.CONTEXT, 3000)
    assert.equal(shaOf(memory.exportAgentMemory({ agentId: id, root })), before)
  })

  test('a writer that waited for the move is refused, never lost; its retry lands on the new binding', async (t) => {
    const { root, id } = project(t)
    const pg = server(t)
    seed(root, id, { cache: 0 })
    const held = path.join(root, 'held')
    const mover = spawn(process.execPath, ['-e', `
      const memory = require(${JSON.stringify(INDEX)})
      memory.migrateAgentMemory({ agentId: ${JSON.stringify(id)}, root: ${JSON.stringify(root)}, to: ${JSON.stringify(pg.url)}, onStep(step) {
        if (step !== 'held') return
        require('node:fs').writeFileSync(${JSON.stringify(held)}, '')
        // The writer below starts and waits for the lock meanwhile.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500)
      } })`], { stdio: ['ignore', 'ignore', 'pipe'] })
    let moverErr = ''
    mover.stderr.on('data', (d) => { moverErr += d })
    while (!fs.existsSync(held)) await new Promise((r) => setTimeout(r, 20))
    const writer = spawnSync(process.execPath, ['-e', `
      const memory = require(${JSON.stringify(INDEX)})
      const m = new memory.GeneMemoryAccess({ agentId: ${JSON.stringify(id)}, root: ${JSON.stringify(root)}, geneId: ${JSON.stringify(A)} })
      try { m.writeMemory('during', Buffer.from('w'), 'CONTEXT', ${JSON.stringify(ALL)}); console.log('acknowledged') }
      catch (e) { console.log(e.code + ' ' + e.message) }`], { encoding: 'utf8' })
    const code = await new Promise((r) => mover.on('exit', r))
    assert.equal(code, 0, moverErr)
    const said = writer.stdout.trim()
    assert.ok(said.startsWith('MEMORY_STORAGE_ERROR') && said.includes(`moved to ${pg.shown}`), said)
    const gene = new memory.GeneMemoryAccess({ agentId: id, root, geneId: A })
    assert.equal(gene.readMemory('during'), null, 'the refused write is nowhere')
    gene.writeMemory('during', Buffer.from('w'), 'CONTEXT', ALL)
    assert.equal(ok(pg.admin, `SELECT count(*) FROM rotifer.entries WHERE agent_id = '${id}' AND key = 'during'`), '1', 'the retry is on the server')
  })
})

describe('a SIGKILL after each step of a move leaves exactly one binding in use, with every acknowledged write (R-MIG-4)', { skip }, () => {
  const steps = ['held', 'imported', 'verified', 'intent', 'fenced', 'named']
  for (const [i, step] of steps.entries()) {
    test(`killed after "${step}"`, (t) => {
      const { root, id } = project(t)
      const pg = server(t)
      seed(root, id, { cache: 1 })
      const killed = spawnSync(process.execPath, ['-e', `
        const memory = require(${JSON.stringify(INDEX)})
        memory.migrateAgentMemory({ agentId: ${JSON.stringify(id)}, root: ${JSON.stringify(root)}, to: ${JSON.stringify(pg.url)},
          onStep(s) { if (s === ${JSON.stringify(step)}) process.kill(process.pid, 'SIGKILL') } })`], { encoding: 'utf8' })
      assert.equal(killed.signal, 'SIGKILL', killed.stderr)
      const committed = i >= steps.indexOf('fenced')
      // A new process: the agent's binding is the one the move had reached.
      const now = spawnSync(process.execPath, ['-e', `
        const memory = require(${JSON.stringify(INDEX)})
        const m = new memory.GeneMemoryAccess({ agentId: ${JSON.stringify(id)}, root: ${JSON.stringify(root)}, geneId: ${JSON.stringify(A)} })
        m.writeMemory('after', Buffer.from('a'), 'CONTEXT', ${JSON.stringify(ALL)})
        console.log(memory.agentMemoryBinding({ agentId: ${JSON.stringify(id)}, root: ${JSON.stringify(root)} }))`], { encoding: 'utf8' })
      assert.equal(now.status, 0, now.stderr)
      assert.equal(now.stdout.trim(), committed ? pg.shown : 'sqlite')
      const active = committed ? pg.url : 'sqlite'
      const other = committed ? 'sqlite' : pg.url
      const keys = memory.listAgentMemory({ agentId: id, root, url: active }).map((e) => e.key).sort()
      const expected = ['after', 'context/doc', "pattern/it's 100%_odd ✓", 'pref/indent', ...(committed ? [] : ['cache/0'])].sort()
      assert.deepEqual(keys, expected, 'every acknowledged write, and the one made after the kill')
      if (step === 'held') {
        assert.equal(ok(pg.admin, `SELECT count(*) FROM rotifer.agents WHERE agent_id = '${id}'`), '0', 'the target got nothing')
      } else {
        assert.throws(() => new memory.GeneMemoryAccess({ agentId: id, root, geneId: A, url: other }).writeMemory('stray', Buffer.from('s'), 'CONTEXT', ALL),
          (e) => e.code === 'MEMORY_STORAGE_ERROR' && /moved to|did not finish/.test(e.message), 'the other side refuses')
      }
      assert.equal(recordOf(root, id).memoryMove, undefined, 'nothing left pending')
      if (!committed) {
        // The move, run again, finishes: the copy it left is replaced.
        const r = JSON.parse(okRun(root, 'agent', 'migrate', 'mover', '--to', pg.url, '--yes', '--json').stdout)
        assert.equal(r.created, 4)
        assert.equal(memory.agentMemoryBinding({ agentId: id, root }), pg.shown)
        assert.equal(valueOf(new memory.GeneMemoryAccess({ agentId: id, root, geneId: A }).readMemory('after')), 'a')
      }
    })
  }
})
