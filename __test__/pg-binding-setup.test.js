'use strict'
// `rotifer binding setup` through the real bin (R-BIND-4): a new database set up, then set up
// again (idempotent), a deployment's role made with the password read from stdin, the URL it
// prints used as ROTIFER_MEMORY_URL by an agent's genes, agents owned by the role. No output
// ever holds a password, the administrator's or the role's.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const { BIN, makeProject, addGene, PROBE, steps } = require('./cli-harness')
const { unavailable, ok, psql, withDatabase } = require('./pg/server')

const skip = unavailable() || false
const ADMIN = process.env.ROTIFER_TEST_PG_ADMIN_URL
const lit = (s) => `'${String(s).replace(/'/g, "''")}'`

const secrets = new Set()

function rotifer(cwd, args, { input = '', env = {} } = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, input, encoding: 'utf8', env: { ...process.env, ...env } })
  for (const s of secrets) assert.ok(!r.stdout.includes(s) && !r.stderr.includes(s), `rotifer ${args[0]} ${args[1]} printed a password:\n${r.stdout}\n${r.stderr}`)
  return r
}

/** A new, empty database (no schema) dropped after the test, with its roles; its admin URL. */
function emptyDatabase(t) {
  const db = 'rotifer_b_' + crypto.randomBytes(5).toString('hex')
  ok(ADMIN, `CREATE DATABASE ${db}`)
  const roles = []
  t.after(() => {
    psql(ADMIN, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)
    for (const r of roles) psql(ADMIN, `DROP ROLE IF EXISTS ${r}`)
  })
  return { db, admin: withDatabase(ADMIN, db), role: (name) => (roles.push(`${name}_${db.slice(-6)}`), `${name}_${db.slice(-6)}`) }
}

/** The role's URL as printed, over TCP with its password: what a host puts in ROTIFER_MEMORY_URL. */
function withPassword(printed, password) {
  const u = new URL(printed)
  return `postgresql://${u.username}:${password}@127.0.0.1:${process.env.ROTIFER_TEST_PG_PORT}${u.pathname}?sslmode=disable`
}

describe('rotifer binding setup (R-BIND-4)', { skip }, () => {
  test('sets up a database once, a second run changes nothing, and the role it makes serves an agent', (t) => {
    const d = emptyDatabase(t)
    const role = d.role('fleet')
    const password = 'pw-' + crypto.randomBytes(9).toString('hex')
    secrets.add(password)
    const cwd = makeProject(t)

    const first = rotifer(cwd, ['binding', 'setup', d.admin, '--role', role, '--password-stdin', '--json'], { input: password + '\n' })
    assert.equal(first.status, 0, first.stderr)
    const report = JSON.parse(first.stdout)
    assert.equal(report.schema.from, 0)
    assert.ok(report.schema.to >= 1, first.stdout)
    assert.equal(report.role, role)
    assert.equal(report.passwordSet, true)
    const printed = new URL(report.url)
    assert.equal(printed.username, role)
    assert.equal(printed.password, '', 'the URL holds no password')
    assert.equal(printed.pathname, `/${d.db}`)
    assert.equal(ok(d.admin, 'SELECT max(version) FROM rotifer.schema_version'), String(report.schema.to))
    // The server keeps a SCRAM verifier: the password never went as text.
    assert.match(ok(ADMIN, `SELECT rolpassword FROM pg_authid WHERE rolname = ${lit(role)}`), /^SCRAM-SHA-256\$/)
    assert.equal(ok(ADMIN, `SELECT rolsuper OR rolbypassrls OR rolcreaterole OR rolcreatedb FROM pg_roles WHERE rolname = ${lit(role)}`), 'f')
    assert.equal(ok(ADMIN, `SELECT pg_has_role(${lit(role)}, 'rotifer_deployment', 'MEMBER')`), 't')
    const settings = ok(ADMIN, `SELECT string_agg(s, ',' ORDER BY s) FROM pg_db_role_setting, unnest(setconfig) s WHERE setrole = (SELECT oid FROM pg_roles WHERE rolname = ${lit(role)})`)
    assert.equal(settings, 'idle_in_transaction_session_timeout=10s,lock_timeout=4s,statement_timeout=8s')

    // Again, in text: up to date, the role still logs in with its password.
    const again = rotifer(cwd, ['binding', 'setup', d.admin, '--role', role])
    assert.equal(again.status, 0, again.stderr)
    assert.match(again.stdout, new RegExp(`^memory schema: version ${report.schema.to}, up to date`))
    assert.match(again.stdout, new RegExp(`\\nrole ${role}: ready \\(no password set here`))
    assert.match(again.stdout, new RegExp(`\\nurl: ${report.url.replace(/[.?*+^$()[\]\\|]/g, '\\$&')}\\n`))
    assert.equal(ok(d.admin, 'SELECT count(*) FROM rotifer.schema_version'), String(report.schema.to), 'no migration ran twice')

    // The URL, with the password added, is all a host needs: the agent's memory goes there, owned by the role.
    const url = withPassword(report.url, password)
    addGene(cwd, 'probe', { 'index.js': PROBE })
    const env = { ROTIFER_MEMORY_URL: url }
    const created = rotifer(cwd, ['agent', 'create', 'fleet-agent', '--genes', 'probe'], { env })
    assert.equal(created.status, 0, created.stderr)
    const id = /id\s+([0-9a-f-]{36})/.exec(created.stdout)[1]
    const ran = rotifer(cwd, ['agent', 'run', 'fleet-agent', '--input', steps([{ write: 'fleet/k', value: 'remembered', category: 'CONTEXT' }])], { env })
    assert.equal(ran.status, 0, ran.stderr)
    assert.equal(ok(d.admin, `SELECT owner || ' ' || convert_from(e.value, 'UTF8') FROM rotifer.agents a JOIN rotifer.entries e USING (agent_id) WHERE agent_id = ${lit(id)}`), `${role} remembered`)
  })

  test("another deployment's role reaches nothing of the first one's agents", (t) => {
    const d = emptyDatabase(t)
    const [a, b] = [d.role('one'), d.role('two')]
    const [pa, pb] = ['pa-' + crypto.randomBytes(8).toString('hex'), 'pb-' + crypto.randomBytes(8).toString('hex')]
    secrets.add(pa)
    secrets.add(pb)
    const cwd = makeProject(t)
    const urls = {}
    for (const [role, pw] of [[a, pa], [b, pb]]) {
      const r = rotifer(cwd, ['binding', 'setup', d.admin, '--role', role, '--password-stdin', '--json'], { input: pw })
      assert.equal(r.status, 0, r.stderr)
      urls[role] = withPassword(JSON.parse(r.stdout).url, pw)
    }
    addGene(cwd, 'probe', { 'index.js': PROBE })
    const created = rotifer(cwd, ['agent', 'create', 'mine', '--genes', 'probe', '--memory-url', urls[a]])
    assert.equal(created.status, 0, created.stderr)
    const id = /id\s+([0-9a-f-]{36})/.exec(created.stdout)[1]
    assert.equal(rotifer(cwd, ['agent', 'run', 'mine', '--input', steps([{ write: 'k', value: 'v', category: 'CONTEXT' }])]).status, 0)
    // As the second role: its SELECTs see no row, and the calls find no agent.
    const seen = psql(urls[b], `SELECT (SELECT count(*) FROM rotifer.agents) || ',' || (SELECT count(*) FROM rotifer.entries) || ',' || (SELECT count(*) FROM rotifer.audit)`)
    assert.equal(seen.status, 0, seen.stderr)
    assert.equal(seen.stdout, '0,0,0')
    for (const call of [
      `rotifer.memory_read(${lit(id)}, 'v2:${'a'.repeat(64)}', NULL, 'k', NULL, NULL)`,
      `rotifer.memory_delete(${lit(id)}, 'v2:${'a'.repeat(64)}', NULL, 'k', NULL, NULL)`,
    ]) {
      const r = psql(urls[b], `SELECT * FROM ${call}`)
      assert.notEqual(r.status, 0, r.stdout)
      assert.match(r.stderr, /belongs to another deployment/)
    }
    assert.equal(ok(d.admin, `SELECT count(*) FROM rotifer.entries WHERE agent_id = ${lit(id)}`), '1')
  })

  test('refusals: a role without --role, a bad or reserved role name, an empty password, an unreachable server', (t) => {
    const d = emptyDatabase(t)
    const cwd = makeProject(t)
    const noRole = rotifer(cwd, ['binding', 'setup', d.admin, '--password-stdin'], { input: 'x' })
    assert.equal(noRole.status, 2)
    assert.match(noRole.stderr, /--password-stdin sets the password of a role: give --role too/)
    const badName = rotifer(cwd, ['binding', 'setup', d.admin, '--role', 'pg_mine'])
    assert.equal(badName.status, 1)
    assert.match(badName.stderr, /MEMORY_INVALID_INPUT.*invalid role name "pg_mine"/)
    const empty = rotifer(cwd, ['binding', 'setup', d.admin, '--role', d.role('e'), '--password-stdin'], { input: '\n' })
    assert.equal(empty.status, 2)
    assert.match(empty.stderr, /stdin held no password/)
    assert.equal(ok(d.admin, "SELECT to_regclass('rotifer.schema_version') IS NULL"), 't', 'a refused command set up nothing')
    // The administrator itself: a superuser is no deployment's role.
    const superuser = rotifer(cwd, ['binding', 'setup', d.admin, '--role', new URL(ADMIN).username])
    assert.equal(superuser.status, 1)
    assert.match(superuser.stderr, /is a superuser, creates roles or bypasses row-level security/)
    // A role that could act as the schema's owner (an administrator on a managed server is one).
    const ops = d.role('ops')
    ok(ADMIN, `CREATE ROLE ${ops} LOGIN; GRANT rotifer_owner TO ${ops}`)
    const owner = rotifer(cwd, ['binding', 'setup', d.admin, '--role', ops])
    assert.equal(owner.status, 1)
    assert.match(owner.stderr, /can act as the schema's owner/)
    assert.equal(ok(ADMIN, `SELECT pg_has_role('${ops}', 'rotifer_deployment', 'MEMBER')`), 'f', 'nothing granted')
    const notUrl = rotifer(cwd, ['binding', 'setup', 'host=db user=admin'])
    assert.equal(notUrl.status, 1)
    assert.match(notUrl.stderr, /must be a postgres:\/\/ or postgresql:\/\/ URL/)
    const secret = 'adm-' + crypto.randomBytes(8).toString('hex')
    secrets.add(secret)
    const away = rotifer(cwd, ['binding', 'setup', `postgresql://admin:${secret}@127.0.0.1:1/app`, '--role', 'fleet'])
    assert.equal(away.status, 1)
    assert.match(away.stderr, /MEMORY_STORAGE_ERROR.*postgresql:\/\/admin:\*\*\*@127\.0\.0\.1:1\/app/)
  })
})
