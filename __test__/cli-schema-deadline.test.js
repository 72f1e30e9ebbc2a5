'use strict'
// Schema checks of untrusted values are bounded like genes (R-RUN-6, R-RUN-9), through the real
// bin: a gene's output "a"×34 + "!" checked against a pattern ^(a+)+$ backtracks for minutes.
// The next gene's inputSchema in `agent run`, or a case's expectedSchema in `rotifer test`, must
// stop at the run's deadline (exit 1 naming the check), at Ctrl-C (130) and at SIGTERM (143).
// The signals are sent once the gene said it returned its output (a line on stderr), never after
// a fixed delay.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const { spawn, spawnSync } = require('node:child_process')
const { BIN, makeProject, addGene, createAgent, phenotypeOf } = require('./cli-harness')

const EVIL = 'a'.repeat(34) + '!'
const PATTERN = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } }
/** A gene that says so on stderr, then returns the string that backtracks. */
const EMIT = `exports.express = () => { console.error('emitted'); return { s: ${JSON.stringify(EVIL)} } }\n`
/** How long a hung check would keep a test waiting before it is called a failure. */
const HUNG = 60_000

/** Project with agent "chain": emit, then victim whose inputSchema holds the pattern. */
function chain(t) {
  const root = makeProject(t)
  addGene(root, 'emit', { 'index.js': EMIT })
  addGene(root, 'victim', { 'index.js': 'exports.express = (input) => input\n' }, { phenotype: { ...phenotypeOf('victim', 'test.probe'), inputSchema: PATTERN } })
  createAgent(root, 'chain', ['emit', 'victim'])
  return root
}

/** Project with gene "emit" whose test suite's expectedSchema holds the pattern. */
function suite(t) {
  const root = makeProject(t)
  addGene(root, 'emit', {
    'index.js': EMIT,
    'testsuite.json': { testCases: [{ name: 'evil', input: {}, expectedSchema: PATTERN }, { name: 'after', input: {}, expectedOutput: { s: EVIL } }] },
  })
  return root
}

/** Runs the bin; resolves { status, signal, stderr, ms } after sending `signal` at the sign. */
function signalled(root, args, signal) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    let sentAt = null
    const guard = setTimeout(() => child.kill('SIGKILL'), HUNG)
    child.stderr.on('data', (d) => {
      stderr += d
      if (sentAt === null && stderr.includes('emitted')) {
        sentAt = Date.now()
        child.kill(signal)
      }
    })
    child.on('error', reject)
    child.on('close', (status, sig) => {
      clearTimeout(guard)
      resolve({ status, signal: sig, stderr, ms: sentAt === null ? null : Date.now() - sentAt })
    })
  })
}

describe('a schema check that backtracks without end', () => {
  test('agent run: stopped at --timeout, exit 1 naming the check', (t) => {
    const root = chain(t)
    const r = spawnSync(process.execPath, [BIN, 'agent', 'run', 'chain', '--timeout', '2'], { cwd: root, encoding: 'utf8', timeout: HUNG })
    assert.equal(r.signal, null, 'the CLI ended by itself')
    assert.equal(r.status, 1, r.stderr)
    assert.match(r.stderr, /error: checking the input of gene "victim" against its inputSchema did not finish within 2 s and was stopped/)
    assert.equal(r.stdout, '')
  })

  test('agent run: Ctrl-C while the check runs exits 130', async (t) => {
    const root = chain(t)
    const r = await signalled(root, ['agent', 'run', 'chain'], 'SIGINT')
    assert.equal(r.signal, null, `ended by ${r.signal}: ${r.stderr}`)
    assert.equal(r.status, 130, r.stderr)
    assert.match(r.stderr, /interrupted/)
  })

  test('rotifer test: an expectedSchema that does not finish fails its case at the timeout; the next case runs', (t) => {
    const root = suite(t)
    const r = spawnSync(process.execPath, [BIN, 'test', 'emit', '--timeout', '2'], { cwd: root, encoding: 'utf8', timeout: HUNG })
    assert.equal(r.signal, null, 'the CLI ended by itself')
    assert.equal(r.status, 1, r.stderr)
    assert.match(r.stdout, /FAIL {2}case 1: evil: checking a value against .*testsuite\.json: test case 1: "expectedSchema" did not finish within 2 s/)
    assert.match(r.stdout, /ok {4}case 2: after/)
    assert.match(r.stdout, /1 passed, 1 failed/)
  })

  for (const [signal, status] of [['SIGTERM', 143], ['SIGINT', 130]]) {
    test(`rotifer test: ${signal} while the expectedSchema check runs exits ${status}`, async (t) => {
      const root = suite(t)
      const r = await signalled(root, ['test', 'emit'], signal)
      assert.equal(r.signal, null, `ended by ${r.signal}: ${r.stderr}`)
      assert.equal(r.status, status, r.stderr)
    })
  }
})
