'use strict'
// lib/cli/args.js splits words as commander's parseOptions does (it no longer loads commander
// for that): the same options with the same values, in the same order, the same operands and
// unknown words, and the same missing value, for random command lines over one declaration.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { Command, Option } = require('commander')
const { tokenize } = require('../lib/cli/args')

const SPECS = {
  genes: { type: 'list', short: 'g' },
  domain: { type: 'string', short: 'd' },
  yes: { type: 'boolean', short: 'y' },
  json: { type: 'boolean' },
  'no-sandbox': { type: 'boolean' },
  limit: { type: 'string' },
}
const WORDS = ['--genes', '-g', 'a', 'b,c', '--domain', '-d', 'x.y', '-dx', '-gz', '--yes', '-y', '-yg', '-yd', '--json',
  '--json=1', '--limit=5', '--limit', '5', '-5', '-0.5', '--no-sandbox', '--sandbox', '--nope', '-q', '--', '-', 'word', '--domain=', '=x']

function withCommander(argv) {
  const events = []
  const parser = new Command('t')
  parser.exitOverride().helpOption(false).allowUnknownOption(false)
  parser.configureOutput({ writeOut: () => {}, writeErr: () => {} })
  for (const [name, spec] of Object.entries(SPECS)) {
    const short = spec.short ? `-${spec.short}, ` : ''
    parser.addOption(new Option(spec.type === 'boolean' ? `${short}--${name}` : `${short}--${name} ${spec.type === 'list' ? '<value...>' : '<value>'}`))
    parser.on(`option:${name}`, (value) => events.push([name, spec.type === 'boolean' ? undefined : value]))
  }
  try {
    return { ...parser.parseOptions(argv), events }
  } catch (e) {
    if (e.code === 'commander.optionMissingArgument') return { missing: true, events }
    throw e
  }
}

function withOurs(argv) {
  const events = []
  try {
    return { ...tokenize(argv, SPECS, (name, value) => events.push([name, value])), events }
  } catch (e) {
    if (e.optionName) return { missing: true, events }
    throw e
  }
}

test('tokenize agrees with commander on 5,000 random command lines', () => {
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  for (let n = 0; n < 5000; n++) {
    const argv = Array.from({ length: Math.floor(next() * 7) }, () => WORDS[Math.floor(next() * WORDS.length)])
    assert.deepEqual(withOurs(argv), withCommander(argv), JSON.stringify(argv))
  }
})
