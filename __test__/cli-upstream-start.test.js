'use strict'
// The commands an upstream user starts with, as the upstream playground's tests run them:
// `rotifer hello` (templates, --list-templates, --file, --dir; an agent that remembers across
// runs), `rotifer scan` (exported functions, --skills) and `rotifer doctor` (the toolchain, and
// ours: the memory binding and the sandbox). Through the real bin.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { BIN, rotifer, rotiferWithEnv, json, makeProject, oneErrorLine } = require('./cli-harness')
const { rotiferTty } = require('./cli-tty')

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** A folder holding a stand-in `javy` (an executable file), removed when `t` ends. */
function fakeJavyDir(t) {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-doctor-javy-'))
  t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
  fs.writeFileSync(path.join(bin, 'javy'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  return bin
}

describe('rotifer hello', () => {
  test('shows help with --help, and lists templates with --list-templates', (t) => {
    const root = makeProject(t)
    const help = rotifer(root, 'hello', '--help')
    assert.equal(help.status, 0)
    assert.match(help.stdout, /--template <id>/)
    assert.match(help.stdout, /--list-templates/)
    const list = rotifer(root, 'hello', '--list-templates')
    assert.equal(list.status, 0, list.stderr)
    assert.match(list.stdout, /^Available Templates/)
    assert.match(list.stdout, /^ {2}greeter +greets you by name/m)
    assert.match(list.stdout, /^ {2}text-stats +counts the words/m)
    assert.match(list.stdout, /Not here: upstream's templates quality-advisor, uiux-diagnosis, content-analysis, code-security, doc-qa, web3-toolkit/)
    assert.equal(fs.existsSync(path.join(root, 'genes')), false, 'listing writes nothing')
  })

  test('rejects unknown template ID (exit 1), and says an upstream one has no genes here', (t) => {
    const root = makeProject(t)
    const r = rotifer(root, 'hello', '--template', 'nonexistent')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /template "nonexistent" not found; rotifer hello --list-templates lists them/)
    const upstream = rotifer(root, 'hello', '--template', 'quality-advisor')
    assert.equal(upstream.status, 1)
    assert.match(oneErrorLine(upstream), /template "quality-advisor" not found: it is one of the upstream playground's templates, whose genes are not shipped here; use greeter or text-stats/)
  })

  test('runs a template: writes its gene, creates hello-<id> once, and the second run remembers', (t) => {
    const root = makeProject(t)
    const first = rotifer(root, 'hello', '--template', 'greeter', '--input', '{"name":"ada"}')
    assert.equal(first.status, 0, first.stderr)
    assert.deepEqual(JSON.parse(first.stdout), { greeting: 'Hello, ada! This gene runs in the Rotifer playground.', visits: 1 })
    assert.match(first.stderr, /^Gene "hello-world" written to genes\/hello-world$/m)
    assert.match(first.stderr, /^Created agent "hello-greeter"$/m)
    assert.match(first.stderr, /^Execution complete in \d+ ms/m)
    const second = rotifer(root, 'hello', '--template', 'greeter', '--input', '{"name":"ada"}')
    assert.equal(second.status, 0, second.stderr)
    assert.equal(JSON.parse(second.stdout).visits, 2)
    assert.match(second.stderr, /^Reusing agent "hello-greeter": its memory carries over$/m)
    assert.equal(json(rotifer(root, 'agent', 'list', '--json')).length, 1)
    // Without --template: the first template, on its example input.
    assert.equal(json(rotifer(root, 'hello')).greeting, 'Hello, world! This gene runs in the Rotifer playground.')
  })

  test('at a terminal without --template it asks which template to run', (t) => {
    const root = makeProject(t)
    const chosen = rotiferTty(root, ['hello'], { answer: '2', prompt: 'Enter for 1]: ' })
    assert.equal(chosen.status, 0, chosen.tty)
    assert.match(chosen.tty, /What would you like your agent to do\?\n {2}1 {2}greeter {5}greets you by name[^\n]*\n {2}2 {2}text-stats {2}counts the words/)
    assert.match(chosen.tty, /"totalWords": 11/)
    assert.equal(json(rotifer(root, 'agent', 'list', '--json'))[0].name, 'hello-text-stats')
    const byEnter = rotiferTty(root, ['hello'], { answer: '', prompt: 'Enter for 1]: ' })
    assert.equal(byEnter.status, 0, byEnter.tty)
    assert.match(byEnter.tty, /"visits": 1/)
    const wrong = rotiferTty(root, ['hello'], { answer: '7', prompt: 'Enter for 1]: ' })
    assert.equal(wrong.status, 2)
    assert.match(wrong.tty, /error: rotifer hello: no template "7": answer 1 to 2, or one of greeter, text-stats/)
  })

  test('uses an existing gene of the template as it is', (t) => {
    const root = makeProject(t)
    write(path.join(root, 'genes', 'hello-world', 'phenotype.json'), JSON.stringify({ domain: 'general', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }))
    write(path.join(root, 'genes', 'hello-world', 'index.js'), 'exports.express = (input) => ({ mine: true, ...input })')
    assert.deepEqual(json(rotifer(root, 'hello', '--input', '{"x":1}')), { mine: true, x: 1 })
    assert.equal(fs.existsSync(path.join(root, 'genes', 'hello-world', 'index.ts')), false)
  })

  test('--file maps by extension, --dir joins the matching files, and warns when none match', (t) => {
    const root = makeProject(t)
    write(path.join(root, 'notes.md'), 'one two three\nfour\n')
    const fromFile = json(rotifer(root, 'hello', '--template', 'text-stats', '--file', 'notes.md'))
    assert.deepEqual([fromFile.words, fromFile.lines, fromFile.texts, fromFile.totalWords], [4, 2, 1, 4])
    write(path.join(root, 'docs', 'a.txt'), 'alpha beta')
    write(path.join(root, 'docs', 'sub', 'b.md'), 'gamma')
    write(path.join(root, 'docs', 'skip.js'), 'not read at all')
    const fromDir = json(rotifer(root, 'hello', '--template', 'text-stats', '--dir', 'docs'))
    assert.deepEqual([fromDir.words, fromDir.texts, fromDir.totalWords], [3, 2, 7])
    fs.mkdirSync(path.join(root, 'empty'))
    const none = rotifer(root, 'hello', '--template', 'text-stats', '--dir', 'empty')
    assert.equal(none.status, 0, none.stderr)
    assert.match(none.stderr, /No matching files \(\.md, \.txt\) found in empty/)
    const missing = rotifer(root, 'hello', '--template', 'text-stats', '--file', 'nope.md')
    assert.equal(missing.status, 1)
    assert.match(oneErrorLine(missing), /File not found: nope\.md/)
  })

  test('piped stdin is the input: JSON as it is, other text as the template\'s text field', (t) => {
    const root = makeProject(t)
    const run = (input) => spawnSync(process.execPath, [BIN, 'hello', '--template', 'text-stats'], { cwd: root, input, encoding: 'utf8' })
    const text = run('# Notes\nfour words right here\n')
    assert.equal(text.status, 0, text.stderr)
    assert.deepEqual([JSON.parse(text.stdout).words, JSON.parse(text.stdout).lines], [6, 2])
    const asJson = run('{"text":"one two"}')
    assert.deepEqual([JSON.parse(asJson.stdout).words, JSON.parse(asJson.stdout).totalWords], [2, 8])
    const both = rotifer(root, 'hello', '--input', '{}', '--file', 'x.md')
    assert.equal(both.status, 2)
    assert.match(oneErrorLine(both), /give one of --input, --file and --dir, not --input and --file/)
  })

  test('exits non-zero when a template gene fails, without "Execution complete"', (t) => {
    const root = makeProject(t)
    write(path.join(root, 'genes', 'text-stats', 'phenotype.json'), JSON.stringify({ domain: 'text.stats', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }))
    write(path.join(root, 'genes', 'text-stats', 'index.js'), 'exports.express = () => { throw new Error("boom") }')
    const r = rotifer(root, 'hello', '--template', 'text-stats', '--input', '{"text":"x"}')
    assert.equal(r.status, 1)
    assert.match(r.stderr.trimEnd().split('\n').pop(), /^error: gene "text-stats" .*failed: boom/)
    assert.doesNotMatch(r.stderr, /Execution complete/)
    assert.equal(r.stdout, '')
  })

  test('outside a project it says to run rotifer init, writing nothing', (t) => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-hello-outside-')))
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
    const r = rotifer(dir, 'hello')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /Not in a Rotifer project\. Run 'rotifer init' first\./)
    assert.deepEqual(fs.readdirSync(dir), [])
  })
})

const VALID_SKILL = '---\nname: test-skill\ndescription: A test skill for unit testing\n---\n\n# Test Skill\n'

describe('rotifer scan', () => {
  test('scan without --skills lists exported functions, TS and RS, with file and line', (t) => {
    const root = makeProject(t)
    write(path.join(root, 'src', 'example.ts'), 'const x = 1\nexport function helloWorld() { return "hi"; }\nexport async function fetchIt() {}\nfunction hidden() {}\n')
    write(path.join(root, 'src', 'lib.rs'), 'pub fn parse_it() {}\nfn private_one() {}\n')
    write(path.join(root, 'src', 'node_modules', 'dep', 'index.js'), 'export function fromADependency() {}')
    const r = rotifer(root, 'scan', 'src')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Found 3 candidate functions in src:$/m)
    assert.match(r.stdout, /^ {2}TS {2}helloWorld {2}src\/example\.ts:2$/m)
    assert.match(r.stdout, /^ {2}TS {2}fetchIt {5}src\/example\.ts:3$/m)
    assert.match(r.stdout, /^ {2}RS {2}parse_it {4}src\/lib\.rs:1$/m)
    assert.doesNotMatch(r.stdout, /hidden|private_one|fromADependency|SKILL\.md/)
    assert.deepEqual(json(rotifer(root, 'scan', 'src', '--json')).map((c) => c.name), ['helloWorld', 'fetchIt', 'parse_it'])
    assert.match(rotifer(root, 'scan', 'nowhere').stderr, /cannot scan nowhere: there is no folder/)
    // An empty project: zero candidates, exit 0.
    const empty = rotifer(makeProject(t), 'scan')
    assert.equal(empty.status, 0, empty.stderr)
    assert.match(empty.stdout, /^No candidate functions found in \.: 0 \.ts, \.js or \.rs files read/)
  })

  test('scan --skills discovers valid SKILL.md files and shows the wrap hint', (t) => {
    const root = makeProject(t)
    write(path.join(root, 'skills', 'skill-a', 'SKILL.md'), VALID_SKILL)
    write(path.join(root, 'skills', 'skill-b', 'SKILL.md'), '---\nname: "another-skill"\ndescription: \'Second test skill\'\n---\n# Another\n')
    write(path.join(root, 'skills', 'broken', 'SKILL.md'), '---\ndescription: Missing name field\n---\n')
    write(path.join(root, 'skills', 'plain', 'SKILL.md'), '# Just Markdown\n')
    const r = rotifer(root, 'scan', '--skills', '--skills-path', 'skills')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Found 2 skills in skills:$/m)
    assert.match(r.stdout, /test-skill {5}skills\/skill-a\/SKILL\.md\n +A test skill for unit testing/)
    assert.match(r.stdout, /another-skill {2}skills\/skill-b\/SKILL\.md\n +Second test skill/)
    assert.match(r.stdout, /rotifer wrap <gene> --from-skill <path>/)
    assert.deepEqual(json(rotifer(root, 'scan', 'skills', '--skills', '--json')).map((s) => [s.name, s.description]), [['test-skill', 'A test skill for unit testing'], ['another-skill', 'Second test skill']])
  })

  test('scan --skills with no valid SKILL.md files says so (no name, no front matter)', (t) => {
    const root = makeProject(t)
    write(path.join(root, 'no-name', 'broken', 'SKILL.md'), '---\ndescription: Missing name field\n---\n')
    write(path.join(root, 'no-fm', 'plain', 'SKILL.md'), '# Just Markdown\n\nNo YAML frontmatter here.\n')
    fs.mkdirSync(path.join(root, 'empty'))
    for (const dir of ['no-name', 'no-fm', 'empty']) {
      const r = rotifer(root, 'scan', '--skills', '--skills-path', dir)
      assert.equal(r.status, 0, r.stderr)
      assert.match(r.stdout, /^No SKILL\.md files found in /, dir)
    }
  })
})

describe('rotifer doctor', () => {
  test('reports toolchain sections (node, npx, esbuild, javy) and ours (binding, memory, sandbox)', (t) => {
    const bin = fakeJavyDir(t)
    const r = rotiferWithEnv(os.tmpdir(), { PATH: `${bin}${path.delimiter}${process.env.PATH}` }, 'doctor')
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /^ {2}node: +ok \(v\d+\.\d+\.\d+, /m)
    assert.match(r.stdout, /^ {2}active npx: +\S/m)
    assert.match(r.stdout, /^ {2}esbuild: +not needed/m)
    assert.match(r.stdout, /^ {2}typescript: +ok \(\d+\.\d+\.\d+\)/m)
    assert.match(r.stdout, new RegExp(`^ {2}javy: +ok \\(${bin}/javy\\)`, 'm'))
    assert.match(r.stdout, /^ {2}native binding: +ok/m)
    assert.match(r.stdout, /^ {2}memory: +ok \(a test memory wrote an entry and read it back/m)
    assert.match(r.stdout, /^ {2}sandbox: +ok \(wasmtime ran a WASM gene/m)
    assert.match(r.stdout, /^Ready: /m)
    const checks = json(rotiferWithEnv(os.tmpdir(), { PATH: `${bin}${path.delimiter}${process.env.PATH}` }, 'doctor', '--json'))
    assert.equal(checks.ok, true)
    assert.deepEqual(checks.checks.map((c) => c.name), ['node', 'npx', 'active npx', 'typescript', 'esbuild', 'javy', 'native binding', 'memory', 'sandbox'])
  })

  test('exits 1 naming what is missing: javy off PATH, or no native binding', (t) => {
    const noJavy = rotiferWithEnv(os.tmpdir(), { PATH: path.dirname(process.execPath) }, 'doctor')
    assert.equal(noJavy.status, 1)
    assert.match(noJavy.stdout, /^ {2}javy: +missing \(no javy on PATH\): rotifer compile cannot build a TypeScript gene into WASM/m)
    assert.match(noJavy.stdout, /^Not ready: javy needs attention/m)
    const bin = fakeJavyDir(t)
    const noBinding = rotiferWithEnv(os.tmpdir(), { PATH: `${bin}${path.delimiter}${process.env.PATH}`, NAPI_RS_NATIVE_LIBRARY_PATH: path.join(bin, 'none.node') }, 'doctor')
    assert.equal(noBinding.status, 1)
    assert.match(noBinding.stdout, /^ {2}native binding: +missing/m)
    assert.match(noBinding.stdout, /^ {2}memory: +failed: MEMORY_STORAGE_ERROR/m)
    assert.match(noBinding.stdout, /^ {2}sandbox: +missing/m)
    assert.match(noBinding.stdout, /^Not ready: native binding, memory, sandbox need attention/m)
  })
})
