'use strict'
// One of several processes creating and disposing test memories at once (test-memory.test.js).
// argv: rounds
// Prints one JSON line: { created, failures: [messages] }.

const memory = require('../../index.js')

const rounds = Number(process.argv[2])
const failures = []
let created = 0
for (let i = 0; i < rounds; i++) {
  try {
    const tm = memory.createTestMemory()
    created++
    tm.memory.writeMemory('k', new Uint8Array([i & 0xff]), 'CACHE')
    if (tm.memory.readMemory('k').value[0] !== (i & 0xff)) failures.push(`round ${i}: read back a different value`)
    tm.dispose()
  } catch (e) {
    failures.push(`round ${i}: ${e.code} ${e.message}`)
  }
}
console.log(JSON.stringify({ created, failures }))
