'use strict'
// Runs a generated call sequence against the real store and the reference model side by side:
// every result and error code, every audit line and telemetry event, and at the end the stored
// state (entries, their order, the byte total, the sequence counter) must agree.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const memory = require('../../index.js')
const Database = require('better-sqlite3')
const { Model, DAY } = require('./reference')
const { prng, nextOp, AGENTS, QUOTAS } = require('./generator')

const T0 = Date.parse('2026-11-30T00:00:00.000Z')
const CATEGORY_INDEX = { CACHE: 0, PATTERN: 1, CONTEXT: 2, PREFERENCE: 3 }
const SCOPE_INDEX = { CREATOR_GENE_ONLY: 0, SAME_DOMAIN: 1, ALL_GENES: 2, DEPLOYER_CONFIGURED: 3 }
const SHARE_INDEX = { PRIVATE: 0, ANONYMIZED_SHARE: 1, KNOWLEDGE_GENE: 2 }

/** A short, readable form of an operation for failure reports. */
function describe(op) {
  return JSON.stringify(op, (k, v) => {
    if (v === undefined) return '<undefined>'
    if (k === 'gene') return v.name
    if (k === 'wasm') return undefined
    if (v && typeof v === 'object' && v.type === 'Buffer') return `<${v.data.length} bytes>`
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return `<${v.constructor.name} ${v.byteLength} bytes>`
    return v
  })
}

/** The entry as the model shows it: value in hex. */
function normalize(v) {
  if (Array.isArray(v)) return v.map(normalize)
  if (v && typeof v === 'object' && 'entryId' in v) {
    assert.ok(v.value instanceof Uint8Array, 'value is a Uint8Array')
    return { ...v, value: Buffer.from(v.value).toString('hex') }
  }
  return v
}

function outcome(fn) {
  try {
    return { value: normalize(fn()) }
  } catch (e) {
    if (!(e instanceof memory.MemoryError)) throw e
    assert.ok(e.message.length > 0, 'an error says what was wrong')
    return { code: e.code }
  }
}

/**
 * The server's audit rows of every agent appended since the last call, as lines (R-BIND-3):
 * each committed, in order. One call touches one agent, so their order across agents is moot.
 */
function serverAudit(root, url) {
  const readers = new Map()
  return () => {
    const out = []
    for (const agentId of AGENTS) {
      if (!readers.has(agentId)) readers.set(agentId, memory.openAgentAuditLog({ agentId, root, url, follow: true }))
      const reader = readers.get(agentId)
      reader.poll()
      for (let page; (page = reader.next()); ) {
        for (const l of page) {
          assert.equal(l.committed, true, 'every row on the server committed')
          delete l.committed
          out.push(l)
        }
      }
    }
    return out
  }
}

/** Reads the whole lines appended to a JSON-lines file since the last call. */
function lineReader(file) {
  let offset = 0
  return () => {
    if (!fs.existsSync(file)) return []
    const buf = fs.readFileSync(file)
    const text = buf.subarray(offset).toString('utf8')
    offset = buf.length
    assert.ok(text === '' || text.endsWith('\n'), 'the log ends with a whole line')
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l))
  }
}

// ---------------------------------------------------------------------------------------------
// The same calls through the WASM host functions (R-WASM), when their arguments can be said in
// JSON: the answers must be the same, with the codes of §11.

const WASM_CODES = { '-2': 'MEMORY_ACCESS_DENIED', '-8': 'MEMORY_QUOTA_EXCEEDED', '-10': 'MEMORY_INVALID_INPUT', '-12': 'MEMORY_NOT_FOUND', '-13': 'MEMORY_STORAGE_ERROR' }
const OUT = 2 * 1024 * 1024
const wasmMemory = new WebAssembly.Memory({ initial: 64 }) // 4 MiB: the request, then out

/** JSON that means the same as the JS value: plain data, no undefined inside, finite numbers. */
function jsonPlain(v) {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true
  if (typeof v === 'number') return Number.isFinite(v)
  if (Array.isArray(v) || ArrayBuffer.isView(v) || v instanceof ArrayBuffer || typeof v !== 'object') return false
  return Object.values(v).every((x) => x !== undefined && jsonPlain(x))
}

/** The request for `op`, or null when JSON cannot say the same thing. */
function wasmRequest(op) {
  const req = {}
  const put = (name, v) => {
    if (v === undefined) return true
    if (!jsonPlain(v)) return false
    req[name] = v
    return true
  }
  switch (op.kind) {
    case 'read':
      return put('key', op.key) && put('category', op.category) ? ['readMemory', req] : null
    case 'write':
      if (!(op.value instanceof Uint8Array) || op.value.length > OUT / 2) return null
      req.value = Buffer.from(op.value).toString('base64')
      return put('key', op.key) && put('category', op.category) && put('accessPolicy', op.access) && put('retentionPolicy', op.retention) ? ['writeMemory', req] : null
    case 'query':
      return put('filter', op.filter) ? ['queryMemory', req] : null
    case 'delete':
      return put('key', op.key) ? ['deleteMemory', req] : null
  }
  return null
}

function wasmCall(imports, name, req) {
  const bytes = Buffer.from(JSON.stringify(req))
  const view = new Uint8Array(wasmMemory.buffer)
  view.set(bytes, 0)
  const code = imports[name](0, bytes.length, OUT, OUT)
  const out = Buffer.from(wasmMemory.buffer, OUT, OUT)
  if (code >= 0) {
    const v = JSON.parse(out.subarray(0, code).toString('utf8'))
    const hex = (e) => ({ ...e, value: Buffer.from(e.value, 'base64').toString('hex') })
    if (name === 'deleteMemory') return { value: (assert.equal(v, null), undefined) }
    if (name === 'queryMemory') return { value: v.map(hex) }
    return { value: v === null ? null : hex(v) }
  }
  assert.ok(code in WASM_CODES, `a documented WASM code: ${code}`)
  const end = out.indexOf(0)
  const envelope = JSON.parse(out.subarray(0, end).toString('utf8')).__rotifer_error
  assert.equal(envelope.code, WASM_CODES[code], 'the envelope names the code')
  assert.ok(envelope.message.length > 0)
  return { code: envelope.code }
}

function telemetryEnabled() {
  const off = (v) => ['0', 'false', 'off'].includes(v.toLowerCase())
  const t = process.env.ROTIFER_TELEMETRY
  const dnt = process.env.DO_NOT_TRACK
  return !(t !== undefined && off(t)) && !(dnt && !['0', 'false'].includes(dnt.toLowerCase()))
}

/**
 * The row a model entry is stored as, its columns as a binding encodes them (`as`): SQLite keeps
 * keys as bytes and enums and flags as integers, PostgreSQL text and booleans; `seq` only where
 * the model's numbers are the store's.
 */
function storedRow(e, as) {
  return {
    key: as.key(e.key),
    category: as.category(e.category),
    value: as.value(e.value),
    size: e.size,
    created_by: e.createdBy,
    creator_domain: e.creatorDomain,
    last_accessed_by: e.lastAccessedBy,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
    ...(as.seq ? { seq: e.seq } : {}),
    read_scope: as.scope(e.access.readScope),
    write_scope: as.scope(e.access.writeScope),
    share_policy: as.share(e.access.sharePolicy),
    ret_set: as.flag(!!e.retention),
    ret_days: e.retention ? e.retention.maxRetentionDays : null,
    ret_auto_delete: as.flag(!!(e.retention && e.retention.autoDeleteOnTermination)),
    ret_anonymization: as.flag(!!(e.retention && e.retention.anonymizationSupported)),
  }
}

/** The stored state of every agent against the model, read straight from the databases. */
function checkStoredState(root, model) {
  for (const agentId of AGENTS) {
    const dbPath = path.join(root, '.rotifer', 'memory', `${agentId}.db`)
    const a = model.agents.get(agentId)
    if (!a) {
      assert.ok(!fs.existsSync(dbPath), `${agentId}: no memory was created`)
      continue
    }
    const db = new Database(dbPath, { fileMustExist: true })
    try {
      const row = db.prepare('SELECT quota, anonymization_supported AS anon, max_retention_days AS maxDays, used_bytes AS used, last_seq AS lastSeq FROM agent').get()
      assert.deepStrictEqual(
        row,
        { quota: a.quota, anon: a.policy.anonymizationSupported ? 1 : 0, maxDays: a.policy.maxRetentionDays, used: Model.used(a), lastSeq: a.lastSeq },
        `${agentId}: agent row (quota, data policy, byte total, sequence)`,
      )
      const rows = db
        .prepare(
          `SELECT key, category, value, size, created_by, creator_domain, last_accessed_by, created_at, updated_at, seq,
                  read_scope, write_scope, share_policy, ret_set, ret_days, ret_auto_delete, ret_anonymization
           FROM entries ORDER BY updated_at DESC, seq DESC`,
        )
        .all()
      const expected = Model.recentFirst(a).map((e) => storedRow(e, {
        key: (k) => Buffer.from(k), value: (v) => v, category: (c) => CATEGORY_INDEX[c], scope: (x) => SCOPE_INDEX[x], share: (x) => SHARE_INDEX[x], flag: (f) => (f ? 1 : 0), seq: true,
      }))
      assert.deepStrictEqual(rows, expected, `${agentId}: stored entries, most recently updated first`)
      assert.equal(db.prepare('SELECT COALESCE(SUM(size), 0) AS s FROM entries').get().s, row.used, 'byte total = sum of sizes')
    } finally {
      db.close()
    }
  }
}

/**
 * The stored state of every agent on PostgreSQL against the model, read by the database's
 * owner (`admin`, a psql connection string). Entry `seq` numbers are the server's own: only the
 * order they give is compared.
 */
function checkServerState(admin, model) {
  const { ok } = require('../pg/server')
  const lit = (s) => `'${String(s).replace(/'/g, "''")}'`
  for (const agentId of AGENTS) {
    const a = model.agents.get(agentId)
    const row = ok(admin, `SELECT json_build_object('quota', quota, 'anon', anonymization_supported, 'maxDays', max_retention_days, 'used', used_bytes)
      FROM rotifer.agents WHERE agent_id = ${lit(agentId)}`)
    if (!a) {
      assert.equal(row, '', `${agentId}: no memory was created`)
      continue
    }
    assert.deepStrictEqual(JSON.parse(row), { quota: a.quota, anon: a.policy.anonymizationSupported, maxDays: a.policy.maxRetentionDays, used: Model.used(a) },
      `${agentId}: agent row (quota, data policy, byte total)`)
    const rows = ok(admin, `SELECT coalesce(json_agg(json_build_object('key', key, 'category', category, 'value', encode(value, 'hex'), 'size', size,
        'created_by', created_by, 'creator_domain', creator_domain, 'last_accessed_by', last_accessed_by, 'created_at', created_at, 'updated_at', updated_at,
        'read_scope', read_scope, 'write_scope', write_scope, 'share_policy', share_policy, 'ret_set', ret_set, 'ret_days', ret_days,
        'ret_auto_delete', ret_auto_delete, 'ret_anonymization', ret_anonymization) ORDER BY updated_at DESC, seq DESC), '[]')
      FROM rotifer.entries WHERE agent_id = ${lit(agentId)}`)
    const expected = Model.recentFirst(a).map((e) => storedRow(e, {
      key: (k) => k, value: (v) => Buffer.from(v).toString('hex'), category: (c) => c, scope: (x) => x, share: (x) => x, flag: (f) => f, seq: false,
    }))
    assert.deepStrictEqual(JSON.parse(rows), expected, `${agentId}: stored entries, most recently updated first`)
  }
}

/**
 * Runs one sequence of `ops` operations generated from `seed`. Throws, with the seed, the
 * failing operation and the ones before it, on the first disagreement.
 *
 * `pg`: `{ url, admin }` to run it on PostgreSQL (R-BIND-2): every handle and deployer call is
 * given the deployment's `url`, the audit lines are the server's rows, and the final state is
 * read from its tables by `admin`. There every refusal is a row of its own (the server's audit is
 * bounded as a whole, R-BIND-3), so the model does not fold repeated refusals into counts.
 */
function runSequence(seed, ops, pg = null) {
  const r = prng(seed)
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-model-'))
  const at = pg ? { url: pg.url } : {}
  const clock = { t: T0 + r.int(0, DAY) }
  const now = () => clock.t
  const model = new Model()
  model.telemetryOn = telemetryEnabled()
  model.refusalsBounded = !pg
  const handles = new Map()
  const handle = (agentId, gene) => {
    const k = `${agentId}|${gene.name}`
    if (!handles.has(k)) {
      handles.set(k, new memory.GeneMemoryAccess({ agentId: gene.noAgent ? null : agentId, geneId: gene.geneId, domain: gene.domain, root, now, ...at }))
    }
    return handles.get(k)
  }
  // `handle` names the gene handle the call goes through (refusals are bounded per handle):
  // call `route(op)` first, which picks it.
  const caller = (op) => ({
    agentId: op.gene.noAgent ? null : op.agentId, geneId: op.gene.geneId, domain: op.gene.domain,
    handle: `${op.via}|${op.agentId}|${op.gene.name}`,
  })
  const wasmHandles = new Map()
  const wasm = (op) => {
    const k = `${op.agentId}|${op.gene.name}`
    if (!wasmHandles.has(k)) {
      wasmHandles.set(k, memory.createMemoryImports({ agentId: op.gene.noAgent ? null : op.agentId, geneId: op.gene.geneId, domain: op.gene.domain, root, now, ...at }, () => wasmMemory))
    }
    return wasmHandles.get(k)
  }
  /** Picks the route of a gene's call: JS, or now and then the WASM host functions. */
  const route = (op) => {
    op.wasm = r.chance(0.3) ? wasmRequest(op) : null
    op.via = op.wasm ? 'wasm' : 'js'
    // A WASM request that lacks a required field is malformed: no key is taken from it (even
    // for the audit line of a caller with no v2 id), as for a key that is not a string in JS.
    const required = op.kind === 'write' ? ['key', 'value', 'category'] : op.kind === 'query' ? [] : ['key']
    return op.wasm && required.some((f) => !(f in op.wasm[1])) ? undefined : op.key
  }
  const viaGene = (op, js) => (op.wasm ? wasmCall(wasm(op), op.wasm[0], op.wasm[1]) : outcome(js))
  const auditNext = pg ? serverAudit(root, pg.url) : lineReader(path.join(root, '.rotifer', 'audit.jsonl'))
  const telemetryNext = lineReader(path.join(root, '.rotifer', 'telemetry.jsonl'))
  const trace = []
  const counts = {}

  const step = (op) => {
    let want
    let got
    const t = clock.t
    switch (op.kind) {
      case 'clock':
        clock.t = op.to
        return
      case 'read': {
        const key = route(op)
        want = model.read(t, caller(op), key, op.category)
        got = viaGene(op, () => handle(op.agentId, op.gene).readMemory(op.key, op.category))
        break
      }
      case 'write': {
        const key = route(op)
        want = model.write(t, caller(op), key, op.value, op.category, op.access, op.retention)
        got = viaGene(op, () => handle(op.agentId, op.gene).writeMemory(op.key, op.value, op.category, op.access, op.retention))
        break
      }
      case 'query':
        route(op)
        want = model.query(t, caller(op), op.filter)
        got = viaGene(op, () => handle(op.agentId, op.gene).queryMemory(op.filter))
        break
      case 'delete': {
        const key = route(op)
        want = model.delete(t, caller(op), key)
        got = viaGene(op, () => handle(op.agentId, op.gene).deleteMemory(op.key))
        break
      }
      case 'list':
        want = model.list(t, op.agentId, op.category)
        got = outcome(() => memory.listAgentMemory({ agentId: op.agentId, root, category: op.category, now, ...at }))
        break
      case 'ddelete':
        want = model.deployerDelete(t, op.agentId, op.key, op.category)
        got = outcome(() => memory.deleteAgentMemory({ agentId: op.agentId, root, key: op.key, category: op.category, now, ...at }))
        break
      case 'configure':
        want = model.configure(op.agentId, op.quota, op.dataPolicy)
        got = outcome(() => memory.createAgentMemory({ agentId: op.agentId, root, quota: op.quota, dataPolicy: op.dataPolicy, ...at }))
        break
      default:
        throw new Error(`unknown operation ${op.kind}`)
    }
    const label = want.code ?? 'ok'
    counts[`${op.kind}:${label}`] = (counts[`${op.kind}:${label}`] || 0) + 1
    if (op.via === 'wasm') counts[`wasm:${label}`] = (counts[`wasm:${label}`] || 0) + 1
    assert.deepStrictEqual(got, want, 'result or error code')
    const lines = auditNext()
    for (const l of lines) {
      counts[l.action] = (counts[l.action] || 0) + 1
      if (l.action === 'memory.access_denied') {
        assert.equal(typeof l.reason, 'string', 'a denial says why')
        assert.ok(l.reason.length > 0)
        delete l.reason
      }
    }
    assert.deepStrictEqual(lines, model.audit.splice(0), 'audit lines of this call')
    assert.deepStrictEqual(telemetryNext(), model.telemetry.splice(0), 'telemetry events of this call')
  }

  try {
    const first = {
      kind: 'configure',
      agentId: AGENTS[0],
      quota: r.pick(QUOTAS),
      dataPolicy: { anonymizationSupported: r.chance(0.5), maxRetentionDays: r.pick([null, null, 1, 2]) },
    }
    for (let i = 0; i < ops; i++) {
      const op = i === 0 ? first : nextOp(r, model, clock.t)
      trace.push(op)
      step(op)
    }
    trace.push({ kind: 'final state check' })
    if (pg) checkServerState(pg.admin, model)
    else checkStoredState(root, model)
    return counts
  } catch (e) {
    const recent = trace.slice(-15).map((op, i) => `  #${trace.length - Math.min(15, trace.length) + i}: ${describe(op)}`)
    const err = new Error(
      `model disagreement: seed ${seed} (rerun with MODEL_SEED=${seed} MODEL_SEQUENCES=1 MODEL_OPS=${ops}), operation #${trace.length - 1}\n` +
        `last operations:\n${recent.join('\n')}\n${e.message}`,
    )
    err.cause = e
    throw err
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

module.exports = { runSequence }

// `node __test__/model/runner.js [sequences] [ops] [seed]`: the long form.
if (require.main === module) {
  const sequences = Number(process.argv[2] || process.env.MODEL_SEQUENCES || 2000)
  const ops = Number(process.argv[3] || process.env.MODEL_OPS || 300)
  const base = Number(process.argv[4] || process.env.MODEL_SEED || Date.now() % 1e9)
  const total = {}
  const started = Date.now()
  for (let i = 0; i < sequences; i++) {
    const counts = runSequence(base + i, ops)
    for (const [k, v] of Object.entries(counts)) total[k] = (total[k] || 0) + v
    if ((i + 1) % 100 === 0) console.log(`${i + 1}/${sequences} sequences (seeds ${base}…${base + i}) agree with the model`)
  }
  console.log(JSON.stringify(total))
  console.log(`${sequences} sequences of ${ops} operations from seed ${base}: all agree with the model (${Date.now() - started} ms)`)
}
