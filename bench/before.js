'use strict'
// The "before" section of bench/run.js (`--before <dir>`): this build against an earlier build of
// the package in the same process, in alternating rounds, for what every call pays. It measures
// what a change to the store costs the calls it does not change: the lineage stamp and the
// audit lines' transactions (R-HOST-1b, R-AUD-6) cost per read, per write and per open. Every
// ratio is this build's time over the earlier build's; the target is no regression beyond 5%.
//
// <dir> is a checkout of the earlier version, built (`npm install && npm run build`), e.g.:
//   git worktree add /tmp/rotifer-before 098276f && (cd /tmp/rotifer-before && npm install && npm run build)

const fs = require('node:fs')
const path = require('node:path')
const now = require('../index.js')
const { startTimer, alternate, picks, settle } = require('./measure')
const S = require('./stores')

const GENE_ID = 'v2:' + 'b'.repeat(64)
const VALUE = Buffer.alloc(100, 0x61)
const TARGET = 1.05

/** The earlier build's memory API, loaded from `dir`. */
function loadBefore(dir) {
  const index = path.resolve(dir, 'index.js')
  if (!fs.existsSync(index)) throw new Error(`--before ${dir}: no index.js there; give a built checkout of the earlier version`)
  const api = require(index)
  if (!api.nativeBindingLoaded) throw new Error(`--before ${dir}: its native binding is not built (run npm run build there)`)
  return api
}

/** An agent of `n` entries made through `api` under `root`. */
function agent(api, root, n) {
  fs.mkdirSync(root, { recursive: true })
  api.createAgentMemory({ agentId: 'bench-before', root, quota: 1024 * 1024 * 1024 })
  const open = () => new api.GeneMemoryAccess({ agentId: 'bench-before', geneId: GENE_ID, domain: 'bench', root })
  const m = open()
  for (let i = 0; i < n; i++) m.writeMemory(`k/${i}`, VALUE, 'CONTEXT')
  return { m, open, db: path.join(root, '.rotifer', 'memory', 'bench-before.db') }
}

function batch(items, call) {
  const stop = startTimer()
  for (const it of items) if (!call(it)) throw new Error('an unexpected result')
  return { ...stop(), calls: items.length }
}

async function beforeSection(cfg, tmp, out, dir, progress, timeRow) {
  const before = loadBefore(dir)
  const n = cfg.entries
  progress(`before: this build against ${dir}, ${n} entries each`)
  const sides = { ours: agent(now, path.join(tmp, 'before', 'now'), n), baseline: agent(before, path.join(tmp, 'before', 'then'), n) }
  const common = { rounds: cfg.rounds, warmup: cfg.warmup }
  const hit = (r) => picks(7000 + r, cfg.batch.hit, n).map((i) => `k/${i}`)
  const miss = (r) => picks(7100 + r, cfg.batch.miss, n).map((i) => `none/${i}`)
  const upd = (r) => picks(7200 + r, cfg.batch.update, n).map((i) => `k/${i}`)
  const ops = [
    ['before-read-hit', 'readMemory hit, this build ÷ the earlier one', hit, (m, k) => m.readMemory(k) !== null],
    ['before-read-miss', 'readMemory miss, this build ÷ the earlier one', miss, (m, k) => m.readMemory(k) === null],
    ['before-write-update', 'writeMemory update (100 bytes), this build ÷ the earlier one', upd, (m, k) => m.writeMemory(k, VALUE, 'CONTEXT') !== null],
    ['before-write-create', 'writeMemory create (100 bytes), this build ÷ the earlier one', (r) => Array.from({ length: cfg.batch.create }, (_, i) => `new/${r}/${i}`),
      (m, k) => m.writeMemory(k, VALUE, 'CONTEXT') !== null],
  ]
  for (const [id, label, items, call] of ops) {
    progress(`  ${label}`)
    const m = await alternate({
      ...common,
      ours: async (r) => batch(items(r), (k) => call(sides.ours.m, k)),
      baseline: async (r) => batch(items(r), (k) => call(sides.baseline.m, k)),
    })
    out.rows.push(timeRow(id, label, m, TARGET))
    out.details[id] = m
  }
  // Open + first read: each side's handle dropped and its store collected between opens.
  progress('  open GeneMemoryAccess + first read, this build ÷ the earlier one')
  for (const s of Object.values(sides)) s.m = null
  const opens = (side) => async (r) => {
    const sum = { wall: 0, cpu: 0, calls: cfg.open.perRound }
    for (const i of picks(7300 + r, cfg.open.perRound, n)) {
      const stop = startTimer()
      let h = side.open()
      const e = h.readMemory(`k/${i}`)
      const t = stop()
      if (e === null) throw new Error('open: the first read missed')
      sum.wall += t.wall
      sum.cpu += t.cpu
      h = null
      for (let tries = 0; tries < 50 && S.openDescriptors(side.db) > 0; tries++) await settle()
    }
    return sum
  }
  const m = await alternate({ rounds: cfg.open.rounds, warmup: 1, ours: opens(sides.ours), baseline: opens(sides.baseline) })
  out.rows.push(timeRow('before-open', 'open GeneMemoryAccess + first read, this build ÷ the earlier one', m, TARGET))
  out.details['before-open'] = m
}

module.exports = { beforeSection }
