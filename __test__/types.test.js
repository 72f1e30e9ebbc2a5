'use strict'
// index.d.ts documents the API for gene authors: the seed's example gene type-checks under
// `strict`, and misuse does not.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const TSC = require.resolve('typescript/bin/tsc')

function tsc(file) {
  return spawnSync(
    process.execPath,
    [TSC, '--noEmit', '--strict', '--target', 'es2022', '--module', 'node16', '--moduleResolution', 'node16', '--lib', 'es2022,dom', path.join(ROOT, file)],
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
