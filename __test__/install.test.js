'use strict'
// `npm install` is quiet on the Node versions package.json accepts: no package the lockfile
// installs declares engines that exclude them (npm would print EBADENGINE warnings first).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const semver = require('semver')

const lock = require(path.join(__dirname, '..', 'package-lock.json'))
const FLOOR = semver.minVersion(require('../package.json').engines.node).version

/** `[where, range]` of every installed package whose engines.node `accepts(version)` refuses. */
function refusing(accepts) {
  return Object.entries(lock.packages)
    .filter(([where, p]) => where !== '' && p.engines && typeof p.engines.node === 'string' && !accepts(p))
    .map(([where, p]) => `${where} wants node ${p.engines.node}`)
}

test('every package of the lockfile accepts the Node running npm install', () => {
  assert.deepEqual(refusing((p) => semver.satisfies(process.version, p.engines.node)), [])
})

test(`every package the published package depends on accepts Node ${FLOOR}, its engines floor`, () => {
  assert.deepEqual(refusing((p) => p.dev === true || semver.satisfies(FLOOR, p.engines.node)), [])
})
