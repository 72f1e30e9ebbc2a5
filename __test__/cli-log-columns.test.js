'use strict'
// `agent memory log` and `agent memory list` piped at 80 columns, when the rows after the first
// page (which the columns are laid out from) hold longer keys and larger sizes: every key stays
// distinguishable (cut in the middle, its end kept) and every size keeps its unit.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const { rotifer, makeProject, addGene, PROBE, createAgent } = require('./cli-harness')
const memory = require('../index.js')

const GENE = 'v2:' + 'c'.repeat(64)
const LONG = 300

/** Agent "wide": 200 entries with small values first, then LONG with larger ones (sizes wider). */
function project(t) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'wide', ['probe'], '--memory-quota=64MB')
  const m = new memory.GeneMemoryAccess({ agentId: agent.id, root, geneId: GENE, domain: 'test.probe' })
  for (let i = 0; i < 200; i++) m.writeMemory(keyOf('a', i), Buffer.alloc(10, 120), 'CACHE')
  for (let i = 0; i < LONG; i++) m.writeMemory(keyOf('b', i), Buffer.alloc(1500 + i * 40, 120), 'PREFERENCE')
  return root
}

/** Keys alike but for their end, longer than a key column at 80 columns. */
const keyOf = (group, i) => `users/0000/settings/display/${group}-item-${String(i).padStart(5, '0')}`

const SIZE = /^\d+(\.\d)? (B|KB|MB)$/

/** The cells of a table line: columns are two spaces or more apart. */
const cellsOf = (line) => line.split(/ {2,}/)

describe('piped at 80 columns, rows after the first page', () => {
  test('memory log: keys distinguishable, sizes whole, every line fits', (t) => {
    const root = project(t)
    const r = rotifer(root, 'agent', 'memory', 'log', 'wide')
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    assert.equal(lines.length, 1 + 200 + LONG)
    for (const l of lines) assert.ok([...l].length <= 80, `${[...l].length} columns: ${l}`)
    const later = lines.slice(201).map(cellsOf)
    const keys = later.map((c) => c[3])
    assert.equal(new Set(keys).size, LONG, `keys read alike: ${keys.slice(0, 3).join(', ')}`)
    // Cut in the middle: the start and the end of each key are its own.
    keys.forEach((k, i) => assert.ok(k.includes('…') && keyOf('b', i).endsWith(k.split('…')[1]) && keyOf('b', i).startsWith(k.split('…')[0]), k))
    for (const c of later) assert.match(c[5], SIZE, `a size lost its unit: ${c.join(' | ')}`)
  })

  test('memory list: keys distinguishable, sizes whole, every line fits', (t) => {
    const root = project(t)
    const r = rotifer(root, 'agent', 'memory', 'list', 'wide')
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    const rows = lines.slice(lines.indexOf('') + 2)
    assert.equal(rows.length, 200 + LONG)
    for (const l of lines) assert.ok([...l].length <= 80, `${[...l].length} columns: ${l}`)
    const later = rows.slice(200).map(cellsOf)
    assert.equal(new Set(later.map((c) => c[0])).size, LONG, `keys read alike: ${later.slice(0, 3).map((c) => c[0]).join(', ')}`)
    for (const c of later) assert.match(c[2], SIZE, `a size lost its unit: ${c.join(' | ')}`)
  })
})
