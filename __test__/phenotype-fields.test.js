'use strict'
// R-RUN-2 through the real bin: a phenotype missing several required fields names them all in
// one line (a new gene is fixed in one go, not one error at a time); one missing field is named
// alone, as before.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, makeProject } = require('./cli-harness')

function gene(root, phenotype) {
  const dir = path.join(root, 'genes', 'g')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'phenotype.json'), JSON.stringify(phenotype))
  fs.writeFileSync(path.join(dir, 'index.js'), 'export function express() { return {} }\n')
}

test('R-RUN-2 a phenotype missing version, inputSchema and outputSchema gets one error naming the three', (t) => {
  const root = makeProject(t)
  gene(root, { domain: 'demo.x' })
  const all = /genes\/g\/phenotype\.json has no "version", "inputSchema", "outputSchema" \(E0021\); add them: "version": "0\.1\.0" \(semver\), "inputSchema": \{"type": "object"\}/
  const id = rotifer(root, 'gene', 'id', 'g')
  assert.equal(id.status, 1, id.stdout + id.stderr)
  assert.match(id.stderr, all)
  assert.equal(id.stderr.trim().split('\n').length, 1, id.stderr)
  // `list` shows every gene, the broken one with its error in place of its id.
  const list = rotifer(root, 'list')
  assert.equal(list.status, 0, list.stderr)
  assert.match(list.stdout, all)
})

test('R-RUN-2 a phenotype missing only its domain names it alone', (t) => {
  const root = makeProject(t)
  gene(root, { version: '1.0.0', inputSchema: {}, outputSchema: {} })
  const r = rotifer(root, 'gene', 'id', 'g')
  assert.equal(r.status, 1)
  assert.match(r.stderr, /has no "domain" \(E0021\); add it: "domain": "general"/)
})
