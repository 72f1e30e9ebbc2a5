'use strict'
// Upstream's behaviours a user of the upstream playground meets first, as upstream's own tests
// state them (tests/e2e, tests/edge, tests/resilience, tests/security/l0-gate-*): outside a
// project, list's filters and lenient reading, agent create's arena selection and schema check,
// agent run's genome snapshot, the L0 gate, test --verbose/--compliance (R-RUN-3, R-RUN-7,
// R-RUN-9). Through the real bin; the inputs and the asserted behaviour carried over as facts.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const { createHash } = require('node:crypto')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { REPO, rotifer, json, makeProject, addGene, agentFiles, readAgent, createAgent, oneErrorLine } = require('./cli-harness')
const { WAT, addWasmGene } = require('./wasm-genes')

const NOT_IN_PROJECT = "error: Not in a Rotifer project. Run 'rotifer init' first."

/** A folder with no rotifer.json in it or above it, removed when `t` ends. */
function noProject(t) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-outside-')))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A phenotype with upstream's four required fields. */
function phenotype(domain, extra = {}) {
  return { domain, version: '0.1.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' }, ...extra }
}

/** A gene that records that its module was loaded (a file beside it), then echoes its input. */
const MARKED = `require('node:fs').writeFileSync(require('node:path').join(__dirname, 'loaded'), 'yes')
exports.express = (input) => input`

/**
 * Upstream's estimated fitness of the Arena, computed here from its facts, not from our code: its
 * getArenaRankings hashes the phenotype as it is, irHash included.
 */
function upstreamEstimate(p) {
  const sort = (v) => (Array.isArray(v) ? v.map(sort) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v)
  const hash = createHash('sha256').update(JSON.stringify(sort(p))).digest('hex')
  const base = Math.min(0.7 + (parseInt(hash.slice(0, 8), 16) % 250) / 1000, 0.99)
  return base * ({ Native: 1, Hybrid: 0.85 }[p.fidelity] || 0.7)
}

describe('outside a project (upstream: requireProjectRoot)', () => {
  test("list, agent, compile, test and wrap say \"Not in a Rotifer project. Run 'rotifer init' first.\" and exit 1, writing nothing", (t) => {
    const dir = noProject(t)
    for (const args of [['list'], ['gene', 'list'], ['agent', 'list'], ['agent', 'create', 'a', '-g', 'x'], ['agent', 'run', 'a'], ['agent', 'show', 'a'],
      ['compile', 'x'], ['test', 'x'], ['wrap', 'x', '-d', 'code.format']]) {
      const r = rotifer(dir, ...args)
      assert.equal(r.status, 1, args.join(' '))
      assert.equal(oneErrorLine(r), NOT_IN_PROJECT, args.join(' '))
      assert.equal(r.stdout, '')
    }
    assert.deepEqual(fs.readdirSync(dir), [], 'no .rotifer/, no genes/')
  })

  test("run says \"Not in a Rotifer project. Run 'rotifer init' first.\" and exits 1 as upstream's run.ts does; --help names every such command", (t) => {
    const dir = noProject(t)
    const r = rotifer(dir, 'run', 'x')
    assert.equal(r.status, 1)
    assert.equal(oneErrorLine(r), NOT_IN_PROJECT)
    assert.equal(r.stdout, '')
    assert.deepEqual(fs.readdirSync(dir), [])
    const help = rotifer(dir, '--help').stdout.replace(/\s+/g, ' ')
    assert.match(help, /outside one, list, agent, compile, run, test, wrap and hello refuse to run/)
  })

  test('a subfolder of a project is in the project; the deployer\'s memory commands keep working outside one', (t) => {
    const root = makeProject(t)
    addGene(root, 'echo', { 'index.js': 'exports.express = (i) => i' })
    const sub = path.join(root, 'genes', 'echo')
    assert.equal(rotifer(sub, 'list').status, 0)
    const r = rotifer(noProject(t), 'agent', 'memory', 'list', 'nobody')
    assert.equal(r.status, 1)
    assert.match(r.stderr, /no agent named or with id "nobody"/)
  })

  test('config corruption: bad JSON, or a number for genes_dir, is a clear error naming the file, never an unhandled one', (t) => {
    const root = makeProject(t)
    for (const [text, message] of [['{broken json!!!', /is not valid JSON/], [JSON.stringify({ name: 'test', version: '0.1.0', author: 'test', genes_dir: 12345 }), /"genes_dir" must be a non-empty string \(got 12345\)/]]) {
      fs.writeFileSync(path.join(root, 'rotifer.json'), text)
      for (const args of [['list'], ['agent', 'list'], ['test', 'x'], ['agent', 'run', 'a'], ['compile', 'x']]) {
        const r = rotifer(root, ...args)
        assert.equal(r.status, 1, args.join(' '))
        const line = oneErrorLine(r)
        assert.match(line, message)
        assert.ok(line.includes(path.join(root, 'rotifer.json')), line)
        assert.ok(!/Cannot read properties|TypeError|\n\s+at /.test(r.stderr), r.stderr)
      }
    }
  })
})

describe('list (upstream: list.ts)', () => {
  test('a gene whose phenotype lacks fields is listed with what it has (upstream does not validate there), and says what to fix', (t) => {
    const root = makeProject(t)
    addGene(root, 'partial', { 'index.js': 'exports.express = (i) => i' }, { phenotype: { domain: 'code.lint' } })
    addGene(root, 'whole', { 'index.js': 'exports.express = (i) => i' }, { phenotype: phenotype('code.format') })
    const rows = json(rotifer(root, 'list', '--json'))
    assert.deepEqual(rows.map((r) => [r.name, r.domain, r.fidelity, r.version]), [['partial', 'code.lint', null, '-'], ['whole', 'code.format', null, '0.1.0']])
    assert.match(rows[0].problem, /has no "version", "inputSchema", "outputSchema" \(E0021\)/)
    assert.equal(rows[1].problem, undefined)
    const text = rotifer(root, 'list')
    assert.equal(text.status, 0)
    assert.match(text.stdout, /^partial +js +code\.lint +Unknown /m)
    assert.match(text.stdout, /partial: +cannot run yet: .*E0021/)
  })

  test('any folder with phenotype.json is listed: a complete phenotype with no source (a wrapped skill) is a gene, filtered and given a Gene ID', (t) => {
    const root = makeProject(t)
    addGene(root, 'foo', {}, { phenotype: phenotype('general', { fidelity: 'Wrapped' }) })
    const rows = json(rotifer(root, 'list', '--json'))
    assert.deepEqual(rows.map((r) => [r.name, r.error, r.domain, r.fidelity, r.compiled]), [['foo', undefined, 'general', 'Wrapped', false]])
    assert.match(rows[0].id, /^v2:[0-9a-f]{64}$/)
    assert.match(rows[0].problem, /has no .*index\.ts/)
    assert.deepEqual(json(rotifer(root, 'list', '--json', '-d', 'general')).map((r) => r.name), ['foo'])
    assert.deepEqual(json(rotifer(root, 'list', '--json', '--fidelity', 'Wrapped')).map((r) => r.name), ['foo'])
    const text = rotifer(root, 'list')
    assert.match(text.stdout, /^foo +- +general +Wrapped +no +v2:/m)
    assert.doesNotMatch(text.stdout, /error:/)
    const id = rotifer(root, 'gene', 'id', 'foo')
    assert.equal(id.status, 0, id.stderr)
    assert.equal(id.stdout.trim(), rows[0].id)
    assert.match(rotifer(root, 'compile', 'foo').stdout, new RegExp(rows[0].id.slice(3)))
  })

  test('-d/--domain keeps the domain and its subdomains, --fidelity one fidelity (Unknown when none is given)', (t) => {
    const root = makeProject(t)
    addGene(root, 'fmt', { 'index.js': 'exports.express = (i) => i' }, { phenotype: phenotype('code.format', { fidelity: 'Native' }) })
    addGene(root, 'lint', { 'index.js': 'exports.express = (i) => i' }, { phenotype: phenotype('code.lint') })
    addGene(root, 'codec', { 'index.js': 'exports.express = (i) => i' }, { phenotype: phenotype('codec', { fidelity: 'Wrapped' }) })
    const names = (...args) => json(rotifer(root, 'list', '--json', ...args)).map((r) => r.name)
    assert.deepEqual(names(), ['codec', 'fmt', 'lint'])
    assert.deepEqual(names('-d', 'code'), ['fmt', 'lint'], '"codec" is not a subdomain of "code"')
    assert.deepEqual(names('--domain', 'code.format'), ['fmt'])
    assert.deepEqual(names('--fidelity', 'Native'), ['fmt'])
    assert.deepEqual(names('--fidelity', 'Unknown'), ['lint'])
    assert.deepEqual(names('-d', 'code', '--fidelity', 'Wrapped'), [])
    const none = rotifer(root, 'list', '-d', 'text')
    assert.equal(none.status, 0)
    assert.match(none.stdout, /^No genes of domain text in .* \(3 in all/)
    const bad = rotifer(root, 'list', '--fidelity', 'native')
    assert.equal(bad.status, 2)
    assert.match(oneErrorLine(bad), /invalid --fidelity "native".*use Wrapped, Hybrid, Native or Unknown/)
  })
})

describe('agent create (upstream: agent-create.ts)', () => {
  test('-d/--domain with -n/--top picks the top genes of the domain by the Arena estimate, strategy greedy', (t) => {
    const root = makeProject(t)
    const genes = {}
    for (const [name, fidelity] of [['a', 'Native'], ['b', 'Wrapped'], ['c', 'Hybrid'], ['d', undefined]]) {
      genes[name] = phenotype('text.clean', fidelity ? { fidelity } : {})
      addGene(root, name, { 'index.js': 'exports.express = (i) => i' }, { phenotype: genes[name] })
    }
    addGene(root, 'other', { 'index.js': 'exports.express = (i) => i' }, { phenotype: phenotype('text.other', { fidelity: 'Native' }) })
    const expected = Object.keys(genes).sort((x, y) => upstreamEstimate(genes[y]) - upstreamEstimate(genes[x])).slice(0, 2)
    const r = rotifer(root, 'agent', 'create', 'best', '-d', 'text.clean', '-n', '2')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, new RegExp(`^Auto-selected top 2 gene\\(s\\) from Arena \\(domain: text\\.clean\\) \\[strategy: greedy\\]: ${expected[0]} \\(\\d\\.\\d{3}\\), ${expected[1]} `))
    const record = readAgent(root, /id\s+([0-9a-f-]{36})/.exec(r.stdout)[1])
    assert.deepEqual(record.genome, expected)
    assert.equal(record.strategy, 'greedy')
    // The default is two genes; -n 1 gives a Single.
    const one = rotifer(root, 'agent', 'create', 'one', '--domain', 'text.clean', '--top', '1')
    const single = readAgent(root, /id\s+([0-9a-f-]{36})/.exec(one.stdout)[1])
    assert.deepEqual([single.genome, single.composition], [[expected[0]], { type: 'Single' }])
  })

  test("the Arena estimate hashes the raw phenotype, irHash included, as upstream's getArenaRankings does", (t) => {
    const root = makeProject(t)
    const genes = {}
    for (const [name, irHash] of [['p', 'a'.repeat(64)], ['q', 'b'.repeat(64)], ['r', '0123456789'.repeat(6) + 'abcd']]) {
      genes[name] = phenotype('text.hash', { fidelity: 'Wrapped', irHash })
      addGene(root, name, { 'index.js': 'exports.express = (i) => i' }, { phenotype: genes[name] })
    }
    const r = rotifer(root, 'agent', 'create', 'ranked', '-d', 'text.hash', '-n', '3')
    assert.equal(r.status, 0, r.stderr)
    const shown = Object.fromEntries([...r.stdout.split('\n')[0].matchAll(/(\w+) \((\d\.\d{3})\)/g)].map((m) => [m[1], m[2]]))
    assert.deepEqual(shown, Object.fromEntries(Object.keys(genes).map((n) => [n, upstreamEstimate(genes[n]).toFixed(3)])))
  })

  test("no gene of the domain is upstream's refusal, \"No genes found in Arena for domain '…'\", exit 1, nothing created", (t) => {
    const root = makeProject(t)
    addGene(root, 'a', { 'index.js': 'exports.express = (i) => i' }, { phenotype: phenotype('text.clean') })
    const r = rotifer(root, 'agent', 'create', 'x', '-d', 'none.such')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /^error: No genes found in Arena for domain 'none\.such'/)
    assert.deepEqual(agentFiles(root), [])
    for (const [args, message] of [[['-d', 'text.clean', '-n', '0'], /invalid --top "0"/], [['-d', 'text.clean', '-g', 'a'], /without --genes/]]) {
      const bad = rotifer(root, 'agent', 'create', 'x', ...args)
      assert.equal(bad.status, 2)
      assert.match(oneErrorLine(bad), message)
    }
  })

  test('a Seq whose output schema does not feed the next input schema is warned about: "A → B: FAIL — missing: [field]"', (t) => {
    const root = makeProject(t)
    const out = (properties) => ({ type: 'object', properties })
    addGene(root, 'reader', { 'index.js': 'exports.express = (i) => ({ text: "x", size: 1 })' }, { phenotype: phenotype('text.read', { outputSchema: out({ text: { type: 'string' }, size: { type: 'integer' } }) }) })
    addGene(root, 'writer', { 'index.js': 'exports.express = (i) => i' }, { phenotype: phenotype('text.write', { inputSchema: { type: 'object', properties: { code: { type: 'string' }, size: { type: 'string' } }, required: ['code'] } }) })
    addGene(root, 'sizer', { 'index.js': 'exports.express = (i) => i' }, { phenotype: phenotype('text.size', { inputSchema: { type: 'object', properties: { size: { type: 'number' } }, required: ['size'] } }) })
    const r = rotifer(root, 'agent', 'create', 'pipe', '-g', 'reader', 'writer')
    assert.equal(r.status, 0, 'a warning, not a refusal')
    assert.deepEqual(r.stderr.trim().split('\n'), ['warning: Schema compatibility warnings:', '  reader → writer: FAIL — missing: [code], type mismatch: [size: integer ≠ string]'])
    assert.equal(agentFiles(root).length, 1)
    const ok = rotifer(root, 'agent', 'create', 'fine', '-g', 'reader', 'sizer')
    assert.equal(ok.stderr, '', 'an integer feeds a number')
    const par = rotifer(root, 'agent', 'create', 'fan', '-g', 'reader', 'writer', '--composition', 'Par')
    assert.equal(par.stderr, '', 'only a Seq feeds one gene into the next')
  })
})

describe('agent run (upstream: printProtocolInsights)', () => {
  test('the genome snapshot (distinct domains, executable genes, duration) goes to stderr with --verbose; stdout stays the JSON result', (t) => {
    const root = makeProject(t)
    addGene(root, 'a', { 'index.js': 'exports.express = (i) => ({ ...i, a: 1 })' }, { phenotype: phenotype('text.a') })
    addGene(root, 'b', { 'index.js': 'exports.express = (i) => ({ ...i, b: 1 })' }, { phenotype: phenotype('text.b') })
    createAgent(root, 'two', ['a', 'b'])
    const r = rotifer(root, 'agent', 'run', 'two', '--input', '{}', '--verbose')
    assert.equal(r.status, 0, r.stderr)
    assert.deepEqual(JSON.parse(r.stdout), { a: 1, b: 1 })
    const snapshot = r.stderr.slice(r.stderr.indexOf('Genome Snapshot'))
    assert.match(snapshot, /^Genome Snapshot\n {2}primary domain {4}text\.a\n {2}distinct domains {2}2\n {2}genes in genome {3}2\n {2}executable genes {2}2\/2\n {2}run duration {6}\d+ ms\n$/)
    const quiet = rotifer(root, 'agent', 'run', 'two', '--input', '{}')
    assert.equal(quiet.stderr, '', 'piped without --verbose: no snapshot')
  })
})

describe('the L0 gate (upstream: tests/security/l0-gate-*.test.ts)', () => {
  /** A project with gene `solo` declaring `permissions`, and agent "agent-x" of it. */
  function gated(t, permissions, { domain = 'evil.hack', manifest } = {}) {
    const root = makeProject(t)
    const dir = addGene(root, 'solo', { 'index.js': MARKED }, { phenotype: phenotype(domain, permissions === undefined ? {} : { permissions }) })
    if (manifest) fs.writeFileSync(path.join(dir, '.cloud-manifest.json'), typeof manifest === 'string' ? manifest : JSON.stringify(manifest))
    createAgent(root, 'agent-x', ['solo'])
    return { root, loaded: () => fs.existsSync(path.join(dir, 'loaded')) }
  }

  test('a violation blocks agent run, --no-sandbox, run and test before the gene is loaded: "L0 gate blocked"', (t) => {
    const { root, loaded } = gated(t, { allowed_domains: ['search', 'code'] })
    for (const args of [['agent', 'run', 'agent-x'], ['agent', 'run', 'agent-x', '--no-sandbox'], ['run', 'solo'], ['test', 'solo']]) {
      const r = rotifer(root, ...args)
      assert.equal(r.status, 1, args.join(' '))
      assert.match(r.stderr + r.stdout, /L0 gate blocked 'solo': domain 'evil\.hack' is not in the allowed list/, args.join(' '))
      assert.ok(!r.stdout.includes('runs on the sample input') || /FAIL {2}runs on the sample input/.test(r.stdout))
    }
    assert.equal(loaded(), false, "the gene's module never ran")
  })

  test('test of a gene the gate blocked says "L0 gate blocked" alone: the open-schema hint is only for a gene that ran on {} and failed', (t) => {
    const { root } = gated(t, { allowed_domains: ['search'] })
    const r = rotifer(root, 'test', 'solo')
    assert.equal(r.status, 1)
    const fail = r.stdout.split('\n').find((l) => /FAIL {2}runs on the sample input/.test(l))
    assert.match(fail, /L0 gate blocked 'solo'/)
    assert.doesNotMatch(fail, /lists no properties|rotifer wrap/)
    // Control: the same open schema, no gate, a gene that fails on {}: the hint is given.
    addGene(root, 'picky', { 'index.js': 'exports.express = (i) => { if (!i.code) throw new Error("no code"); return i }' }, { phenotype: phenotype('text.pick') })
    const open = rotifer(root, 'test', 'picky')
    assert.equal(open.status, 1)
    assert.match(open.stdout, /FAIL {2}runs on the sample input: .*no code.*; the inputSchema of .* lists no properties.*rotifer wrap picky/)
  })

  test("upstream's checks and messages: memory, fuel, execution time against this runtime's limits, and filesystem paths", (t) => {
    const cases = [
      [{ resource_limits: { max_memory_bytes: 512 * 1024 * 1024 } }, /requested memory 536870912 bytes exceeds limit 268435456 bytes/],
      [{ resource_limits: { max_fuel_units: Number.MAX_SAFE_INTEGER } }, /requested fuel 9007199254740991 exceeds limit \d+/],
      [{ resource_limits: { max_execution_time_ms: 120000 } }, /execution timeout 120000ms exceeds limit 60000ms/],
      [{ file_system_access: ['../../etc/passwd', 'data/in.json', '/root/.ssh/id_rsa'] }, /filesystem access to '\.\.\/\.\.\/etc\/passwd' not permitted; filesystem access to '\/root\/\.ssh\/id_rsa' not permitted/],
    ]
    for (const [permissions, message] of cases) {
      const { root, loaded } = gated(t, permissions)
      const r = rotifer(root, 'agent', 'run', 'agent-x')
      assert.equal(r.status, 1)
      assert.match(oneErrorLine(r), message)
      assert.equal(loaded(), false)
    }
    // A longer run grants a longer timeout: the same gene passes with --timeout 200.
    const { root } = gated(t, { resource_limits: { max_execution_time_ms: 120000 } })
    assert.equal(rotifer(root, 'agent', 'run', 'agent-x', '--timeout', '200').status, 0)
  })

  test('control: declared permissions within the limits, or none, pass and the gene runs', (t) => {
    for (const permissions of [undefined, { allowed_domains: ['evil'], resource_limits: { max_memory_bytes: 1024, max_execution_time_ms: 1000 }, network_access: false, file_system_access: ['data/in.json'] }]) {
      const { root, loaded } = gated(t, permissions)
      const r = rotifer(root, 'agent', 'run', 'agent-x', '--input', '{"x":1}')
      assert.equal(r.status, 0, r.stderr)
      assert.deepEqual(JSON.parse(r.stdout), { x: 1 })
      assert.equal(r.stderr, '')
      assert.equal(loaded(), true)
    }
  })

  test('when the gate cannot run, provenance decides: a local gene runs with "could not run", an installed one is refused', (t) => {
    const local = gated(t, 'all')
    const r = rotifer(local.root, 'agent', 'run', 'agent-x', '--input', '{}')
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.stderr.trim(), 'warning: L0 gate could not run (phenotype unreadable ("permissions" must be an object, not "all")) — running this local gene unchecked.')
    assert.equal(local.loaded(), true)
    // Published by its author (published_at only): still the project's own.
    const mine = gated(t, 'all', { manifest: { cloud_id: 'x', owner: 'me', published_at: '2026-08-20T07:12:47.508Z' } })
    assert.equal(rotifer(mine.root, 'agent', 'run', 'agent-x', '--input', '{}').status, 0)
    for (const manifest of [{ cloud_id: 'x', owner: 'someone-else', installed_at: '2026-08-20T00:00:00.000Z' }, { cloud_id: 'x' },
      { published_at: '2026-01-01T00:00:00Z', installed_at: '2026-01-02T00:00:00Z' }, '{ this is not json']) {
      const theirs = gated(t, 'all', { manifest })
      const refused = rotifer(theirs.root, 'agent', 'run', 'agent-x', '--input', '{}')
      assert.equal(refused.status, 1, JSON.stringify(manifest))
      assert.match(oneErrorLine(refused), /L0 gate blocked 'solo': could not run \(phenotype unreadable .*\) on an installed gene/)
      assert.equal(theirs.loaded(), false)
    }
  })
})

describe('test --verbose and --compliance (upstream: test.ts)', () => {
  test("--verbose shows each run's input and output under its line", (t) => {
    const root = makeProject(t)
    addGene(root, 'echo', { 'index.js': 'exports.express = (i) => ({ got: i })' }, { phenotype: phenotype('text.echo', { inputSchema: { type: 'object', properties: { name: { type: 'string', default: 'world' } } } }) })
    const r = rotifer(root, 'test', 'echo', '--verbose')
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, / {2}ok {4}runs on the sample input\n {8}input: {2}\{"name":"world"\}\n {8}output: \{"got":\{"name":"world"\}\}\n/)
    assert.ok(!rotifer(root, 'test', 'echo').stdout.includes('input:'), 'only with --verbose')
    addGene(root, 'suite', { 'index.js': 'exports.express = (i) => { if (i.n > 1) throw new RangeError("too big"); return i }', 'testsuite.json': { testCases: [{ input: { n: 1 } }, { input: { n: 2 }, expectedError: 'RangeError' }] } }, { phenotype: phenotype('text.s') })
    const s = rotifer(root, 'test', 'suite', '--verbose')
    assert.match(s.stdout, / {2}ok {4}case 1\n {8}input: {2}\{"n":1\}\n {8}output: \{"n":1\}\n {2}ok {4}case 2\n {8}input: {2}\{"n":2\}\n {8}error: {2}RangeError: too big/)
  })

  test('--compliance runs the local checks: C1 sandbox, C3 the L0 gate, C4 the gene standard\'s fields, C6 the IR; C2 and C5 skipped', async (t) => {
    const root = makeProject(t)
    addGene(root, 'plain', { 'index.js': 'exports.express = (i) => i' }, { phenotype: phenotype('text.plain') })
    const r = rotifer(root, 'test', 'plain', '--compliance')
    assert.equal(r.status, 1, 'C4 fails: no fidelity')
    const report = r.stdout.slice(r.stdout.indexOf('Compliance checks'))
    assert.deepEqual(report.trim().split('\n').map((l) => l.replace(/:.*/, '')), [
      'Compliance checks', '  skip  C1 sandbox execution', '  skip  C2 fuel consumption', '  ok    C3 L0 gate', '  FAIL  C4 phenotype compliance',
      '  skip  C5 fitness computability', '  skip  C6 IR segment integrity', '8 passed, 1 failed, 4 skipped',
    ], 'seven standard checks and C3 passed')
    assert.match(report, /ok {4}C3 L0 gate: PASS \(1 checks\)/)
    assert.match(report, /FAIL {2}C4 phenotype compliance: every field of the gene standard is present: missing fields: fidelity/)
    await addWasmGene(root, 'wasm', WAT.constant({ ok: true }), { phenotype: phenotype('text.wasm', { fidelity: 'Native' }) })
    const w = rotifer(root, 'test', 'wasm', '--compliance')
    assert.match(w.stdout, /ok {4}C1 sandbox execution: the gene runs in the WASM sandbox \(direct\)/)
    assert.match(w.stdout, /ok {4}C4 phenotype compliance/)
  })
})

describe('one input rule for runGene and rotifer test (issue: INVALID_INPUT refused by one, run by the other)', () => {
  test('rotifer test refuses an input outside the inputSchema with INVALID_INPUT before the gene runs, as runGene and agent run do', (t) => {
    const root = makeProject(t)
    const dir = addGene(root, 'strict', {
      'index.js': 'exports.express = (i) => { require("node:fs").writeFileSync(require("node:path").join(__dirname, "ran"), JSON.stringify(i)); return i }',
      'testsuite.json': { testCases: [{ name: 'refused', input: { n: 'x' } }, { name: 'refused, said so', input: { n: 'x' }, expectedError: 'INVALID_INPUT' }, { name: 'expects an answer', input: { n: 'x' }, expectedOutput: { n: 'x' } }] },
    }, { phenotype: phenotype('test.strict', { inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }) })
    const r = rotifer(root, 'test', 'strict')
    assert.equal(r.status, 1)
    const lines = r.stdout.split('\n')
    assert.match(lines[1], /^ {2}ok {4}case 1: refused \(input outside the inputSchema: \/n must be integer \(rule "type"\); refused, INVALID_INPUT\)$/)
    assert.match(lines[2], /^ {2}ok {4}case 2: refused, said so /)
    assert.match(lines[3], /^ {2}FAIL {2}case 3: expects an answer .*: the case expects an output, but its input is outside the inputSchema, and every run refuses such an input with INVALID_INPUT before the gene runs/)
    assert.equal(fs.existsSync(path.join(dir, 'ran')), false, 'the gene never ran on those inputs')
  })

  test('runGene(folder) resolves a relative folder from the project root of the calling test file, whatever the working directory', (t) => {
    const npmRoot = noProject(t)
    const project = path.join(npmRoot, 'my-project')
    fs.mkdirSync(path.join(project, 'test'), { recursive: true })
    fs.writeFileSync(path.join(project, 'rotifer.json'), '{}\n')
    addGene(project, 'counter', { 'index.js': 'exports.express = (i) => ({ twice: i.n * 2 })' }, { phenotype: phenotype('demo.count') })
    const testing = JSON.stringify(path.join(REPO, 'lib', 'testing', 'index.js'))
    fs.writeFileSync(path.join(project, 'test', 'counter.test.js'), `const { runGene, geneId } = require(${testing})
runGene('genes/counter', { n: 21 }).then((out) => console.log(JSON.stringify({ out, id: geneId('genes/counter') })), (e) => { console.error(e.message); process.exit(1) })\n`)
    for (const cwd of [npmRoot, project, path.join(project, 'test'), os.tmpdir()]) {
      const r = spawnSync(process.execPath, [path.join(project, 'test', 'counter.test.js')], { cwd, encoding: 'utf8' })
      assert.equal(r.status, 0, `${cwd}: ${r.stderr}`)
      const { out, id } = JSON.parse(r.stdout)
      assert.deepEqual(out, { twice: 42 })
      assert.match(id, /^v2:[0-9a-f]{64}$/)
    }
    // A folder that is not there says where it was looked for, and why there.
    fs.writeFileSync(path.join(project, 'test', 'missing.test.js'), `require(${testing}).runGene('genes/nope').catch((e) => { console.error(e.message); process.exit(1) })\n`)
    const r = spawnSync(process.execPath, [path.join(project, 'test', 'missing.test.js')], { cwd: npmRoot, encoding: 'utf8' })
    assert.equal(r.status, 1)
    assert.equal(r.stderr.trim(), `runGene: there is no gene folder ${path.join(project, 'genes', 'nope')} ("genes/nope" is resolved from the project root ${project} (the nearest rotifer.json above ${path.join(project, 'test', 'missing.test.js')}))`)
  })
})
