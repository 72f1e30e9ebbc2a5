'use strict'
// R-RUN-4: a Hybrid Node gene with a `network` block gets `ctx.gatewayFetch` beside ctx.memory,
// limited as upstream's gateway is (allowedDomains, maxResponseBytes, maxTimeoutMs,
// maxRequestsPerMin). Through the real bin, against an HTTP server this test starts on 127.0.0.1
// only; the refused domain ("localhost") is refused before any connection.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { spawn } = require('node:child_process')
const { BIN, makeProject, addGene } = require('./cli-harness')

/** The bin run without blocking this process (the server answers meanwhile), killed after 30 s. */
function rotiferAsync(cwd, ...args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), 30000)
    child.on('close', (status) => { clearTimeout(timer); resolve({ status, stdout, stderr }) })
  })
}

/** A server on 127.0.0.1: /hello, /big (4096 bytes), /slow (answers after 3 s); counts requests. */
async function startServer(t) {
  const seen = []
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    if (req.url === '/big') return res.end('x'.repeat(4096))
    if (req.url === '/slow') {
      const timer = setTimeout(() => res.end('late'), 3000)
      res.on('close', () => clearTimeout(timer))
      return
    }
    let body = ''
    req.on('data', (d) => { body += d })
    req.on('end', () => res.end(JSON.stringify({ hello: 'world', method: req.method, body })))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) }))
  return { port: server.address().port, seen }
}

// Calls the gateway once per entry of `input.calls` and reports each outcome; counts its runs in
// memory, so the Hybrid gene has both halves of its ctx.
const HYBRID = `
export async function express(input, ctx) {
  const previous = ctx.memory.readMemory('runs')
  const runs = previous ? Number(Buffer.from(previous.value).toString()) + 1 : 1
  ctx.memory.writeMemory('runs', Buffer.from(String(runs)), 'PATTERN')
  const results = []
  for (const call of input.calls) {
    try {
      const r = await ctx.gatewayFetch(call.url, call.options)
      results.push({ status: r.status, body: r.body.length > 100 ? r.body.length : r.body, isTruncated: r.isTruncated })
    } catch (e) {
      results.push({ code: e.code, name: e.name })
    }
  }
  return { runs, results }
}
`

function hybridPhenotype(network, fidelity = 'Hybrid') {
  return { domain: 'net.probe', version: '1.0.0', fidelity, network, inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }
}

test('gatewayFetch: allowed and refused domains, response size, timeout and rate, with memory', async (t) => {
  const { port, seen } = await startServer(t)
  const root = makeProject(t)
  addGene(root, 'fetcher', { 'index.mjs': HYBRID }, {
    phenotype: hybridPhenotype({ allowedDomains: ['127.0.0.1'], maxResponseBytes: 1000, maxTimeoutMs: 500, maxRequestsPerMin: 5 }),
  })
  const created = await rotiferAsync(root, 'agent', 'create', 'net', '--genes', 'fetcher')
  assert.equal(created.status, 0, created.stderr)
  const base = `http://127.0.0.1:${port}`
  const calls = [
    { url: `${base}/hello`, options: { method: 'GET' } },
    { url: `${base}/hello`, options: { body: 'ping' } },
    { url: `http://localhost:${port}/hello` },
    { url: `${base}/big`, options: { method: 'GET' } },
    { url: `${base}/slow`, options: { method: 'GET' } },
    { url: `${base}/hello` },
    { url: `${base}/hello` },
  ]
  const started = Date.now()
  const r = await rotiferAsync(root, 'agent', 'run', 'net', '--input', JSON.stringify({ calls }))
  assert.equal(r.status, 0, r.stderr)
  assert.ok(Date.now() - started < 20000, 'the 500 ms request timeout, not the server')
  const out = JSON.parse(r.stdout)
  assert.equal(out.runs, 1)
  assert.deepEqual(out.results, [
    { status: 200, body: JSON.stringify({ hello: 'world', method: 'GET', body: '' }), isTruncated: false },
    { status: 200, body: JSON.stringify({ hello: 'world', method: 'POST', body: 'ping' }), isTruncated: false },
    { code: 'DOMAIN_BLOCKED', name: 'NetworkGatewayError' },
    { status: 200, body: 1000, isTruncated: true },
    { code: 'TIMEOUT', name: 'NetworkGatewayError' },
    { status: 200, body: JSON.stringify({ hello: 'world', method: 'POST', body: '' }), isTruncated: false },
    { code: 'RATE_LIMITED', name: 'NetworkGatewayError' },
  ])
  // The refused domain and the request over the rate never reached the server; POST is the default.
  assert.deepEqual(seen, ['GET /hello', 'POST /hello', 'GET /big', 'GET /slow', 'POST /hello'])
  // The memory half of ctx persists between runs.
  const again = await rotiferAsync(root, 'agent', 'run', 'net', '--input', JSON.stringify({ calls: [] }))
  assert.deepEqual(JSON.parse(again.stdout), { runs: 2, results: [] })
})

test('"*." domains, the defaults, and genes that get no gateway', async (t) => {
  const { port, seen } = await startServer(t)
  const root = makeProject(t)
  // No limits given: upstream's defaults (1 MiB, 30 s, 10 a minute); "*.0.0.1" allows 127.0.0.1's suffix.
  addGene(root, 'wild', { 'index.mjs': HYBRID }, { phenotype: hybridPhenotype({ allowedDomains: ['*.0.0.1'] }) })
  const probe = 'export function express(input, ctx) { return { gatewayFetch: typeof ctx.gatewayFetch, memory: typeof ctx.memory } }'
  addGene(root, 'wrapped', { 'index.mjs': probe }, { phenotype: hybridPhenotype({ allowedDomains: ['127.0.0.1'] }, 'Wrapped') })
  addGene(root, 'no-network', { 'index.mjs': probe }, { phenotype: { ...hybridPhenotype(undefined), network: undefined } })
  for (const [name, genes] of [['w', ['wild']], ['plain', ['wrapped']], ['bare', ['no-network']]]) {
    const c = await rotiferAsync(root, 'agent', 'create', name, '--genes', ...genes)
    assert.equal(c.status, 0, c.stderr)
  }
  const calls = [{ url: `http://127.0.0.1:${port}/big`, options: { method: 'GET' } }, { url: `http://localhost:${port}/` }]
  const r = await rotiferAsync(root, 'agent', 'run', 'w', '--input', JSON.stringify({ calls }))
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout).results, [{ status: 200, body: 4096, isTruncated: false }, { code: 'DOMAIN_BLOCKED', name: 'NetworkGatewayError' }])
  assert.deepEqual(seen, ['GET /big'])
  for (const name of ['plain', 'bare']) {
    const out = await rotiferAsync(root, 'agent', 'run', name, '--input', '{}')
    assert.deepEqual(JSON.parse(out.stdout), { gatewayFetch: 'undefined', memory: 'object' }, name)
  }
})
