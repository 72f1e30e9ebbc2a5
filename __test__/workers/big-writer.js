'use strict'
// A process of checkpoint-kill.test.js that rewrites 64 KiB values as fast as it can until it
// is killed (SIGKILL): its commits fill the WAL, so it is often killed inside a checkpoint.
// argv: root agentId
// Prints "ready" after its first write; exits 2 on any failure.

const memory = require('../../index.js')

const [root, agentId] = process.argv.slice(2)
const m = new memory.GeneMemoryAccess({ agentId, geneId: 'v2:' + 'd'.repeat(64), domain: 'big', root })
const value = Buffer.alloc(64 * 1024)
for (let n = 0; ; n++) {
  value.writeUInt32LE(n, 0)
  try {
    m.writeMemory(`big-${n % 8}`, value, 'CONTEXT')
  } catch (e) {
    process.stderr.write(`big writer failed: ${e.code} ${e.message}\n`)
    process.exit(2)
  }
  if (n === 0) process.stdout.write('ready\n')
}
