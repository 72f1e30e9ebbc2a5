'use strict'
// The `cli` section of the benchmark: `rotifer agent memory list` and `rotifer agent memory log`
// on an agent of 50,000 entries (2,000 with --quick) whose audit log holds one line per entry,
// each a whole CLI process as a user runs it, with stdout a pipe. Two times per run: until the
// first screen (the first 50 lines) has arrived, and until the process has exited. Targets: the
// first screen within 0.3 s, the whole within 1 s. Compared, in the same rounds, with the library
// call that reads the same (listAgentMemory, readAgentAuditLog, in this process: no process
// start) and with the sqlite3 command-line tool printing the same rows from the database (when
// it is installed; without it the rows say so).

const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const memory = require('../index.js')
const { median } = require('./measure')
const R = require('./rows')

const REPO = path.join(__dirname, '..')
const BIN = path.join(REPO, 'bin', 'rotifer.js')
/** Lines of a first screen. */
const SCREEN = 50
const FIRST_LIMIT_S = 0.3
const WHOLE_LIMIT_S = 1
const CATEGORIES = ['CACHE', 'CONTEXT', 'PATTERN', 'PREFERENCE']

function cli(root, ...args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: root, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`rotifer ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  return r.stdout
}

/** A project with gene "probe" and agent "big" of `n` entries, each written through the API (one audit line each). */
function project(root, n) {
  fs.mkdirSync(path.join(root, 'genes', 'probe'), { recursive: true })
  fs.writeFileSync(path.join(root, 'rotifer.json'), '{}\n')
  fs.writeFileSync(path.join(root, 'genes', 'probe', 'phenotype.json'), JSON.stringify({
    name: 'probe', domain: 'bench', version: '1.0.0', inputSchema: { type: 'object' }, outputSchema: { type: 'object' },
  }))
  fs.writeFileSync(path.join(root, 'genes', 'probe', 'index.js'), 'exports.express = (input) => input\n')
  const created = cli(root, 'agent', 'create', 'big', '--genes', 'probe', '--memory-quota', '1GB')
  const agentId = /id\s+([0-9a-f-]{36})/.exec(created)[1]
  const geneId = cli(root, 'gene', 'id', 'probe').trim()
  const m = new memory.GeneMemoryAccess({ agentId, root, geneId, domain: 'bench' })
  const value = Buffer.alloc(100, 0x61)
  for (let i = 0; i < n; i++) m.writeMemory(R.KEYS.group(i), value, CATEGORIES[i % 4])
  return { agentId, db: path.join(root, '.rotifer', 'memory', `${agentId}.db`) }
}

/** Runs `command args` with stdout a pipe: seconds until `screen` lines came, and until exit. */
function timed(command, args, cwd, screen) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint()
    const seconds = () => Number(process.hrtime.bigint() - start) / 1e9
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let lines = 0
    let first = null
    let err = ''
    child.stdout.on('data', (d) => {
      for (let i = d.indexOf(10); i !== -1; i = d.indexOf(10, i + 1)) lines++
      if (first === null && lines >= screen) first = seconds()
    })
    child.stderr.on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('close', (code) => {
      const whole = seconds()
      if (code !== 0) reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${err}`))
      else resolve({ first: first ?? whole, whole, lines })
    })
  })
}

function libraryTime(call) {
  const start = process.hrtime.bigint()
  const n = call()
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, n }
}

function haveSqlite3() {
  const p = spawnSync('sqlite3', ['-version'], { encoding: 'utf8' })
  return p.status === 0 ? p.stdout.trim().split(' ')[0] : null
}

async function cliSection(cfg, tmp, out, progress) {
  const n = cfg.mode === 'quick' ? 2_000 : 50_000
  const rounds = cfg.mode === 'quick' ? 2 : 7
  const fmt = n.toLocaleString('en-US')
  progress(`cli: rotifer agent memory list and log on an agent of ${fmt} entries (${fmt} audit lines), ${rounds} rounds`)
  const root = path.join(tmp, 'cli')
  const { agentId, db } = project(root, n)
  const sqlite = haveSqlite3()
  const sql = 'SELECT key, category, size, created_by, updated_at FROM entries ORDER BY key'
  const runs = { list: [], log: [], libList: [], libLog: [], sqlite: [] }
  const check = (what, got, want) => {
    if (got !== want) throw new Error(`cli ${what}: ${got} lines, expected ${want}`)
  }
  for (let r = -1; r < rounds; r++) {
    // The order changes every round, so that none always runs on a warmer machine.
    const steps = [
      async () => {
        const t = await timed(process.execPath, [BIN, 'agent', 'memory', 'list', 'big'], root, SCREEN)
        check('list', t.lines, n + 4)
        if (r >= 0) runs.list.push(t)
      },
      async () => {
        const t = await timed(process.execPath, [BIN, 'agent', 'memory', 'log', 'big'], root, SCREEN)
        check('log', t.lines, n + 1)
        if (r >= 0) runs.log.push(t)
      },
      async () => {
        const l = libraryTime(() => memory.listAgentMemory({ agentId, root }).length)
        const g = libraryTime(() => memory.readAgentAuditLog({ agentId, root }).lines.length)
        check('listAgentMemory', l.n, n)
        check('readAgentAuditLog', g.n, n)
        if (r >= 0) {
          runs.libList.push(l.seconds)
          runs.libLog.push(g.seconds)
        }
      },
      async () => {
        if (!sqlite) return
        const t = await timed('sqlite3', ['-readonly', db, sql], root, SCREEN)
        check('sqlite3', t.lines, n)
        if (r >= 0) runs.sqlite.push(t)
      },
    ]
    const order = r % 2 === 0 ? steps : [...steps].reverse()
    for (const step of order) await step()
  }
  const copyIs = sqlite
    ? `the sqlite3 command-line tool (${sqlite}) printing the same ${fmt} rows (key, category, size, creator, update time) from the agent's database, a process of its own`
    : 'nothing: the sqlite3 command-line tool is not installed, so that comparison is left out'
  const paired = (mine, theirs) => median(mine.map((m, i) => m / theirs[i]))
  for (const [id, command, key, lib, libName, target, limit] of [
    ['cli-list-first', 'list', 'first', runs.libList, 'listAgentMemory', 'first screen', FIRST_LIMIT_S],
    ['cli-list-whole', 'list', 'whole', runs.libList, 'listAgentMemory', 'whole', WHOLE_LIMIT_S],
    ['cli-log-first', 'log', 'first', runs.libLog, 'readAgentAuditLog', 'first screen', FIRST_LIMIT_S],
    ['cli-log-whole', 'log', 'whole', runs.libLog, 'readAgentAuditLog', 'whole', WHOLE_LIMIT_S],
  ]) {
    const mine = runs[command].map((t) => t[key])
    const ours = median(mine)
    const sq = sqlite ? runs.sqlite.map((t) => t.whole) : null
    out.rows.push({
      id,
      label: `rotifer agent memory ${command}, ${fmt} entries: ${target === 'first screen' ? `first screen (${SCREEN} lines)` : 'whole output'}`,
      kind: 'time',
      ours: ours * 1e6,
      baseline: median(lib) * 1e6,
      ratio: paired(mine, lib),
      otherClock: null,
      copy: sq ? median(sq) * 1e6 : null,
      copyRatio: sq ? paired(mine, sq) : null,
      limit,
      limitIn: 'seconds',
      target: `≤ ${limit} s`,
      verdict: ours <= limit ? 'met' : 'MISSED',
      baselineIs: `the library call ${libName} in this process (the whole answer, no process start)`,
      copyIs,
      noteGroup: `rotifer agent memory ${command} rows`,
    })
  }
  out.details.cli = {
    entries: n,
    rounds,
    screenLines: SCREEN,
    sqlite3: sqlite,
    seconds: {
      list: runs.list,
      log: runs.log,
      listAgentMemory: runs.libList,
      readAgentAuditLog: runs.libLog,
      sqlite3: runs.sqlite,
    },
  }
}

module.exports = { cliSection }
