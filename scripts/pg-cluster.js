#!/usr/bin/env node
// Runs a command beside a throwaway PostgreSQL cluster: `node scripts/pg-cluster.js -- <command…>`.
//
// The cluster lives in a private temporary folder (initdb as an unprivileged user when run as root,
// since PostgreSQL refuses to run as root), listens on a Unix socket and on 127.0.0.1 (password
// logins over TCP, for the tests that cross a network), with fsync off: it holds test data only.
// The command gets ROTIFER_TEST_PG_ADMIN_URL (the superuser, over the socket) and
// ROTIFER_TEST_PG_PORT. The cluster is stopped and removed when the command ends, and on Ctrl-C or
// SIGTERM; a run killed with SIGKILL leaves its folder, which the next run sweeps.
//
// Without PostgreSQL's binaries the command runs without the variable (the PostgreSQL tests skip
// with one line), except under CI=true, where that fails the run.
'use strict'
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const net = require('node:net')
const { spawn, spawnSync } = require('node:child_process')

const PREFIX = 'rotifer-pg-'
const SUPERUSER = 'rotifer_admin'

function findBinary(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const file = path.join(dir, name)
    if (dir && fs.existsSync(file)) return file
  }
  // Debian's layout; ROTIFER_PG_SEARCH_DIRS replaces it (the test of a machine without PostgreSQL).
  const lib = process.env.ROTIFER_PG_SEARCH_DIRS ?? '/usr/lib/postgresql'
  if (fs.existsSync(lib)) {
    for (const version of fs.readdirSync(lib).sort().reverse()) {
      const file = path.join(lib, version, 'bin', name)
      if (fs.existsSync(file)) return file
    }
  }
  return null
}

/** The user the cluster runs as: ourselves, or `nobody` when we are root. */
function clusterUser() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {}
  const r = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' })
  const g = spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' })
  if (r.status !== 0 || g.status !== 0) throw new Error('running as root, and there is no user "nobody" to run PostgreSQL as')
  return { uid: Number(r.stdout), gid: Number(g.stdout) }
}

/** Removes the folders of earlier runs whose runner is gone (killed with SIGKILL). */
function sweep(tmp) {
  for (const name of fs.readdirSync(tmp)) {
    if (!name.startsWith(PREFIX)) continue
    const folder = path.join(tmp, name)
    const owner = Number(name.slice(PREFIX.length).split('-')[0])
    if (Number.isInteger(owner) && owner > 0 && alive(owner)) continue
    const pidFile = path.join(folder, 'data', 'postmaster.pid')
    if (fs.existsSync(pidFile)) {
      const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0])
      if (pid > 0 && alive(pid)) {
        try { process.kill(pid, 'SIGQUIT') } catch {}
      }
    }
    fs.rmSync(folder, { recursive: true, force: true })
  }
}

function alive(pid) {
  try { process.kill(pid, 0); return true } catch (e) { return e.code === 'EPERM' }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

function run(file, args, options) {
  const r = spawnSync(file, args, { encoding: 'utf8', ...options })
  if (r.status !== 0) throw new Error(`${path.basename(file)} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`)
  return r.stdout
}

/**
 * Starts a cluster; returns { env, stop, user, halt, resume }: `halt()` stops the server at once
 * (`pg_ctl stop -m immediate`: a crash, as far as clients can tell) and `resume()` starts it
 * again on the same port. `durable`: commits are flushed before they are acknowledged
 * (`synchronous_commit` on), for tests that crash the server and count what it acknowledged.
 */
async function start({ durable = false } = {}) {
  const initdb = findBinary('initdb')
  const pgCtl = findBinary('pg_ctl')
  if (!initdb || !pgCtl) return null
  const tmp = os.tmpdir()
  sweep(tmp)
  const folder = fs.mkdtempSync(path.join(tmp, `${PREFIX}${process.pid}-`))
  const user = clusterUser()
  const data = path.join(folder, 'data')
  const socket = path.join(folder, 'socket')
  fs.mkdirSync(socket)
  if (user.uid !== undefined) {
    fs.chownSync(folder, user.uid, user.gid)
    fs.chownSync(socket, user.uid, user.gid)
  }
  fs.chmodSync(folder, 0o700)
  const as = { ...user, cwd: folder, env: { ...process.env, LC_ALL: 'C' } }
  const stop = () => {
    spawnSync(pgCtl, ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '10'], { ...as, stdio: 'ignore' })
    fs.rmSync(folder, { recursive: true, force: true })
  }
  try {
    // The superuser logs in over the socket without a password; every other role and every TCP
    // login uses SCRAM, as a deployment would.
    const hba = path.join(folder, 'pg_hba.conf')
    fs.writeFileSync(hba, [
      `local all ${SUPERUSER} trust`,
      'local all all scram-sha-256',
      'host all all 127.0.0.1/32 scram-sha-256',
      '',
    ].join('\n'))
    if (user.uid !== undefined) fs.chownSync(hba, user.uid, user.gid)
    run(initdb, ['-D', data, '-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], as)
    fs.copyFileSync(hba, path.join(data, 'pg_hba.conf'))
    const port = await freePort()
    const options = [
      `-p ${port}`, `-k ${socket}`, "-c listen_addresses=127.0.0.1",
      // fsync off: only a crash of the machine loses what the server wrote, never one of the server.
      '-c fsync=off', '-c full_page_writes=off', ...(durable ? [] : ['-c synchronous_commit=off']),
      '-c max_connections=200', "-c password_encryption=scram-sha-256",
    ].join(' ')
    const resume = () => run(pgCtl, ['start', '-D', data, '-w', '-t', '60', '-l', path.join(folder, 'server.log'), '-o', options], as)
    const halt = () => run(pgCtl, ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '30'], as)
    resume()
    const env = {
      ROTIFER_TEST_PG_ADMIN_URL: `postgresql://${SUPERUSER}@${encodeURIComponent(socket)}:${port}/postgres`,
      ROTIFER_TEST_PG_PORT: String(port),
      ROTIFER_TEST_PG_SOCKET: socket,
      ROTIFER_TEST_PG_DATA: data,
      ROTIFER_TEST_PG_CTL: pgCtl,
    }
    return { env, stop, user, halt, resume }
  } catch (e) {
    stop()
    throw e
  }
}

async function main() {
  const dash = process.argv.indexOf('--')
  const command = dash === -1 ? process.argv.slice(2) : process.argv.slice(dash + 1)
  if (command.length === 0) {
    process.stderr.write('usage: node scripts/pg-cluster.js -- <command…>\n')
    process.exit(2)
  }
  const cluster = await start()
  const env = { ...process.env }
  if (cluster) Object.assign(env, cluster.env)
  else if (process.env.CI === 'true') {
    process.stderr.write('error: PostgreSQL binaries (initdb, pg_ctl) not found, and CI=true: the PostgreSQL tests cannot be skipped\n')
    process.exit(1)
  } else process.stderr.write('PostgreSQL tests skipped: initdb and pg_ctl not found on PATH or under /usr/lib/postgresql\n')
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit', env })
  let stopped = false
  const stop = () => {
    if (!stopped && cluster) cluster.stop()
    stopped = true
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      try { child.kill(signal) } catch {}
    })
  }
  child.on('exit', (code, signal) => {
    stop()
    if (signal) process.exit(128 + (os.constants.signals[signal] || 0))
    process.exit(code ?? 1)
  })
}

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(`error: ${e.message}\n`)
    process.exit(1)
  })
}

module.exports = { start, sweep, findBinary }
