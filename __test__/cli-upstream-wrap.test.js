'use strict'
// `rotifer wrap` as the upstream playground's wrap (R-RUN-10), and better: the schemas of a
// new phenotype derived from the TypeScript types of `express`, so that `wrap` then `test` of
// the formatter passes (upstream's wrap writes `"properties": {}` and the standard check runs
// the gene on `{}`); a gene whose types say nothing gets a note saying what to write. And
// `wrap --from-skill` (a SKILL.md into a gene). Through the real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, json, makeProject, addFormatter, oneErrorLine } = require('./cli-harness')

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'))

describe('wrap derives the schemas from the types of express', () => {
  test('rotifer wrap formatter -d code.format && rotifer test formatter passes', (t) => {
    const root = makeProject(t)
    addFormatter(root)
    const dir = path.join(root, 'genes', 'formatter')
    for (const f of ['phenotype.json', 'testsuite.json']) fs.rmSync(path.join(dir, f), { force: true })
    const w = rotifer(root, 'wrap', 'formatter', '-d', 'code.format')
    assert.equal(w.status, 0, w.stderr)
    assert.match(w.stdout, /^ {2}Schemas {7}inputSchema and outputSchema from the types of genes\/formatter\/index\.ts$/m)
    const p = readJson(path.join(dir, 'phenotype.json'))
    assert.deepEqual(p.inputSchema, { type: 'object', properties: { code: { type: 'string' }, indent: { type: 'number' } }, required: ['code'] })
    assert.deepEqual(p.outputSchema, { type: 'object', properties: { formatted: { type: 'string' }, indent: { type: 'number' } }, required: ['formatted', 'indent'] })
    const r = rotifer(root, 'test', 'formatter')
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /ok {4}runs on the sample input/)
    assert.match(r.stdout, /the sample input \{"code":"test_value","indent":5\} conforms/)
  })

  test('types map to JSON Schema: literals, unions, arrays, records, optional fields, async express', (t) => {
    const root = makeProject(t)
    write(path.join(root, 'genes', 'typed', 'index.ts'), [
      'type Mode = "tabs" | "spaces";',
      'interface Options { mode?: Mode; tags: string[]; weights: Record<string, number>; when?: Date }',
      'export async function express(input: { text: string; options?: Options; strict: boolean | null }): Promise<{ ok: boolean; count: number }> {',
      '  return { ok: input.strict === true, count: input.text.length };',
      '}',
      '',
    ].join('\n'))
    const w = rotifer(root, 'wrap', 'typed')
    assert.equal(w.status, 0, w.stderr)
    const p = readJson(path.join(root, 'genes', 'typed', 'phenotype.json'))
    assert.deepEqual(p.inputSchema, {
      type: 'object',
      properties: {
        text: { type: 'string' },
        options: {
          type: 'object',
          properties: { mode: { type: 'string', enum: ['tabs', 'spaces'] }, tags: { type: 'array', items: { type: 'string' } }, weights: { type: 'object', additionalProperties: { type: 'number' } }, when: {} },
          required: ['tags', 'weights'],
        },
        strict: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
      },
      required: ['text', 'strict'],
    })
    assert.deepEqual(p.outputSchema, { type: 'object', properties: { ok: { type: 'boolean' }, count: { type: 'number' } }, required: ['ok', 'count'] })
  })

  test('an untyped express keeps the open schema, and a note says what to write', (t) => {
    const root = makeProject(t)
    write(path.join(root, 'genes', 'loose', 'index.ts'), 'export function express(input: any) { return { n: input.code.split("\\n").length } }\n')
    const w = rotifer(root, 'wrap', 'loose')
    assert.equal(w.status, 0, w.stderr)
    assert.match(w.stderr, /^note: the inputSchema lists no properties, since none could be derived from genes\/loose\/index\.ts \(the type of express's input \(any\) is not an object type\): write the fields express reads into genes\/loose\/phenotype\.json, like "inputSchema": \{"type": "object", "properties": \{"code": \{"type": "string"\}\}, "required": \["code"\]\}/m)
    assert.deepEqual(readJson(path.join(root, 'genes', 'loose', 'phenotype.json')).inputSchema, { type: 'object', properties: {}, required: [] })
  })

  test('an existing phenotype keeps its schemas; an open one is filled in from the types', (t) => {
    const root = makeProject(t)
    const dir = path.join(root, 'genes', 'g')
    write(path.join(dir, 'index.ts'), 'export function express(input: { a: string }): { b: number } { return { b: input.a.length } }\n')
    const mine = { domain: 'x.y', version: '1.0.0', inputSchema: { type: 'object', properties: { a: { type: 'string', minLength: 2 } } }, outputSchema: { type: 'object' } }
    write(path.join(dir, 'phenotype.json'), JSON.stringify(mine))
    assert.equal(rotifer(root, 'wrap', 'g').status, 0)
    const p = readJson(path.join(dir, 'phenotype.json'))
    assert.deepEqual(p.inputSchema, mine.inputSchema, 'a schema with properties is the author\'s')
    assert.deepEqual(p.outputSchema, { type: 'object', properties: { b: { type: 'number' } }, required: ['b'] }, 'the open output schema is filled in')
  })
})

const VALID_SKILL = '---\nname: test-skill\ndescription: A test skill for unit testing\n---\n\n# Test Skill\n\nThis is a test skill with valid frontmatter.\n'

describe('wrap --from-skill', () => {
  function project(t) {
    const root = makeProject(t)
    fs.writeFileSync(path.join(root, 'rotifer.json'), JSON.stringify({ name: 'wrap-skill-test', version: '0.1.0', author: 'test-runner', genes_dir: 'genes', default_domain: 'general' }))
    write(path.join(root, 'skills', 'my-skill', 'SKILL.md'), VALID_SKILL)
    return root
  }

  test('creates the gene folder with phenotype, SKILL.md and .gene-manifest.json', (t) => {
    const root = project(t)
    assert.match(rotifer(root, 'wrap', '--help').stdout, /--from-skill <path>/)
    const r = rotifer(root, 'wrap', 'imported-skill', '--from-skill', 'skills/my-skill/SKILL.md', '--domain', 'ai.tools')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Skill "test-skill" wrapped as gene "imported-skill": genes\/imported-skill\/phenotype\.json$/m)
    const dir = path.join(root, 'genes', 'imported-skill')
    assert.deepEqual(fs.readdirSync(dir).sort(), ['.gene-manifest.json', 'SKILL.md', 'phenotype.json'])
    const p = readJson(path.join(dir, 'phenotype.json'))
    assert.deepEqual({ ...p, createdAt: typeof p.createdAt }, {
      domain: 'ai.tools',
      description: 'A test skill for unit testing',
      inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: [] },
      outputSchema: { type: 'object', properties: { result: { type: 'string' } } },
      dependencies: [],
      version: '0.1.0',
      author: 'test-runner',
      createdAt: 'string',
      fidelity: 'Wrapped',
      transparency: 'Open',
      source: 'skill',
    })
    assert.equal(fs.readFileSync(path.join(dir, 'SKILL.md'), 'utf8'), VALID_SKILL)
    const manifest = readJson(path.join(dir, '.gene-manifest.json'))
    assert.deepEqual([manifest.name, manifest.domain, manifest.fromSkill, manifest.geneId.length, typeof manifest.wrappedAt], ['imported-skill', 'ai.tools', 'skills/my-skill/SKILL.md', 64, 'string'])
    assert.equal(`v2:${manifest.geneId}`, /Gene ID \(v2\) {2}(\S+)/.exec(r.stdout)[1])
    // The skill gene compiles to a Wrapped result, as upstream's next step says.
    const c = rotifer(root, 'compile', 'imported-skill')
    assert.equal(c.status, 0, c.stderr)
    assert.equal(readJson(path.join(dir, '.compile-result.json')).fidelity, 'Wrapped')
  })

  test('a folder path finds its SKILL.md; the default domain is the project\'s; Hybrid gets a network block', (t) => {
    const root = project(t)
    assert.equal(rotifer(root, 'wrap', 'dir-imported', '--from-skill', 'skills/my-skill').status, 0)
    assert.equal(readJson(path.join(root, 'genes', 'dir-imported', 'phenotype.json')).domain, 'general')
    assert.equal(rotifer(root, 'wrap', 'net-skill', '--from-skill', 'skills/my-skill', '--fidelity', 'Hybrid').status, 0)
    const p = readJson(path.join(root, 'genes', 'net-skill', 'phenotype.json'))
    assert.deepEqual([p.fidelity, p.network], ['Hybrid', { allowedDomains: [], maxTimeoutMs: 30000, maxResponseBytes: 1048576, maxRequestsPerMin: 10 }])
  })

  test('fails with a nonexistent path (E0002), an invalid SKILL.md (E0003), or a gene there already; writes nothing', (t) => {
    const root = project(t)
    const missing = rotifer(root, 'wrap', 'bad-skill', '--from-skill', 'nonexistent/SKILL.md')
    assert.equal(missing.status, 1)
    assert.match(oneErrorLine(missing), /SKILL\.md not found: \S+nonexistent\/SKILL\.md \(E0002\)/)
    write(path.join(root, 'skills', 'broken', 'SKILL.md'), '---\ndescription: Missing name field\n---\n')
    const invalid = rotifer(root, 'wrap', 'bad-name', '--from-skill', 'skills/broken/SKILL.md')
    assert.equal(invalid.status, 1)
    assert.match(oneErrorLine(invalid), /Invalid SKILL\.md: \S+ has no YAML front matter with a name \(E0003\)/)
    assert.equal(fs.existsSync(path.join(root, 'genes')), false)
    assert.equal(rotifer(root, 'wrap', 'taken', '--from-skill', 'skills/my-skill').status, 0)
    const before = fs.readFileSync(path.join(root, 'genes', 'taken', 'phenotype.json'), 'utf8')
    const again = rotifer(root, 'wrap', 'taken', '--from-skill', 'skills/my-skill', '-d', 'other.domain')
    assert.equal(again.status, 1)
    assert.match(oneErrorLine(again), /genes\/taken\/phenotype\.json exists already; rotifer wrap --from-skill makes a new gene and never writes over one/)
    assert.equal(fs.readFileSync(path.join(root, 'genes', 'taken', 'phenotype.json'), 'utf8'), before)
    assert.deepEqual(json(rotifer(root, 'gene', 'list', '--json')).map((g) => g.name), ['taken'])
  })
})

describe("a phenotype upstream's wrap wrote", () => {
  test('rotifer test on {} says what to write, and rotifer wrap then fills the schemas in', (t) => {
    const root = makeProject(t)
    addFormatter(root)
    const dir = path.join(root, 'genes', 'formatter')
    fs.rmSync(path.join(dir, 'testsuite.json'))
    // What upstream's wrap writes: an input schema without properties.
    write(path.join(dir, 'phenotype.json'), JSON.stringify({ domain: 'code.format', inputSchema: { type: 'object', properties: {}, required: [] }, outputSchema: { type: 'object' }, dependencies: [], version: '0.1.0', fidelity: 'Wrapped', transparency: 'Open' }))
    const failing = rotifer(root, 'test', 'formatter')
    assert.equal(failing.status, 1)
    assert.match(failing.stdout, /FAIL {2}runs on the sample input: .*TypeError.*split.*; the inputSchema of genes\/formatter\/phenotype\.json lists no properties, so the sample input was \{\}: write the fields express reads there, like "properties": \{"code": \{"type": "string"\}\}, "required": \["code"\], or run rotifer wrap formatter to derive them from the TypeScript types of express/)
    assert.equal(rotifer(root, 'wrap', 'formatter').status, 0)
    assert.deepEqual(readJson(path.join(dir, 'phenotype.json')).inputSchema.required, ['code'])
    const passing = rotifer(root, 'test', 'formatter')
    assert.equal(passing.status, 0, passing.stdout)
  })
})
