'use strict'
// `node -r bench/node-wasm-preload.js bin/rotifer.js …`: the CLI with compiled genes run by the
// Node-WebAssembly host of bench/node-wasm-host.js instead of the native sandbox (the worker
// thread inherits the preload), so both run the same command in one benchmark.

const Module = require('node:module')
const path = require('node:path')

const target = path.join(__dirname, '..', 'lib', 'runtime', 'wasm-host.js')
const replacement = new Module(target, module)
replacement.filename = target
replacement.exports = require('./node-wasm-host')
replacement.loaded = true
require.cache[target] = replacement
