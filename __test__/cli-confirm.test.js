'use strict'
// Destructive commands run from a script (stdin not a terminal): `agent delete`, a multi-entry
// `agent memory delete`, `agent memory restore` and `agent memory import --on-conflict replace`
// refuse without --yes (exit 2, a message naming --yes) and change nothing; with --yes they go
// ahead. At a terminal they ask (cli-agent-manage, cli-terminal).

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, makeProject, addGene, PROBE, steps, createAgent, oneErrorLine, stateFiles } = require('./cli-harness')

const snapshot = (root) => Object.fromEntries(stateFiles(root).filter((f) => !f.endsWith('.jsonl')).map((f) => [f, fs.readFileSync(path.join(root, f)).toString('base64')]))

/** A project with agent "keeper" holding three CACHE entries under `user/`. */
function seeded(t) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'keeper', ['probe'])
  const r = rotifer(root, 'agent', 'run', 'keeper', '--input', steps(['user/1', 'user/2', 'user/3'].map((k) => ({ write: k, value: k }))))
  assert.equal(r.status, 0, r.stderr)
  return { root, agent }
}

/** Exit 2, one line naming --yes, and not a byte of the state changed. */
function refused(root, args, what) {
  const before = snapshot(root)
  const r = rotifer(root, ...args)
  assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`)
  const line = oneErrorLine(r)
  assert.match(line, what)
  assert.match(line, /stdin is not a terminal, so no one can be asked; add --yes to confirm$/)
  assert.equal(r.stdout, '')
  assert.deepEqual(snapshot(root), before)
}

describe('destructive commands without a terminal need --yes', () => {
  test('agent delete: refused, then done with --yes', (t) => {
    const { root, agent } = seeded(t)
    refused(root, ['agent', 'delete', 'keeper'], /^error: rotifer agent delete: Delete agent "keeper" \([0-9a-f-]{36}\): its record and its memory: /)
    refused(root, ['agent', 'delete', 'keeper', '--keep-memory'], /its record \(its memory is kept\): /)
    const r = rotifer(root, 'agent', 'delete', 'keeper', '--yes')
    assert.equal(r.status, 0, r.stderr)
    assert.equal(fs.existsSync(path.join(root, '.rotifer', 'agents', `${agent.id}.json`)), false)
  })

  test('agent memory delete by category or prefix: refused whatever it matches; by key it needs no --yes', (t) => {
    const { root } = seeded(t)
    refused(root, ['agent', 'memory', 'delete', 'keeper', '--key-prefix', 'user/'], /Delete every entry of keys starting "user\/" from agent "keeper": /)
    // Matching nothing today: still refused, so that a script does not depend on the data.
    refused(root, ['agent', 'memory', 'delete', 'keeper', '--category', 'PATTERN'], /Delete every entry of category PATTERN from agent "keeper": /)
    const one = rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--key', 'user/1')
    assert.equal(one.status, 0, one.stderr)
    const many = rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--key-prefix', 'user/', '--yes')
    assert.equal(many.status, 0, many.stderr)
    assert.match(many.stdout, /^Deleted 2 entries/)
  })

  test('agent memory restore: refused, then done with --yes', (t) => {
    const { root } = seeded(t)
    const file = path.join(root, 'keeper.db')
    assert.equal(rotifer(root, 'agent', 'memory', 'backup', 'keeper', file).status, 0)
    refused(root, ['agent', 'memory', 'restore', 'keeper', file], /^error: rotifer agent memory restore: Replace every entry of agent "keeper" with the backup /)
    const r = rotifer(root, 'agent', 'memory', 'restore', 'keeper', file, '--yes')
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Restored 3 entries/)
  })

  test('agent memory import --on-conflict replace: refused, then done with --yes; fail and skip need none', (t) => {
    const { root } = seeded(t)
    const bundle = path.join(root, 'keeper.jsonl')
    assert.equal(rotifer(root, 'agent', 'memory', 'export', 'keeper', '--output', bundle, '--include-cache').status, 0)
    refused(root, ['agent', 'memory', 'import', 'keeper', bundle, '--on-conflict', 'replace'], /^error: rotifer agent memory import: Replace the entries of agent "keeper" whose keys the bundle .* holds too: /)
    const skip = rotifer(root, 'agent', 'memory', 'import', 'keeper', bundle, '--on-conflict', 'skip')
    assert.equal(skip.status, 0, skip.stderr)
    const r = rotifer(root, 'agent', 'memory', 'import', 'keeper', bundle, '--on-conflict', 'replace', '--yes', '--json')
    assert.equal(r.status, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout).updated, 3)
  })
})
