'use strict'
// `rotifer agent update` and `rotifer agent delete`, through the real bin: the memory database
// and the agent record kept in step, validation before any change, the audit line of a delete,
// every companion file removed, --keep-memory, --yes at a terminal, and a process that still
// has the deleted agent open.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const memory = require('../index.js')
const { BIN, REPO, rotifer, makeProject, addGene, PROBE, steps, createAgent, readAgent, oneErrorLine, stateFiles } = require('./cli-harness')

const A = 'v2:' + 'a'.repeat(64)
const MB = 1024 * 1024

/** A project with agent "keeper" (quota 8MB), holding two entries of 600 KB. */
function seeded(t, ...options) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'keeper', ['probe'], '--memory-quota=8MB', ...options)
  // Through the bin, so that this process holds no store of the agent open.
  const r = rotifer(root, 'agent', 'run', 'keeper', '--input', steps([{ write: 'one', size: 600 * 1024, category: 'PREFERENCE' }, { write: 'two', size: 600 * 1024 }]))
  assert.equal(r.status, 0, r.stderr)
  return { root, agent }
}

const dbOf = (root, agent) => path.join(root, '.rotifer', 'memory', `${agent.id}.db`)
const snapshot = (root) => Object.fromEntries(stateFiles(root).filter((f) => !f.endsWith('.jsonl')).map((f) => [f, fs.readFileSync(path.join(root, f)).toString('base64')]))
const auditLines = (root) => fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))

const { rotiferTty } = require('./cli-tty')

describe('rotifer agent update', () => {
  test('reconfigures the database and the record; prints quota, data policy and usage', (t) => {
    const { root, agent } = seeded(t)
    const r = rotifer(root, 'agent', 'update', 'keeper', '--memory-quota', '50MB', '--allow-anonymization', '--max-retention-days', '30')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Updated agent "keeper"/)
    assert.match(r.stdout, /memory quota +50MB \(52428800 bytes\)/)
    assert.match(r.stdout, /data policy +anonymization supported, entries kept at most 30 days/)
    assert.match(r.stdout, /usage +1\.2 MB in 2 entries/)
    const usage = memory.inspectAgentMemory({ agentId: agent.id, root })
    assert.equal(usage.quota, 50 * MB)
    assert.deepEqual(usage.dataPolicy, { anonymizationSupported: true, maxRetentionDays: 30 })
    const record = readAgent(root, agent.id)
    assert.equal(record.memoryQuota, 50 * MB)
    assert.deepEqual(record.dataPolicy, { anonymizationSupported: true, maxRetentionDays: 30 })
    assert.equal(record.createdAt, agent.createdAt, 'the rest of the record is kept')
    assert.deepEqual(record.genome, agent.genome)

    // What is not given keeps its value; none lifts the retention limit.
    const r2 = rotifer(root, 'agent', 'update', agent.id, '--no-allow-anonymization', '--max-retention-days=none')
    assert.equal(r2.status, 0, r2.stderr)
    assert.deepEqual(readAgent(root, agent.id).dataPolicy, { anonymizationSupported: false, maxRetentionDays: null })
    assert.equal(readAgent(root, agent.id).memoryQuota, 50 * MB)
    assert.equal(memory.inspectAgentMemory({ agentId: agent.id, root }).quota, 50 * MB)
  })

  test('a quota below the usage is allowed and evicts nothing', (t) => {
    const { root, agent } = seeded(t)
    const r = rotifer(root, 'agent', 'update', 'keeper', '--memory-quota', '512KB')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /memory quota +0\.5MB \(524288 bytes\)/)
    assert.match(r.stdout, /usage +1\.2 MB in 2 entries \(over the quota: nothing was evicted/)
    const usage = memory.inspectAgentMemory({ agentId: agent.id, root })
    assert.equal(usage.quota, 512 * 1024)
    assert.equal(usage.entries, 2)
    assert.equal(readAgent(root, agent.id).memoryQuota, 512 * 1024)
  })

  test('every option is checked before anything changes (exit 2, with the accepted values)', (t) => {
    const { root } = seeded(t)
    const before = snapshot(root)
    const cases = [
      [['--memory-quota', '5XB'], /invalid --memory-quota: .*KB.*MB.*GB/],
      [['--memory-quota', '0MB'], /invalid --memory-quota/],
      [['--allow-anonymization', '--no-allow-anonymization'], /give --allow-anonymization or --no-allow-anonymization, not both/],
      [['--max-retention-days', '0'], /invalid --max-retention-days "0": give a whole number of days from 1 to 2147483647, or none/],
      [['--max-retention-days', 'forever'], /invalid --max-retention-days "forever"/],
      [['--max-retention-days', '1.5'], /invalid --max-retention-days "1.5"/],
      [[], /nothing to change: give --memory-quota <size>, --allow-anonymization or --no-allow-anonymization, and\/or --max-retention-days <N>\|none/],
    ]
    for (const [args, message] of cases) {
      const r = rotifer(root, 'agent', 'update', 'keeper', ...args)
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`)
      assert.match(oneErrorLine(r), message)
      assert.equal(r.stdout, '')
    }
    // A bad option is refused even for an agent that does not exist: the command line first.
    assert.equal(rotifer(root, 'agent', 'update', 'nobody', '--memory-quota', 'lots').status, 2)
    assert.deepEqual(snapshot(root), before, 'nothing changed')
  })

  test('an unknown agent: exit 1 with "did you mean"', (t) => {
    const { root } = seeded(t)
    const before = snapshot(root)
    const r = rotifer(root, 'agent', 'update', 'keeperr', '--memory-quota', '1MB')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /no agent named or with id "keeperr".*did you mean "keeper"\?/)
    assert.deepEqual(snapshot(root), before)
  })

  test('a record left behind by a database change is brought in step by the next update', (t) => {
    const { root, agent } = seeded(t)
    // As if an update changed the database and then could not write the record.
    memory.createAgentMemory({ agentId: agent.id, root, quota: 20 * MB, dataPolicy: { anonymizationSupported: true, maxRetentionDays: null } })
    assert.equal(readAgent(root, agent.id).memoryQuota, 8 * MB, 'the record is stale')
    const r = rotifer(root, 'agent', 'update', 'keeper', '--max-retention-days', '7')
    assert.equal(r.status, 0, r.stderr)
    const record = readAgent(root, agent.id)
    assert.equal(record.memoryQuota, 20 * MB, 'the quota the database enforces, not the stale one')
    assert.deepEqual(record.dataPolicy, { anonymizationSupported: true, maxRetentionDays: 7 })
    assert.deepEqual(memory.inspectAgentMemory({ agentId: agent.id, root }).dataPolicy, record.dataPolicy)
  })

  test('a database that cannot be changed leaves the record as it was', (t) => {
    const { root, agent } = seeded(t)
    const recordFile = path.join(root, '.rotifer', 'agents', `${agent.id}.json`)
    const before = fs.readFileSync(recordFile, 'utf8')
    // A garbage database file is reported, never rebuilt.
    fs.rmSync(dbOf(root, agent) + '-wal', { force: true })
    fs.rmSync(dbOf(root, agent) + '-shm', { force: true })
    fs.rmSync(dbOf(root, agent) + '-lineage', { force: true })
    fs.writeFileSync(dbOf(root, agent), 'not a database')
    const r = rotifer(root, 'agent', 'update', 'keeper', '--memory-quota', '1MB')
    assert.equal(r.status, 1, r.stdout)
    assert.match(oneErrorLine(r), /MEMORY_STORAGE_ERROR/)
    assert.equal(fs.readFileSync(recordFile, 'utf8'), before)
  })
})

describe('rotifer agent delete', () => {
  test('removes the record, the database and every companion file, audited first as one deployer line', (t) => {
    const { root, agent } = seeded(t)
    const mem = path.join(root, '.rotifer', 'memory')
    const db = dbOf(root, agent)
    // Moved-aside WALs of this agent, and files of another agent whose id starts the same way.
    fs.writeFileSync(`${db}-wal.orphaned-20261201T000000.000Z-1`, 'old')
    fs.writeFileSync(`${db}-shm.orphaned-20261201T000000.000Z-1`, 'old')
    const other = createAgent(root, 'other', ['probe'])
    memory.createAgentMemory({ agentId: other.id, root, quota: MB, dataPolicy: { anonymizationSupported: false, maxRetentionDays: null } })
    const lineage = `${db}-lineage`
    assert.ok(fs.existsSync(db) && fs.existsSync(lineage))
    const r = rotifer(root, 'agent', 'delete', 'keeper', '--yes')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Deleted agent "keeper" \(/)
    assert.match(r.stdout, /memory +deleted: 2 entries \(1\.2 MB\)/)
    assert.deepEqual(fs.readdirSync(mem).filter((f) => f.startsWith(agent.id)), [])
    assert.equal(fs.existsSync(path.join(root, '.rotifer', 'agents', `${agent.id}.json`)), false)
    assert.ok(fs.existsSync(dbOf(root, other)), "another agent's memory is untouched")
    assert.ok(fs.existsSync(path.join(root, '.rotifer', 'agents', `${other.id}.json`)))
    const drops = auditLines(root).filter((l) => l.agentId === agent.id && l.action === 'memory.drop')
    assert.equal(drops.length, 1)
    assert.equal(drops[0].actor, 'deployer')
    assert.equal(drops[0].size, 1200 * 1024 + 6)
    assert.equal(drops[0].tx, undefined)
    // Gone: the name is free again and no command finds it.
    const gone = rotifer(root, 'agent', 'show', 'keeper')
    assert.equal(gone.status, 1)
    assert.equal(memory.inspectAgentMemory({ agentId: agent.id, root }), null)
  })

  test('if the audit line cannot be written, nothing is removed', (t) => {
    const { root, agent } = seeded(t)
    const audit = path.join(root, '.rotifer', 'audit.jsonl')
    fs.rmSync(audit)
    fs.mkdirSync(audit)
    // (The run left its -wal and -shm, as any process that exits with a store open does; the
    // delete's own open and close may checkpoint them into the database: nothing is lost.)
    const files = () => stateFiles(root).filter((f) => !/\.db-(wal|shm)$/.test(f))
    const before = files()
    const r = rotifer(root, 'agent', 'delete', 'keeper', '--yes')
    assert.equal(r.status, 1, r.stdout)
    assert.match(oneErrorLine(r), /MEMORY_STORAGE_ERROR: the audit log could not be written/)
    assert.deepEqual(files(), before)
    assert.equal(memory.inspectAgentMemory({ agentId: agent.id, root }).entries, 2)
    assert.ok(fs.existsSync(dbOf(root, agent)))
    assert.ok(fs.existsSync(path.join(root, '.rotifer', 'agents', `${agent.id}.json`)))
  })

  test('--keep-memory removes only the record', (t) => {
    const { root, agent } = seeded(t)
    const r = rotifer(root, 'agent', 'delete', 'keeper', '--keep-memory', '--yes')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /memory kept/)
    assert.equal(fs.existsSync(path.join(root, '.rotifer', 'agents', `${agent.id}.json`)), false)
    assert.equal(memory.inspectAgentMemory({ agentId: agent.id, root }).entries, 2)
    assert.equal(auditLines(root).some((l) => l.action === 'memory.drop'), false)
  })

  test('an unknown agent: exit 1 with "did you mean", nothing removed', (t) => {
    const { root } = seeded(t)
    const before = stateFiles(root)
    const r = rotifer(root, 'agent', 'delete', 'keper')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /did you mean "keeper"\?/)
    assert.deepEqual(stateFiles(root), before)
  })

  test('at a terminal it asks first (--yes does not); scripts need --yes (cli-confirm)', (t) => {
    const { root, agent } = seeded(t)
    const before = stateFiles(root)
    const question = /Delete agent "keeper" \([0-9a-f-]{36}\): its record and its memory\? \[y\/N\] /
    for (const answer of ['n', '', 'yes please']) {
      const declined = rotiferTty(root, ['agent', 'delete', 'keeper'], { answer })
      assert.equal(declined.status, 1, declined.tty)
      assert.match(declined.tty, question)
      assert.match(declined.tty, /error: not confirmed: agent "keeper" was not deleted \(--yes deletes without asking\)/)
      assert.deepEqual(stateFiles(root), before)
    }
    const asked = rotiferTty(root, ['agent', 'delete', 'keeper', '--keep-memory'], { answer: 'Y' })
    assert.match(asked.tty, /Delete agent "keeper" \([0-9a-f-]{36}\): its record \(its memory is kept\)\? \[y\/N\] /)
    assert.equal(asked.status, 0, asked.tty)
    assert.match(asked.tty, /Deleted agent "keeper"/)
    assert.equal(fs.existsSync(dbOf(root, agent)), true, 'the memory was kept')
  })

  test('with --yes at a terminal nothing is asked', (t) => {
    const { root, agent } = seeded(t)
    const confirmed = rotiferTty(root, ['agent', 'delete', 'keeper', '--yes'])
    assert.equal(confirmed.status, 0, confirmed.tty)
    assert.doesNotMatch(confirmed.tty, /\[y\/N\]/)
    assert.equal(fs.existsSync(dbOf(root, agent)), false)
  })

  test('a process that has the agent open fails its next call and never writes into the deleted database', async (t) => {
    const { root, agent } = seeded(t)
    const script = `
      const m = require(${JSON.stringify(path.join(REPO, 'index.js'))});
      const g = new m.GeneMemoryAccess({ agentId: ${JSON.stringify(agent.id)}, geneId: ${JSON.stringify(A)}, root: ${JSON.stringify(root)} });
      g.writeMemory('before', Buffer.from('x'), 'CACHE');
      console.log('open');
      process.stdin.once('data', () => {
        const out = [];
        for (const call of [() => g.writeMemory('after', Buffer.from('y'), 'CACHE'), () => g.readMemory('one')]) {
          try { call(); out.push('ok') } catch (e) { out.push(e.code) }
        }
        console.log(JSON.stringify(out));
        process.exit(0);
      });`
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += d })
    const line = () => new Promise((resolve, reject) => {
      const on = (d) => {
        stdout += d
        const i = stdout.indexOf('\n')
        if (i !== -1) {
          child.stdout.off('data', on)
          const l = stdout.slice(0, i)
          stdout = stdout.slice(i + 1)
          resolve(l)
        }
      }
      child.stdout.on('data', on)
      child.once('exit', (code) => reject(new Error(`child exited ${code}: ${stderr}`)))
    })
    assert.equal(await line(), 'open')
    const r = rotifer(root, 'agent', 'delete', 'keeper', '--yes')
    assert.equal(r.status, 0, r.stderr)
    const answer = line()
    child.stdin.write('go\n')
    assert.deepEqual(JSON.parse(await answer), ['MEMORY_STORAGE_ERROR', 'MEMORY_STORAGE_ERROR'])
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve()))
    assert.deepEqual(fs.readdirSync(path.join(root, '.rotifer', 'memory')).filter((f) => f.startsWith(agent.id)), [],
      'no database, WAL or stamp came back')
  })
})
