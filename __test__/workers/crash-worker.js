'use strict'
// A child process under heavy write/evict load, killed with SIGKILL by crash.test.js.
// argv: root agentId startMs seed quota
// Every value carries its own checksum (see frame()), so a torn value is detectable.
// Prints "ready" once it is in its loop; exits 2 on any unexpected error.

const fs = require('node:fs')
const { createHash, randomBytes } = require('node:crypto')
const memory = require('../../index.js')
const { prng } = require('../model/generator')

const [root, agentId, startMs, seed, quota] = process.argv.slice(2)
const DAY = 86400000

const random = prng(Number(seed))
const rand = random.next
const int = random.int

/** [u32 payload length][u32 counter][payload][sha256(key ‖ counter ‖ payload)]. */
function frame(key, counter, len) {
  const payload = randomBytes(len)
  const head = Buffer.alloc(8)
  head.writeUInt32LE(len, 0)
  head.writeUInt32LE(counter, 4)
  const sum = createHash('sha256').update(key).update(head.subarray(4)).update(payload).digest()
  return Buffer.concat([head, payload, sum])
}

const clock = { t: Number(startMs) }
const now = () => clock.t
memory.createAgentMemory({ agentId, root, quota: Number(quota) })
const open = { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'PRIVATE' }
const genes = ['a', 'b'].map((c) => new memory.GeneMemoryAccess({ agentId, geneId: 'v2:' + c.repeat(64), domain: 'load', root, now }))
const EXPECTED = new Set(['MEMORY_QUOTA_EXCEEDED', 'MEMORY_NOT_FOUND'])

for (let counter = 0; ; counter++) {
  clock.t += counter % 150 === 149 ? DAY : 1 // unique per call; a day now and then expires entries
  const g = genes[counter & 1]
  const roll = rand()
  try {
    if (roll < 0.7) {
      const pref = rand() < 0.08
      const key = pref ? `pref${int(0, 3)}` : `k${int(0, 150)}`
      const category = pref ? 'PREFERENCE' : ['CACHE', 'CACHE', 'PATTERN', 'CONTEXT'][int(0, 3)]
      const len = pref ? int(4, 64) : int(100, 3000)
      const retention = rand() < 0.1 ? { maxRetentionDays: 1, autoDeleteOnTermination: false, anonymizationSupported: false } : undefined
      // One writer gene: only an entry's creator may change its retention policy.
      genes[0].writeMemory(key, frame(key, counter, len), category, open, retention)
    } else if (roll < 0.8) {
      g.deleteMemory(`k${int(0, 150)}`)
    } else if (roll < 0.9) {
      g.readMemory(`k${int(0, 150)}`)
    } else if (roll < 0.95) {
      g.queryMemory({ limit: 20 })
    } else {
      memory.deleteAgentMemory({ agentId, root, category: 'PATTERN', now })
    }
  } catch (e) {
    if (!EXPECTED.has(e.code)) {
      process.stderr.write(`unexpected failure: ${e.code} ${e.message}\n`)
      process.exit(2)
    }
  }
  if (counter === 20) fs.writeSync(1, 'ready\n')
}
