'use strict'
// `rotifer agent memory list` and `rotifer agent memory log` on agents larger than one page:
// --limit, the width of every line, human sizes, --follow (across rotations) and --summary,
// through the real bin. Their speed is measured by the benchmark (bench/cli-scale.js), not here.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { BIN, rotifer, rotiferWithEnv, json, makeProject, addGene, PROBE, createAgent, oneErrorLine } = require('./cli-harness')
const memory = require('../index.js')
const { formatSize } = require('../lib/cli/format')

const INDEX = path.join(__dirname, '..', 'index.js')
const GENE = 'v2:' + 'b'.repeat(64)

/** Columns a line takes (every character of these outputs takes one). */
const columns = (line) => [...line].length

/** A project with agent "big" of `n` entries (keys k00000…, cycling categories), written by GENE. */
function bigAgent(t, n, audit) {
  const root = makeProject(t)
  if (audit) fs.writeFileSync(path.join(root, 'rotifer.json'), JSON.stringify({ audit }))
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'big', ['probe'], '--memory-quota=64MB')
  const m = new memory.GeneMemoryAccess({ agentId: agent.id, root, geneId: GENE, domain: 'test.probe' })
  const categories = ['CACHE', 'CONTEXT', 'PATTERN', 'PREFERENCE']
  for (let i = 0; i < n; i++) m.writeMemory(`k${String(i).padStart(5, '0')}`, Buffer.alloc(i % 3 === 0 ? 2000 : 10, 120), categories[i % 4])
  return { root, agent, m }
}

describe('agent memory list at scale', () => {
  test('pages make the whole listing, in key order, as the library lists it; every line fits 80 columns', (t) => {
    const { root, agent, m } = bigAgent(t, 450)
    // A key far longer than those of the first page (which the columns are sized by).
    m.writeMemory('z/' + 'x'.repeat(150), Buffer.from('v'), 'CACHE')
    const expected = memory.listAgentMemory({ agentId: agent.id, root })
    assert.equal(expected.length, 451)
    const listed = json(rotifer(root, 'agent', 'memory', 'list', 'big', '--json'))
    assert.deepEqual(listed.map(({ createdByGene, ...e }) => e), expected)
    const r = rotifer(root, 'agent', 'memory', 'list', 'big')
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    const total = expected.reduce((s, e) => s + e.size, 0)
    assert.equal(lines[0], `Agent "big" (${agent.id})`)
    assert.equal(lines[1], `451 entries, ${(total / 1024).toFixed(0)} KB (${total} bytes) of 64MB quota`)
    assert.equal(lines.length, 4 + 451)
    assert.deepEqual(lines.slice(4).map((l) => l.split(' ')[0]), expected.map((e) => (e.key.length > 40 ? lines.at(-1).split(' ')[0] : e.key)))
    for (const l of lines) assert.ok(columns(l) <= 80, `${columns(l)} columns: ${l}`)
    // The long key is cut in the middle with "…" to the key column; sizes are for people.
    assert.match(lines.at(-1), /^z…x+ +CACHE +153 B +v2:bbbbbbbb… +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, 'cut to the width of the first page\'s keys')
    assert.match(lines[4], /^k00000 +CACHE +2\.0 KB /)
    // $COLUMNS when stdout is not a terminal; --wide cuts nothing.
    const narrow = rotiferWithEnv(root, { COLUMNS: '50' }, 'agent', 'memory', 'list', 'big').stdout.trimEnd().split('\n')
    for (const l of narrow) assert.ok(columns(l) <= 50, `${columns(l)} columns: ${l}`)
    const wide = rotifer(root, 'agent', 'memory', 'list', 'big', '--wide').stdout
    assert.ok(wide.includes('z/' + 'x'.repeat(150) + ' '), 'the whole key')
    assert.ok(wide.includes(GENE), 'the whole gene id')
  })

  test('a later size or action wider than the first page\'s is shown whole, the line still fitting', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const agent = createAgent(root, 'big', ['probe'], '--memory-quota=64MB')
    const m = new memory.GeneMemoryAccess({ agentId: agent.id, root, geneId: GENE, domain: 'test.probe' })
    for (let i = 0; i < 250; i++) m.writeMemory(`k${String(i).padStart(3, '0')}`, Buffer.from('v'), 'CACHE')
    m.writeMemory('zz', Buffer.alloc(1024 * 1024), 'CACHE')
    m.deleteMemory('k000')
    const list = rotifer(root, 'agent', 'memory', 'list', 'big').stdout.trimEnd().split('\n')
    assert.match(list[4], /^k001 +CACHE +5 B +v2:/)
    assert.match(list.at(-1), /^zz +CACHE +1\.0 MB +v2:bbbbbbbb… +\d{4}-/)
    const log = rotifer(root, 'agent', 'memory', 'log', 'big', '--limit', '202').stdout.trimEnd().split('\n')
    assert.match(log.at(-2), / create +v2:bbbbbbbb… +zz +CACHE +1\.0 MB$/)
    assert.match(log.at(-1), / delete +v2:bbbbbbbb… +k000 +CACHE +5 B$/)
    for (const l of [...list, ...log]) assert.ok(columns(l) <= 80, l)
  })

  test('--limit shows the first <n> by key and says so; the totals stay those of every entry', (t) => {
    const { root, agent } = bigAgent(t, 230)
    const expected = memory.listAgentMemory({ agentId: agent.id, root })
    for (const n of [1, 200, 201, 229]) {
      const listed = json(rotifer(root, 'agent', 'memory', 'list', 'big', '--limit', String(n), '--json'))
      assert.deepEqual(listed.map((e) => e.key), expected.slice(0, n).map((e) => e.key), `--limit ${n}`)
    }
    assert.equal(json(rotifer(root, 'agent', 'memory', 'list', 'big', '--limit', '5000', '--json')).length, 230)
    const r = rotifer(root, 'agent', 'memory', 'list', 'big', '--limit', '3', '--category', 'CACHE')
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    assert.match(lines[1], /^58 entries in CACHE, .*; the first 3 by key$/)
    assert.deepEqual(lines.slice(4).map((l) => l.split(' ')[0]), ['k00000', 'k00004', 'k00008'])
    for (const bad of ['0', '-1', '1.5', 'ten', '']) {
      const b = rotifer(root, 'agent', 'memory', 'list', 'big', `--limit=${bad}`)
      assert.equal(b.status, 2, bad)
      assert.match(oneErrorLine(b), /invalid --limit/)
    }
  })
})

describe('agent memory log at scale', () => {
  test('every line, in order, as the library reads it; --limit keeps the last <n> (of those that match)', (t) => {
    const { root, agent, m } = bigAgent(t, 420)
    m.deleteMemory('k00007')
    const all = memory.readAgentAuditLog({ agentId: agent.id, root }).lines
    assert.equal(all.length, 421)
    assert.deepEqual(json(rotifer(root, 'agent', 'memory', 'log', 'big', '--json')), all)
    const text = rotifer(root, 'agent', 'memory', 'log', 'big')
    assert.equal(text.status, 0, text.stderr)
    const rows = text.stdout.trimEnd().split('\n')
    assert.equal(rows.length, 1 + 421)
    assert.deepEqual(rows.slice(1).map((l) => l.split(/ +/)[4]), all.map((l) => l.key))
    assert.deepEqual(json(rotifer(root, 'agent', 'memory', 'log', 'big', '--limit', '3', '--json')), all.slice(-3))
    assert.deepEqual(json(rotifer(root, 'agent', 'memory', 'log', 'big', '--limit', '1000', '--json')), all)
    const deletes = json(rotifer(root, 'agent', 'memory', 'log', 'big', '--action', 'create', '--limit', '2', '--json'))
    assert.deepEqual(deletes, all.filter((l) => l.action === 'memory.create').slice(-2))
    const last = rotifer(root, 'agent', 'memory', 'log', 'big', '--limit', '2').stdout.trimEnd().split('\n')
    assert.equal(last.length, 3)
    assert.match(last[2], /delete +v2:bbbbbbbb… +k00007 /)
    assert.equal(rotifer(root, 'agent', 'memory', 'log', 'big', '--limit', '0').status, 2)
  })

  test('lines fit 80 columns, $COLUMNS, or the terminal; details that do not fit go on their own line; sizes for people', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const agent = createAgent(root, 'tight', ['probe'], '--memory-quota=4KB')
    const m = new memory.GeneMemoryAccess({ agentId: agent.id, root, geneId: GENE, domain: 'test.probe' })
    m.writeMemory('a-rather-long-key/for-the-key-column/0001', Buffer.alloc(3000), 'PREFERENCE')
    assert.throws(() => m.writeMemory('big', Buffer.alloc(3000), 'PREFERENCE'), { code: 'MEMORY_QUOTA_EXCEEDED' })
    for (const [env, limit] of [[{}, 80], [{ COLUMNS: '60' }, 60], [{ COLUMNS: '132' }, 132]]) {
      const r = rotiferWithEnv(root, env, 'agent', 'memory', 'log', 'tight')
      assert.equal(r.status, 0, r.stderr)
      const lines = r.stdout.trimEnd().split('\n')
      for (const l of lines) assert.ok(columns(l) <= limit, `${columns(l)} > ${limit}: ${l}`)
      if (limit >= 80) assert.match(lines[1], / create +v2:bbbbbbbb… +a-r\S*0001 +PREFERENCE +3\.0 KB$/)
      const reject = lines.findIndex((l) => / quota_reject /.test(l))
      const q = memory.readAgentAuditLog({ agentId: agent.id, root }).lines.find((l) => l.action === 'memory.quota_reject')
      const detail = `needed ${formatSize(q.needed)} more, quota ${formatSize(q.quota)}, used ${formatSize(q.used)}, evictable ${formatSize(q.evictable)}`
      assert.match(detail, /^needed \d\.\d KB more, quota 4\.0 KB, used 3\.0 KB, evictable 0 B$/)
      if (limit >= 80) {
        assert.equal(lines[reject + 1], `    ${detail}`)
      } else {
        assert.equal(lines[reject + 1], `    ${detail.slice(0, limit - 5)}…`)
      }
    }
    // Wide enough for the detail in its column: on its row.
    const roomy = rotiferWithEnv(root, { COLUMNS: '200' }, 'agent', 'memory', 'log', 'tight').stdout.split('\n')
    assert.ok(roomy.find((l) => / quota_reject /.test(l)).endsWith(' evictable 0 B'))
    // --wide: the times as written, nothing cut, one line per audit line.
    const wide = rotifer(root, 'agent', 'memory', 'log', 'tight', '--wide').stdout.trimEnd().split('\n')
    const lines = memory.readAgentAuditLog({ agentId: agent.id, root }).lines
    assert.equal(wide.length, 1 + lines.length)
    assert.ok(wide[1].startsWith(`${lines[0].ts}  create        ${GENE}  a-rather-long-key/for-the-key-column/0001  `), wide[1])
    assert.ok(wide.some((l) => / quota_reject .* needed \d\.\d KB more, quota 4\.0 KB, used 3\.0 KB, evictable 0 B$/.test(l)))
  })

  test('--summary: lines per action and per hour or day, plain when piped, as JSON with --json', (t) => {
    const { root, agent, m } = bigAgent(t, 30)
    m.deleteMemory('k00001')
    m.deleteMemory('k00002')
    const log = memory.readAgentAuditLog({ agentId: agent.id, root }).lines
    const hour = (ts) => `${ts.slice(0, 10)} ${ts.slice(11, 13)}:00`
    const r = rotifer(root, 'agent', 'memory', 'log', 'big', '--summary')
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    // At 80 columns the figures go on a line of their own.
    assert.equal(lines[0], `Audit lines of agent "big" (${agent.id})`)
    assert.match(lines[1], /^32 from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d to \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
    assert.match(lines[3], /^HOUR \(UTC\) +ACTION +LINES$/)
    // Per hour and action, as the lines themselves count (the writes may straddle an hour).
    const expected = new Map()
    for (const l of log) {
      const k = `${hour(l.ts)}|${l.action.slice('memory.'.length)}`
      expected.set(k, (expected.get(k) || 0) + 1)
    }
    for (const l of lines) assert.ok(columns(l) <= 80, l)
    const got = new Map(lines.slice(4).map((l) => l.split(/ {2,}/)).map(([p, a, n]) => [`${p}|${a}`, Number(n)]))
    assert.deepEqual(got, expected)
    const s = json(rotifer(root, 'agent', 'memory', 'log', 'big', '--summary', '--by', 'day', '--json'))
    assert.equal(s.by, 'day')
    assert.deepEqual(s.totals, { create: 30, delete: 2 })
    assert.equal(s.periods.reduce((n, p) => n + (p.counts.create || 0), 0), 30)
    assert.ok(s.periods.every((p) => /^\d{4}-\d\d-\d\dT00:00:00\.000Z$/.test(p.start)))
    const deletes = json(rotifer(root, 'agent', 'memory', 'log', 'big', '--summary', '--action', 'delete', '--json'))
    assert.deepEqual(deletes.totals, { delete: 2 })
    for (const args of [['--by', 'day'], ['--summary', '--by', 'week'], ['--summary', '--follow']]) {
      const b = rotifer(root, 'agent', 'memory', 'log', 'big', ...args)
      assert.equal(b.status, 2, args.join(' '))
    }
  })

  test('--summary on a terminal draws one strip per action', (t) => {
    const probe = spawnSync('script', ['-qec', 'true', '/dev/null'], { encoding: 'utf8' })
    if (probe.status !== 0) {
      // Without util-linux `script` there is no terminal to run the bin in: said, and checked no further.
      t.diagnostic('script(1) is not available: the terminal form is not checked here')
      return
    }
    const { root } = bigAgent(t, 12)
    const cmd = `COLUMNS=60 ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} agent memory log big --summary`
    const r = spawnSync('script', ['-qec', `stty cols 60 2>/dev/null; ${cmd}`, '/dev/null'], { cwd: root, encoding: 'utf8' })
    assert.equal(r.status, 0, r.stdout)
    const out = r.stdout.replace(/\r/g, '')
    assert.match(out, /one column per hour \(UTC\); █ = \d+ lines?/)
    assert.match(out, /\ncreate {2}12 {2}[▁▂▃▄▅▆▇█]+\n/)
  })

  test('--follow prints lines appended by another process, across rotations, until interrupted', async (t) => {
    const { root, agent } = bigAgent(t, 2, { maxSize: '1KB', keep: 50 })
    const child = spawn(process.execPath, [BIN, 'agent', 'memory', 'log', 'big', '--follow', '--json'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    t.after(() => child.kill('SIGKILL'))
    let out = ''
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    const waiters = []
    child.stdout.on('data', (d) => {
      out += d
      for (const w of waiters.splice(0)) w()
    })
    const linesOut = () => out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l))
    const until = async (n, what) => {
      const deadline = Date.now() + 20_000
      while (linesOut().length < n) {
        if (Date.now() > deadline) throw new Error(`${what}: ${linesOut().length} of ${n} lines; stderr: ${err}`)
        await new Promise((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 200)
        })
      }
    }
    await until(2, 'the lines already there')
    assert.deepEqual(linesOut().map((l) => l.key), ['k00000', 'k00001'])
    // Another process writes: one line, then enough to rotate the log several times.
    const write = (keys) => {
      const script = `const m = require(${JSON.stringify(INDEX)}); const g = new m.GeneMemoryAccess({ agentId: ${JSON.stringify(agent.id)}, root: ${JSON.stringify(root)}, geneId: ${JSON.stringify(GENE)}, domain: 'test.probe' })
        for (const k of ${JSON.stringify(keys)}) g.writeMemory(k, Buffer.from('v'), 'CACHE')`
      const w = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
      assert.equal(w.status, 0, w.stderr)
    }
    write(['new/1'])
    await until(3, 'the new line')
    assert.equal(linesOut()[2].key, 'new/1')
    assert.equal(linesOut()[2].committed, true)
    const more = Array.from({ length: 12 }, (_, i) => `more/${i}`)
    write(more)
    await until(15, 'the lines across rotations')
    assert.ok(fs.existsSync(path.join(root, '.rotifer', 'audit.3.jsonl')), 'the log rotated')
    assert.deepEqual(linesOut().map((l) => l.key), ['k00000', 'k00001', 'new/1', ...more])
    const code = new Promise((resolve) => child.on('exit', (c, signal) => resolve([c, signal])))
    child.kill('SIGINT')
    assert.deepEqual(await code, [130, null])
    assert.equal(err, '')
  })
})
