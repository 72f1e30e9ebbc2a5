'use strict'
// A live process of checkpoint-kill.test.js: writes a small entry about every millisecond (keys
// `w<id>-<n>`, each value naming its key) and reads one back every tenth time, while other
// processes are killed around it. argv: root agentId id
// Prints "ready" after its first write. On "stop" (stdin) it makes one more write and read, then
// prints one JSON line { acked, failures } and exits: `acked` writes returned, the first
// failures as "code message".

const memory = require('../../index.js')

const [root, agentId, id] = process.argv.slice(2)
const m = new memory.GeneMemoryAccess({ agentId, geneId: 'v2:' + 'c'.repeat(64), domain: 'live', root })
const valueOf = (key) => Buffer.from(`value of ${key}`)
const failures = []
let acked = 0

function failed(what, e) {
  if (failures.length < 5) failures.push(`${what}: ${e.code} ${e.message}`)
}

/** One write of the next key, and every tenth time a read of an earlier one. */
function step() {
  const key = `w${id}-${acked}`
  try {
    m.writeMemory(key, valueOf(key), 'PREFERENCE')
    acked++
  } catch (e) {
    failed(`write ${key}`, e)
    return
  }
  if (acked % 10 === 0) {
    const back = `w${id}-${Math.floor(Math.random() * acked)}`
    try {
      const e = m.readMemory(back)
      if (!e || !Buffer.from(e.value).equals(valueOf(back))) failures.push(`read ${back}: ${e ? 'another value' : 'not found'}`)
    } catch (e) {
      failed(`read ${back}`, e)
    }
  }
}

step()
process.stdout.write('ready\n')
const timer = setInterval(step, 1)
process.stdin.on('data', (d) => {
  if (!String(d).includes('stop')) return
  clearInterval(timer)
  step() // still works after the run
  process.stdout.write(JSON.stringify({ acked, failures }) + '\n')
  process.exit(0)
})
