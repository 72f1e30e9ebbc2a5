'use strict'
// The README as a newcomer follows it, with the package as users get it: `npm pack`, the tarball
// copied into a new folder, and every block the README tells the reader to run, run as written
// (`npx rotifer …`, no Rust toolchain on PATH): the install, the first remembering gene (its
// files written out, `agent create`, `agent run` twice, `agent memory list`, each printing what
// the README shows), its test, the deployer's cheat sheet; then examples/README.md from the
// installed package, and the demo the tarball ships.
//
// Markers in the Markdown: `<!-- file: path -->` before a block writes it to that path;
// `<!-- run -->` before a `sh` block runs each line (exit 0 expected); `<!-- session -->` before a
// `console` block runs each `$ ` line and compares its stdout with the lines shown under it
// (ids, v2 ids and times stand for any; runs of spaces for any; a line `…` for any lines).

const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const REPO = path.join(__dirname, '..')
const NO_RUST_PATH = [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter)
const PKG = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'))
const TARBALL = `rotifer-playground-${PKG.version}.tgz`

let work
let project
let env

/** The marked blocks of a Markdown file, in order: `{ marker, lang, body }`; and the unmarked ones. */
function blocksOf(file) {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8')
  const all = [...text.matchAll(/(?:<!-- ([^>]*?) -->\n)?```(\w*)\n([\s\S]*?)```/g)]
  return all.map((m) => ({ marker: m[1] ?? null, lang: m[2], body: m[3] }))
}

const README = blocksOf('README.md')
const EXAMPLES = blocksOf(path.join('examples', 'README.md'))

/** Runs one line of a block in `cwd` (a `cd` moves `cwd`); returns the spawn result. */
function runLine(line, state) {
  const cd = /^cd (\S+)$/.exec(line.trim())
  if (cd) {
    state.cwd = path.resolve(state.cwd, cd[1])
    assert.ok(fs.statSync(state.cwd).isDirectory(), line)
    return { status: 0, stdout: '', stderr: '' }
  }
  return spawnSync('bash', ['-c', line], { cwd: state.cwd, env, encoding: 'utf8', timeout: 180_000 })
}

function runBlock(block, state) {
  for (const line of block.body.split('\n').filter((l) => l.trim() !== '')) {
    const r = runLine(line, state)
    assert.equal(r.status, 0, `${line}\nexited ${r.status}\n${r.stdout}\n${r.stderr}`)
  }
}

/** What varies from one run to the next, made alike: ids, v2 ids, times, column widths. */
function normalise(line) {
  return line
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/v2:[0-9a-f…]+/g, 'v2:<id>')
    .replace(/\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?/g, '<time>')
    .replace(/\s+/g, ' ')
    .trim()
}

/** Does `actual` read as `expected`, where an expected line `…` stands for any number of lines? */
function matches(expected, actual) {
  if (expected.length === 0) return actual.length === 0
  const [first, ...rest] = expected
  if (first === '…') {
    for (let skip = 0; skip <= actual.length; skip++) if (matches(rest, actual.slice(skip))) return true
    return false
  }
  return actual.length > 0 && normalise(actual[0]) === normalise(first) && matches(rest, actual.slice(1))
}

/** Runs a session block: each `$ ` line, its stdout compared with the lines under it. */
function runSession(block, state) {
  const steps = []
  for (const line of block.body.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), expected: [] })
    else {
      assert.ok(steps.length > 0, `a session starts with a command: ${line}`)
      steps.at(-1).expected.push(line)
    }
  }
  const outputs = []
  for (const { command, expected } of steps) {
    const r = runLine(command, state)
    assert.equal(r.status, 0, `${command}\nexited ${r.status}\n${r.stdout}\n${r.stderr}`)
    const actual = r.stdout.replace(/\n$/, '').split('\n').filter((l, i, all) => !(all.length === 1 && l === ''))
    assert.ok(matches(expected, actual), `${command} printed\n${r.stdout}\nwhere the documentation shows\n${expected.join('\n')}`)
    outputs.push({ command, stdout: r.stdout })
  }
  return outputs
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...options })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stdout}\n${r.stderr}`)
  return r.stdout
}

before(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-readme-')))
  const packed = run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: REPO }).trim().split('\n').pop()
  assert.equal(packed, TARBALL)
  // "In a new folder with the tarball in it".
  project = path.join(work, 'my-project')
  fs.mkdirSync(path.join(project, 'node_modules'), { recursive: true })
  fs.renameSync(path.join(work, packed), path.join(project, TARBALL))
  // The package's dependencies, copied so that the install needs no network.
  for (const dep of ['typescript', 'ajv', 'commander', 'fast-deep-equal', 'fast-uri', 'json-schema-traverse', 'require-from-string']) {
    fs.cpSync(path.join(REPO, 'node_modules', dep), path.join(project, 'node_modules', dep), { recursive: true })
  }
  env = {
    ...process.env,
    PATH: NO_RUST_PATH,
    NO_COLOR: '1',
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  }
  delete env.NODE_TEST_CONTEXT // the README's `node --test` is a suite of its own, not a child of this one
  delete env.COLUMNS
  assert.notEqual(spawnSync('cargo', ['--version'], { env }).status, 0, 'cargo must be off PATH')
  // The README's install, as written: every other test works in the project it makes.
  const [install] = README.filter((b) => b.marker === 'run' && b.body.includes('npm install ./'))
  assert.ok(install, 'the README has an install block')
  runBlock(install, { cwd: project })
})

after(() => fs.rmSync(work, { recursive: true, force: true }))

const state = () => ({ cwd: project })
const section = (blocks, predicate) => {
  const found = blocks.filter(predicate)
  assert.ok(found.length > 0, 'the section is there')
  return found
}

test('every shell block of the README is run by this test, but "Building from source", which is CI itself', () => {
  const unmarked = README.filter((b) => b.marker === null && ['sh', 'console', 'bash', 'shell'].includes(b.lang))
  assert.equal(unmarked.length, 1, unmarked.map((b) => b.body).join('\n---\n'))
  const [demo, tests] = unmarked[0].body.split('\n').filter((l) => l.trim() !== '').map((l) => l.replace(/\s+#.*$/, ''))
  // Those two commands are what `npm run demo` (run by cli-demo.test.js) and CI run.
  assert.equal(demo, 'npm install && npm run demo')
  assert.equal(tests, 'npm install && npm test')
  assert.match(fs.readFileSync(path.join(REPO, '.ci', 'run'), 'utf8'), /^npm install && npm test$/m)
  for (const b of README.filter((b) => b.marker !== null)) assert.match(b.marker, /^(file: \S+|run|session)$/, b.marker)
  assert.ok(README.some((b) => b.body.includes(TARBALL)), `the README installs ${TARBALL}`)
})

test('the README is a front door: at most 2,000 words, no requirement ids, every docs/ file on its map', () => {
  const text = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8')
  const words = text.split(/\s+/).filter((w) => w !== '').length
  assert.ok(words >= 1500 && words <= 2000, `${words} words: the reference belongs in docs/`)
  assert.doesNotMatch(text, /\bR-[A-Z]{2,}/, 'requirement ids are for the docs and the tests')
  assert.doesNotMatch(text, /product document/i)
  assert.match(text, /blocks the event loop/)
  const docs = fs.readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md'))
  for (const doc of docs) assert.ok(text.includes(`](docs/${doc})`), `the README's map links docs/${doc}`)
  for (const [, target] of text.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)) {
    if (/^https?:/.test(target)) continue
    assert.ok(fs.existsSync(path.join(REPO, target)), `the README links ${target}, which exists`)
  }
})

test('the README, followed as written: install, the first remembering gene, its test, the cheat sheet', () => {
  const s = state()
  assert.ok(fs.existsSync(path.join(project, 'node_modules', '.bin', 'rotifer')))
  assert.equal(runLine('npx rotifer --version', s).stdout.trim(), PKG.version)

  const files = README.filter((b) => b.marker?.startsWith('file: '))
  assert.deepEqual(files.map((f) => f.marker.slice(6)), ['rotifer.json', 'genes/greeter/phenotype.json', 'genes/greeter/index.ts', 'test/greeter.test.mjs'])
  for (const f of files) {
    const file = path.join(project, f.marker.slice(6))
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, f.body)
  }

  // The gene type-checks as written, under --strict, against the installed package's types.
  const tsc = path.join(project, 'node_modules', 'typescript', 'bin', 'tsc')
  run(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', 'genes/greeter/index.ts'], { cwd: project, env })

  // agent create, agent run twice, agent memory list: what each prints.
  const [session] = section(README, (b) => b.marker === 'session')
  const outputs = runSession(session, s)
  const runs = outputs.filter((o) => / agent run /.test(o.command)).map((o) => JSON.parse(o.stdout))
  assert.deepEqual(runs, [{ greeting: 'Hello, world!', visits: 1 }, { greeting: 'Welcome back, world!', visits: 2 }], 'the second run shows the remembered value')
  const list = outputs.find((o) => / agent memory list /.test(o.command)).stdout
  assert.match(list, /\ngreeter\/visits\/world +CONTEXT +21 B +v2:/)
  // The entry the README points at holds the count.
  const get = runLine('npx rotifer agent memory get greeter-agent greeter/visits/world --json', s)
  assert.equal(get.status, 0, get.stderr)
  assert.equal(Buffer.from(JSON.parse(get.stdout).value, 'base64').toString(), '2')
  // Run alone, the gene has no memory: refused, as the README says.
  const alone = runLine(`npx rotifer run greeter --input '{"name":"world"}'`, s)
  assert.equal(alone.status, 1)
  assert.match(alone.stderr, /MEMORY_ACCESS_DENIED/)

  // Testing a gene: the node:test file and `rotifer test`.
  const [testing] = section(README, (b) => b.marker === 'run' && b.body.includes('node --test'))
  runBlock(testing, s)
  const nodeTest = runLine('node --test test/greeter.test.mjs', s)
  assert.match(nodeTest.stdout, /^# pass 1$/m, nodeTest.stdout)
  assert.match(nodeTest.stdout, /^# fail 0$/m)

  // The cheat sheet, line by line; then what it did is what it says.
  const [cheat] = section(README, (b) => b.marker === 'run' && b.body.includes('memory backup'))
  runBlock(cheat, s)
  assert.ok(fs.existsSync(path.join(project, 'my-agent.backup.db')))
  assert.ok(fs.existsSync(path.join(project, 'my-agent.jsonl')))
  const agents = JSON.parse(runLine('npx rotifer agent list --json', s).stdout)
  const names = (Array.isArray(agents) ? agents : agents.agents).map((a) => a.name).sort()
  assert.deepEqual(names, ['greeter-agent', 'other-agent'], 'my-agent is deleted; other-agent was made')
  const imported = runLine('npx rotifer agent memory get other-agent greeter/visits/Ada --json', s)
  assert.equal(imported.status, 0, imported.stderr)
  assert.equal(Buffer.from(JSON.parse(imported.stdout).value, 'base64').toString(), '1')
})

test("the README's six lines of ctx.memory run as the body of a gene", () => {
  const snippet = README.find((b) => b.lang === 'ts' && b.marker === null)
  const code = snippet.body.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('//'))
  assert.equal(code.length, 5, snippet.body)
  assert.equal(snippet.body.trim().split('\n').length, 6)
  assert.ok(code.some((l) => l.includes('ctx.memory.writeMemory')) && code.some((l) => l.includes('ctx.memory.deleteMemory')))
  const dir = path.join(project, 'genes', 'snippet')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'phenotype.json'), JSON.stringify({ domain: 'demo.snippet', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }))
  fs.writeFileSync(path.join(dir, 'index.ts'), [
    'import type { GeneContext } from "@rotifer/playground/memory";',
    'export function express(input: object, ctx: GeneContext) {',
    snippet.body,
    '  return { read: entry?.key ?? null, recent: recent.map((e) => e.key), after: ctx.memory.readMemory("formatter/indent") };',
    '}',
  ].join('\n'))
  const r = spawnSync('bash', ['-c', `npx rotifer agent create snippet-agent -g snippet >/dev/null && npx rotifer agent run snippet-agent --input '{}'`], { cwd: project, env, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), { read: 'formatter/indent', recent: ['formatter/indent'], after: null })
})

test('examples/README.md, from the installed package: the formatter project remembers its indent', () => {
  const s = state()
  const [session] = section(EXAMPLES, (b) => b.marker === 'session')
  const outputs = runSession(session, s)
  const runs = outputs.filter((o) => / agent run /.test(o.command)).map((o) => JSON.parse(o.stdout))
  assert.equal(runs.length, 2)
  assert.deepEqual(runs.map((r) => [r.indent, r.runs]), [[4, 1], [4, 2]], 'the second run uses the remembered indent, and counts on')
  assert.equal(runs[1].formatted, 'if (a) {\n    b();\n}')
  for (const gene of ['formatter', 'counter']) {
    const t = outputs.find((o) => o.command.endsWith(`rotifer test ${gene}`))
    assert.match(t.stdout, / passed, 0 failed\n$/, t.stdout)
  }
  // The TypeScript gene is complete: it type-checks under --strict against the installed types.
  const tsc = path.join(project, 'node_modules', 'typescript', 'bin', 'tsc')
  run(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', 'genes/formatter/index.ts'], { cwd: s.cwd, env })
})

test('the tarball ships LICENSE (MIT), examples/ with the compiled WASM gene, and a demo that runs from it', () => {
  const pkg = path.join(project, 'node_modules', '@rotifer', 'playground')
  assert.equal(PKG.license, 'MIT')
  assert.match(fs.readFileSync(path.join(pkg, 'LICENSE'), 'utf8'), /^MIT License\n[\s\S]*Permission is hereby granted, free of charge/)
  for (const file of ['README.md', 'CONTRIBUTING.md', 'examples/README.md', 'examples/demo.js', 'examples/formatter/rotifer.json',
    'examples/formatter/genes/formatter/index.ts', 'examples/formatter/genes/formatter/phenotype.json',
    'examples/formatter/genes/counter/gene.wat', 'examples/formatter/genes/counter/gene.wasm']) {
    assert.ok(fs.existsSync(path.join(pkg, file)), file)
  }
  assert.equal(fs.existsSync(path.join(pkg, 'examples', 'formatter', '.rotifer')), false, 'no state of a run in place')
  const wasm = fs.readFileSync(path.join(pkg, 'examples/formatter/genes/counter/gene.wasm'))
  assert.deepEqual([...wasm.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d], 'a WebAssembly module')
  const demo = spawnSync(process.execPath, [path.join(pkg, 'examples', 'demo.js')], { cwd: project, env, encoding: 'utf8', timeout: 180_000 })
  assert.equal(demo.status, 0, demo.stdout + demo.stderr)
  assert.match(demo.stdout, /used indent 4, remembered from the first run, and is run number 2/)
})

test("docs/api.md's examples run in order, as one script, and print what their `// →` comments show", () => {
  const doc = fs.readFileSync(path.join(REPO, 'docs', 'api.md'), 'utf8')
  const blocks = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
  assert.ok(blocks.length >= 20, `one example per function: ${blocks.length}`)
  const expected = blocks.flatMap((b) => [...b.matchAll(/\/\/ → (.*)$/gm)].map((m) => m[1]))
  // Every function of the page's headings is called by an example.
  const headings = [...doc.matchAll(/^### `(?:new )?(\w+)\(/gm)].map((m) => m[1])
  const script = blocks.join('\n')
  for (const name of headings) assert.ok(script.includes(`${name}(`), `an example calls ${name}`)
  const dir = path.join(project, 'api-examples')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'rotifer.json'), '{}\n')
  fs.writeFileSync(path.join(dir, 'examples.js'), script)
  const r = spawnSync(process.execPath, ['examples.js'], { cwd: dir, env, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(r.stdout.trimEnd().split('\n'), expected)
})

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')
}

test('every link between the README, CONTRIBUTING.md, examples/ and docs/ lands on a file and a heading that exist', () => {
  const files = ['README.md', 'CONTRIBUTING.md', path.join('examples', 'README.md'), ...fs.readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f))]
  const anchors = new Map()
  const anchorsOf = (file) => {
    if (!anchors.has(file)) {
      const text = fs.readFileSync(path.join(REPO, file), 'utf8').replace(/```[\s\S]*?```/g, '')
      anchors.set(file, new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]))))
    }
    return anchors.get(file)
  }
  const broken = []
  for (const file of files) {
    const text = fs.readFileSync(path.join(REPO, file), 'utf8').replace(/```[\s\S]*?```/g, '')
    for (const [, target, anchor] of text.matchAll(/\]\(([^)#\s]*)(?:#([^)\s]*))?\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      const to = target === '' ? file : path.normalize(path.join(path.dirname(file), target))
      if (!fs.existsSync(path.join(REPO, to))) broken.push(`${file}: ${target} does not exist`)
      else if (anchor && to.endsWith('.md') && !anchorsOf(to).has(anchor)) broken.push(`${file}: ${to} has no heading #${anchor}`)
    }
  }
  assert.deepEqual(broken, [])
})

test("docs/deployers.md's blocks run in order, in a copy of the installed formatter example", () => {
  const dir = path.join(project, 'deployer-example')
  fs.cpSync(path.join(project, 'node_modules', '@rotifer', 'playground', 'examples', 'formatter'), dir, { recursive: true })
  const blocks = blocksOf(path.join('docs', 'deployers.md')).filter((b) => ['sh', 'console'].includes(b.lang))
  assert.ok(blocks.length >= 5)
  for (const b of blocks) assert.equal(b.marker, 'run', `every shell block of deployers.md is run:\n${b.body}`)
  const saved = env
  env = { ...env, PATH: [path.join(project, 'node_modules', '.bin'), env.PATH].join(path.delimiter) }
  try {
    const s = { cwd: dir }
    for (const b of blocks) runBlock(b, s)
    // What the blocks did: the agent's limits, then its entry deleted, backed up and restored.
    const show = JSON.parse(runLine('rotifer agent show my-agent --json', s).stdout)
    assert.equal(show.memory.quota, 104857600, 'the quota of agent update')
    assert.deepEqual(show.memory.dataPolicy, { anonymizationSupported: true, maxRetentionDays: null })
    assert.ok(fs.existsSync(path.join(dir, 'backups', 'my-agent-2026-12-01.db')))
    const log = JSON.parse(runLine('rotifer agent memory log my-agent --json', s).stdout).map((l) => l.action)
    assert.deepEqual(log.filter((a) => a !== 'memory.access_denied'), ['memory.create', 'memory.delete', 'memory.restore'])
  } finally {
    env = saved
  }
})

test("docs/gene-authors.md's TypeScript blocks run as a gene's body: the policy is stored, a full quota does not fail the run", () => {
  const doc = fs.readFileSync(path.join(REPO, 'docs', 'gene-authors.md'), 'utf8')
  const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
  assert.equal(blocks.length, 2)
  const root = path.join(project, 'authors-project')
  const dir = path.join(root, 'genes', 'authors')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(root, 'rotifer.json'), '{}\n')
  fs.writeFileSync(path.join(dir, 'phenotype.json'), JSON.stringify({ domain: 'demo.authors', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }))
  fs.writeFileSync(path.join(dir, 'index.ts'), [
    'import { MemoryError, type GeneContext } from "@rotifer/playground/memory";',
    'export function express(input: object, ctx: GeneContext) {',
    ...blocks,
    '  return { cached: ctx.memory.readMemory("search/last-results") !== null };',
    '}',
  ].join('\n'))
  // 48 bytes of quota: room for the hint (45 bytes), not for the cache entry (51), even after
  // evicting the hint: the write is refused whole, and the gene goes on.
  const r = spawnSync('bash', ['-c', `npx rotifer agent create authors-agent -g authors --memory-quota=0.046875KB >/dev/null && npx rotifer agent run authors-agent --input '{}'`], { cwd: root, env, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), { cached: false })
  const hint = JSON.parse(runLine('npx rotifer agent memory get authors-agent notes/private-hint --json', { cwd: root }).stdout)
  assert.deepEqual(hint.accessPolicy, { readScope: 'CREATOR_GENE_ONLY', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' })
})
