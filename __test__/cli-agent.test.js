'use strict'
// `rotifer agent create` and `rotifer agent run`, driven through the real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const {
  rotifer, json, makeProject, addGene, addFormatter, PROBE, steps, v2IdOf, agentFiles, readAgent, createAgent, oneErrorLine,
} = require('./cli-harness')

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe('rotifer agent create', () => {
  test('writes the agent record (0600 in a 0700 folder) and creates its memory', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    addGene(root, 'other', { 'index.js': PROBE })
    const r = rotifer(root, 'agent', 'create', 'my-agent', '--genes', 'probe', 'other', '--memory-quota=50MB')
    assert.equal(r.status, 0, r.stderr)

    const files = agentFiles(root)
    assert.equal(files.length, 1)
    const agent = readAgent(root, files[0].slice(0, -5))
    assert.match(agent.id, UUID)
    assert.deepEqual(
      { ...agent, id: undefined, createdAt: undefined },
      {
        id: undefined, name: 'my-agent', state: 'Active', genome: ['probe', 'other'], composition: { type: 'Seq' },
        strategy: 'manual', reputation: 0,
        memoryQuota: 50 * 1024 * 1024, dataPolicy: { anonymizationSupported: false, maxRetentionDays: null }, createdAt: undefined,
      },
    )
    assert.match(agent.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    assert.ok(r.stdout.includes(agent.id), 'prints the new id')

    const mode = (p) => fs.statSync(path.join(root, '.rotifer', ...p)).mode & 0o777
    assert.equal(mode(['agents']), 0o700)
    assert.equal(mode(['agents', `${agent.id}.json`]), 0o600)
    assert.ok(fs.existsSync(path.join(root, '.rotifer', 'memory', `${agent.id}.db`)), 'memory created')
  })

  test('its output: labels in one column, the composition in the record\'s words (Single for one gene)', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    addGene(root, 'other', { 'index.js': PROBE })
    const one = rotifer(root, 'agent', 'create', 'solo', '--genes', 'probe')
    assert.equal(one.status, 0, one.stderr)
    const lines = one.stdout.trimEnd().split('\n')
    assert.equal(lines[0], 'Created agent "solo"')
    // Every value starts at column 16, after a two-space indent and the label.
    for (const l of lines.slice(1)) assert.match(l, /^ {2}[a-z][a-z ]{12} [^ ]/, l)
    assert.match(one.stdout, /\n {2}genome {8}probe v2:[0-9a-f]{64}\n {2}composition {3}Single\(probe\)\n/)
    const record = json(rotifer(root, 'agent', 'show', 'solo', '--json')).agent
    assert.deepEqual(record.composition, { type: 'Single' })
    assert.match(rotifer(root, 'agent', 'show', 'solo').stdout, /\n {2}composition {3}Single\(probe\)\n/)
    const two = rotifer(root, 'agent', 'create', 'pair', '--genes', 'probe', 'other')
    assert.match(two.stdout, /\n {2}genome {8}probe v2:[0-9a-f]{64}\n {16}other v2:[0-9a-f]{64}\n {2}composition {3}Seq\(probe, other\)\n/)
  })

  test('shows the v2 id of each gene: SHA-256 of the phenotype with sorted keys and no irHash', (t) => {
    const root = makeProject(t)
    const phenotype = {
      version: '2.0.0', name: 'hashme', irHash: 'ignored', domain: 'test.hash',
      outputSchema: { type: 'object' }, inputSchema: { type: 'object', required: ['b'], properties: { b: {}, a: {} } },
    }
    addGene(root, 'hashme', { 'index.js': PROBE }, { phenotype })
    const canonical = '{"domain":"test.hash","inputSchema":{"properties":{"a":{},"b":{}},"required":["b"],"type":"object"},' +
      '"name":"hashme","outputSchema":{"type":"object"},"version":"2.0.0"}'
    const r = rotifer(root, 'agent', 'create', 'h', '--genes', 'hashme')
    assert.equal(r.status, 0, r.stderr)
    assert.ok(r.stdout.includes(`hashme ${v2IdOf(canonical)}`), r.stdout)

    // The gene writes with that id, and a new irHash does not change it.
    // The input must conform to the inputSchema: it has the required "b".
    json(rotifer(root, 'agent', 'run', 'h', '--input', JSON.stringify({ steps: [[{ write: 'k' }]], b: 1 })))
    addGene(root, 'hashme', {}, { phenotype: { ...phenotype, irHash: 'changed' } })
    const [entry] = json(rotifer(root, 'agent', 'memory', 'list', 'h', '--json'))
    assert.equal(entry.createdBy, v2IdOf(canonical))
    assert.equal(entry.createdByGene, 'hashme')
  })

  test('the quota defaults to 10 MB; --memory-quota takes spaces and any unit case', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    assert.equal(createAgent(root, 'a', ['probe']).memoryQuota, 10 * 1024 * 1024)
    assert.equal(createAgent(root, 'b', ['probe'], '--memory-quota', ' 1.5 gB ').memoryQuota, 1536 * 1024 * 1024)
    assert.equal(createAgent(root, 'c', ['probe'], '--memory-quota=512kb').memoryQuota, 512 * 1024)
  })

  for (const bad of ['100', '0MB', '-5MB', '2TB']) {
    test(`a bad quota (${bad}) is rejected with the accepted forms, and nothing is created`, (t) => {
      const root = makeProject(t)
      addGene(root, 'probe', { 'index.js': PROBE })
      const forms = bad === '-5MB' ? [[`--memory-quota=${bad}`], ['--memory-quota', bad]] : [[`--memory-quota=${bad}`]]
      for (const args of forms) {
        const r = rotifer(root, 'agent', 'create', 'q', '--genes', 'probe', ...args)
        assert.notEqual(r.status, 0)
        const line = oneErrorLine(r)
        assert.ok(line.includes(JSON.stringify(bad)), line)
        for (const form of ['KB', 'MB', 'GB', '512KB']) assert.ok(line.includes(form), `message shows ${form}: ${line}`)
        assert.equal(r.stdout, '')
        assert.equal(fs.existsSync(path.join(root, '.rotifer')), false, 'nothing created')
      }
    })
  }

  test('a missing gene, a bad name or a bad retention creates nothing', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const cases = [
      [['ok-name', '--genes', 'probe', 'missing'], /gene "missing" not found/],
      [['bad/name', '--genes', 'probe'], /agent name "bad\/name" is not valid/],
      [['ok-name', '--genes', 'probe', '--max-retention-days=0'], /--max-retention-days "0"/],
      [['ok-name', '--genes', 'probe', '--max-retention-days=1.5'], /--max-retention-days "1\.5"/],
      [['ok-name', '--genes', '../probe'], /not a gene name/],
      [['ok-name'], /--genes is required/],
    ]
    for (const [args, message] of cases) {
      const r = rotifer(root, 'agent', 'create', ...args)
      assert.notEqual(r.status, 0, args.join(' '))
      assert.match(oneErrorLine(r), message)
      assert.equal(fs.existsSync(path.join(root, '.rotifer')), false, `nothing created by ${args.join(' ')}`)
    }
  })

  test('a second agent with the same name is refused', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const first = createAgent(root, 'twin', ['probe'])
    const r = rotifer(root, 'agent', 'create', 'twin', '--genes', 'probe')
    assert.notEqual(r.status, 0)
    assert.ok(oneErrorLine(r).includes(first.id))
    assert.equal(agentFiles(root).length, 1)
  })

  test('the quota and data policy reach the memory', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const small = createAgent(root, 'small', ['probe'], '--memory-quota=1KB')
    const anon = createAgent(root, 'anon', ['probe'], '--allow-anonymization', '--max-retention-days', '30')
    assert.deepEqual(anon.dataPolicy, { anonymizationSupported: true, maxRetentionDays: 30 })
    assert.deepEqual(small.dataPolicy, { anonymizationSupported: false, maxRetentionDays: null })

    const run = (agent, input) => json(rotifer(root, 'agent', 'run', agent, '--input', input)).results
    const big = steps([{ write: 'big', value: 'x'.repeat(2000), category: 'PREFERENCE' }])
    assert.deepEqual(run('small', big), [[{ error: 'MEMORY_QUOTA_EXCEEDED' }]])
    assert.deepEqual(run('anon', big), [[{ wrote: 'big' }]])

    const accessPolicy = { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'ANONYMIZED_SHARE' }
    const shared = steps([{ write: 'shared', value: 'v', accessPolicy }])
    assert.deepEqual(run('small', shared), [[{ error: 'MEMORY_ACCESS_DENIED' }]])
    assert.deepEqual(run('anon', shared), [[{ wrote: 'shared' }]])
  })
})

describe('rotifer agent run', () => {
  test('the formatter (TypeScript, as written in the guide) remembers the indent across runs', (t) => {
    const root = makeProject(t)
    addFormatter(root)
    createAgent(root, 'fmt', ['formatter'], '--memory-quota=1MB')
    const code = 'if (a) {\n  b();\n}'
    const first = json(rotifer(root, 'agent', 'run', 'fmt', '--input', JSON.stringify({ code, indent: 4 })))
    assert.deepEqual(first, { formatted: 'if (a) {\n    b();\n}', indent: 4 })
    const second = json(rotifer(root, 'agent', 'run', 'fmt', '--input', JSON.stringify({ code })))
    assert.deepEqual(second, { formatted: 'if (a) {\n    b();\n}', indent: 4 })
  })

  test('genes run in sequence, output to input, each with its own v2 id and domain', (t) => {
    const root = makeProject(t)
    addGene(root, 'writer', { 'index.js': PROBE }, { domain: 'test.one' })
    addGene(root, 'stranger', { 'index.js': PROBE }, { domain: 'test.two' })
    addGene(root, 'peer', { 'index.js': PROBE }, { domain: 'test.one' })
    addGene(root, 'inc', { 'index.js': 'exports.express = (input) => ({ n: input.n + 1 })' })
    addGene(root, 'dbl', { 'index.js': 'exports.express = async (input) => ({ n: input.n * 2 })' })
    createAgent(root, 'trio', ['writer', 'stranger', 'peer'])
    createAgent(root, 'inc-dbl', ['inc', 'dbl'])
    createAgent(root, 'dbl-inc', ['dbl', 'inc'])

    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'inc-dbl', '--input', '{"n":1}')), { n: 4 })
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'dbl-inc', '--input', '{"n":1}')), { n: 3 })

    // Each probe does its own list of calls; the results of all three reach the output.
    const out = json(rotifer(root, 'agent', 'run', 'trio', '--input', steps([{ write: 'k', value: 'v' }], [{ read: 'k' }], [{ read: 'k' }])))
    assert.deepEqual(out.results, [
      [{ wrote: 'k' }],
      [{ error: 'MEMORY_ACCESS_DENIED' }], // another domain: the default SAME_DOMAIN policy keeps it out
      [{ value: 'v' }], // same domain as the writer
    ])
    const [entry] = json(rotifer(root, 'agent', 'memory', 'list', 'trio', '--json'))
    assert.equal(entry.createdByGene, 'writer')
    assert.match(entry.createdBy, /^v2:[0-9a-f]{64}$/)

    // Another agent has another memory.
    createAgent(root, 'solo', ['peer'])
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'solo', '--input', steps([{ read: 'k' }]))).results, [[{ value: null }]])
  })

  test('agents are found by name or by id; an ambiguous name is an error', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const agent = createAgent(root, 'twin', ['probe'])
    const read = steps([{ read: 'k' }])
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'twin', '--input', steps([{ write: 'k', value: 'v' }]))).results, [[{ wrote: 'k' }]])
    assert.deepEqual(json(rotifer(root, 'agent', 'run', agent.id, '--input', read)).results, [[{ value: 'v' }]])

    // A second record with the same name (made by hand: create refuses it).
    const other = { ...agent, id: '00000000-0000-4000-8000-000000000000' }
    fs.writeFileSync(path.join(root, '.rotifer', 'agents', `${other.id}.json`), JSON.stringify(other))
    const r = rotifer(root, 'agent', 'run', 'twin', '--input', read)
    assert.notEqual(r.status, 0)
    const line = oneErrorLine(r)
    assert.match(line, /ambiguous/)
    assert.ok(line.includes(agent.id) && line.includes(other.id), line)
    assert.deepEqual(json(rotifer(root, 'agent', 'run', agent.id, '--input', read)).results, [[{ value: 'v' }]])

    const missing = rotifer(root, 'agent', 'run', 'nobody', '--input', read)
    assert.notEqual(missing.status, 0)
    assert.match(oneErrorLine(missing), /no agent named or with id "nobody"/)
  })

  test('the project root is the nearest folder upwards with rotifer.json', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    createAgent(root, 'up', ['probe'])
    const deep = path.join(root, 'src', 'deep')
    fs.mkdirSync(deep, { recursive: true })
    assert.deepEqual(json(rotifer(deep, 'agent', 'run', 'up', '--input', steps([{ write: 'k' }]))).results, [[{ wrote: 'k' }]])
    assert.equal(fs.existsSync(path.join(deep, '.rotifer')), false)
    assert.equal(json(rotifer(deep, 'agent', 'memory', 'list', 'up', '--json')).length, 1)
  })

  test('a failing gene and bad input JSON fail with one line', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    addGene(root, 'broken', { 'index.js': 'exports.express = () => { throw new TypeError("no way") }' })
    createAgent(root, 'p', ['probe'])
    createAgent(root, 'b', ['probe', 'broken'])

    const escaped = rotifer(root, 'agent', 'run', 'p', '--input', JSON.stringify({ rethrow: true, steps: [[{ delete: 'none' }]] }))
    assert.equal(escaped.status, 1)
    assert.match(oneErrorLine(escaped), /gene "probe" \(v2:[0-9a-f]{64}\) failed: MEMORY_NOT_FOUND/)

    const thrown = rotifer(root, 'agent', 'run', 'b', '--input', '{}')
    assert.equal(thrown.status, 1)
    assert.match(oneErrorLine(thrown), /gene "broken" .* failed: TypeError: no way \(at genes\/broken\/index\.js:1:\d+\)/)

    const badJson = rotifer(root, 'agent', 'run', 'p', '--input', '{nope')
    assert.notEqual(badJson.status, 0)
    assert.match(oneErrorLine(badJson), /--input is not valid JSON/)
  })
})

describe('agent records someone else could have written are refused', () => {
  // An agent record decides which genes run, with what quota: it gets the same trust checks as
  // memory's own files (docs/threat-model.md).
  function withAgent(t) {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    const agent = createAgent(root, 'keeper', ['probe'])
    return { root, agent, file: path.join(root, '.rotifer', 'agents', `${agent.id}.json`) }
  }
  const refused = (root, pattern) => {
    for (const args of [['agent', 'list'], ['agent', 'show', 'keeper'], ['agent', 'run', 'keeper', '--input', '{}']]) {
      const r = rotifer(root, ...args)
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`)
      assert.match(r.stderr, pattern, args.join(' '))
    }
  }

  test('a record writable by group or others, or whose folder is', (t) => {
    const { root, file } = withAgent(t)
    fs.chmodSync(file, 0o666)
    refused(root, /can be written by its group or by others \(mode 0666\): run chmod go-w .*\.json/)
    fs.chmodSync(file, 0o600)
    assert.equal(rotifer(root, 'agent', 'show', 'keeper').status, 0, 'trusted again once fixed')
    fs.chmodSync(path.dirname(file), 0o777)
    refused(root, /agents can be written by its group or by others \(mode 0777\)/)
  })

  test('a record owned by another user', (t) => {
    const { root, file } = withAgent(t)
    fs.chownSync(file, 12345, 12345)
    refused(root, /is owned by user id 12345, not by this process's user/)
  })

  test('a record that is a symlink or has another name', (t) => {
    const { root, file } = withAgent(t)
    const elsewhere = path.join(root, 'record.json')
    fs.renameSync(file, elsewhere)
    fs.symlinkSync(elsewhere, file)
    refused(root, /is a symlink; agent records are never followed through links/)
    fs.rmSync(file)
    fs.linkSync(elsewhere, file)
    refused(root, /has 2 names \(hard links\)/)
  })
})

test('agent create --composition with a file that is not there is a wrong command line (exit 2), as --input @file', (t) => {
  const root = makeProject(t)
  const r = rotifer(root, 'agent', 'create', 'a', '--composition', 'missing.json')
  assert.equal(r.status, 2)
  assert.match(r.stderr, /--composition missing\.json: cannot read missing\.json \(no such file\)/)
  fs.writeFileSync(path.join(root, 'broken.json'), '{ nope')
  const broken = rotifer(root, 'agent', 'create', 'a', '--composition', 'broken.json')
  assert.equal(broken.status, 1)
  assert.match(broken.stderr, /composition file broken\.json is not valid JSON/)
})
