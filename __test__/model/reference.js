'use strict'
// A reference model of the Agent Memory API in plain JS data structures: what every call must
// answer, what it must change, and which audit lines and telemetry events it must append.
// It follows the specification and docs/decisions.md;
// it shares no code with the store.

const { createHash } = require('node:crypto')

const DAY = 86400000
const DEFAULT_QUOTA = 10 * 1024 * 1024
const MAX_QUOTA = 1024 ** 4
const MAX_KEY_BYTES = 1024
const MAX_VALUE_BYTES = 1048576
const MAX_QUERY_BYTES = 4 * 1024 * 1024
const MAX_DAYS = 2147483647
const CATEGORIES = ['CACHE', 'PATTERN', 'CONTEXT', 'PREFERENCE']
const EVICTION_ORDER = ['CACHE', 'PATTERN', 'CONTEXT']
const SCOPES = ['CREATOR_GENE_ONLY', 'SAME_DOMAIN', 'ALL_GENES', 'DEPLOYER_CONFIGURED']
const SHARES = ['PRIVATE', 'ANONYMIZED_SHARE', 'KNOWLEDGE_GENE']
const DEFAULT_ACCESS = Object.freeze({ readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' })
const V2 = /^v2:[0-9a-f]{64}$/
const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

const DENIED = 'MEMORY_ACCESS_DENIED'
const INVALID = 'MEMORY_INVALID_INPUT'
const NOT_FOUND = 'MEMORY_NOT_FOUND'
const QUOTA = 'MEMORY_QUOTA_EXCEEDED'

class Refused extends Error {
  constructor(code) {
    super(code)
    this.code = code
  }
}
const refuse = (code) => {
  throw new Refused(code)
}

const iso = (ms) => new Date(ms).toISOString()
/** The refusal bound (core/src/audit.rs): lines in full per handle, summary interval, key bytes shown. */
const FULL_REFUSAL_LINES = 10
const SUMMARY_INTERVAL_MS = 60_000
const REFUSAL_KEY_BYTES = 64
/** A refusal line's key: at most REFUSAL_KEY_BYTES of UTF-8, cut on a character, then "…". */
function shortKey(key) {
  if (key === null) return null
  const b = Buffer.from(key)
  if (b.length <= REFUSAL_KEY_BYTES) return key
  let end = REFUSAL_KEY_BYTES
  while ((b[end] & 0xc0) === 0x80) end--
  return b.subarray(0, end).toString() + '…'
}
const entryId = (agentId, key) => createHash('sha256').update(Buffer.concat([Buffer.from(agentId), Buffer.from([0]), Buffer.from(key)])).digest('hex')
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer)
const byteCompare = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))

// ---------------------------------------------------------------------------------------------
// Validation (R-LIM, R-CAT-1, R-ACC-2, R-RET-5, R-API-3, R-QUO-2, R-POL)

function validKey(k) {
  return typeof k === 'string' && k.length > 0 && !k.includes('\0') && k.isWellFormed() && Buffer.byteLength(k) <= MAX_KEY_BYTES
}

function parseKey(k) {
  return validKey(k) ? k : refuse(INVALID)
}

function parseValue(v) {
  if (!(v instanceof Uint8Array) || v.length > MAX_VALUE_BYTES) refuse(INVALID)
  return Buffer.from(v)
}

function parseCategory(c) {
  return CATEGORIES.includes(c) ? c : refuse(INVALID)
}

const absent = (v) => v === undefined || v === null
const optionalCategory = (c) => (absent(c) ? null : parseCategory(c))

function exactFields(o, names) {
  if (!isPlainObject(o)) refuse(INVALID)
  const own = Object.keys(o)
  if (own.some((n) => !names.includes(n)) || names.some((n) => !own.includes(n))) refuse(INVALID)
}

/** `undefined` → null (not given); otherwise a policy, or INVALID. */
function parseAccess(a) {
  if (a === undefined) return null
  exactFields(a, ['readScope', 'writeScope', 'sharePolicy'])
  if (!SCOPES.includes(a.readScope) || !SCOPES.includes(a.writeScope) || !SHARES.includes(a.sharePolicy)) refuse(INVALID)
  return { readScope: a.readScope, writeScope: a.writeScope, sharePolicy: a.sharePolicy }
}

const validDays = (d, allowNull) => (d === null && allowNull) || (typeof d === 'number' && Number.isInteger(d) && d >= 1 && d <= MAX_DAYS)

/** `{ kind: 'omitted' }`, `{ kind: 'follow' }` (null) or `{ kind: 'policy', policy }`. */
function parseRetention(r) {
  if (r === undefined) return { kind: 'omitted' }
  if (r === null) return { kind: 'follow' }
  exactFields(r, ['maxRetentionDays', 'autoDeleteOnTermination', 'anonymizationSupported'])
  if (!validDays(r.maxRetentionDays, true) || typeof r.autoDeleteOnTermination !== 'boolean' || typeof r.anonymizationSupported !== 'boolean') {
    refuse(INVALID)
  }
  return {
    kind: 'policy',
    policy: { maxRetentionDays: r.maxRetentionDays, autoDeleteOnTermination: r.autoDeleteOnTermination, anonymizationSupported: r.anonymizationSupported },
  }
}

const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/

/** RFC 3339 → ms, a sub-millisecond fraction rounded up (docs/decisions.md: Queries). */
function parseTime(text) {
  if (absent(text)) return null
  if (typeof text !== 'string') refuse(INVALID)
  const m = RFC3339.exec(text)
  if (!m) refuse(INVALID)
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number)
  const daysIn = new Date(Date.UTC(y, mo, 0)).getUTCDate()
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn || h > 23 || mi > 59 || s > 59) refuse(INVALID)
  let offset = 0
  if (m[8] !== 'Z') {
    const oh = Number(m[8].slice(1, 3))
    const om = Number(m[8].slice(4, 6))
    if (oh > 23 || om > 59) refuse(INVALID)
    offset = (m[8][0] === '+' ? 1 : -1) * (oh * 60 + om) * 60000
  }
  const frac = (m[7] || '.').slice(1).padEnd(9, '0').slice(0, 9)
  const ms = Number(frac.slice(0, 3))
  const subMs = Number(frac.slice(3)) > 0 ? 1 : 0
  const base = Date.UTC(y, mo - 1, d, h, mi, s)
  // Date.UTC maps years 0..99 to 1900..1999; the generator never makes those.
  return base + ms + subMs - offset
}

function parseFilter(f) {
  const out = { category: null, prefix: null, since: null, until: null, limit: 100 }
  if (absent(f)) return out
  if (!isPlainObject(f)) refuse(INVALID)
  for (const [name, v] of Object.entries(f)) {
    if (name === 'category') out.category = optionalCategory(v)
    else if (name === 'keyPrefix') {
      if (absent(v)) continue
      if (typeof v !== 'string' || !v.isWellFormed()) refuse(INVALID)
      out.prefix = v === '' ? null : Buffer.from(v)
    } else if (name === 'since') out.since = parseTime(v)
    else if (name === 'until') out.until = parseTime(v)
    else if (name === 'limit') {
      if (absent(v)) continue
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 1000) refuse(INVALID)
      out.limit = v
    } else refuse(INVALID)
  }
  return out
}

/** R-QUO-2 and numeric quotas; exact arithmetic. */
function parseQuota(q) {
  if (absent(q)) return DEFAULT_QUOTA
  if (typeof q === 'number') {
    if (!Number.isInteger(q) || q < 1 || q > MAX_QUOTA) refuse(INVALID)
    return q
  }
  if (typeof q !== 'string') refuse(INVALID)
  const m = /^ *(\d+)(?:\.(\d+))? *([kKmMgG][bB]) *$/.exec(q)
  if (!m) refuse(INVALID)
  const mult = BigInt({ K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[3][0].toUpperCase()])
  const frac = m[2] || ''
  let bytes = BigInt(m[1]) * mult
  if (frac) bytes += (BigInt(frac) * mult) / 10n ** BigInt(frac.length)
  if (bytes === 0n || bytes > BigInt(MAX_QUOTA)) refuse(INVALID)
  return Number(bytes)
}

function parseDataPolicy(p) {
  const out = { anonymizationSupported: false, maxRetentionDays: null }
  if (absent(p)) return out
  if (!isPlainObject(p)) refuse(INVALID)
  for (const [name, v] of Object.entries(p)) {
    if (name === 'anonymizationSupported') {
      if (absent(v)) continue
      if (typeof v !== 'boolean') refuse(INVALID)
      out.anonymizationSupported = v
    } else if (name === 'maxRetentionDays') {
      if (v === undefined) continue
      if (!validDays(v, true)) refuse(INVALID)
      out.maxRetentionDays = v
    } else refuse(INVALID)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Access (R-ACC, R-POL)

function admits(scope, entry, gene) {
  if (scope === 'ALL_GENES') return true
  if (scope === 'CREATOR_GENE_ONLY') return gene.id === entry.createdBy
  if (scope === 'SAME_DOMAIN') return gene.id === entry.createdBy || (gene.domain != null && entry.creatorDomain != null && gene.domain === entry.creatorDomain)
  return false // DEPLOYER_CONFIGURED
}

const sameAccess = (a, b) => a.readScope === b.readScope && a.writeScope === b.writeScope && a.sharePolicy === b.sharePolicy
const sameRetention = (a, b) =>
  a === b ||
  (a !== null && b !== null && a.maxRetentionDays === b.maxRetentionDays && a.autoDeleteOnTermination === b.autoDeleteOnTermination && a.anonymizationSupported === b.anonymizationSupported)

function dataPolicyViolation(policy, access, retention) {
  if (access.sharePolicy !== 'PRIVATE' && !policy.anonymizationSupported) return true
  if (policy.maxRetentionDays !== null && retention !== null) {
    if (retention.maxRetentionDays === null || retention.maxRetentionDays > policy.maxRetentionDays) return true
  }
  return false
}

// ---------------------------------------------------------------------------------------------
// The model

class Model {
  constructor() {
    /** agentId → { quota, policy, lastSeq, entries: Map<key, entry> } */
    this.agents = new Map()
    /** Expected audit lines and telemetry events, in order. */
    this.audit = []
    this.telemetry = []
    this.telemetryOn = true
    /** Whether a handle folds repeated refusals into counts (the file; not PostgreSQL's rows). */
    this.refusalsBounded = true
    /** Gene handle → its refusal bound: { full, last, counted } */
    this.refusals = new Map()
  }

  agent(agentId) {
    let a = this.agents.get(agentId)
    if (!a) {
      a = { quota: DEFAULT_QUOTA, policy: { anonymizationSupported: false, maxRetentionDays: null }, lastSeq: 0, entries: new Map() }
      this.agents.set(agentId, a)
    }
    return a
  }

  static used(a) {
    let n = 0
    for (const e of a.entries.values()) n += e.size
    return n
  }

  static expiresAt(e, policy) {
    const days = e.retention ? e.retention.maxRetentionDays : policy.maxRetentionDays
    return days === null ? null : e.updatedAt + days * DAY
  }

  line(now, agentId, action, actor, key, category, size, extra = {}) {
    // R-AUD-6: a change's line names its transaction: the sequence number it commits, and its
    // place among the attempt's change lines (txLine 1 begins an attempt).
    const change = !['access_denied', 'quota_reject'].includes(action)
    if (change) this.tx.changed = true
    this.audit.push({
      ts: iso(now),
      agentId,
      action: 'memory.' + action,
      ...(change ? { tx: this.tx.seq, txLine: ++this.tx.lines } : {}),
      actor,
      key,
      entryId: key === null ? null : entryId(agentId, key),
      category,
      size,
      ...extra,
    })
  }

  deny(now, h, actor, op, key, category, size) {
    this.refusal(now, h, 'access_denied', op, DENIED, key, () => {
      this.line(now, h.agentId, 'access_denied', actor, shortKey(key), category, size, { op, code: DENIED, entryId: key === null ? null : entryId(h.agentId, key) })
      if (this.telemetryOn) this.telemetry.push({ ts: iso(now), event: 'memory.access_denied', agentId: h.agentId, geneId: actor, op, code: DENIED })
    })
    refuse(DENIED)
  }

  /**
   * docs/decisions.md "Audit and telemetry": a gene handle writes a refusal's line (`writeLine`) unless it
   * repeats the handle's last such line or the handle has written FULL_REFUSAL_LINES of them;
   * the others are counted per action, op and code, and summarised at the first refusal a
   * minute or more after the first one counted.
   */
  refusal(now, h, action, op, code, key, writeLine) {
    let log = this.refusals.get(h.handle)
    if (!log) this.refusals.set(h.handle, (log = { full: 0, last: null, counted: [] }))
    const what = JSON.stringify([action, op, code, key])
    if (!this.refusalsBounded) return writeLine()
    if (log.full < FULL_REFUSAL_LINES && log.last !== what) {
      log.full++
      log.last = what
      writeLine()
    } else {
      const c = log.counted.find((c) => c.action === action && c.op === op && c.code === code)
      if (c) c.count++
      else log.counted.push({ action, op, code, count: 1, since: now })
    }
    if (log.counted.length > 0 && now - Math.min(...log.counted.map((c) => c.since)) >= SUMMARY_INTERVAL_MS) {
      const actor = typeof h.geneId === 'string' && V2.test(h.geneId) ? h.geneId : null
      for (const c of log.counted) {
        const extra = c.action === 'access_denied' ? { op: c.op, code: c.code } : {}
        this.line(now, h.agentId, c.action, actor, null, null, null, { ...extra, count: c.count, since: iso(c.since) })
        if (c.action === 'access_denied' && this.telemetryOn) {
          this.telemetry.push({ ts: iso(now), event: 'memory.access_denied', agentId: h.agentId, geneId: actor, op: c.op, code: c.code, count: c.count, since: iso(c.since) })
        }
      }
      log.counted = []
    }
  }

  /** R-RET-4: every expired entry goes, oldest expiry first, each with an audit line. */
  purge(now, agentId) {
    const a = this.agents.get(agentId)
    if (!a) return
    // Every call that may change memory begins here, in its transaction. The one before, if it
    // recorded a change, moved the sequence number to at least its own (R-AUD-6).
    const last = this.tx
    if (last && last.changed && last.a.lastSeq < last.seq) last.a.lastSeq = last.seq
    this.tx = { a, seq: a.lastSeq + 1, changed: false, lines: 0 }
    const expired = [...a.entries.values()]
      .map((e) => ({ e, at: Model.expiresAt(e, a.policy) }))
      .filter(({ at }) => at !== null && at <= now)
      .sort((x, y) => x.at - y.at || x.e.seq - y.e.seq)
    for (const { e } of expired) {
      this.line(now, agentId, 'expire', null, e.key, e.category, e.size)
      a.entries.delete(e.key)
    }
  }

  /** The entry as the API returns it. */
  static view(agentId, e) {
    return {
      entryId: entryId(agentId, e.key),
      category: e.category,
      key: e.key,
      value: e.value.toString('hex'),
      createdBy: e.createdBy,
      lastAccessedBy: e.lastAccessedBy,
      createdAt: iso(e.createdAt),
      updatedAt: iso(e.updatedAt),
      accessPolicy: { ...e.access },
      retentionPolicy: e.retention === null ? null : { ...e.retention },
    }
  }

  /** Runs `fn`, turning a refusal into `{ code }` and a result into `{ value }`. */
  static outcome(fn) {
    try {
      return { value: fn() }
    } catch (e) {
      if (e instanceof Refused) return { code: e.code }
      throw e
    }
  }

  /**
   * The identity checks that come before everything (docs/decisions.md: "Identity first"): no agent →
   * denied, nothing touched; no valid v2 id → denied and audited with actor null.
   */
  caller(now, h, op, key) {
    if (h.agentId == null) refuse(DENIED)
    if (typeof h.geneId !== 'string' || !V2.test(h.geneId)) {
      const k = op !== 'query' && validKey(key) ? key : null
      this.deny(now, h, null, op, k, null, null)
    }
    this.agent(h.agentId) // a gene's call creates the memory (docs/decisions.md)
    this.purge(now, h.agentId)
    return { a: this.agents.get(h.agentId), gene: { id: h.geneId, domain: h.domain ?? null } }
  }

  read(now, h, key, category) {
    return Model.outcome(() => {
      const { a, gene } = this.caller(now, h, 'read', key)
      key = parseKey(key)
      category = optionalCategory(category)
      const e = a.entries.get(key)
      if (!e || (category !== null && category !== e.category)) return null
      if (!admits(e.access.readScope, e, gene)) this.deny(now, h, gene.id, 'read', e.key, e.category, e.size)
      e.lastAccessedBy = gene.id
      return Model.view(h.agentId, e)
    })
  }

  write(now, h, key, value, category, access, retention) {
    return Model.outcome(() => {
      const { a, gene } = this.caller(now, h, 'write', key)
      key = parseKey(key)
      value = parseValue(value)
      category = parseCategory(category)
      const givenAccess = parseAccess(access)
      const givenRetention = parseRetention(retention)
      const old = a.entries.get(key)
      // R-ENT-4: a write stores no time before the latest one stored when it began.
      const at = Math.max(now, ...[...a.entries.values()].map((e) => e.updatedAt))
      const size = Buffer.byteLength(key) + value.length
      const deny = () => this.deny(now, h, gene.id, 'write', key, category, size)
      let acc
      let ret
      if (old) {
        if (!admits(old.access.writeScope, old, gene)) deny()
        acc = givenAccess ?? old.access
        ret = givenRetention.kind === 'omitted' ? old.retention : givenRetention.kind === 'follow' ? null : givenRetention.policy
        const creator = gene.id === old.createdBy
        if (!creator && !sameAccess(acc, old.access)) deny()
        if (!creator && !sameRetention(ret, old.retention)) deny()
      } else {
        acc = givenAccess ?? { ...DEFAULT_ACCESS }
        ret = givenRetention.kind === 'policy' ? givenRetention.policy : null
      }
      if (acc.readScope === 'DEPLOYER_CONFIGURED' || acc.writeScope === 'DEPLOYER_CONFIGURED') deny()
      if (dataPolicyViolation(a.policy, acc, ret)) deny()

      const used = Model.used(a)
      const after = used - (old ? old.size : 0) + size
      const victims = []
      // R-QUO-3: only a write that grows the total past the quota evicts (or is refused).
      if (after > a.quota && size > (old ? old.size : 0)) {
        const need = after - a.quota
        let freed = 0
        outer: for (const cat of EVICTION_ORDER) {
          const candidates = [...a.entries.values()].filter((e) => e.category === cat && e.key !== key).sort((x, y) => x.updatedAt - y.updatedAt || x.seq - y.seq)
          for (const e of candidates) {
            victims.push(e)
            freed += e.size
            if (freed >= need) break outer
          }
        }
        if (freed < need) {
          this.refusal(now, h, 'quota_reject', 'write', QUOTA, key, () =>
            this.line(now, h.agentId, 'quota_reject', gene.id, shortKey(key), category, size, {
              quota: a.quota, used, evictable: freed, needed: need, entryId: entryId(h.agentId, key),
            }))
          refuse(QUOTA)
        }
      }
      for (const v of victims) {
        this.line(now, h.agentId, 'evict', null, v.key, v.category, v.size)
        a.entries.delete(v.key)
      }
      const seq = ++a.lastSeq
      let e
      if (old) {
        this.line(now, h.agentId, 'update', gene.id, key, category, size)
        e = { ...old, category, value, size, lastAccessedBy: gene.id, updatedAt: at, seq, access: { ...acc }, retention: ret && { ...ret } }
      } else {
        this.line(now, h.agentId, 'create', gene.id, key, category, size)
        e = {
          key, category, value, size, createdBy: gene.id, creatorDomain: gene.domain, lastAccessedBy: gene.id,
          createdAt: at, updatedAt: at, seq, access: { ...acc }, retention: ret && { ...ret },
        }
      }
      a.entries.set(key, e)
      return Model.view(h.agentId, e)
    })
  }

  /** Entries most recently updated first (R-ENT-3). */
  static recentFirst(a) {
    return [...a.entries.values()].sort((x, y) => y.updatedAt - x.updatedAt || y.seq - x.seq)
  }

  query(now, h, filter) {
    return Model.outcome(() => {
      const { a, gene } = this.caller(now, h, 'query', undefined)
      const f = parseFilter(filter)
      const out = []
      let total = 0
      for (const e of Model.recentFirst(a)) {
        if (f.category !== null && e.category !== f.category) continue
        if (f.prefix !== null && !Buffer.from(e.key).subarray(0, f.prefix.length).equals(f.prefix)) continue
        if (f.since !== null && e.updatedAt < f.since) continue
        if (f.until !== null && e.updatedAt >= f.until) continue
        if (!admits(e.access.readScope, e, gene)) continue
        total += e.size
        if (total > MAX_QUERY_BYTES) refuse(INVALID)
        out.push(Model.view(h.agentId, e))
        if (out.length >= f.limit) break
      }
      return out
    })
  }

  delete(now, h, key) {
    return Model.outcome(() => {
      const { a, gene } = this.caller(now, h, 'delete', key)
      key = parseKey(key)
      const e = a.entries.get(key)
      if (!e) refuse(NOT_FOUND)
      if (!admits(e.access.writeScope, e, gene)) this.deny(now, h, gene.id, 'delete', e.key, e.category, e.size)
      this.line(now, h.agentId, 'delete', gene.id, e.key, e.category, e.size)
      a.entries.delete(key)
      return undefined
    })
  }

  /** listAgentMemory: never creates memory; purges; by key (bytes). */
  list(now, agentId, category) {
    return Model.outcome(() => {
      if (!AGENT_ID.test(agentId)) refuse(INVALID)
      category = optionalCategory(category)
      const a = this.agents.get(agentId)
      if (!a) return []
      this.purge(now, agentId)
      return [...a.entries.values()]
        .filter((e) => category === null || e.category === category)
        .sort((x, y) => byteCompare(x.key, y.key))
        .map((e) => ({ key: e.key, category: e.category, size: e.size, createdBy: e.createdBy, updatedAt: iso(e.updatedAt) }))
    })
  }

  /** deleteAgentMemory: exactly one of key and category; actor "deployer". */
  deployerDelete(now, agentId, key, category) {
    return Model.outcome(() => {
      if ((key === undefined) === (category === undefined)) refuse(INVALID)
      if (key !== undefined) parseKey(key)
      else parseCategory(category)
      if (!AGENT_ID.test(agentId)) refuse(INVALID)
      const a = this.agents.get(agentId)
      if (!a) {
        if (key !== undefined) refuse(NOT_FOUND)
        return 0
      }
      this.purge(now, agentId)
      let doomed
      if (key !== undefined) {
        const e = a.entries.get(key)
        if (!e) refuse(NOT_FOUND)
        doomed = [e]
      } else {
        doomed = [...a.entries.values()].filter((e) => e.category === category).sort((x, y) => x.updatedAt - y.updatedAt || x.seq - y.seq)
      }
      for (const e of doomed) {
        this.line(now, agentId, 'delete', 'deployer', e.key, e.category, e.size)
        a.entries.delete(e.key)
      }
      return doomed.length
    })
  }

  /** createAgentMemory: creates or reconfigures; evicts and purges nothing. */
  configure(agentId, quota, dataPolicy) {
    return Model.outcome(() => {
      if (!AGENT_ID.test(agentId)) refuse(INVALID)
      const q = parseQuota(quota)
      const p = parseDataPolicy(dataPolicy)
      const a = this.agent(agentId)
      a.quota = q
      a.policy = p
      return undefined
    })
  }
}

module.exports = {
  Model, DAY, CATEGORIES, SCOPES, SHARES, MAX_VALUE_BYTES, entryId, iso, validKey, parseTime, parseQuota, byteCompare,
}
