'use strict'
// A child process for faults.test.js. argv: root scenario
//   setup           creates agent "a" with known entries, then exits (closing the database)
//   calls           runs every kind of call on agent "a" and prints their outcomes
//   garbage         opens "a", then overwrites its database with garbage in place, then calls
//   truncate        opens "a", then truncates its database in place, then calls
//   folder          opens "a", then puts a file in place of .rotifer/memory, then calls
//   wal, shm        opens "a", then removes its -wal (or -shm) file by hand, then calls
//   restore         opens "a", then copies argv[3] over its database in place (cp: same inode), then calls
// Prints one JSON line: [[call, "ok" | code, message?], …].

const fs = require('node:fs')
const path = require('node:path')
const memory = require('../../index.js')

const [root, scenario, backup] = process.argv.slice(2)
const T0 = Date.parse('2026-11-30T00:00:00.000Z')
const DAY = 86400000
const hex = (c) => 'v2:' + c.repeat(64)
const gene = (c, now = () => T0 + 1000) => new memory.GeneMemoryAccess({ agentId: 'a', geneId: hex(c), domain: 'text', root, now })
const dbPath = path.join(root, '.rotifer', 'memory', 'a.db')
const locked = { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' }
const oneDay = { maxRetentionDays: 1, autoDeleteOnTermination: false, anonymizationSupported: false }

function setup() {
  memory.createAgentMemory({ agentId: 'a', root, quota: 4096 })
  const owner = gene('a', () => T0)
  owner.writeMemory('keep', Buffer.from('original value'), 'PREFERENCE')
  owner.writeMemory('private', Buffer.from('secret'), 'CONTEXT', locked)
  owner.writeMemory('short', Buffer.from('expires'), 'CACHE', undefined, oneDay)
  owner.writeMemory('fill', new Uint8Array(3000), 'PREFERENCE')
  owner.readMemory('keep') // the owner is the last accessor of everything
}

/** Every kind of call; those that would change memory or must be audited come after the harmless ones. */
function calls(withConfigure) {
  const owner = gene('a')
  const out = []
  const run = (name, fn) => {
    try {
      fn()
      out.push([name, 'ok'])
    } catch (e) {
      out.push([name, e instanceof memory.MemoryError ? e.code : `not a MemoryError: ${e}`, e.message])
    }
  }
  run('read', () => owner.readMemory('keep'))
  run('query', () => owner.queryMemory())
  run('list', () => memory.listAgentMemory({ agentId: 'a', root, now: () => T0 + 1000 }))
  run('writeNew', () => owner.writeMemory('new', Buffer.from('x'), 'CACHE'))
  run('update', () => owner.writeMemory('keep', Buffer.from('changed'), 'PREFERENCE'))
  run('delete', () => owner.deleteMemory('keep'))
  run('deniedRead', () => gene('b').readMemory('private'))
  run('quotaReject', () => owner.writeMemory('huge', new Uint8Array(5000), 'CACHE'))
  run('noV2Id', () => new memory.GeneMemoryAccess({ agentId: 'a', geneId: null, root }).readMemory('keep'))
  run('expiryPurge', () => gene('a', () => T0 + 2 * DAY).readMemory('keep'))
  run('deployerDeleteKey', () => memory.deleteAgentMemory({ agentId: 'a', root, key: 'keep', now: () => T0 + 1000 }))
  run('deployerDeleteCategory', () => memory.deleteAgentMemory({ agentId: 'a', root, category: 'CONTEXT', now: () => T0 + 1000 }))
  if (withConfigure) run('configure', () => memory.createAgentMemory({ agentId: 'a', root, quota: 8192 }))
  return out
}

if (scenario === 'setup') {
  setup()
} else if (scenario === 'calls') {
  process.stdout.write(JSON.stringify(calls(false)) + '\n')
} else {
  const owner = gene('a')
  owner.writeMemory('midlife', Buffer.from('written before the fault'), 'CACHE') // the database is open and in use
  if (scenario === 'garbage') fs.writeFileSync(dbPath, Buffer.alloc(fs.statSync(dbPath).size, 'garbage!'))
  else if (scenario === 'truncate') fs.truncateSync(dbPath, 1000)
  else if (scenario === 'folder') {
    fs.renameSync(path.dirname(dbPath), path.dirname(dbPath) + '.moved')
    fs.writeFileSync(path.dirname(dbPath), 'a file where the memory folder was')
  } else if (scenario === 'wal' || scenario === 'shm') fs.rmSync(`${dbPath}-${scenario}`)
  else if (scenario === 'restore') require('node:child_process').execFileSync('cp', [backup, dbPath])
  else throw new Error(`unknown scenario ${scenario}`)
  process.stdout.write(JSON.stringify(calls(true)) + '\n')
}
