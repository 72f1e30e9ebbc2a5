'use strict'
// How the `rotifer` bin writes: `agent memory list` within 80 columns (ids shortened, full with
// --wide or --json), human sizes, terminal widths of CJK and emoji keys, colour only on a
// terminal and never with NO_COLOR, a closed pipe, a full disk, no stack traces, `gene list` and
// `gene id`, --input from a file or stdin, rotifer.json, and the quota in messages.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { BIN, rotifer, rotiferWithEnv, json, makeProject, addGene, addFormatter, PROBE, steps, createAgent, oneErrorLine, v2IdOf } = require('./cli-harness')
const { displayWidth } = require('../lib/cli/format')
const { createTestMemory } = require('../index.js')

/** A project with agent `a` (probe gene) holding entries under `keys` (values of `size` bytes). */
function agentWith(t, keys, size = 10) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  createAgent(root, 'a', ['probe'])
  json(rotifer(root, 'agent', 'run', 'a', '--input', steps(keys.map((k) => ({ write: k, value: 'x'.repeat(size) })))))
  return root
}

/** `rotifer …` on a pseudo-terminal (util-linux `script`), with `env`. */
function onTerminal(cwd, env, ...args) {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  const r = spawnSync('script', ['-qec', command, '/dev/null'], { cwd, encoding: 'utf8', env: { ...process.env, ...env } })
  return { status: r.status, stdout: r.stdout }
}

test('agent memory list fits 80 columns when piped: long keys cut with …, ids shortened; --wide and --json are whole', (t) => {
  const long = `settings/${'very-long-segment/'.repeat(8)}end`
  const root = agentWith(t, [long, 'short'], 1500)
  const r = rotifer(root, 'agent', 'memory', 'list', 'a')
  assert.equal(r.status, 0, r.stderr)
  const lines = r.stdout.trimEnd().split('\n')
  for (const line of lines) assert.ok(displayWidth(line) <= 80, `${displayWidth(line)} columns: ${line}`)
  const row = lines.find((l) => l.startsWith('settings'))
  const kb = ((Buffer.byteLength(long) + 1500) / 1024).toFixed(1)
  // The key is cut in the middle (its start and its end kept), so the gene's name is left out
  // (names only when everything fits).
  assert.match(row, new RegExp(`^settings\\S*…\\S*segment/end +CACHE +${kb.replace('.', '\\.')} KB +v2:[0-9a-f]{8}… +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$`))
  // With room ($COLUMNS), the key whole and the gene's name.
  const roomy = rotiferWithEnv(root, { COLUMNS: '300' }, 'agent', 'memory', 'list', 'a').stdout
  assert.match(roomy, new RegExp(`\\n${long} +CACHE +${kb.replace('.', '\\.')} KB +v2:[0-9a-f]{8}… \\(probe\\) +\\d{4}-`))
  assert.ok(!r.stdout.includes(long))

  const wide = rotifer(root, 'agent', 'memory', 'list', 'a', '--wide')
  const [entry] = json(rotifer(root, 'agent', 'memory', 'list', 'a', '--json')).filter((e) => e.key === long)
  assert.ok(wide.stdout.includes(long), 'the whole key with --wide')
  assert.ok(wide.stdout.includes(entry.createdBy), 'the whole gene id with --wide')
  assert.ok(wide.stdout.includes(entry.updatedAt), 'the exact time with --wide')
  assert.equal(entry.size, Buffer.byteLength(long) + 1500, '--json keeps exact bytes')
  assert.match(entry.createdBy, /^v2:[0-9a-f]{64}$/)
})

test('CJK and emoji keys keep the columns aligned on a terminal', (t) => {
  const keys = ['設定/言語', 'emoji/👍🏽', 'flag/🇯🇵', 'plain/key']
  const root = agentWith(t, keys)
  const lines = rotifer(root, 'agent', 'memory', 'list', 'a').stdout.trimEnd().split('\n').slice(3)
  // The CATEGORY column starts at the same terminal column on every line.
  const starts = lines.map((l) => displayWidth(l.slice(0, l.search(/ {2}(CATEGORY|CACHE)/))))
  assert.equal(new Set(starts).size, 1, lines.join('\n'))
  assert.equal(displayWidth('設定/言語'), 9)
  assert.equal(displayWidth('emoji/👍🏽'), 8)
})

const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0

test('colour only on a terminal, never with NO_COLOR, never in a pipe', { skip: !HAS_SCRIPT && 'needs script(1) from util-linux for a terminal' }, (t) => {
  const root = agentWith(t, ['k'])
  const piped = rotifer(root, 'agent', 'memory', 'list', 'a')
  assert.ok(!piped.stdout.includes('\u001b['), 'no escape codes in a pipe')
  const tty = onTerminal(root, { NO_COLOR: '' }, 'agent', 'memory', 'list', 'a')
  assert.equal(tty.status, 0, tty.stdout)
  assert.match(tty.stdout, /\u001b\[1mKEY/, 'the header is bold on a terminal')
  const noColor = onTerminal(root, { NO_COLOR: '1' }, 'agent', 'memory', 'list', 'a')
  assert.equal(noColor.status, 0)
  assert.match(noColor.stdout, /KEY/)
  assert.ok(!noColor.stdout.includes('\u001b['), 'NO_COLOR: no escape codes')
  // The terminal's width: at 60 columns keys are cut further, every line fits.
  const wideKey = agentWith(t, ['k'.repeat(40)])
  const narrowLong = spawnSync('script', ['-qec', `stty cols 60; '${process.execPath}' '${BIN}' agent memory list a`, '/dev/null'], { cwd: wideKey, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  assert.equal(narrowLong.status, 0)
  assert.match(narrowLong.stdout, /\nk{2}…k{6} +CACHE/)
  for (const line of narrowLong.stdout.replace(/\r/g, '').trimEnd().split('\n')) assert.ok(displayWidth(line) <= 60, line)
  const err = onTerminal(root, { NO_COLOR: '1' }, 'agent', 'run', 'nobody', '--input', '{}')
  assert.match(err.stdout, /^error: no agent named/m)
})

test('a closed pipe ends the command quietly; a full disk is one error line', async (t) => {
  const root = agentWith(t, Array.from({ length: 50 }, (_, i) => `k${i}`))
  const closed = await new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'agent', 'memory', 'list', 'a', '--json'], { cwd: root })
    child.stdout.destroy()
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += d })
    child.on('close', (status) => resolve({ status, stderr }))
  })
  assert.deepEqual(closed, { status: 0, stderr: '' })

  const full = fs.openSync('/dev/full', 'w')
  t.after(() => fs.closeSync(full))
  const r = spawnSync(process.execPath, [BIN, 'agent', 'memory', 'list', 'a'], { cwd: root, stdio: ['ignore', full, 'pipe'], encoding: 'utf8' })
  assert.equal(r.status, 1)
  assert.equal(r.stderr, 'error: cannot write the output: no space left on device (ENOSPC)\n')
})

test('no stack trace for an error thrown outside the gene\'s call (a timer): one line', (t) => {
  const root = makeProject(t)
  addGene(root, 'timer', {
    'index.js': 'exports.express = async () => { setTimeout(() => { throw new Error("timer threw") }, 0); await new Promise((r) => setTimeout(r, 200)); return {} }',
  })
  const r = rotifer(root, 'run', 'timer', '--input', '{}')
  assert.equal(r.status, 1)
  // Genes run in a worker thread: an error escaping from it fails the gene, in one line.
  assert.match(oneErrorLine(r), /^error: gene "timer" \(v2:[0-9a-f]{64}\) failed: .*timer threw$/)
  assert.equal(r.stdout, '')
})

test('gene list shows name, kind, domain and v2 id; gene id prints the id', (t) => {
  const root = makeProject(t)
  addFormatter(root)
  addGene(root, 'probe', { 'index.js': PROBE }, { domain: 'test.probe' })
  addGene(root, 'wasmy', { 'gene.wasm': '' }, { domain: 'test.wasm' })
  addGene(root, 'broken', { 'index.js': PROBE }, { phenotype: { name: 'broken' } })
  const genes = json(rotifer(root, 'gene', 'list', '--json'))
  const formatterId = json(rotifer(root, 'gene', 'list', '--json')).find((g) => g.name === 'formatter').id
  // A phenotype lacking fields is listed as upstream lists it, with what it has and the problem.
  assert.deepEqual(genes.map((g) => [g.name, g.kind, g.domain]), [['broken', 'js', 'unknown'], ['formatter', 'ts', 'code.format'], ['probe', 'js', 'test.probe'], ['wasmy', 'wasm', 'test.wasm']])
  assert.match(genes[0].problem, /has no "domain"/)
  const probeId = v2IdOf(JSON.stringify({ domain: 'test.probe', inputSchema: { type: 'object' }, name: 'probe', outputSchema: { type: 'object' }, version: '1.0.0' }))
  assert.equal(genes[2].id, probeId)
  const id = rotifer(root, 'gene', 'id', 'probe')
  assert.deepEqual([id.status, id.stdout], [0, `${probeId}\n`])
  const table = rotifer(root, 'gene', 'list').stdout.split('\n')
  assert.match(table[0], /^NAME\s+KIND\s+DOMAIN\s+FIDELITY\s+COMPILED\s+GENE ID \(V2\)$/)
  assert.ok(table.some((l) => l.startsWith('formatter') && l.includes(' ts ') && l.endsWith(formatterId)))
  const typo = rotifer(root, 'gene', 'id', 'prbe')
  assert.equal(typo.status, 1)
  assert.match(oneErrorLine(typo), /gene "prbe" not found: .*; did you mean "probe"\?$/)
})

test('the memory API points at `rotifer gene id`, never at a command that does not exist', (t) => {
  assert.throws(() => createTestMemory({ geneId: 'prefs' }), { message: /rotifer gene id <gene>/ })
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  createAgent(root, 'a', ['probe'])
  const { GeneMemoryAccess } = require('../index.js')
  const agent = JSON.parse(fs.readFileSync(path.join(root, '.rotifer', 'agents', fs.readdirSync(path.join(root, '.rotifer', 'agents'))[0]), 'utf8'))
  const m = new GeneMemoryAccess({ agentId: agent.id, geneId: 'prefs', root })
  assert.throws(() => m.readMemory('k'), (e) => /rotifer gene id/.test(e.message) && !/rotifer compile/.test(e.message))
})

test('--input @file and --input - (stdin); invalid JSON is exit code 2', (t) => {
  const root = makeProject(t)
  addGene(root, 'echo', { 'index.js': 'exports.express = (input) => ({ got: input })' })
  fs.writeFileSync(path.join(root, 'in.json'), '{"from":"file"}')
  assert.deepEqual(json(rotifer(root, 'run', 'echo', '--input', '@in.json')), { got: { from: 'file' } })
  const stdin = spawnSync(process.execPath, [BIN, 'run', 'echo', '--input', '-'], { cwd: root, input: '{"from":"stdin"}', encoding: 'utf8' })
  assert.deepEqual(JSON.parse(stdin.stdout), { got: { from: 'stdin' } })
  fs.writeFileSync(path.join(root, 'bad.json'), '{oops')
  for (const [args, message] of [
    [['--input', '@bad.json'], /^error: rotifer run: --input \(file bad\.json\) is not valid JSON/],
    [['--input', '@absent.json'], /^error: rotifer run: --input @absent\.json: cannot read absent\.json \(no such file\)$/],
    [['--input', '[1,'], /^error: rotifer run: --input is not valid JSON/],
  ]) {
    const r = rotifer(root, 'run', 'echo', ...args)
    assert.equal(r.status, 2, args.join(' '))
    assert.match(oneErrorLine(r), message)
  }
})

test('rotifer.json is parsed: a broken one is an error naming the file', (t) => {
  const root = makeProject(t)
  for (const [text, message] of [['{ "name": ', /is not valid JSON/], ['[]', /must hold a JSON object/]]) {
    fs.writeFileSync(path.join(root, 'rotifer.json'), text)
    const r = rotifer(root, 'gene', 'list')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), new RegExp(`^error: the project file ${path.join(root, 'rotifer.json').replace(/[/.]/g, '\\$&')} ${message.source}`))
  }
})

test('outside a project, "no agent" says no rotifer.json was found and where; close agent names are suggested', (t) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-no-project-')))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const r = rotifer(dir, 'agent', 'memory', 'list', 'my-agent')
  assert.equal(r.status, 1)
  assert.match(oneErrorLine(r), new RegExp(`no agent named or with id "my-agent" in ${dir}.*no rotifer\\.json was found in ${dir} or any folder above it`))

  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  createAgent(root, 'formatter-agent', ['probe'])
  const typo = rotifer(root, 'agent', 'run', 'formater-agent', '--input', '{}')
  assert.match(oneErrorLine(typo), /no agent named or with id "formater-agent" .*; did you mean "formatter-agent"\?$/)
})

test('quotas are written in KB/MB/GB: 0.5KB once, 1024GB at most, the same in the memory API', (t) => {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const half = rotifer(root, 'agent', 'create', 'half', '--genes', 'probe', '--memory-quota=0.5KB')
  assert.match(half.stdout, /memory quota {2}0\.5KB \(512 bytes\)\n/)
  assert.ok(!half.stdout.includes('512 bytes (512 bytes)'))
  const max = rotifer(root, 'agent', 'create', 'max', '--genes', 'probe', '--memory-quota=1024GB')
  assert.match(max.stdout, /memory quota {2}1024GB \(1099511627776 bytes\)\n/)
  const over = rotifer(root, 'agent', 'create', 'over', '--genes', 'probe', '--memory-quota=2TB')
  assert.equal(over.status, 2)
  assert.match(oneErrorLine(over), /at most 1024GB/)
  assert.ok(!/1 TB/.test(over.stderr))
  assert.match(rotifer(root, 'agent', 'create', '--help').stdout, /at most 1024GB/)
  // A rejected write names the quota the same way.
  const r = json(rotifer(root, 'agent', 'run', 'half', '--input', steps([{ write: 'k', value: 'x'.repeat(600) }])))
  assert.deepEqual(r.results, [[{ error: 'MEMORY_QUOTA_EXCEEDED' }]])
  const m = createTestMemory({ quota: '0.5KB' })
  t.after(() => m.dispose())
  assert.throws(() => m.memory.writeMemory('k', new Uint8Array(600), 'CACHE'), { code: 'MEMORY_QUOTA_EXCEEDED', message: /the quota of 0\.5KB \(512 bytes\)/ })
})
