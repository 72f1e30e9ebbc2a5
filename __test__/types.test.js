'use strict'
// index.d.ts documents the API for gene authors: the seed's example gene type-checks under
// `strict`, and misuse does not.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const TSC = require.resolve('typescript/bin/tsc')

function tsc(file, ...flags) {
  return spawnSync(
    process.execPath,
    [TSC, '--noEmit', '--strict', ...flags, '--target', 'es2022', '--module', 'node16', '--moduleResolution', 'node16', '--lib', 'es2022,dom', path.join(ROOT, file)],
    { cwd: ROOT, encoding: 'utf8' },
  )
}

test('the seed example gene (examples/formatter) type-checks under strict against "@rotifer/playground/memory"', () => {
  const r = tsc('examples/formatter/genes/formatter/index.ts')
  assert.equal(r.status, 0, r.stdout + r.stderr)
})

test('misusing the API fails the type check, line by line', () => {
  const r = tsc('__test__/fixtures/misuse.ts')
  assert.notEqual(r.status, 0)
  for (const line of [5, 6, 7, 8]) assert.match(r.stdout, new RegExp(`misuse\\.ts\\(${line},`), r.stdout)
})

test('under exactOptionalPropertyTypes, options the runtime takes as undefined type-check; a Hybrid ctx has gatewayFetch', () => {
  const r = tsc('__test__/fixtures/exact-optional.ts', '--exactOptionalPropertyTypes')
  assert.equal(r.status, 0, r.stdout + r.stderr)
})

test('the options typed as undefined are taken as undefined at run time', (t) => {
  const fs = require('node:fs')
  const os = require('node:os')
  const memory = require('..')
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-types-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const agentId = '00000000-0000-4000-8000-000000000001'
  memory.createAgentMemory({ agentId, root })
  const page = memory.listAgentMemoryPage({ agentId, root, category: undefined, keyPrefix: undefined, after: undefined, limit: undefined, totals: undefined, now: undefined })
  assert.deepEqual(page, { entries: [], more: false, totals: null })
  const reader = memory.openAgentAuditLog({ agentId, root, follow: undefined })
  assert.deepEqual(reader.next(), memory.openAgentAuditLog({ agentId, root }).next())
})
