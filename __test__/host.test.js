'use strict'
// The host and deployer surface (R-HOST), files and modes (R-AUD-5), write-ahead audit
// (R-AUD-2), storage errors (R-ERR).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { memory, enc, dec, geneId, tempRoot, clock, open, auditLines, throwsCode, snapshot } = require('./helpers')

const INDEX = path.join(__dirname, '..', 'index.js')

test('R-HOST-2 listAgentMemory shows every entry whatever its policy, never values', (t) => {
  const root = tempRoot(t)
  const c = clock(Date.parse('2026-11-30T01:00:00.000Z'))
  const a = open(root, 'agent', 'a', 'text', { now: c.now })
  const b = open(root, 'agent', 'b', 'image', { now: c.now })
  a.writeMemory('secret', enc('value-1'), 'PREFERENCE', { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' })
  c.t += 1
  b.writeMemory('cache/x', enc('value-2'), 'CACHE')
  const list = memory.listAgentMemory({ agentId: 'agent', root })
  assert.deepEqual(list, [
    { key: 'cache/x', category: 'CACHE', size: 14, createdBy: geneId('b'), updatedAt: '2026-11-30T01:00:00.001Z' },
    { key: 'secret', category: 'PREFERENCE', size: 13, createdBy: geneId('a'), updatedAt: '2026-11-30T01:00:00.000Z' },
  ])
  assert.deepEqual(memory.listAgentMemory({ agentId: 'agent', root, category: 'CACHE' }).map((l) => l.key), ['cache/x'])
  assert.ok(!JSON.stringify(list).includes('value-'))
  // An agent whose memory was never created lists nothing, and nothing is created.
  assert.deepEqual(memory.listAgentMemory({ agentId: 'nobody', root }), [])
  assert.ok(!fs.existsSync(path.join(root, '.rotifer', 'memory', 'nobody.db')))
  throwsCode(assert, () => memory.listAgentMemory({ agentId: 'agent', root, category: 'cache' }), 'MEMORY_INVALID_INPUT')
})

test('R-HOST-2 deleteAgentMemory: exactly one of key/category, ignores policies, audits actor "deployer"', (t) => {
  const root = tempRoot(t)
  const a = open(root, 'agent', 'a', 'text')
  const locked = { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' }
  a.writeMemory('p', enc('1'), 'PREFERENCE', locked)
  a.writeMemory('c1', enc('1'), 'CACHE', locked)
  a.writeMemory('c2', enc('1'), 'CACHE')
  for (const bad of [{}, { key: 'p', category: 'CACHE' }]) {
    throwsCode(assert, () => memory.deleteAgentMemory({ agentId: 'agent', root, ...bad }), 'MEMORY_INVALID_INPUT', /exactly one/)
  }
  throwsCode(assert, () => memory.deleteAgentMemory({ agentId: 'agent', root, key: 'missing' }), 'MEMORY_NOT_FOUND', /missing/)
  throwsCode(assert, () => memory.deleteAgentMemory({ agentId: 'agent', root, category: 'Cache' }), 'MEMORY_INVALID_INPUT')
  throwsCode(assert, () => memory.deleteAgentMemory({ agentId: 'agent', root, key: '' }), 'MEMORY_INVALID_INPUT')
  assert.equal(memory.deleteAgentMemory({ agentId: 'agent', root, category: 'CACHE' }), 2)
  assert.equal(memory.deleteAgentMemory({ agentId: 'agent', root, category: 'PATTERN' }), 0)
  assert.equal(memory.deleteAgentMemory({ agentId: 'agent', root, key: 'p' }), 1)
  assert.deepEqual(memory.listAgentMemory({ agentId: 'agent', root }), [])
  const deletes = auditLines(root).filter((l) => l.action === 'memory.delete')
  assert.deepEqual(deletes.map((l) => [l.key, l.actor]), [['c1', 'deployer'], ['c2', 'deployer'], ['p', 'deployer']])
  // Deleting in a never-created agent: not found / zero, and nothing created.
  throwsCode(assert, () => memory.deleteAgentMemory({ agentId: 'ghost', root, key: 'k' }), 'MEMORY_NOT_FOUND')
  assert.equal(memory.deleteAgentMemory({ agentId: 'ghost', root, category: 'CACHE' }), 0)
  assert.ok(!fs.existsSync(path.join(root, '.rotifer', 'memory', 'ghost.db')))
})

test('R-HOST-1 one database per agent; agents are isolated', (t) => {
  const root = tempRoot(t)
  const a = open(root, 'agent-a', 'g', 'text')
  const b = open(root, 'agent-b', 'g', 'text')
  a.writeMemory('k', enc('a'), 'CACHE')
  assert.equal(b.readMemory('k'), null)
  b.writeMemory('k', enc('b'), 'CACHE')
  assert.equal(dec(a.readMemory('k').value), 'a')
  assert.deepEqual(fs.readdirSync(path.join(root, '.rotifer', 'memory')).filter((f) => f.endsWith('.db')).sort(), ['agent-a.db', 'agent-b.db'])
  assert.notEqual(a.readMemory('k').entryId, b.readMemory('k').entryId)
})

test('R-HOST root defaults to the nearest ancestor with rotifer.json, else the working directory', (t) => {
  const root = tempRoot(t)
  fs.writeFileSync(path.join(root, 'rotifer.json'), '{}')
  const deep = path.join(root, 'genes', 'x')
  fs.mkdirSync(deep, { recursive: true })
  const script = `
    const m = require(${JSON.stringify(INDEX)});
    const g = new m.GeneMemoryAccess({ agentId: 'a', geneId: 'v2:' + 'a'.repeat(64), domain: 'text' });
    g.writeMemory('k', new Uint8Array(1), 'CACHE');`
  const r = spawnSync(process.execPath, ['-e', script], { cwd: deep, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.ok(fs.existsSync(path.join(root, '.rotifer', 'memory', 'a.db')))
  const plain = tempRoot(t)
  const r2 = spawnSync(process.execPath, ['-e', script], { cwd: plain, encoding: 'utf8' })
  assert.equal(r2.status, 0, r2.stderr)
  assert.ok(fs.existsSync(path.join(plain, '.rotifer', 'memory', 'a.db')))
})

test('R-AUD-5 folders are 0700 and files 0600', (t) => {
  const root = tempRoot(t)
  const old = process.umask(0)
  t.after(() => process.umask(old))
  open(root, 'a', 'g', 'text').writeMemory('k', enc('v'), 'CACHE')
  assert.throws(() => open(root, 'a', 'intruder', 'x').readMemory('k'))
  const mode = (p) => fs.statSync(path.join(root, '.rotifer', p)).mode & 0o777
  assert.equal(mode(''), 0o700)
  assert.equal(mode('memory'), 0o700)
  for (const f of ['audit.jsonl', 'telemetry.jsonl', 'memory/a.db']) assert.equal(mode(f), 0o600, f)
  for (const f of fs.readdirSync(path.join(root, '.rotifer', 'memory'))) assert.equal(mode('memory/' + f), 0o600, f)
})

test('R-HOST-4 test memory: empty, shared by handles, isolated, deleted on dispose', (t) => {
  const cwdRoot = tempRoot(t)
  const cwd = process.cwd()
  process.chdir(cwdRoot)
  t.after(() => process.chdir(cwd))
  const tm = memory.createTestMemory({ domain: 'text' })
  assert.deepEqual(tm.memory.queryMemory(), [])
  tm.memory.writeMemory('k', enc('v'), 'CACHE')
  assert.equal(tm.memory.readMemory('k').createdBy, memory.TEST_GENE_ID)
  const sibling = tm.forGene(geneId('sibling'), 'text')
  assert.equal(dec(sibling.readMemory('k').value), 'v')
  throwsCode(assert, () => tm.forGene(geneId('other'), 'image').readMemory('k'), 'MEMORY_ACCESS_DENIED')
  const tm2 = memory.createTestMemory()
  assert.deepEqual(tm2.memory.queryMemory(), [], 'each test memory is its own')
  tm2.dispose()
  tm.dispose()
  throwsCode(assert, () => tm.memory.readMemory('k'), 'MEMORY_STORAGE_ERROR')
  assert.deepEqual(snapshot(cwdRoot), {}, 'nothing written in the project')
  const tm3 = memory.createTestMemory({ quota: '1KB', geneId: geneId('custom'), dataPolicy: { anonymizationSupported: true } })
  assert.equal(tm3.memory.writeMemory('k', enc(''), 'CACHE', { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'KNOWLEDGE_GENE' }).createdBy, geneId('custom'))
  throwsCode(assert, () => tm3.memory.writeMemory('big', new Uint8Array(2000), 'CACHE'), 'MEMORY_QUOTA_EXCEEDED')
  tm3.dispose()
})

test('R-HOST-4 test memory is deleted at process exit', (t) => {
  const script = `
    const m = require(${JSON.stringify(INDEX)});
    const tm = m.createTestMemory();
    tm.memory.writeMemory('k', new Uint8Array(1), 'CACHE');
    const fs = require('fs'); const path = require('path');
    const folder = path.dirname(tm.root);
    const mine = fs.readdirSync(folder).filter((n) => n.startsWith('rotifer-test-memory-' + process.pid + '-'));
    console.log(JSON.stringify({ folder, mine }));`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const { folder, mine: dirs } = JSON.parse(r.stdout)
  assert.equal(dirs.length, 1)
  assert.ok(!fs.existsSync(path.join(folder, dirs[0])), 'removed at exit')
})

test('R-AUD-2 write-ahead: an unwritable audit log fails changes with MEMORY_STORAGE_ERROR and nothing changes', (t) => {
  const root = tempRoot(t)
  const c = clock()
  const m = open(root, 'a', 'g', 'text', { now: c.now })
  m.writeMemory('k', enc('original'), 'CACHE')
  m.writeMemory('doomed', enc('x'), 'CACHE', undefined, { maxRetentionDays: 1, autoDeleteOnTermination: false, anonymizationSupported: false })
  const audit = path.join(root, '.rotifer', 'audit.jsonl')
  fs.renameSync(audit, audit + '.bak')
  fs.mkdirSync(audit) // a folder in its place
  throwsCode(assert, () => m.writeMemory('k', enc('changed'), 'CACHE'), 'MEMORY_STORAGE_ERROR', /audit log.*nothing was changed/)
  throwsCode(assert, () => m.writeMemory('new', enc('x'), 'CACHE'), 'MEMORY_STORAGE_ERROR')
  throwsCode(assert, () => m.deleteMemory('k'), 'MEMORY_STORAGE_ERROR')
  throwsCode(assert, () => memory.deleteAgentMemory({ agentId: 'a', root, key: 'k' }), 'MEMORY_STORAGE_ERROR')
  c.t += 86400000 // "doomed" expires, but its purge cannot be audited: it stays
  throwsCode(assert, () => m.readMemory('k'), 'MEMORY_STORAGE_ERROR')
  fs.rmdirSync(audit)
  fs.renameSync(audit + '.bak', audit)
  c.t -= 86400000
  assert.equal(dec(m.readMemory('k').value), 'original')
  assert.equal(m.readMemory('new'), null)
  assert.ok(m.readMemory('doomed'))
  assert.deepEqual(auditLines(root).map((l) => l.action), ['memory.create', 'memory.create'])
})

test('a symlink at audit.jsonl or at a database path is never followed', (t) => {
  const root = tempRoot(t)
  const outside = tempRoot(t)
  open(root, 'a', 'g', 'text').writeMemory('k', enc('v'), 'CACHE')
  const audit = path.join(root, '.rotifer', 'audit.jsonl')
  fs.rmSync(audit)
  fs.symlinkSync(path.join(outside, 'stolen.jsonl'), audit)
  throwsCode(assert, () => open(root, 'a', 'g', 'text').writeMemory('k2', enc('v'), 'CACHE'), 'MEMORY_STORAGE_ERROR')
  assert.ok(!fs.existsSync(path.join(outside, 'stolen.jsonl')))
  fs.writeFileSync(path.join(outside, 'victim.db'), 'precious')
  fs.symlinkSync(path.join(outside, 'victim.db'), path.join(root, '.rotifer', 'memory', 'b.db'))
  throwsCode(assert, () => open(root, 'b', 'g', 'text').readMemory('k'), 'MEMORY_STORAGE_ERROR', /symlink/)
  assert.equal(fs.readFileSync(path.join(outside, 'victim.db'), 'utf8'), 'precious')
})

test('R-ERR a corrupt or truncated database gives MEMORY_STORAGE_ERROR and is never deleted or replaced', (t) => {
  const root = tempRoot(t)
  fs.mkdirSync(path.join(root, '.rotifer', 'memory'), { recursive: true, mode: 0o700 })
  const garbage = Buffer.from('this is not a database'.repeat(300))
  const db = path.join(root, '.rotifer', 'memory', 'bad.db')
  fs.writeFileSync(db, garbage)
  const m = open(root, 'bad', 'g', 'text')
  throwsCode(assert, () => m.readMemory('k'), 'MEMORY_STORAGE_ERROR', /bad\.db/)
  throwsCode(assert, () => m.writeMemory('k', enc('v'), 'CACHE'), 'MEMORY_STORAGE_ERROR')
  throwsCode(assert, () => memory.listAgentMemory({ agentId: 'bad', root }), 'MEMORY_STORAGE_ERROR')
  assert.deepEqual(fs.readFileSync(db), garbage)
  const empty = path.join(root, '.rotifer', 'memory', 'empty.db')
  fs.writeFileSync(empty, '')
  throwsCode(assert, () => open(root, 'empty', 'g', 'text').writeMemory('k', enc('v'), 'CACHE'), 'MEMORY_STORAGE_ERROR', /empty/)
  assert.equal(fs.statSync(empty).size, 0)
  // A truncated real database.
  open(root, 'cut', 'g', 'text').writeMemory('k', new Uint8Array(100000), 'CACHE')
  const cut = path.join(root, '.rotifer', 'memory', 'cut.db')
  const script = `
    const m = require(${JSON.stringify(INDEX)});
    const fs = require('fs');
    fs.truncateSync(${JSON.stringify(cut)}, 1000);
    for (const s of ['-wal', '-shm']) fs.rmSync(${JSON.stringify(cut)} + s, { force: true });
    const g = new m.GeneMemoryAccess({ agentId: 'cut', geneId: 'v2:' + 'a'.repeat(64), root: ${JSON.stringify(root)} });
    try { g.readMemory('k'); console.log('no error') } catch (e) { console.log(e.code) }`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(r.stdout.trim(), 'MEMORY_STORAGE_ERROR', r.stderr)
  assert.equal(fs.statSync(cut).size, 1000)
})

test('R-ERR-2 without the native binding, import works and every call throws "native binding unavailable"', () => {
  const script = `
    const m = require(${JSON.stringify(INDEX)});
    const out = [m.nativeBindingLoaded, m.MEMORY_ERROR_CODES];
    const g = new m.GeneMemoryAccess({ agentId: 'a', geneId: null });
    const calls = [() => g.readMemory('k'), () => g.writeMemory('k', new Uint8Array(), 'CACHE'), () => g.queryMemory(), () => g.deleteMemory('k'),
      () => m.createAgentMemory({ agentId: 'a' }), () => m.parseMemoryQuota('1MB'), () => m.listAgentMemory({ agentId: 'a' }),
      () => m.deleteAgentMemory({ agentId: 'a', key: 'k' }), () => m.createTestMemory()];
    for (const c of calls) { try { c(); out.push('no error') } catch (e) { out.push([e instanceof m.MemoryError, e.name, e.code, e.message]) } }
    console.log(JSON.stringify(out));`
  const r = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: path.join(os.tmpdir(), 'no-such-binding.node') },
  })
  assert.equal(r.status, 0, r.stderr)
  const [loaded, codes, ...results] = JSON.parse(r.stdout)
  assert.equal(loaded, false)
  assert.deepEqual(codes, ['MEMORY_STORAGE_ERROR'], 'the only code a call can fail with then')
  assert.equal(results.length, 9)
  for (const res of results) assert.deepEqual(res, [true, 'MemoryError', 'MEMORY_STORAGE_ERROR', 'native binding unavailable'])
})

test('R-ERR-3 a Rust panic becomes MEMORY_STORAGE_ERROR, and the process goes on', () => {
  const binding = require('../binding.js')
  let err
  try {
    binding.__panicForTest()
  } catch (e) {
    err = e
  }
  assert.equal(err.code, 'MEMORY_STORAGE_ERROR')
  assert.match(err.message, /internal error/)
})

test('R-HOST-5 many handles share one agent; two processes writing at once never see SQLITE_BUSY and the quota holds', (t) => {
  const root = tempRoot(t)
  memory.createAgentMemory({ agentId: 'a', root, quota: '64KB' })
  const worker = `
    const m = require(${JSON.stringify(INDEX)});
    const id = process.argv[1];
    const g = new m.GeneMemoryAccess({ agentId: 'a', geneId: 'v2:' + id.repeat(64), domain: 'text', root: ${JSON.stringify(root)} });
    const codes = {};
    for (let i = 0; i < 400; i++) {
      try {
        g.writeMemory(id + (i % 50), new Uint8Array(1000), i % 3 ? 'CACHE' : 'CONTEXT');
        if (i % 5 === 0) g.queryMemory({ limit: 10 });
        if (i % 7 === 0) g.readMemory(id + ((i + 1) % 50));
      } catch (e) { codes[e.code + ': ' + e.message] = (codes[e.code + ': ' + e.message] || 0) + 1 }
    }
    console.log(JSON.stringify(codes));`
  const { spawn } = require('node:child_process')
  const run = (id) =>
    new Promise((resolve) => {
      const p = spawn(process.execPath, ['-e', worker, id], { stdio: ['ignore', 'pipe', 'pipe'] })
      let out = ''
      let errOut = ''
      p.stdout.on('data', (d) => (out += d))
      p.stderr.on('data', (d) => (errOut += d))
      p.on('close', (code) => resolve({ code, out, errOut }))
    })
  return Promise.all(['a', 'b', 'c']).then(() => Promise.all([run('a'), run('b'), run('c')])).then((results) => {
    for (const r of results) {
      assert.equal(r.code, 0, r.errOut)
      assert.deepEqual(JSON.parse(r.out), {}, 'no call failed')
    }
    const list = memory.listAgentMemory({ agentId: 'a', root })
    const total = list.reduce((s, l) => s + l.size, 0)
    assert.ok(total <= 64 * 1024, `quota held: ${total}`)
    assert.ok(list.length > 0)
    // The audit adds up: creates − evicts − deletes − expires = live entries.
    const lines = auditLines(root)
    const count = (a) => lines.filter((l) => l.action === a).length
    assert.equal(count('memory.create') - count('memory.evict') - count('memory.delete') - count('memory.expire'), list.length)
  })
})

test('R-HOST-4 test memories of killed processes are swept by the next createTestMemory', (t) => {
  // A temporary folder of its own: no test file running in parallel sweeps it first.
  const tmp = tempRoot(t)
  const env = { ...process.env, TMPDIR: tmp }
  const script = `
    const m = require(${JSON.stringify(INDEX)});
    m.createTestMemory().memory.writeMemory('k', new Uint8Array(1), 'CACHE');
    const fs = require('fs'); const os = require('os');
    console.log(JSON.stringify(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('rotifer-test-memory-' + process.pid + '-'))));
    process.kill(process.pid, 'SIGKILL');`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env })
  assert.equal(r.signal, 'SIGKILL')
  const [dir] = JSON.parse(r.stdout)
  assert.ok(fs.existsSync(path.join(tmp, dir)), 'a killed process leaves its test memory behind')
  const next = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(INDEX)}).createTestMemory().dispose()`], { encoding: 'utf8', env })
  assert.equal(next.status, 0, next.stderr)
  assert.deepEqual(fs.readdirSync(tmp), [], 'the next test memory removes it')
})

test('R-HOST-4 a folder still being set up is never swept; one abandoned an hour ago is', (t) => {
  const tmp = tempRoot(t)
  const env = { ...process.env, TMPDIR: tmp }
  const staging = (name, hoursOld, lockFile) => {
    const dir = path.join(tmp, name)
    fs.mkdirSync(dir, { mode: 0o700 })
    if (lockFile) fs.writeFileSync(path.join(dir, '.lock'), '')
    const when = new Date(Date.now() - hoursOld * 3600e3)
    fs.utimesSync(dir, when, when)
    return name
  }
  // Folders under the staging name get their lock before their final name (a creator killed
  // in between leaves one): a fresh one may be another process's, mid-setup.
  const fresh = staging('rotifer-test-staging-1-fresh', 0, true)
  const freshNoLock = staging('rotifer-test-staging-1-fresh-nolock', 0, false)
  staging('rotifer-test-staging-1-old', 2, true)
  staging('rotifer-test-staging-1-old-nolock', 2, false)
  const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(INDEX)}).createTestMemory().dispose()`], { encoding: 'utf8', env })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(fs.readdirSync(tmp).sort(), [fresh, freshNoLock].sort())
})

test('R-HOST-1 a root reached through a symlink, or a temporary folder behind one, works', (t) => {
  const real = tempRoot(t)
  const links = tempRoot(t)
  const linked = path.join(links, 'project')
  fs.symlinkSync(real, linked)
  const m = open(linked, 'a', 'g', 'text')
  m.writeMemory('k', enc('v'), 'CACHE')
  assert.equal(dec(open(real, 'a', 'g', 'text').readMemory('k').value), 'v', 'the same database by either path')
  assert.deepEqual(memory.listAgentMemory({ agentId: 'a', root: linked }).map((l) => l.key), ['k'])
  const tmpLink = path.join(links, 'tmp')
  fs.symlinkSync(os.tmpdir(), tmpLink)
  const script = `
    const m = require(${JSON.stringify(INDEX)});
    const tm = m.createTestMemory();
    tm.memory.writeMemory('k', new Uint8Array(1), 'CACHE');
    console.log(tm.memory.readMemory('k').key);
    tm.dispose();`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, TMPDIR: tmpLink } })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), 'k')
})

test('a project root moved away while in use fails every later call; the copy left in its place is not touched', (t) => {
  const parent = tempRoot(t)
  const root = path.join(parent, 'project')
  fs.mkdirSync(root)
  const m = open(root, 'a', 'g', 'text')
  m.writeMemory('k', enc('v1'), 'CACHE')
  fs.renameSync(root, root + '.bak')
  fs.cpSync(root + '.bak', root, { recursive: true })
  const auditBefore = fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl'))
  throwsCode(assert, () => m.readMemory('k'), 'MEMORY_STORAGE_ERROR', /moved, replaced or deleted/)
  throwsCode(assert, () => m.writeMemory('k', enc('v3'), 'CACHE'), 'MEMORY_STORAGE_ERROR')
  assert.ok(fs.readFileSync(path.join(root, '.rotifer', 'audit.jsonl')).equals(auditBefore), 'no audit line for a change made elsewhere')
})

test('R-HOST-4 a live test memory of another process is never swept', (t) => {
  const { spawn } = require('node:child_process')
  const script = `
    const m = require(${JSON.stringify(INDEX)});
    const tm = m.createTestMemory();
    const fs = require('fs'); const path = require('path');
    console.log(JSON.stringify(fs.readdirSync(path.dirname(tm.root)).filter((n) => n.startsWith('rotifer-test-memory-' + process.pid + '-')).map((n) => path.join(path.dirname(tm.root), n))));
    process.stdin.on('data', () => { tm.memory.writeMemory('k', new Uint8Array(1), 'CACHE'); console.log('still usable'); process.exit(0) });`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'pipe'] })
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d
      const lines = out.split('\n').filter(Boolean)
      if (lines.length === 1 && !child.swept) {
        child.swept = true
        const [dir] = JSON.parse(lines[0])
        const tm = memory.createTestMemory() // sweeps: the child's memory is alive and locked
        tm.dispose()
        assert.ok(fs.existsSync(dir), 'the live memory stays')
        child.stdin.write('go\n')
      } else if (lines.length === 2) {
        try {
          assert.equal(lines[1], 'still usable')
          resolve()
        } catch (e) {
          reject(e)
        }
      }
    })
    child.on('error', reject)
  })
})

test('R-HOST-4 test memories live on a tmpfs when TMPDIR is not set, and under TMPDIR when it is', (t) => {
  const where = (env) => {
    const script = `const m = require(${JSON.stringify(INDEX)}); const tm = m.createTestMemory(); console.log(require('path').dirname(tm.root)); tm.dispose()`
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env })
    assert.equal(r.status, 0, r.stderr)
    return r.stdout.trim()
  }
  const { TMPDIR, XDG_RUNTIME_DIR, ...rest } = process.env
  const TMPFS = 0x01021994
  const shm = (() => {
    try {
      return fs.statfsSync('/dev/shm').type === TMPFS ? fs.realpathSync('/dev/shm') : null
    } catch {
      return null
    }
  })()
  assert.equal(where(rest), shm || fs.realpathSync(os.tmpdir()))
  const mine = tempRoot(t)
  assert.equal(where({ ...rest, TMPDIR: mine }), fs.realpathSync(mine))
})
