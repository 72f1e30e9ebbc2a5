#!/usr/bin/env node
'use strict'
// The `rotifer` command. All the work is in lib/cli/.

const { main } = require('../lib/cli/main')

const io = {
  out: (text) => process.stdout.write(text + '\n'),
  err: (text) => process.stderr.write(text + '\n'),
}

function exit(code) {
  process.exitCode = code
  // Exit once output is flushed, even if a gene left a timer or a socket open.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)))
}

main(process.argv.slice(2), io).then(exit, (e) => {
  // main reports every failure itself; this is only a last resort.
  io.err(`error: ${e && e.message ? e.message : String(e)}`)
  exit(1)
})
