'use strict'
// Nothing a gene says reaches the terminal raw, through the real bin: a WASM gene's
// `__rotifer_error` code and message, a JavaScript gene's thrown message, its output, its logs and
// the keys it stores are printed with their control characters, escape sequences and bidi
// controls escaped, on lines that carry the CLI's prefixes (R-RUN-3, R-RUN-5, R-RUN-9).

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, json, makeProject, addGene, createAgent, oneErrorLine, PROBE, steps } = require('./cli-harness')
const { WAT, addWasmGene } = require('./wasm-genes')
const { printable, printableJson, printableLogLine, hasUnsafeText } = require('../lib/cli/terminal-text')

/** A window title (OSC), a clear screen (CSI), a C1 CSI, a right-to-left override, and a forged line. */
const FORGED = 'error: agent memory database corrupt; run: rm -rf .rotifer'
const HOSTILE = `boom\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\u2066\r\n${FORGED}`
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

/** `text` holds nothing a terminal acts on, and no line of it is the forged one. */
function assertSafe(text, what) {
  assert.doesNotMatch(text, RAW, `${what}: ${JSON.stringify(text)}`)
  assert.ok(!text.split('\n').some((l) => l.startsWith(FORGED)), `${what}: a forged line: ${JSON.stringify(text)}`)
}

/** A WAT string literal of `text`'s UTF-8 bytes. */
function watBytes(text) {
  return '"' + [...Buffer.from(text, 'utf8')].map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('') + '"'
}

/** A gene logging `text` (at 1024) `times` times through `rotifer.log` (level info), returning {}. */
function logging(text, times = 1) {
  const len = Buffer.byteLength(text)
  return `(module
    (import "rotifer" "log" (func $log (param i32 i32 i32)))
    (memory (export "memory") 1)
    (data (i32.const 1024) ${watBytes(text)})
    (data (i32.const 60000) "{}\\00")
    (func (export "express") (param i32 i32) (result i32) (local $i i32)
      (loop $l
        (call $log (i32.const 1) (i32.const 1024) (i32.const ${len}))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (i32.const ${times}))))
      (i32.const 60000)))`
}

const THROWER = `exports.express = () => { const e = new Error(${JSON.stringify(HOSTILE)}); e.code = ${JSON.stringify('E\u001b[2J\u202e')}; throw e }`

describe('terminal-text', () => {
  test('printable leaves one line with nothing to act on; plain text and other Unicode stay as they are', () => {
    assert.equal(printable('a\u001b[2Jb\nc\td\u009b\u202e\u2066\u007f'), 'a\\u001b[2Jb\\nc\\td\\u009b\\u202e\\u2066\\u007f')
    assert.equal(printable('é – 日本 🦀 \\u001b'), 'é – 日本 🦀 \\u001b')
    assertSafe(printable(HOSTILE), 'printable')
    assert.equal(printable(printable(HOSTILE)), printable(HOSTILE), 'printing twice changes nothing')
  })

  test('printableJson keeps the value: the same JSON, parsed, with nothing raw', () => {
    const value = { [`k\u202e`]: `v\u009b31m\u007f\u2028\u001b`, list: ['\u200f', 1, null] }
    const text = printableJson(JSON.stringify(value, null, 2))
    assert.doesNotMatch(text.replace(/\n/g, ''), RAW)
    assert.deepEqual(JSON.parse(text), value)
  })

  test('a log line keeps tabs and shows the rest as the sandbox log does', () => {
    assert.equal(printableLogLine('a\tb\u001b[1m\u202e'), 'a\tb\\u{1b}[1m\\u{202e}')
    assert.equal(hasUnsafeText('line\n\ttab'), false)
    assert.equal(hasUnsafeText('rtl\u202e'), true)
  })
})

describe("a gene's failure", () => {
  test("run: a WASM gene's __rotifer_error code and message are one escaped line", async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'liar', WAT.reject(`CODE\u001b[31m\u009b2J`, HOSTILE))
    const r = rotifer(root, 'run', 'liar', '--input', '{}')
    assert.equal(r.status, 1)
    const line = oneErrorLine(r)
    assertSafe(r.stderr, 'run stderr')
    assert.match(line, /^error: gene "liar" \(v2:[0-9a-f]{64}\) failed: CODE\\u001b\[31m\\u009b2J: boom\\u001b\]0;pwned\\u0007\\u001b\[2J\\u009b31m\\u202eevil\\u2066/)
    assert.ok(line.includes(FORGED), 'the forged text is shown inside the line')
  })

  test("run and agent run: a JavaScript gene's thrown message and code are one escaped line", (t) => {
    const root = makeProject(t)
    addGene(root, 'thrower', { 'index.js': THROWER })
    const r = rotifer(root, 'run', 'thrower', '--input', '{}')
    assert.equal(r.status, 1)
    assertSafe(r.stderr, 'run stderr')
    assert.match(oneErrorLine(r), /^error: gene "thrower" .* failed: boom\\u001b\]0;pwned/)
    createAgent(root, 'victim', ['thrower'])
    const a = rotifer(root, 'agent', 'run', 'victim', '--input', '{}')
    assert.equal(a.status, 1)
    assertSafe(a.stderr, 'agent run stderr')
    assert.match(oneErrorLine(a), /^error: gene "thrower" .* failed: boom\\u001b/)
  })

  test('agent run --verbose: the step lines escape the code, the message, the input and the output', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'shouter', WAT.constant({ said: `hi\u009b2J\u202e\u007f` }))
    addGene(root, 'thrower', { 'index.js': THROWER })
    createAgent(root, 'loud', ['shouter', 'thrower'])
    const r = rotifer(root, 'agent', 'run', 'loud', '--verbose', '--input', JSON.stringify({ x: '\u202e\u0085' }))
    assert.equal(r.status, 1)
    assertSafe(r.stderr, 'verbose stderr')
    const lines = r.stderr.split('\n').filter((l) => l !== '')
    for (const l of lines) assert.match(l, /^(\[\d+\] |    (input|output|error): |error: )/, `a line of ours: ${JSON.stringify(l)}`)
    assert.ok(r.stderr.includes('output: {"said":"hi\\u009b2J\\u202e\\u007f"}'), r.stderr)
    assert.ok(r.stderr.includes('input:  {"x":"\\u202e\\u0085"}'), r.stderr)
    assert.match(r.stderr, /error: {2}E\\u001b\[2J\\u202e: boom\\u001b\]0;pwned\\u0007/)
  })

  test('the output on stdout is the same JSON with nothing raw in it', async (t) => {
    const root = makeProject(t)
    const value = { said: `hi\u009b2J\u202e\u007f\u2028`, [`key\u200f`]: 1 }
    await addWasmGene(root, 'shouter', WAT.constant(value))
    const r = rotifer(root, 'run', 'shouter', '--input', '{}')
    assert.equal(r.status, 0, r.stderr)
    assertSafe(r.stdout, 'run stdout')
    assert.deepEqual(JSON.parse(r.stdout), value)
    createAgent(root, 'loud', ['shouter'])
    const a = rotifer(root, 'agent', 'run', 'loud', '--input', '{}')
    assertSafe(a.stdout, 'agent run stdout')
    assert.deepEqual(JSON.parse(a.stdout), value)
  })
})

describe("rotifer test's report", () => {
  test('a failing case, a differing output and a schema problem are shown escaped, each on its line', async (t) => {
    const root = makeProject(t)
    const output = { said: `hi\u009b2J\u202e`, [`bad\u001b[2J`]: 1 }
    const dir = await addWasmGene(root, 'shouter', WAT.constant(output), {
      phenotype: { name: 'shouter', domain: 'test.probe', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object', additionalProperties: { type: 'string' } } },
    })
    fs.writeFileSync(path.join(dir, 'testsuite.json'), JSON.stringify({ testCases: [{ name: `same\u202e`, input: {}, expectedOutput: { said: 'hi' } }, { input: {} }] }))
    const r = rotifer(root, 'test', 'shouter')
    assert.equal(r.status, 1)
    assertSafe(r.stdout, 'test stdout')
    const lines = r.stdout.split('\n').filter((l) => l !== '')
    for (const l of lines) assert.match(l, /^(Testing gene |  (FAIL|ok) {2}case |      (expected|actual): |\d+ passed)/, `a line of ours: ${JSON.stringify(l)}`)
    assert.ok(r.stdout.includes('actual:   {"said":"hi\\u009b2J\\u202e","bad\\u001b[2J":1}'), r.stdout)
    assert.ok(r.stdout.includes('case 1: same\\u202e'), r.stdout)
    assert.match(r.stdout, /case 2: .*\/bad\\u001b\[2J must be string/)

    addGene(root, 'thrower', { 'index.js': THROWER })
    const thrown = rotifer(root, 'test', 'thrower')
    assert.equal(thrown.status, 1)
    assertSafe(thrown.stdout, 'test stdout (thrown)')
    assert.match(thrown.stdout, /FAIL {2}runs on the sample input: boom\\u001b\]0;pwned\\u0007.*\\n/)
  })
})

describe("a gene's logs", () => {
  test('one log call of many lines prints each on its own prefixed line, escaped', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'logger', logging(`first\u202e\u009b2J\n${FORGED}\n\nlast\u001b]0;x\u0007`))
    const r = rotifer(root, 'run', 'logger', '--input', '{}')
    assert.equal(r.status, 0, r.stderr)
    assertSafe(r.stderr, 'log stderr')
    assert.deepEqual(r.stderr.split('\n').filter((l) => l !== ''), [
      '[logger] info: first\\u{202e}\\u{9b}2J',
      `[logger] info: ${FORGED}`,
      '[logger] info: ',
      '[logger] info: last\\u{1b}]0;x\\u{7}',
    ])
  })

  test('the line rate counts lines, not calls: 200 calls of 2,000 lines print about the burst', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'flood', logging('x\n'.repeat(2000), 200))
    const started = Date.now()
    const r = rotifer(root, 'run', 'flood', '--input', '{}')
    const seconds = (Date.now() - started) / 1000
    assert.equal(r.status, 0, r.stderr.slice(-500))
    const lines = r.stderr.split('\n').filter((l) => l !== '')
    for (const l of lines) assert.match(l, /^\[flood\] (info: x|note: )/)
    // A burst of 1,000 lines, then 100 a second, and the note.
    assert.ok(lines.length <= 1000 + 100 * seconds + 1, `${lines.length} lines in ${seconds} s`)
    assert.match(lines[lines.length - 1], /^\[flood\] note: \d+ log line\(s\) \(\d+ bytes\) dropped/)
  })

  test("a JavaScript gene's console output has its bidi controls escaped too", (t) => {
    const root = makeProject(t)
    addGene(root, 'chatty', { 'index.js': 'exports.express = () => { console.log("left\\u202eright\\u2066\\u009b2J"); return {} }' })
    const r = rotifer(root, 'run', 'chatty', '--input', '{}')
    assert.equal(r.status, 0, r.stderr)
    assertSafe(r.stderr, 'console stderr')
    assert.match(r.stderr, /^left\\u\{202e\}right\\u\{2066\}\\u\{9b\}2J$/m)
  })
})

describe('keys and values a gene stored', () => {
  test('memory list and get escape a key with bidi controls; a value holding them is shown in base64', (t) => {
    const root = makeProject(t)
    addGene(root, 'probe', { 'index.js': PROBE })
    createAgent(root, 'keeper', ['probe'])
    json(rotifer(root, 'agent', 'run', 'keeper', '--input', steps([{ write: 'txt\u202egpj.exe', value: 'safe\u2067text' }])))
    const list = rotifer(root, 'agent', 'memory', 'list', 'keeper')
    assert.equal(list.status, 0, list.stderr)
    assertSafe(list.stdout, 'memory list')
    assert.ok(list.stdout.includes('txt\\u202egpj.exe'), list.stdout)
    const get = rotifer(root, 'agent', 'memory', 'get', 'keeper', 'txt\u202egpj.exe')
    assert.equal(get.status, 0, get.stderr)
    assertSafe(get.stdout, 'memory get')
    assert.match(get.stdout, /^value \(base64\) +c2FmZeKBp3RleHQ=$/m)
  })
})
