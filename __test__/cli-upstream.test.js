'use strict'
// A project made with the upstream playground runs here unchanged (R-RUN-1, 2, 3, 10's
// --check): its rotifer.json and genes_dir, phenotypes without `name`, the gene files, and the
// commands init, list, wrap and compile --check. Through the real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { createHash } = require('node:crypto')
const { compileWat } = require('../scripts/wat')
const { rotifer, json, makeProject, addGene, oneErrorLine, PROBE } = require('./cli-harness')

/** Upstream's content hash, computed independently: keys sorted at every depth, then JSON.stringify. */
function upstreamContentHash(phenotype) {
  const sortKeysDeep = (v) => (Array.isArray(v) ? v.map(sortKeysDeep)
    : v !== null && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeysDeep(v[k])])) : v)
  const { irHash, ...rest } = phenotype
  return createHash('sha256').update(JSON.stringify(sortKeysDeep(rest))).digest('hex')
}

function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2))
}

describe('rotifer.json (R-RUN-1)', () => {
  test('a malformed rotifer.json stops every command, naming the file, the field and the fix', (t) => {
    const root = makeProject(t)
    const file = path.join(root, 'rotifer.json')
    const cases = [
      ['{"genes_dir": "../elsewhere"}', /rotifer\.json: "genes_dir" must be a folder inside the project .*\(got "\.\.\/elsewhere"\); write the folder of the genes relative to/],
      ['{"genes_dir": "/abs"}', /"genes_dir" must be relative to the project root/],
      ['{"genes_dir": 3}', /"genes_dir" must be a non-empty string/],
      ['{"default_domain": "Not A Domain"}', /"default_domain" must be lower-case words joined by dots.*; fix it or remove the field/],
      ['{"name": 7}', /"name" must be a non-empty string, not 7; write a string or remove the field/],
      ['[1]', /the project file .*rotifer\.json must hold a JSON object/],
      ['{"name":', /the project file .*rotifer\.json is not valid JSON/],
    ]
    for (const [text, message] of cases) {
      fs.writeFileSync(file, text)
      for (const args of [['list'], ['run', 'g', '--input', '{}'], ['agent', 'list']]) {
        const r = rotifer(root, ...args)
        assert.equal(r.status, 1, `${text} ${args}`)
        assert.match(oneErrorLine(r), message, text)
        assert.ok(oneErrorLine(r).includes(file), 'the file is named')
      }
    }
    assert.equal(fs.existsSync(path.join(root, '.rotifer')), false, 'nothing written')
  })

  test('genes_dir is where genes are looked up, written and named in messages', (t) => {
    const root = makeProject(t)
    fs.writeFileSync(path.join(root, 'rotifer.json'), JSON.stringify({ name: 'p', version: '0.1.0', genes_dir: 'lib/my-genes' }))
    addGene(root, 'in-genes', { 'index.js': PROBE })
    const dir = path.join(root, 'lib', 'my-genes', 'probe')
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, 'index.js'), PROBE)
    // genes/ is not the genes folder: only lib/my-genes/probe is listed (not yet usable).
    assert.deepEqual(json(rotifer(root, 'list', '--json')).map((g) => g.name), ['probe'])
    const missing = rotifer(root, 'run', 'probe', '--input', '{}')
    assert.match(oneErrorLine(missing), /gene "probe" has no lib\/my-genes\/probe\/phenotype\.json \(E0020\); run 'rotifer wrap probe' to write one/)
    const wrapped = rotifer(root, 'wrap', 'probe')
    assert.equal(wrapped.status, 0, wrapped.stderr)
    assert.match(wrapped.stdout, /^Gene "probe" wrapped: lib\/my-genes\/probe\/phenotype\.json\n {2}Gene ID \(v2\) {2}v2:[0-9a-f]{64}\n {2}Domain {8}general\n {2}Fidelity {6}Wrapped\n$/)
    assert.deepEqual(json(rotifer(root, 'run', 'probe', '--input', '{"x":1}')), { x: 1, steps: [], results: [[]] })
    const absent = rotifer(root, 'test', 'prob')
    assert.match(oneErrorLine(absent), /gene "prob" not found: there is no folder lib\/my-genes\/prob\/ in .*; did you mean "probe"\?$/)
  })

  test('gene names follow upstream: lower case, no leading or trailing dot, at most 100 characters', (t) => {
    const root = makeProject(t)
    for (const name of ['Upper', '_lead', 'trail.', 'a..b', 'a'.repeat(101)]) {
      const r = rotifer(root, 'run', name, '--input', '{}')
      assert.equal(r.status, 1, name)
      assert.match(oneErrorLine(r), /is not a gene name: use lower-case letters, digits, "\.", "_" and "-", starting and ending with a letter or digit, at most 100 characters/)
    }
  })
})

describe('phenotype.json (R-RUN-2)', () => {
  test('no name is needed, one is still accepted, and the id is upstream\'s content hash', (t) => {
    const root = makeProject(t)
    const bare = { domain: 'test.bare', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' }, tags: ['ü'], irHash: 'abc' }
    addGene(root, 'bare', { 'index.js': PROBE }, { phenotype: bare })
    addGene(root, 'named', { 'index.js': PROBE }, { phenotype: { ...bare, name: 'named' } })
    const ids = Object.fromEntries(json(rotifer(root, 'list', '--json')).map((g) => [g.name, g.id]))
    assert.equal(ids.bare, `v2:${upstreamContentHash(bare)}`)
    assert.equal(ids.named, `v2:${upstreamContentHash({ ...bare, name: 'named' })}`)
    assert.deepEqual(json(rotifer(root, 'run', 'bare', '--input', '{}')), { steps: [], results: [[]] })
  })

  test('an invalid phenotype is refused with the file, the field, the rule and the fix', (t) => {
    const root = makeProject(t)
    const good = { domain: 'test.v', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }
    const { outputSchema, ...noOutput } = good
    const cases = [
      [noOutput, /genes\/g\/phenotype\.json has no "outputSchema" \(E0021\); add it: "outputSchema": \{"type": "object"\}/],
      [{ ...good, version: '1.0' }, /genes\/g\/phenotype\.json: "version" must be a semantic version, not "1\.0" \(E0023\); write it like "1\.0\.0"/],
      [{ ...good, domain: 'Text' }, /"domain" must be lower-case words joined by dots.*\(E0022\)/],
      [{ ...good, fidelity: 'Full' }, /"fidelity" must be one of Wrapped, Hybrid, Native, not "Full"/],
      [{ ...good, tags: 'a,b' }, /"tags" must be an array of strings; write it like \["format", "code"\]/],
      [{ ...good, network: { allowedDomains: 'x.com' } }, /"network\.allowedDomains" must be an array of host names/],
      [{ ...good, inputSchema: { type: 'strng' } }, /genes\/g\/phenotype\.json: "inputSchema" is not a valid JSON Schema: .*; fix the schema/],
      [{ ...good, guardConfig: { position: 'middle', categories: ['x'] } }, /"guardConfig\.position" must be one of input, output, both, not "middle" \(E0082\)/],
      [{ ...good, executionModel: 'LIVE' }, /"executionModel" must be one of CHAT, BATCH, EVENT_DRIVEN, not "LIVE" \(E0100\)/],
    ]
    for (const [phenotype, message] of cases) {
      addGene(root, 'g', { 'index.js': PROBE }, { phenotype })
      const r = rotifer(root, 'run', 'g', '--input', '{}')
      assert.equal(r.status, 1, JSON.stringify(phenotype))
      assert.match(oneErrorLine(r), message)
    }
  })
})

describe('init, wrap and compile --check (R-RUN-1, R-RUN-10)', () => {
  test('init writes rotifer.json and the genes folder as upstream, and never overwrites', (t) => {
    const cwd = makeProject(t)
    const r = rotifer(cwd, 'init', 'fresh', '--domain', 'code.format')
    assert.equal(r.status, 0, r.stderr)
    const root = path.join(cwd, 'fresh')
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(root, 'rotifer.json'), 'utf8')), { name: 'fresh', version: '0.1.0', author: 'local-dev', genes_dir: 'genes', default_domain: 'code.format' })
    const phenotype = JSON.parse(fs.readFileSync(path.join(root, 'genes', 'hello-world', 'phenotype.json'), 'utf8'))
    assert.deepEqual([phenotype.domain, phenotype.fidelity, phenotype.name], ['code.format', 'Wrapped', undefined])
    // hello-world remembers: in an agent, the second run greets again.
    assert.equal(rotifer(root, 'agent', 'create', 'greeter', '-g', 'hello-world').status, 0)
    assert.match(json(rotifer(root, 'agent', 'run', 'greeter', '--input', '{"name":"world"}')).greeting, /^Hello, world!/)
    assert.equal(rotifer(root, 'test', 'hello-world').status, 0)
    const again = rotifer(cwd, 'init', 'fresh')
    assert.equal(again.status, 1)
    assert.match(oneErrorLine(again), /fresh\/rotifer\.json already exists: .* is a project already, and rotifer init never overwrites one/)
    // The default name, and a broken project above does not stop it.
    fs.writeFileSync(path.join(cwd, 'rotifer.json'), '{')
    assert.equal(rotifer(cwd, 'init').status, 0)
    assert.ok(fs.existsSync(path.join(cwd, 'my-agent', 'rotifer.json')))
  })

  test('wrap writes a Wrapped phenotype for a source gene, or updates one, and prints the Gene ID (v2)', (t) => {
    const root = makeProject(t)
    fs.writeFileSync(path.join(root, 'rotifer.json'), JSON.stringify({ name: 'p', version: '0.1.0', author: 'ada', genes_dir: 'genes', default_domain: 'text.tools' }))
    writeJson(path.join(root, 'genes', 'fresh', 'index.js'), 'exports.express = (input) => input')
    const r = rotifer(root, 'wrap', 'fresh')
    assert.equal(r.status, 0, r.stderr)
    const p = JSON.parse(fs.readFileSync(path.join(root, 'genes', 'fresh', 'phenotype.json'), 'utf8'))
    assert.deepEqual({ ...p, createdAt: 'x' }, {
      domain: 'text.tools', inputSchema: { type: 'object', properties: {}, required: [] }, outputSchema: { type: 'object' },
      dependencies: [], version: '0.1.0', author: 'ada', createdAt: 'x', fidelity: 'Wrapped', transparency: 'Open',
    })
    const id = /Gene ID \(v2\) {2}(v2:[0-9a-f]{64})/.exec(r.stdout)[1]
    assert.equal(id, json(rotifer(root, 'gene', 'list', '--json'))[0].id)
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'genes', 'fresh', '.gene-manifest.json'), 'utf8'))
    assert.deepEqual([manifest.geneId, manifest.name, manifest.fidelity], [id.slice(3), 'fresh', 'Wrapped'])
    // An existing phenotype keeps its fields; -d and --fidelity change theirs.
    writeJson(path.join(root, 'genes', 'fresh', 'phenotype.json'), { ...p, tags: ['kept'] })
    const again = rotifer(root, 'wrap', 'fresh', '-d', 'util.echo', '--fidelity', 'Hybrid')
    assert.equal(again.status, 0, again.stderr)
    const q = JSON.parse(fs.readFileSync(path.join(root, 'genes', 'fresh', 'phenotype.json'), 'utf8'))
    assert.deepEqual([q.domain, q.fidelity, q.tags, q.createdAt], ['util.echo', 'Hybrid', ['kept'], p.createdAt])
    // A phenotype wrap cannot make valid is left as it was.
    const broken = { ...q, version: 'one' }
    writeJson(path.join(root, 'genes', 'fresh', 'phenotype.json'), broken)
    const refused = rotifer(root, 'wrap', 'fresh')
    assert.equal(refused.status, 1)
    assert.match(oneErrorLine(refused), /genes\/fresh\/phenotype\.json: "version" must be a semantic version/)
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(root, 'genes', 'fresh', 'phenotype.json'), 'utf8')), broken)
    const none = rotifer(root, 'wrap', 'nowhere')
    assert.equal(none.status, 1)
    assert.match(oneErrorLine(none), /gene folder genes\/nowhere not found \(E0001\)/)
  })

  test('list suggests rotifer compile for a gene with only gene.wasm; compile --check shows upstream\'s warnings', async (t) => {
    const root = makeProject(t)
    const dir = addGene(root, 'raw', {}, { phenotype: { domain: 'guard.x', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } } })
    fs.writeFileSync(path.join(dir, 'gene.wasm'), await compileWat('(module (memory (export "memory") 1) (func (export "express") (param i32 i32) (result i32) (i32.const 0)))', 'raw.wat'))
    const [raw] = json(rotifer(root, 'list', '--json'))
    assert.deepEqual([raw.kind, raw.compiled, raw.hint], ['wasm', true, 'run rotifer compile raw to turn gene.wasm into gene.ir.wasm'])
    assert.match(rotifer(root, 'list').stdout, /\nraw\s+wasm\s+guard\.x\s+Unknown\s+gene\.wasm only: run rotifer compile raw\s+v2:/)
    const guard = { domain: 'prompt.x', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' }, fidelity: 'Native' }
    addGene(root, 'raw', {}, { phenotype: guard })
    const r = rotifer(root, 'compile', 'raw', '--check')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stderr, /^warning: genes\/raw\/phenotype\.json: W0083 a prompt gene with fidelity Native is unusual/)
  })
})
