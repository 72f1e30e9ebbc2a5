'use strict'
// `rotifer init` as the upstream playground's init.ts makes a project (R-RUN-1): its default
// name, an absolute path, `init .` and plain `init` inside an npm project, the `npx rotifer`
// hint when the package is installed there; and its first gene, hello-world, which remembers
// (ctx.memory), run as written: in an agent twice, by its suite, and type-checked. Through the
// real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { REPO, rotifer, json, oneErrorLine } = require('./cli-harness')

/** An empty folder (no rotifer.json anywhere above it), removed when `t` ends. */
function emptyDir(t) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-init-test-')))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * An npm project with this package installed in its node_modules as npm lays it out: the
 * package's files copied (the addon hard-linked), its dependencies linked.
 */
function npmProjectWithPackage(t) {
  const dir = emptyDir(t)
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: '@acme/user-app', version: '1.0.0', private: true }, null, 2))
  const pkg = path.join(dir, 'node_modules', '@rotifer', 'playground')
  fs.mkdirSync(pkg, { recursive: true })
  for (const entry of JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).files.concat('package.json')) {
    const name = entry.replace(/\/$/, '')
    if (name === '*.node') {
      for (const f of fs.readdirSync(REPO).filter((x) => x.endsWith('.node'))) fs.linkSync(path.join(REPO, f), path.join(pkg, f))
    } else if (fs.existsSync(path.join(REPO, name))) {
      fs.cpSync(path.join(REPO, name), path.join(pkg, name), { recursive: true })
    }
  }
  for (const dep of ['ajv', 'commander', 'typescript']) fs.symlinkSync(path.join(REPO, 'node_modules', dep), path.join(dir, 'node_modules', dep))
  const bin = path.join(pkg, 'bin', 'rotifer.js')
  return { dir, run: (cwd, ...args) => spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8' }) }
}

const files = (dir) => fs.readdirSync(dir).sort()

describe('rotifer init edge cases of upstream', () => {
  test('creates project with default name my-agent', (t) => {
    const cwd = emptyDir(t)
    const r = rotifer(cwd, 'init')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Created project "my-agent" in \S+\/my-agent$/m)
    const config = JSON.parse(fs.readFileSync(path.join(cwd, 'my-agent', 'rotifer.json'), 'utf8'))
    assert.equal(config.name, 'my-agent')
    assert.deepEqual(files(path.join(cwd, 'my-agent', 'genes', 'hello-world')), ['index.ts', 'phenotype.json', 'testsuite.json'])
    assert.match(r.stdout, /^Next: cd my-agent && rotifer agent create greeter -g hello-world && rotifer agent run greeter --input '\{"name":"world"\}'$/m)
  })

  test('creates project with custom --domain, and accepts an absolute path', (t) => {
    const cwd = emptyDir(t)
    const target = path.join(cwd, 'deep', 'domain-proj')
    const r = rotifer(cwd, 'init', target, '--domain', 'search.web')
    assert.equal(r.status, 0, r.stderr)
    const config = JSON.parse(fs.readFileSync(path.join(target, 'rotifer.json'), 'utf8'))
    assert.deepEqual([config.name, config.default_domain], ['domain-proj', 'search.web'])
    assert.equal(JSON.parse(fs.readFileSync(path.join(target, 'genes', 'hello-world', 'phenotype.json'), 'utf8')).domain, 'search.web')
    assert.match(r.stdout, /^Next: cd deep\/domain-proj && rotifer /m)
  })

  test('fails when target directory already contains rotifer.json, changing nothing', (t) => {
    const cwd = emptyDir(t)
    assert.equal(rotifer(cwd, 'init', 'existing-proj').status, 0)
    const before = fs.readFileSync(path.join(cwd, 'existing-proj', 'rotifer.json'), 'utf8')
    for (const args of [['existing-proj'], [path.join(cwd, 'existing-proj')]]) {
      const r = rotifer(cwd, 'init', ...args)
      assert.equal(r.status, 1)
      assert.match(oneErrorLine(r), /rotifer\.json already exists: .* is a project already, and rotifer init never overwrites one/)
    }
    const inside = rotifer(path.join(cwd, 'existing-proj'), 'init', '.')
    assert.equal(inside.status, 1)
    assert.equal(fs.readFileSync(path.join(cwd, 'existing-proj', 'rotifer.json'), 'utf8'), before)
  })

  test('a name with path traversal is refused (exit 2), and nothing is made', (t) => {
    const cwd = emptyDir(t)
    for (const name of ['..', '../up', 'a/../../b']) {
      const r = rotifer(cwd, 'init', name)
      assert.equal(r.status, 2, name)
      assert.match(oneErrorLine(r), /^error: rotifer init: invalid project name /)
    }
    assert.deepEqual(files(cwd), [])
  })

  test('Unicode names: init with a Chinese name creates the project; emoji and spaces are refused clearly', (t) => {
    const cwd = emptyDir(t)
    const r = rotifer(cwd, 'init', '测试项目', '--no-genesis')
    assert.equal(r.status, 0, r.stderr)
    assert.equal(JSON.parse(fs.readFileSync(path.join(cwd, '测试项目', 'rotifer.json'), 'utf8')).name, '测试项目')
    for (const name of ['🧬gene-project', 'my gene project']) {
      const refused = rotifer(cwd, 'init', name, '--no-genesis')
      assert.equal(refused.status, 2, name)
      assert.match(oneErrorLine(refused), /^error: rotifer init: invalid project name .*no spaces/)
      assert.doesNotMatch(refused.stderr, /TypeError/)
    }
    assert.deepEqual(files(cwd), ['测试项目'])
  })

  test('--no-genesis is accepted; no genesis- genes are installed either way', (t) => {
    const cwd = emptyDir(t)
    assert.equal(rotifer(cwd, 'init', 'no-genesis-proj', '--no-genesis').status, 0)
    assert.equal(rotifer(cwd, 'init', 'with-genesis').status, 0)
    for (const p of ['no-genesis-proj', 'with-genesis']) assert.deepEqual(files(path.join(cwd, p, 'genes')), ['hello-world'])
  })
})

describe('rotifer init inside an npm project', () => {
  test('init . makes the npm project a Rotifer project, keeping its files; the hint says npx rotifer', (t) => {
    const { dir, run } = npmProjectWithPackage(t)
    const pkgBefore = fs.readFileSync(path.join(dir, 'package.json'), 'utf8')
    const r = run(dir, 'init', '.')
    assert.equal(r.status, 0, r.stderr)
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'rotifer.json'), 'utf8')), { name: 'user-app', version: '0.1.0', author: 'local-dev', genes_dir: 'genes', default_domain: 'general' })
    assert.equal(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'), pkgBefore)
    assert.match(r.stdout, /^Next: npx rotifer agent create greeter -g hello-world && npx rotifer agent run greeter --input '\{"name":"world"\}'$/m)
    // The hint, run as written (the remembering is the next test's).
    assert.equal(run(dir, 'agent', 'create', 'greeter', '-g', 'hello-world').status, 0)
    assert.equal(json(run(dir, 'agent', 'run', 'greeter', '--input', '{"name":"world"}')).visits, 1)
  })

  test('plain init inside an npm project makes it the project instead of nesting one', (t) => {
    const { dir, run } = npmProjectWithPackage(t)
    const r = run(dir, 'init')
    assert.equal(r.status, 0, r.stderr)
    assert.ok(fs.existsSync(path.join(dir, 'rotifer.json')))
    assert.equal(fs.existsSync(path.join(dir, 'my-agent')), false, 'no second project inside')
    // A subfolder of the npm project is still inside it: the hint says npx there too.
    const sub = run(dir, 'init', 'sub-agent')
    assert.equal(sub.status, 0, sub.stderr)
    assert.match(sub.stdout, /^Next: cd sub-agent && npx rotifer /m)
  })

  test('init . refuses when a hello-world gene is there already, writing nothing', (t) => {
    const cwd = emptyDir(t)
    fs.mkdirSync(path.join(cwd, 'genes', 'hello-world'), { recursive: true })
    fs.writeFileSync(path.join(cwd, 'genes', 'hello-world', 'index.ts'), '// mine')
    const r = rotifer(cwd, 'init', '.')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /genes\/hello-world already exists; rotifer init never writes over anything/)
    assert.deepEqual(files(cwd), ['genes'])
    assert.equal(fs.readFileSync(path.join(cwd, 'genes', 'hello-world', 'index.ts'), 'utf8'), '// mine')
  })
})

describe("init's first gene remembers", () => {
  test('hello-world in an agent: the second run remembers the first, per name; memory list shows it', (t) => {
    const cwd = emptyDir(t)
    assert.equal(rotifer(cwd, 'init', 'first').status, 0)
    const root = path.join(cwd, 'first')
    assert.equal(rotifer(root, 'agent', 'create', 'greeter', '-g', 'hello-world').status, 0)
    const first = json(rotifer(root, 'agent', 'run', 'greeter', '--input', '{"name":"world"}'))
    assert.deepEqual(first, { greeting: 'Hello, world! This gene runs in the Rotifer playground.', visits: 1 })
    const second = json(rotifer(root, 'agent', 'run', 'greeter', '--input', '{"name":"world"}'))
    assert.deepEqual(second, { greeting: 'Hello again, world! Visit 2: this gene remembers you.', visits: 2 })
    assert.equal(json(rotifer(root, 'agent', 'run', 'greeter', '--input', '{"name":"ada"}')).visits, 1)
    const listed = json(rotifer(root, 'agent', 'memory', 'list', 'greeter', '--json'))
    assert.deepEqual(listed.map((e) => [e.key, e.category]).sort(), [['hello-world/visits/ada', 'CONTEXT'], ['hello-world/visits/world', 'CONTEXT']])
    const value = json(rotifer(root, 'agent', 'memory', 'get', 'greeter', 'hello-world/visits/world', '--json'))
    assert.equal(Buffer.from(value.value, 'base64').toString('utf8'), '2')
  })

  test('its testsuite.json passes with rotifer test, and fails when the gene forgets', (t) => {
    const cwd = emptyDir(t)
    assert.equal(rotifer(cwd, 'init', 'first').status, 0)
    const root = path.join(cwd, 'first')
    const r = rotifer(root, 'test', 'hello-world')
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /ok {4}case 2: the second visit is remembered/)
    // The suite is live: a gene that does not write its count fails case 2.
    const file = path.join(root, 'genes', 'hello-world', 'index.ts')
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/\n\s*ctx\.memory\.writeMemory\([^\n]*\n/, '\n'))
    const forgetful = rotifer(root, 'test', 'hello-world')
    assert.equal(forgetful.status, 1)
    assert.match(forgetful.stdout, /FAIL {2}case 2: the second visit is remembered/)
  })

  test("its index.ts, and hello's text-stats, type-check under tsc --strict against the package types", (t) => {
    const { dir, run } = npmProjectWithPackage(t)
    assert.equal(run(dir, 'init', '.').status, 0)
    const stats = run(dir, 'hello', '--template', 'text-stats', '--input', '{"text":"a b"}')
    assert.equal(stats.status, 0, stats.stderr)
    const tsc = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc')
    // TextEncoder and TextDecoder come from the DOM library (or @types/node in a real project).
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom']
    const r = spawnSync(process.execPath, [tsc, ...args, 'genes/hello-world/index.ts', 'genes/text-stats/index.ts'], { cwd: dir, encoding: 'utf8' })
    assert.equal(r.status, 0, r.stdout + r.stderr)
  })
})
