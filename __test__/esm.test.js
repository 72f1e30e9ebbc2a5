'use strict'
// index.mjs, the ES module entry, exports exactly what index.js exports, as the same objects
// (the installed package is tested in package.test.js).

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

test('index.mjs has a named export for every export of index.js, the same objects, and the module as default', async () => {
  const cjs = require('../index.js')
  const esm = await import(pathToFileURL(path.join(__dirname, '..', 'index.mjs')).href)
  const named = Object.keys(esm).filter((k) => k !== 'default').sort()
  assert.deepEqual(named, Object.keys(cjs).sort())
  for (const name of named) assert.equal(esm[name], cjs[name], name)
  assert.equal(esm.default, cjs)
})
