'use strict'
// A seeded generator of random call sequences: reads, writes with random (and invalid)
// policies, queries with random filters, deletes, the deployer's list and delete,
// reconfiguration with tight quotas, and clock jumps onto and across retention boundaries.

const { createHash } = require('node:crypto')
const { Model, DAY, CATEGORIES, SCOPES, SHARES, MAX_VALUE_BYTES, iso } = require('./reference')

/** mulberry32: a small, fast, seedable PRNG. */
function prng(seed) {
  let s = seed >>> 0
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const r = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
    /** Picks by weight from [[weight, value], …]. */
    weighted(table) {
      let x = next() * table.reduce((s, [w]) => s + w, 0)
      for (const [w, v] of table) {
        if ((x -= w) < 0) return v
      }
      return table[table.length - 1][1]
    },
    bytes(n) {
      const b = Buffer.alloc(n)
      for (let i = 0; i < n; i++) b[i] = (next() * 256) | 0
      return b
    },
  }
  return r
}

const geneId = (name) => 'v2:' + createHash('sha256').update(name).digest('hex')

/** The callers: genes of two domains, an upgraded gene, a gene with no domain, bad identities. */
const GENES = [
  { name: 'alpha', geneId: geneId('alpha'), domain: 'text' },
  { name: 'beta', geneId: geneId('beta'), domain: 'text' },
  { name: 'alpha@2', geneId: geneId('alpha@2'), domain: 'text' },
  { name: 'gamma', geneId: geneId('gamma'), domain: 'image' },
  { name: 'delta', geneId: geneId('delta'), domain: undefined },
]
const NO_V2_ID = { name: 'no-v2-id', geneId: 'v2:' + 'A'.repeat(64), domain: 'text' }
const NO_AGENT = { name: 'no-agent', geneId: geneId('alpha'), domain: 'text', noAgent: true }

const AGENTS = ['agent-1', 'agent-2']
const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'p/a', 'p/b', 'p/c', 'p%', 'p_', 'é', 'éa', 'a\\b', 'x"\n{}']
const BAD_KEYS = ['', 'a\0b', 'x\uD800', 'k'.repeat(1025), 42, undefined, null]
const PREFIXES = ['', 'k', 'p/', 'p', 'p%', 'p_', '%', '_', 'é', 'zz', 'k1']
const QUOTAS = [300, 512, 700, 1024, '1KB', '0.5KB', '2 kb', '1.5KB', 2048]
const BAD_QUOTAS = ['0KB', '100', '-1KB', '1e3KB', '2TB', 0, 1.5]
let OVERSIZE = null

function policyOf(r, model, agentId, key, which) {
  const e = model.agents.get(agentId)?.entries.get(key)
  if (!e) return undefined
  return which === 'access' ? { ...e.access } : e.retention && { ...e.retention }
}

function genAccess(r, model, agentId, key) {
  return r.weighted([
    [55, () => undefined],
    [15, () => policyOf(r, model, agentId, key, 'access')],
    [
      22,
      () => ({
        readScope: r.weighted([[10, 'CREATOR_GENE_ONLY'], [10, 'SAME_DOMAIN'], [10, 'ALL_GENES'], [1, 'DEPLOYER_CONFIGURED']]),
        writeScope: r.weighted([[10, 'CREATOR_GENE_ONLY'], [10, 'SAME_DOMAIN'], [10, 'ALL_GENES'], [1, 'DEPLOYER_CONFIGURED']]),
        sharePolicy: r.weighted([[8, 'PRIVATE'], [1, 'ANONYMIZED_SHARE'], [1, 'KNOWLEDGE_GENE']]),
      }),
    ],
    [
      4,
      () =>
        r.pick([
          null, 'SAME_DOMAIN', [], {},
          { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN' },
          { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE', extra: 1 },
          { readScope: 'same_domain', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' },
          { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'PUBLIC' },
        ]),
    ],
  ])()
}

function genRetention(r, model, agentId, key) {
  return r.weighted([
    [50, () => undefined],
    [10, () => null],
    [12, () => policyOf(r, model, agentId, key, 'retention')],
    [
      22,
      () => ({
        maxRetentionDays: r.pick([1, 1, 2, 3, 30, 31, null, 2147483647]),
        autoDeleteOnTermination: r.chance(0.5),
        anonymizationSupported: r.chance(0.5),
      }),
    ],
    [
      3,
      () =>
        r.pick([
          {}, 'forever', 7,
          { maxRetentionDays: 0, autoDeleteOnTermination: false, anonymizationSupported: false },
          { maxRetentionDays: 1.5, autoDeleteOnTermination: false, anonymizationSupported: false },
          { maxRetentionDays: 2147483648, autoDeleteOnTermination: false, anonymizationSupported: false },
          { maxRetentionDays: 1, autoDeleteOnTermination: 'no', anonymizationSupported: false },
          { maxRetentionDays: 1, autoDeleteOnTermination: false },
        ]),
    ],
  ])()
}

function genValue(r, quota) {
  return r.weighted([
    [5, () => Buffer.alloc(0)],
    [40, () => r.bytes(r.int(1, 16))],
    [38, () => r.bytes(r.int(17, 160))],
    [10, () => r.bytes(r.int(161, Math.max(161, Math.floor(quota / 2))))],
    [4, () => r.bytes(Math.min(quota + r.int(-20, 20), 20000))],
    [2, () => r.pick(['text', [1, 2], new Uint16Array(2), new ArrayBuffer(2), undefined])],
    [1, () => (OVERSIZE ??= new Uint8Array(MAX_VALUE_BYTES + 1))],
  ])()
}

/** An RFC 3339 time near `ms`: Z, an offset, a sub-millisecond fraction, or garbage. */
function genTime(r, ms) {
  return r.weighted([
    [6, () => iso(ms)],
    [
      2,
      () => {
        const offMin = r.pick([60, -90, 330, -600])
        const local = new Date(ms + offMin * 60000).toISOString().slice(0, -1)
        const sign = offMin < 0 ? '-' : '+'
        const a = Math.abs(offMin)
        return `${local}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`
      },
    ],
    [2, () => iso(ms).slice(0, -1) + r.pick(['0001', '5', '999999']) + 'Z'],
    [1, () => r.pick(['yesterday', '2026-11-30', iso(ms).slice(0, -1), 1700000000000, {}])],
  ])()
}

function genFilter(r, model, now) {
  if (r.chance(0.12)) return r.pick([undefined, null, {}])
  if (r.chance(0.03)) return r.pick(['all', 5, [], { prefix: 'k' }, { limit: 0 }, { limit: 1001 }, { limit: 2.5 }, { limit: '3' }, { keyPrefix: 5 }, { keyPrefix: 'a\uDFFF' }])
  const f = {}
  if (r.chance(0.3)) f.category = r.chance(0.95) ? r.pick(CATEGORIES) : r.pick(['cache', null])
  if (r.chance(0.35)) f.keyPrefix = r.chance(0.95) ? r.pick(PREFIXES) : null
  if (r.chance(0.25)) f.since = genTime(r, now - r.int(0, 3) * r.pick([1, 1000, DAY]))
  if (r.chance(0.25)) f.until = genTime(r, now - r.int(-1, 3) * r.pick([1, 1000, DAY]))
  if (r.chance(0.4)) f.limit = r.pick([1, 2, 3, 5, 100, 1000, undefined, null])
  return f
}

/** The expiry instants of live entries, for jumps onto retention boundaries. */
function expiries(model) {
  const out = []
  for (const a of model.agents.values()) {
    for (const e of a.entries.values()) {
      const at = Model.expiresAt(e, a.policy)
      if (at !== null && at < 8e15) out.push(at)
    }
  }
  return out
}

/** The next operation; it may look at the model (to reuse policies and hit boundaries). */
function nextOp(r, model, now) {
  const kind = r.weighted([
    [22, 'write'], [18, 'read'], [12, 'query'], [8, 'delete'], [14, 'clock'],
    [3, 'list'], [3, 'ddelete'], [2, 'configure'],
  ])
  const agentId = r.weighted([[9, AGENTS[0]], [1, AGENTS[1]]])
  const caller = () => r.weighted([[95, () => r.pick(GENES)], [3, () => NO_V2_ID], [2, () => NO_AGENT]])()
  const key = () => (r.chance(0.96) ? r.pick(KEYS) : r.pick(BAD_KEYS))
  const category = () => (r.chance(0.97) ? r.pick(CATEGORIES) : r.pick(['cache', 'OTHER', undefined, null]))
  // Value sizes follow the quota, up to a few KB (agent-2 may keep the 10 MiB default quota).
  const quota = Math.min(model.agents.get(agentId)?.quota ?? 1024, 4096)
  switch (kind) {
    case 'write': {
      const k = key()
      return {
        kind, agentId, gene: caller(), key: k, value: genValue(r, quota), category: category(),
        access: genAccess(r, model, agentId, k), retention: genRetention(r, model, agentId, k),
      }
    }
    case 'read':
      return { kind, agentId, gene: caller(), key: key(), category: r.weighted([[6, () => undefined], [1, () => null], [3, category]])() }
    case 'query':
      return { kind, agentId, gene: caller(), filter: genFilter(r, model, now) }
    case 'delete':
      return { kind, agentId, gene: caller(), key: key() }
    case 'list':
      return { kind, agentId, category: r.weighted([[6, undefined], [3, r.pick(CATEGORIES)], [1, 'cache']]) }
    case 'ddelete':
      return r.weighted([
        [6, { kind, agentId, key: key() }],
        [3, { kind, agentId, category: r.pick(CATEGORIES) }],
        [1, { kind, agentId, key: 'k1', category: 'CACHE' }],
        [1, { kind, agentId }],
      ])
    case 'configure':
      return {
        kind, agentId,
        quota: r.chance(0.85) ? r.pick(QUOTAS) : r.pick(BAD_QUOTAS),
        dataPolicy: r.weighted([
          [4, undefined],
          [6, { anonymizationSupported: r.chance(0.5), maxRetentionDays: r.pick([null, null, 1, 2, 30]) }],
          [1, { maxRetentionDays: 0 }],
          [1, { other: true }],
        ]),
      }
    case 'clock': {
      const ex = expiries(model)
      const to = r.weighted([
        [3, now],
        [8, now + 1],
        [8, now + r.int(2, 5000)],
        [4, now + DAY * r.int(1, 3)],
        [ex.length ? 10 : 0, () => r.pick(ex) - r.int(0, 1)],
        [1, now - r.int(1, 2000)],
      ])
      return { kind, to: typeof to === 'function' ? to() : to }
    }
  }
  throw new Error('unreachable')
}

module.exports = { prng, nextOp, GENES, NO_V2_ID, NO_AGENT, AGENTS, QUOTAS, geneId }
