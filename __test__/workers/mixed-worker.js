'use strict'
// One of several processes making mixed calls on one agent (concurrency.test.js).
// argv: root agentId id seed calls startMs
// Prints one JSON line: { id, outcomes: { "<call>:<code|ok>": n }, unexpected: [messages] }.

const memory = require('../../index.js')
const { prng } = require('../model/generator')

const [root, agentId, id, seed, calls, startMs] = process.argv.slice(2)
const DAY = 86400000
const DOCUMENTED = new Set(memory.MEMORY_ERROR_CODES)

const random = prng(Number(seed))
const rand = random.next
const int = random.int
const pick = random.pick

const clock = { t: Number(startMs) }
const now = () => clock.t
const hex = (c) => 'v2:' + c.repeat(64)
// A gene of the shared domain, and one of this process's own domain: denials happen both ways.
const genes = [
  new memory.GeneMemoryAccess({ agentId, geneId: hex(String(id)), domain: 'shared', root, now }),
  new memory.GeneMemoryAccess({ agentId, geneId: hex(String.fromCharCode(97 + Number(id))), domain: `own${id}`, root, now }),
]
const POLICIES = [
  undefined,
  { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'PRIVATE' },
  { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' },
]
const key = () => `k${int(0, 60)}`
const outcomes = {}
const unexpected = []

for (let i = 0; i < Number(calls); i++) {
  clock.t += i % 200 === 199 ? DAY : 1
  const g = pick(genes)
  const roll = rand()
  let name
  try {
    if (roll < 0.45) {
      name = 'write'
      const big = rand() < 0.02
      const pref = rand() < 0.05
      g.writeMemory(
        pref ? `pref${int(0, 2)}` : key(),
        new Uint8Array(big ? 30000 : pref ? int(1, 40) : int(50, 2000)),
        pref ? 'PREFERENCE' : pick(['CACHE', 'CACHE', 'PATTERN', 'CONTEXT']),
        rand() < 0.8 ? undefined : pick(POLICIES),
        rand() < 0.1 ? { maxRetentionDays: 1, autoDeleteOnTermination: false, anonymizationSupported: false } : undefined,
      )
    } else if (roll < 0.65) {
      name = 'read'
      g.readMemory(key())
    } else if (roll < 0.75) {
      name = 'query'
      g.queryMemory(rand() < 0.5 ? { limit: 10 } : { keyPrefix: `k${int(0, 6)}`, category: pick(['CACHE', undefined]) })
    } else if (roll < 0.85) {
      name = 'delete'
      g.deleteMemory(key())
    } else if (roll < 0.9) {
      name = 'list'
      memory.listAgentMemory({ agentId, root, now })
    } else if (roll < 0.95) {
      name = 'deployerDelete'
      if (rand() < 0.5) memory.deleteAgentMemory({ agentId, root, key: key(), now })
      else memory.deleteAgentMemory({ agentId, root, category: 'CONTEXT', now })
    } else {
      name = 'invalid'
      g.writeMemory('', new Uint8Array(1), 'CACHE')
    }
    outcomes[`${name}:ok`] = (outcomes[`${name}:ok`] || 0) + 1
  } catch (e) {
    const code = e && e.code
    outcomes[`${name}:${code}`] = (outcomes[`${name}:${code}`] || 0) + 1
    if (!(e instanceof memory.MemoryError) || !DOCUMENTED.has(code) || code === 'MEMORY_STORAGE_ERROR' || /busy|locked/i.test(e.message)) {
      unexpected.push(`${name}: ${code} ${e && e.message}`)
    }
  }
}
process.stdout.write(JSON.stringify({ id, outcomes, unexpected }) + '\n')
