'use strict'
// The PostgreSQL cluster of a test run (scripts/pg-cluster.js starts it): a database per test
// file, set up from core/src/postgres/sql/order.txt, and psql sessions as its roles.
const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { spawnSync } = require('node:child_process')

const SQL = path.join(__dirname, '..', '..', 'core', 'src', 'postgres', 'sql')
const ADMIN = process.env.ROTIFER_TEST_PG_ADMIN_URL

/** Why PostgreSQL tests cannot run here, or null. */
function unavailable() {
  return ADMIN ? null : 'no PostgreSQL cluster (run the tests with `npm test`, which starts one)'
}

function withDatabase(url, db) {
  const u = new URL(url)
  u.pathname = '/' + db
  return u.toString()
}

/** Runs `sql` through psql at `url`; answers { status, stdout, stderr }. */
function psql(url, sql, { env = {}, vars = {} } = {}) {
  const args = ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url]
  for (const [k, v] of Object.entries(vars)) args.push('-v', `${k}=${v}`)
  const r = spawnSync('psql', args, { input: sql, encoding: 'utf8', env: { ...process.env, PGCLIENTENCODING: 'UTF8', ...env } })
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() }
}

function ok(url, sql, options) {
  const r = psql(url, sql, options)
  if (r.status !== 0) throw new Error(`psql failed (${r.status}): ${r.stderr}\n--- sql:\n${sql.slice(0, 2000)}`)
  return r.stdout
}

/** The setup as one transaction, in the order of order.txt. */
function setupSql() {
  const parts = []
  const lines = fs.readFileSync(path.join(SQL, 'order.txt'), 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'))
  const roles = []
  parts.push('BEGIN;')
  parts.push("SELECT to_regclass('rotifer.schema_version') IS NULL AS fresh \\gset")
  parts.push("\\if :fresh\n\\set have 0\n\\else\nSELECT max(version) AS have FROM rotifer.schema_version \\gset\n\\endif")
  for (const line of lines) {
    const f = line.split(/\s+/)
    if (f[0] === 'roles') roles.push(fs.readFileSync(path.join(SQL, f[1]), 'utf8'))
    else if (f[0] === 'migration') {
      parts.push(`SELECT :have < ${f[1]} AS need \\gset`)
      parts.push(`\\if :need\n${fs.readFileSync(path.join(SQL, f[2]), 'utf8')}\nINSERT INTO rotifer.schema_version (version) VALUES (${f[1]});\n\\endif`)
    } else if (f[0] === 'function') parts.push(`SET LOCAL ROLE rotifer_owner;\n${fs.readFileSync(path.join(SQL, f[1]), 'utf8')}\nRESET ROLE;`)
    else if (f[0] === 'grants') parts.push(fs.readFileSync(path.join(SQL, f[1]), 'utf8'))
  }
  parts.push('COMMIT;')
  return roles.join('\n') + '\n' + parts.join('\n')
}

/** A fresh database, set up, with login roles `names` (passwords random); answers urls. */
function database(t, names, { testClock = true } = {}) {
  const db = 'rotifer_t_' + crypto.randomBytes(6).toString('hex')
  ok(ADMIN, `CREATE DATABASE ${db}`)
  t.after(() => psql(ADMIN, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`))
  const admin = withDatabase(ADMIN, db)
  ok(admin, setupSql())
  const roles = {}
  for (const name of names) {
    const role = `${name}_${db.slice(-6)}`
    const password = crypto.randomBytes(12).toString('hex')
    ok(admin, `SELECT rotifer.setup_role('${role}', ${testClock}); ALTER ROLE ${role} PASSWORD '${password}';`)
    t.after(() => psql(ADMIN, `DROP OWNED BY ${role} CASCADE; DROP ROLE IF EXISTS ${role}`))
    const u = new URL(admin)
    u.username = role
    u.password = password
    roles[name] = u.toString()
  }
  return { admin, db, roles }
}

module.exports = { unavailable, psql, ok, setupSql, database, withDatabase }
