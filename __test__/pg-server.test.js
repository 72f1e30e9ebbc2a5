'use strict'
// The PostgreSQL binding's server side (R-BIND-2..5): the schema, its row-level security and the
// call functions, driven over psql as a deployment's login role would, and as a hostile holder of
// that role's credentials would, with arbitrary SQL.
const test = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { unavailable, psql, ok, database } = require('./pg/server')

const skip = unavailable() || false
const GENE_A = 'v2:' + 'a'.repeat(64)
const GENE_B = 'v2:' + 'b'.repeat(64)
const DAY = 86400000
const T0 = Date.UTC(2026, 11, 1)

const lit = (s) => (s === null || s === undefined ? 'NULL' : `'${String(s).replace(/'/g, "''")}'`)
const bytes = (s) => `convert_to(${lit(s)}, 'UTF8')`

function write(url, { agent = 'agent-1', gene = GENE_A, domain = 'text.notes', key, value = 'v', category = 'CONTEXT', access = null, retention, now = T0 }) {
  const retentionArgs = retention === undefined ? 'false, NULL' : `true, ${retention === null ? 'NULL' : lit(JSON.stringify(retention))}::jsonb`
  const sql = `SELECT outcome, coalesce(code, ''), coalesce(reason, ''), coalesce(key, ''), coalesce(created_at::text, ''), coalesce(updated_at::text, '')
    FROM rotifer.memory_write(${lit(agent)}, ${lit(gene)}, ${lit(domain)}, ${lit(key)}, ${typeof value === 'string' ? bytes(value) : value.sql}, ${lit(category)},
      ${access ? lit(JSON.stringify(access)) + '::jsonb' : 'NULL'}, ${retentionArgs}, ${now === null ? 'NULL' : now}, NULL)`
  const [outcome, code, reason, k, createdAt, updatedAt] = ok(url, sql).split('|')
  return { outcome, code, reason, key: k, createdAt: Number(createdAt), updatedAt: Number(updatedAt) }
}

function read(url, { agent = 'agent-1', gene = GENE_A, domain = 'text.notes', key, category = null, now = T0 }) {
  const sql = `SELECT outcome, coalesce(code, ''), coalesce(reason, ''), coalesce(convert_from(value, 'UTF8'), ''), coalesce(last_accessed_by, '')
    FROM rotifer.memory_read(${lit(agent)}, ${lit(gene)}, ${lit(domain)}, ${lit(key)}, ${lit(category)}, ${now === null ? 'NULL' : now})`
  const [outcome, code, reason, value, lastAccessedBy] = ok(url, sql).split('|')
  return { outcome, code, reason, value, lastAccessedBy }
}

function query(url, { agent = 'agent-1', gene = GENE_A, domain = 'text.notes', category = null, prefix = null, since = null, until = null, limit = 100, now = T0 }) {
  const sql = `SELECT outcome, coalesce(code, ''), coalesce(encode(convert_to(key, 'UTF8'), 'hex'), '') FROM rotifer.memory_query(${lit(agent)}, ${lit(gene)}, ${lit(domain)}, ${lit(category)}, ${lit(prefix)}, ${since ?? 'NULL'}, ${until ?? 'NULL'}, ${limit}, ${now})`
  const out = ok(url, sql)
  return out === '' ? [] : out.split('\n').map((l) => { const [outcome, code, hex] = l.split('|'); return { outcome, code, key: Buffer.from(hex, 'hex').toString('utf8') } })
}

function del(url, { agent = 'agent-1', gene = GENE_A, domain = 'text.notes', key, now = T0 }) {
  const [outcome, code] = ok(url, `SELECT outcome, coalesce(code, '') FROM rotifer.memory_delete(${lit(agent)}, ${lit(gene)}, ${lit(domain)}, ${lit(key)}, ${now}, NULL)`).split('|')
  return { outcome, code }
}

const audit = (url, agent = 'agent-1') =>
  ok(url, `SELECT action || ':' || coalesce(key, '') || ':' || coalesce(actor, '') FROM rotifer.audit WHERE agent_id = ${lit(agent)} ORDER BY id`).split('\n').filter(Boolean)

test('R-API-1/2/4: write, read, query and delete through the server functions', { skip }, (t) => {
  const { roles } = database(t, ['dep'])
  const url = roles.dep
  const w = write(url, { key: 'notes/1', value: 'hello' })
  assert.equal(w.outcome, 'ok')
  assert.equal(w.createdAt, T0)
  assert.deepEqual(read(url, { key: 'notes/1' }), { outcome: 'ok', code: '', reason: '', value: 'hello', lastAccessedBy: GENE_A })
  assert.equal(read(url, { key: 'notes/1', category: 'CACHE' }).outcome, 'none', 'another category is no match')
  assert.equal(read(url, { key: 'missing' }).outcome, 'none')
  write(url, { key: 'notes/2', value: 'x', now: T0 + 5 })
  assert.deepEqual(query(url, {}).map((r) => r.key), ['notes/2', 'notes/1'], 'most recently updated first')
  assert.deepEqual(del(url, { key: 'notes/1' }), { outcome: 'ok', code: '' })
  assert.deepEqual(del(url, { key: 'notes/1' }), { outcome: 'refused', code: 'MEMORY_NOT_FOUND' })
  assert.deepEqual(audit(url), [`memory.create:notes/1:${GENE_A}`, `memory.create:notes/2:${GENE_A}`, `memory.delete:notes/1:${GENE_A}`])
  assert.equal(ok(url, "SELECT used_bytes FROM rotifer.agents WHERE agent_id = 'agent-1'"), String('notes/2'.length + 1))
})

test('R-ENT-4 / R-BIND-5: a clock stepped back is floored at the latest stored time', { skip }, (t) => {
  const { roles } = database(t, ['dep'])
  write(roles.dep, { key: 'k1', now: T0 + 1000 })
  const back = write(roles.dep, { key: 'k2', now: T0 })
  assert.equal(back.createdAt, T0 + 1000, 'the new entry is not older than the newest one')
  const rewrite = write(roles.dep, { key: 'k1', now: T0 })
  assert.equal(rewrite.updatedAt, T0 + 1000)
  assert.deepEqual(query(roles.dep, { now: T0 }).map((r) => r.key), ['k1', 'k2'], 'the write made last is the newest')
})

test('R-ACC: scopes decide who reads and writes; a denial is audited although the call is refused', { skip }, (t) => {
  const { roles } = database(t, ['dep'])
  const url = roles.dep
  write(url, { key: 'secret', access: { readScope: 'CREATOR_GENE_ONLY', writeScope: 'CREATOR_GENE_ONLY', sharePolicy: 'PRIVATE' } })
  write(url, { key: 'shared', access: { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' } })
  const denied = read(url, { key: 'secret', gene: GENE_B })
  assert.equal(denied.outcome, 'refused')
  assert.equal(denied.code, 'MEMORY_ACCESS_DENIED')
  assert.match(denied.reason, /readScope CREATOR_GENE_ONLY lets only the gene that created it read this entry/)
  assert.equal(read(url, { key: 'shared', gene: GENE_B }).value, 'v', 'same domain reads')
  assert.equal(read(url, { key: 'shared', gene: GENE_B, domain: 'text.other' }).code, 'MEMORY_ACCESS_DENIED')
  assert.equal(read(url, { key: 'shared', gene: GENE_B, domain: null }).code, 'MEMORY_ACCESS_DENIED', 'no domain matches no one')
  assert.deepEqual(query(url, { gene: GENE_B }).map((r) => r.key), ['shared'], 'unreadable entries are skipped')
  const change = write(url, { key: 'shared', gene: GENE_B, access: { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'PRIVATE' } })
  assert.equal(change.code, 'MEMORY_ACCESS_DENIED')
  assert.match(change.reason, /only the entry's creator may change its accessPolicy/)
  assert.equal(write(url, { key: 'x', access: { readScope: 'DEPLOYER_CONFIGURED', writeScope: 'SAME_DOMAIN', sharePolicy: 'PRIVATE' } }).code, 'MEMORY_ACCESS_DENIED')
  assert.equal(write(url, { key: 'x', access: { readScope: 'SAME_DOMAIN', writeScope: 'SAME_DOMAIN', sharePolicy: 'KNOWLEDGE_GENE' } }).code, 'MEMORY_ACCESS_DENIED', 'R-POL-1')
  assert.equal(read(url, { key: 'shared', gene: 'v2:nothex' }).reason, 'no valid v2 id', 'R-ACC-4')
  const denials = ok(url, "SELECT facts->>'op' || ':' || coalesce(actor, 'null') FROM rotifer.audit WHERE action = 'memory.access_denied' ORDER BY id").split('\n')
  assert.deepEqual(denials, [`read:${GENE_B}`, `read:${GENE_B}`, `read:${GENE_B}`, `write:${GENE_B}`, `write:${GENE_A}`, `write:${GENE_A}`, 'read:null'])
})

test('R-QUO-3/4: eviction CACHE → PATTERN → CONTEXT oldest first, or a refusal that changes nothing', { skip }, (t) => {
  const { roles, admin } = database(t, ['dep'])
  const url = roles.dep
  write(url, { key: 'p', value: 'x'.repeat(99), category: 'PREFERENCE' }) // 100 bytes
  ok(admin, "UPDATE rotifer.agents SET quota = 400 WHERE agent_id = 'agent-1'")
  write(url, { key: 'c1', value: 'x'.repeat(98), category: 'CONTEXT', now: T0 + 1 })
  write(url, { key: 'a1', value: 'x'.repeat(98), category: 'CACHE', now: T0 + 2 })
  write(url, { key: 'a2', value: 'x'.repeat(98), category: 'CACHE', now: T0 + 3 }) // 400 used
  const w = write(url, { key: 'n1', value: 'x'.repeat(148), category: 'PATTERN', now: T0 + 4 }) // needs 150
  assert.equal(w.outcome, 'ok')
  assert.deepEqual(query(url, { now: T0 + 5 }).map((r) => r.key).sort(), ['c1', 'n1', 'p'], 'both CACHE entries went, oldest first')
  const evictions = audit(url).filter((l) => l.startsWith('memory.evict'))
  assert.deepEqual(evictions, ['memory.evict:a1:', 'memory.evict:a2:'])
  const before = ok(url, 'SELECT string_agg(key, \',\' ORDER BY key) FROM rotifer.entries')
  const refused = write(url, { key: 'big', value: 'x'.repeat(397), category: 'PREFERENCE', now: T0 + 6 })
  assert.equal(refused.code, 'MEMORY_QUOTA_EXCEEDED')
  assert.equal(ok(url, 'SELECT string_agg(key, \',\' ORDER BY key) FROM rotifer.entries'), before, 'nothing evicted, nothing written')
  assert.equal(ok(url, "SELECT facts->>'needed' FROM rotifer.audit WHERE action = 'memory.quota_reject'"), String(100 + 100 + 150 + 400 - 400))
  assert.equal(ok(url, 'SELECT used_bytes = (SELECT sum(size) FROM rotifer.entries) FROM rotifer.agents'), 't')
})

test('R-RET-1/4: an entry expires to the millisecond and is purged, audited, by the next call', { skip }, (t) => {
  const { roles } = database(t, ['dep'])
  const url = roles.dep
  write(url, { key: 'short', retention: { maxRetentionDays: 1, autoDeleteOnTermination: false, anonymizationSupported: false } })
  assert.equal(read(url, { key: 'short', now: T0 + DAY - 1 }).outcome, 'ok')
  assert.equal(read(url, { key: 'short', now: T0 + DAY }).outcome, 'none')
  assert.deepEqual(audit(url).slice(-1), ['memory.expire:short:'])
  assert.equal(ok(url, 'SELECT used_bytes FROM rotifer.agents'), '0')
})

test('R-API-3: a key prefix is literal (%, _, quotes), and more than 4 MiB is refused, never cut', { skip }, (t) => {
  const { roles } = database(t, ['dep'])
  const url = roles.dep
  for (const key of ['a%b', 'a_b', "it's", 'axb', 'a\u{10FFFF}z', 'a\u{10FFFF}\u{10FFFF}', 'b']) write(url, { key })
  assert.deepEqual(query(url, { prefix: 'a%' }).map((r) => r.key), ['a%b'])
  assert.deepEqual(query(url, { prefix: 'a_' }).map((r) => r.key), ['a_b'])
  assert.deepEqual(query(url, { prefix: "it'" }).map((r) => r.key), ["it's"])
  assert.deepEqual(query(url, { prefix: 'a\u{10FFFF}' }).map((r) => r.key).sort(), ['a\u{10FFFF}\u{10FFFF}', 'a\u{10FFFF}z'].sort())
  for (let i = 0; i < 5; i++) write(url, { key: `big/${i}`, value: { sql: `convert_to(repeat('x', 1000000), 'UTF8')` }, category: 'CACHE' })
  const r = query(url, { prefix: 'big/' })
  assert.deepEqual(r.map((x) => x.code), ['MEMORY_INVALID_INPUT'], 'one refusal, no entries')
  assert.equal(query(url, { prefix: 'big/', limit: 4 }).length, 4)
})

test('R-BIND-4: a role reaches only its own agents, and only through the functions', { skip }, (t) => {
  const { roles } = database(t, ['alice', 'mallory'])
  write(roles.alice, { agent: 'alice-agent', key: 'private', value: 'alice secret' })
  const m = roles.mallory
  const fails = (sql, pattern) => {
    const r = psql(m, sql)
    assert.notEqual(r.status, 0, `${sql} must fail`)
    if (pattern) assert.match(r.stderr, pattern, sql)
  }
  assert.equal(ok(m, 'SELECT count(*) FROM rotifer.entries'), '0', "another deployment's rows are invisible")
  assert.equal(ok(m, 'SELECT count(*) FROM rotifer.agents'), '0')
  assert.equal(ok(m, 'SELECT count(*) FROM rotifer.audit'), '0')
  fails("INSERT INTO rotifer.entries (agent_id, key) VALUES ('alice-agent', 'k')", /permission denied/)
  fails("UPDATE rotifer.agents SET quota = 1099511627776", /permission denied/)
  fails('DELETE FROM rotifer.audit', /permission denied/)
  fails('TRUNCATE rotifer.audit', /permission denied/)
  fails('SET ROLE rotifer_owner', /permission denied/)
  fails("SELECT rotifer.purge('alice-agent', 9000000000000, 1, 0)", /permission denied/)
  fails("SELECT rotifer.audit_row('alice-agent', 0, NULL, NULL, 'memory.create', NULL, 'k', NULL, NULL, NULL)", /permission denied/)
  fails("SELECT rotifer.setup_role('x', true)", /permission denied/)
  fails("SELECT * FROM rotifer.memory_read('alice-agent', '" + GENE_A + "', 'text.notes', 'private', NULL, NULL)", /belongs to another deployment/)
  fails("SELECT * FROM rotifer.memory_write('alice-agent', '" + GENE_A + "', 'text.notes', 'k', 'x', 'CACHE', NULL, false, NULL, NULL, NULL)", /belongs to another deployment/)
  // Its own agent: the same rules for forged arguments as for a gene's.
  assert.equal(write(m, { agent: 'mallory-agent', key: 'k', value: { sql: `convert_to(repeat('x', 1048577), 'UTF8')` } }).code, 'MEMORY_INVALID_INPUT')
  assert.equal(write(m, { agent: 'mallory-agent', key: 'k', category: 'cache' }).code, 'MEMORY_INVALID_INPUT')
  assert.equal(write(m, { agent: 'mallory-agent', key: 'k', access: { readScope: 'ALL_GENES', writeScope: 'ALL_GENES', sharePolicy: 'PRIVATE', extra: 1 } }).code, 'MEMORY_INVALID_INPUT')
  assert.equal(ok(roles.alice, "SELECT convert_from(value, 'UTF8') FROM rotifer.entries WHERE key = 'private'"), 'alice secret', 'untouched')
})

test('R-BIND-5: a test clock only for a role set up to allow one', { skip }, (t) => {
  const { roles } = database(t, ['prod'], { testClock: false })
  const r = psql(roles.prod, `SELECT outcome FROM rotifer.memory_read('a', '${GENE_A}', NULL, 'k', NULL, ${T0})`)
  assert.notEqual(r.status, 0)
  assert.match(r.stderr, /may not give its own clock/)
  assert.equal(ok(roles.prod, `SELECT outcome FROM rotifer.memory_read('a', '${GENE_A}', NULL, 'k', NULL, NULL)`), 'none', 'the server clock is always allowed')
})

test('R-BIND-3: the audit is bounded per agent, and the trim is recorded', { skip }, (t) => {
  const { roles, admin } = database(t, ['dep'])
  write(roles.dep, { key: 'k0' })
  write(roles.dep, { agent: 'other', key: 'kept' })
  ok(admin, "UPDATE rotifer.agents SET audit_max_rows = 100 WHERE agent_id = 'agent-1'")
  const calls = Array.from({ length: 150 }, (_, i) => `SELECT 1 FROM rotifer.memory_write('agent-1', '${GENE_A}', 'text.notes', 'k${i}', 'x', 'CACHE', NULL, false, NULL, ${T0 + i}, NULL);`)
  ok(roles.dep, calls.join('\n'))
  const rows = Number(ok(roles.dep, "SELECT count(*) FROM rotifer.audit WHERE agent_id = 'agent-1'"))
  assert.ok(rows <= 100 && rows >= 50, `bounded: ${rows} rows`)
  assert.ok(Number(ok(roles.dep, "SELECT count(*) FROM rotifer.audit WHERE action = 'memory.audit_trim'")) >= 1)
  assert.equal(ok(roles.dep, "SELECT count(*) FROM rotifer.audit WHERE agent_id = 'other'"), '1', "another agent's rows stay")
  assert.equal(ok(roles.dep, "SELECT audit_rows = (SELECT count(*) FROM rotifer.audit WHERE agent_id = 'agent-1') FROM rotifer.agents WHERE agent_id = 'agent-1'"), 't')
})

test('R-BIND-6: attempt records are kept a day, then pruned with the calls that follow', { skip }, (t) => {
  const { roles } = database(t, ['dep'])
  const attempt = (i) => crypto.createHash('md5').update(`attempt-${i}`).digest('hex')
  const writes = (from, count, at) => ok(roles.dep, Array.from({ length: count }, (_, i) =>
    `SELECT 1 FROM rotifer.memory_write('agent-1', '${GENE_A}', 'text.notes', 'k${from + i}', 'x', 'CACHE', NULL, false, NULL, ${at + i}, '${attempt(from + i)}');`).join('\n'))
  const kept = (i) => ok(roles.dep, `SELECT count(*) FROM rotifer.attempts WHERE attempt_id = '${attempt(i)}'`) === '1'
  writes(0, 1, T0)
  writes(1, 70, T0 + 23 * 3600000)
  assert.ok(kept(0), 'an attempt of 23 hours ago still answers a client that lost its acknowledgement')
  writes(100, 70, T0 + 26 * 3600000)
  assert.ok(!kept(0), 'an attempt of more than a day ago is pruned')
  assert.ok(kept(1) && kept(169), 'the attempts of the last day stay')
})

test('setup is idempotent: a second run changes nothing and keeps the data', { skip }, (t) => {
  const { roles, admin } = database(t, ['dep'])
  write(roles.dep, { key: 'kept' })
  const { setupSql } = require('./pg/server')
  ok(admin, setupSql())
  ok(admin, "SELECT rotifer.setup_role(current_database()::name, false)")
  assert.equal(read(roles.dep, { key: 'kept' }).outcome, 'ok')
  assert.equal(ok(admin, 'SELECT count(*) FROM rotifer.schema_version'), '2', 'one row per migration, none twice')
  assert.equal(ok(admin, "SELECT rolconfig::text FROM pg_roles WHERE rolname = current_database()"), '{statement_timeout=8s,lock_timeout=4s,idle_in_transaction_session_timeout=10s}')
  void crypto
})

test('R-BIND-4: with the credentials and any SQL, nothing reaches another deployment: settings, roles, COPY, signals, forged calls', { skip }, async (t) => {
  const { admin, roles } = database(t, ['alice', 'mallory'])
  write(roles.alice, { agent: 'alice-agent', key: "it's 100%_mine", value: 'alice secret' })
  const before = { audit: audit(roles.alice, 'alice-agent'), row: ok(admin, "SELECT quota || ',' || used_bytes || ',' || last_seq || ',' || last_tx FROM rotifer.agents WHERE agent_id = 'alice-agent'") }
  const m = roles.mallory
  const alice = new URL(roles.alice).username
  const mallory = new URL(m).username
  const fails = (sql, pattern) => {
    const r = psql(m, sql)
    assert.notEqual(r.status, 0, `${sql} must fail: ${r.stdout}`)
    assert.match(r.stderr, pattern, sql)
  }
  const sees = (sql, expected) => assert.equal(ok(m, sql), expected, sql)
  // Settings and roles change nothing of whose rows are visible: RLS is keyed on the login.
  fails('SET row_security = off; SELECT count(*) FROM rotifer.entries', /would be affected by row-level security/)
  sees("SELECT set_config('rotifer.agent_id', 'alice-agent', false) || ' ' || (SELECT count(*) FROM rotifer.entries)", 'alice-agent 0')
  sees('SET ROLE rotifer_deployment; SELECT count(*) FROM rotifer.agents', '0')
  fails(`SET SESSION AUTHORIZATION ${alice}`, /permission denied/)
  fails(`ALTER ROLE ${mallory} BYPASSRLS`, /must be superuser/)
  fails(`GRANT rotifer_owner TO ${mallory}`, /admin option/)
  fails(`GRANT ${alice} TO ${mallory}`, /admin option|permission denied/)
  fails('ALTER TABLE rotifer.entries DISABLE ROW LEVEL SECURITY', /must be owner/)
  fails("CREATE FUNCTION rotifer.now_ms() RETURNS bigint LANGUAGE sql AS 'SELECT 0'", /permission denied for schema rotifer/)
  fails('UPDATE rotifer.roles SET test_clock = true', /permission denied/)
  fails('SELECT * FROM rotifer.agents FOR UPDATE', /permission denied/)
  fails("SELECT pg_read_file('pg_hba.conf')", /permission denied/)
  sees('COPY rotifer.entries TO STDOUT', '')
  sees('SELECT count(*) FROM rotifer.roles', '1')
  // A temporary table named as the schema's changes nothing (every name is schema-qualified).
  sees(`CREATE TEMP TABLE entries AS SELECT * FROM rotifer.entries; SELECT outcome FROM rotifer.memory_read('mallory-agent', '${GENE_A}', NULL, 'k', NULL, NULL)`, 'none')
  // Forged calls naming the other deployment's agent: refused, or answered as for no agent.
  for (const call of [
    "rotifer.agent_configure('alice-agent', 1099511627776, true, NULL, true)",
    `rotifer.memory_query('alice-agent', '${GENE_A}', NULL, NULL, NULL, NULL, NULL, 100, NULL)`,
    `rotifer.memory_delete('alice-agent', '${GENE_A}', NULL, ${lit("it's 100%_mine")}, NULL, NULL)`,
  ]) fails(`SELECT * FROM ${call}`, /belongs to another deployment/)
  sees("SELECT coalesce(rotifer.memory_drop_agent('alice-agent')::text, 'nothing')", 'nothing')
  sees(`SELECT * FROM rotifer.memory_deployer_delete('alice-agent', NULL, NULL, ${lit("it's 100%_mine")}, NULL)`, 'ok|0')
  sees("SELECT count(*) FROM rotifer.memory_list('alice-agent', NULL, NULL, NULL, 10, true, NULL) WHERE key IS NOT NULL", '0')
  sees(`SELECT count(*) FROM rotifer.agent_get('alice-agent', ${lit("it's 100%_mine")}, NULL)`, '0')
  fails(`SELECT rotifer.attempt_settle('alice-agent', '${'0'.repeat(32)}')::text`, /belongs to another deployment/)
  // A move's functions (R-MIG-4) on the other deployment's agent: as for no agent, or refused.
  fails('SELECT * FROM rotifer.migrate_hold(\'alice-agent\', NULL)', /has no memory on this server/)
  fails("SELECT rotifer.migrate_arrive('alice-agent', 1000, false, NULL)", /belongs to another deployment/)
  fails(`SELECT rotifer.migrate_mark('alice-agent', '{"state": "moved", "binding": "sqlite", "at": "2026-01-01T00:00:00.000Z", "move": "m"}', 'taken', NULL)`, /has no memory on this server/)
  sees("SELECT rotifer.migrate_arrived('alice-agent', 'm')", 'f')
  // Another deployment's sessions cannot be signalled.
  const { spawn } = require('node:child_process')
  const session = spawn('psql', ['-X', '-q', '-d', roles.alice, '-c', 'SELECT pg_sleep(2)'], { stdio: 'ignore' })
  const ended = new Promise((resolve) => session.on('exit', resolve))
  while (ok(admin, `SELECT count(*) FROM pg_stat_activity WHERE usename = '${alice}' AND state = 'active'`) === '0') await new Promise((r) => setTimeout(r, 20))
  fails(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${alice}'`, /must be a member of the role whose process is being terminated/)
  fails(`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = '${alice}'`, /must be a member of the role whose (process|query) is being canceled/)
  assert.equal(await ended, 0, 'the session ran to its end')
  // Everything of the other deployment is as it was.
  assert.deepEqual(audit(roles.alice, 'alice-agent'), before.audit)
  assert.equal(ok(admin, "SELECT quota || ',' || used_bytes || ',' || last_seq || ',' || last_tx FROM rotifer.agents WHERE agent_id = 'alice-agent'"), before.row)
  assert.equal(ok(admin, "SELECT convert_from(value, 'UTF8') FROM rotifer.entries WHERE agent_id = 'alice-agent'"), 'alice secret')
  assert.equal(ok(admin, "SELECT count(*) FROM rotifer.attempts WHERE agent_id = 'alice-agent'"), '0')
  assert.equal(ok(admin, "SELECT fence IS NULL FROM rotifer.agents WHERE agent_id = 'alice-agent'"), 't', 'no mark on it')
})

test('R-BIND-4: the constraints refuse what no function would store, even for a superuser', { skip }, (t) => {
  const { admin } = database(t, [])
  ok(admin, "INSERT INTO rotifer.agents (agent_id, owner, quota, anonymization_supported, created_ms) VALUES ('a1', 'x', 1000, false, 0)")
  const row = (over) => {
    const v = { key: "'k'", value: "'\\x01'::bytea", size: 2, category: "'CONTEXT'", created_by: lit(GENE_A), domain: "'text.notes'", created_at: 1, updated_at: 1, read: "'SAME_DOMAIN'", ret_set: 'false', ret_days: 'NULL', ...over }
    return `INSERT INTO rotifer.entries VALUES ('a1', ${v.key}, '${'e'.repeat(64)}', ${v.category}, ${v.value}, ${v.size}, ${v.created_by}, ${v.domain}, ${v.created_by}, ${v.created_at}, ${v.updated_at}, 1, ${v.read}, 'ALL_GENES', 'PRIVATE', ${v.ret_set}, ${v.ret_days}, false, false, NULL)`
  }
  ok(admin, row({}))
  for (const [what, over] of [
    ['a size that is not key + value', { key: "'k2'", size: 99 }],
    ['an empty key', { key: "''", size: 1 }],
    ['a key over 1024 bytes', { key: "repeat('k', 1025)", size: 1026 }],
    ['a value over 1 MiB', { key: "'k3'", value: "convert_to(repeat('x', 1048577), 'UTF8')", size: 1048579 }],
    ['an unknown category', { key: "'k4'", category: "'cache'" }],
    ['a creator that is no v2 id', { key: "'k5'", created_by: "'v1:abc'" }],
    ['a domain out of shape', { key: "'k6'", domain: "'Text Notes'" }],
    ['an update before the creation', { key: "'k7'", created_at: 5, updated_at: 4 }],
    ['an unknown scope', { key: "'k8'", read: "'EVERYONE'" }],
    ['retention days without a policy', { key: "'k9'", ret_days: 3 }],
  ]) {
    const r = psql(admin, row(over))
    assert.notEqual(r.status, 0, `${what} is refused`)
    assert.match(r.stderr, /violates check constraint|violates not-null/, what)
  }
  assert.equal(ok(admin, 'SELECT count(*) FROM rotifer.entries'), '1')
})
