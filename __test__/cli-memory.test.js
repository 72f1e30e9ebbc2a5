'use strict'
// `rotifer agent memory list` and `rotifer agent memory delete`, driven through the real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, rotiferWithEnv, json, makeProject, addGene, PROBE, steps, createAgent, oneErrorLine } = require('./cli-harness')

const SECRET = 'value-that-must-never-be-printed'

/** A project with agent "keeper" holding four entries written by gene "probe". */
function seeded(t) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'keeper', ['probe'], '--memory-quota=64KB')
  const writes = [
    { write: 'pref/a', value: SECRET, category: 'PREFERENCE' },
    { write: 'cache/1', value: SECRET + '1', category: 'CACHE' },
    { write: 'cache/2', value: SECRET + '22', category: 'CACHE' },
    { write: 'ctx', value: '', category: 'CONTEXT' },
  ]
  json(rotifer(root, 'agent', 'run', 'keeper', '--input', steps(writes)))
  return { root, agent }
}

function list(root, ...args) {
  return json(rotifer(root, 'agent', 'memory', 'list', ...args, '--json'))
}

describe('rotifer agent memory list', () => {
  test('--json lists every entry (key, category, size, creator, update time) and no value', (t) => {
    const { root, agent } = seeded(t)
    const r = rotifer(root, 'agent', 'memory', 'list', 'keeper', '--json')
    assert.equal(r.status, 0, r.stderr)
    assert.ok(!r.stdout.includes(SECRET), 'no value is shown')
    const entries = JSON.parse(r.stdout)
    assert.deepEqual(entries.map((e) => [e.key, e.category, e.size]), [
      ['cache/1', 'CACHE', 7 + SECRET.length + 1],
      ['cache/2', 'CACHE', 7 + SECRET.length + 2],
      ['ctx', 'CONTEXT', 3],
      ['pref/a', 'PREFERENCE', 6 + SECRET.length],
    ])
    for (const e of entries) {
      assert.deepEqual(Object.keys(e).sort(), ['category', 'createdBy', 'createdByGene', 'key', 'size', 'updatedAt'])
      assert.match(e.createdBy, /^v2:[0-9a-f]{64}$/)
      assert.equal(e.createdByGene, 'probe')
      assert.match(e.updatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }
    // By id as well as by name.
    assert.deepEqual(list(root, agent.id), entries)
  })

  test('the table shows key, category, size, creator (v2 id and gene name) and update time', (t) => {
    const { root } = seeded(t)
    const [entry] = list(root, 'keeper', '--category', 'PREFERENCE')
    const r = rotifer(root, 'agent', 'memory', 'list', 'keeper')
    assert.equal(r.status, 0, r.stderr)
    assert.ok(!r.stdout.includes(SECRET), 'no value is shown')
    const lines = r.stdout.trimEnd().split('\n')
    // At 80 columns the figures go on a line of their own under the agent's name and id.
    assert.match(lines[0], /^Agent "keeper" \([0-9a-f-]{36}\)$/)
    assert.match(lines[1], /^4 entries, \d+ bytes of 64KB quota$/)
    assert.match(lines[3], /^KEY\s+CATEGORY\s+SIZE\s+CREATED BY\s+UPDATED \(UTC\)$/)
    const row = lines.find((l) => l.startsWith('pref/a '))
    const when = entry.updatedAt.slice(0, 19).split('T')
    assert.deepEqual(row.split(/\s+/), ['pref/a', 'PREFERENCE', String(entry.size), 'B', `${entry.createdBy.slice(0, 11)}…`, '(probe)', ...when])
    assert.equal(lines.length, 4 + 4)
    for (const l of lines) assert.ok([...l].length <= 80, l)
    const wide = rotiferWithEnv(root, { COLUMNS: '120' }, 'agent', 'memory', 'list', 'keeper').stdout.split('\n')
    assert.match(wide[0], /^Agent "keeper" \([0-9a-f-]{36}\): 4 entries, \d+ bytes of 64KB quota$/)
  })

  test('--category filters; an unknown category is a wrong command line (exit 2) naming the four', (t) => {
    const { root } = seeded(t)
    assert.deepEqual(list(root, 'keeper', '--category', 'CACHE').map((e) => e.key), ['cache/1', 'cache/2'])
    assert.deepEqual(list(root, 'keeper', '--category=PATTERN'), [])
    const r = rotifer(root, 'agent', 'memory', 'list', 'keeper', '--category', 'cache')
    assert.equal(r.status, 2)
    assert.match(r.stderr, /invalid --category "cache"; did you mean "CACHE"\?: use PREFERENCE, PATTERN, CONTEXT or CACHE/)
  })

  test('keys with control characters are printed escaped in the table', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    createAgent(root, 'odd', ['probe'])
    json(rotifer(root, 'agent', 'run', 'odd', '--input', steps([{ write: 'line\nbreak\u001b[31m' }])))
    const r = rotifer(root, 'agent', 'memory', 'list', 'odd')
    assert.ok(r.stdout.includes('line\\nbreak\\u001b[31m'), r.stdout)
    assert.ok(!r.stdout.includes('\u001b'))
    assert.equal(list(root, 'odd')[0].key, 'line\nbreak\u001b[31m', 'JSON keeps the key exact')
  })
})

describe('rotifer agent memory delete', () => {
  test('--key alone, or --category and/or --key-prefix', (t) => {
    const { root } = seeded(t)
    for (const args of [[], ['--key', 'ctx', '--category', 'CACHE'], ['--key', 'ctx', '--key-prefix', 'c']]) {
      const r = rotifer(root, 'agent', 'memory', 'delete', 'keeper', ...args)
      assert.equal(r.status, 2)
      assert.match(oneErrorLine(r), /give --key <K> alone, or --category <C> and\/or --key-prefix <p>/)
    }
    assert.equal(list(root, 'keeper').length, 4, 'nothing deleted')
  })

  test('--key deletes one entry whatever its policy, prints the count, and is audited as the deployer', (t) => {
    const { root, agent } = seeded(t)
    const r = rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--key', 'pref/a')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Deleted 1 entry \(key "pref\/a"\) from agent "keeper"\n$/)
    assert.deepEqual(list(root, 'keeper').map((e) => e.key), ['cache/1', 'cache/2', 'ctx'])
    const audit = fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    const last = audit[audit.length - 1]
    assert.deepEqual([last.action, last.actor, last.key, last.agentId], ['memory.delete', 'deployer', 'pref/a', agent.id])
  })

  test('a missing key exits non-zero showing MEMORY_NOT_FOUND', (t) => {
    const { root, agent } = seeded(t)
    const r = rotifer(root, 'agent', 'memory', 'delete', agent.id, '--key', 'never-written')
    assert.equal(r.status, 1)
    assert.equal(r.stdout, '')
    assert.match(oneErrorLine(r), /^error: MEMORY_NOT_FOUND: /)
    assert.equal(list(root, 'keeper').length, 4)
  })

  test('--category deletes every entry of it and prints how many (possibly 0)', (t) => {
    const { root } = seeded(t)
    const r = rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--category', 'CACHE', '--yes')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Deleted 2 entries \(category CACHE\)/)
    const again = rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--category=CACHE', '--yes')
    assert.match(again.stdout, /^Deleted 0 entries \(category CACHE\)/)
    // --json: the count, nothing else on stdout.
    assert.deepEqual(JSON.parse(rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--key', 'ctx', '--json').stdout), { deleted: 1 })
    assert.deepEqual(JSON.parse(rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--category', 'CACHE', '--yes', '--json').stdout), { deleted: 0 })
    assert.deepEqual(list(root, 'keeper').map((e) => e.key), ['pref/a'])
  })

  test('an unknown agent is one error line', (t) => {
    const { root } = seeded(t)
    const r = rotifer(root, 'agent', 'memory', 'delete', 'ghost', '--key', 'ctx')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /no agent named or with id "ghost"/)
  })
})
