'use strict'
// The test run's throwaway PostgreSQL cluster (scripts/pg-cluster.js): removed on Ctrl-C, swept
// by the next run after a SIGKILL, and a clear line (or, under CI=true, a failure) without
// PostgreSQL's binaries.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { findBinary } = require('../scripts/pg-cluster')

const SCRIPT = path.join(__dirname, '..', 'scripts', 'pg-cluster.js')
const skip = findBinary('initdb') ? false : 'PostgreSQL binaries not installed'
const PRINT_AND_WAIT = 'console.log(JSON.stringify({ data: process.env.ROTIFER_TEST_PG_DATA, pid: process.pid })); setInterval(() => {}, 1000)'

/** Starts the runner with a child that prints the cluster's data folder, then waits. */
function startRunner() {
  const child = spawn(process.execPath, [SCRIPT, '--', process.execPath, '-e', PRINT_AND_WAIT], { stdio: ['ignore', 'pipe', 'pipe'] })
  const ready = new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]))
    })
    child.on('exit', (code) => reject(new Error(`runner exited ${code} before the cluster was ready`)))
  })
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  return { child, data: ready.then((r) => r.data), commandPid: ready.then((r) => r.pid), exit }
}

const postmasterPid = (data) => Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
const alive = (pid) => { try { process.kill(pid, 0); return true } catch (e) { return e.code === 'EPERM' } }

async function until(condition, what) {
  for (let i = 0; i < 200; i++) {
    if (condition()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  assert.fail(`timed out waiting for ${what}`)
}

test('Ctrl-C stops the cluster and removes its folder; the exit code is 130', { skip }, async () => {
  const { child, data, exit } = startRunner()
  const folder = path.dirname(await data)
  const pid = postmasterPid(await data)
  assert.ok(alive(pid), 'the server runs')
  child.kill('SIGINT')
  const { code } = await exit
  assert.equal(code, 130)
  assert.equal(fs.existsSync(folder), false, 'the folder is gone')
  await until(() => !alive(pid), 'the server to stop')
})

test('a runner killed with SIGKILL leaves a folder that the next run sweeps, server and all', { skip }, async () => {
  const first = startRunner()
  const folder = path.dirname(await first.data)
  const pid = postmasterPid(await first.data)
  first.child.kill('SIGKILL')
  await first.exit
  process.kill(await first.commandPid, 'SIGKILL') // the runner's command outlives it, as it would
  assert.ok(fs.existsSync(folder), 'SIGKILL leaves the folder')
  const second = spawnSync(process.execPath, [SCRIPT, '--', process.execPath, '-e', '0'], { encoding: 'utf8' })
  assert.equal(second.status, 0, second.stderr)
  assert.equal(fs.existsSync(folder), false, 'the next run swept it')
  await until(() => !alive(pid), 'the orphaned server to stop')
})

test('without PostgreSQL binaries: one line and the tests run; under CI=true, a failure', () => {
  const env = { ...process.env, PATH: path.dirname(process.execPath), ROTIFER_PG_SEARCH_DIRS: os.tmpdir() }
  delete env.CI
  for (const name of Object.keys(env)) if (name.startsWith('ROTIFER_TEST_PG_')) delete env[name] // this run's own cluster
  const r = spawnSync(process.execPath, [SCRIPT, '--', process.execPath, '-e', 'process.exit(process.env.ROTIFER_TEST_PG_ADMIN_URL ? 3 : 0)'], { encoding: 'utf8', env })
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stderr, /^PostgreSQL tests skipped: .*not found/m)
  assert.equal(r.stderr.trim().split('\n').length, 1, 'one line')
  const ci = spawnSync(process.execPath, [SCRIPT, '--', process.execPath, '-e', '0'], { encoding: 'utf8', env: { ...env, CI: 'true' } })
  assert.equal(ci.status, 1)
  assert.match(ci.stderr, /CI=true/)
})
