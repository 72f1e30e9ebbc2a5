'use strict'
// `ctx.gatewayFetch` for a Hybrid gene (R-RUN-4): the only network a gene's phenotype declares,
// with the limits upstream's gateway enforces (`src/runtime/network-gateway.ts`): the host must be
// one of `network.allowedDomains` ("*.example.com" also allows example.com itself), each request
// is stopped after `maxTimeoutMs` (default 30000), a response body is cut at `maxResponseBytes`
// (default 1 MiB; `isTruncated` says so), and at most `maxRequestsPerMin` requests (default 10)
// start in any 60 s. A gateway lives for one run of the gene, as upstream's does.
//
// `gatewayFetch(url, { method = "POST", headers, body })` resolves to `{ status, headers, body,
// isTruncated }`, or rejects with a NetworkGatewayError whose `code` is DOMAIN_BLOCKED,
// RATE_LIMITED, TIMEOUT or NETWORK_ERROR. A refused request never reaches the network.

const DEFAULTS = { allowedDomains: [], maxTimeoutMs: 30000, maxResponseBytes: 1048576, maxRequestsPerMin: 10 }
const WINDOW_MS = 60000

class NetworkGatewayError extends Error {
  constructor(code, message) {
    super(message)
    this.name = 'NetworkGatewayError'
    this.code = code
  }
}

/** True when `hostname` is one `allowedDomains` names. */
function isAllowed(hostname, allowedDomains) {
  return allowedDomains.some((d) => (d.startsWith('*.') ? hostname.endsWith(d.slice(1)) || hostname === d.slice(2) : hostname === d))
}

/** Reads `response`'s body up to `max` bytes: `{ text, isTruncated }`. */
async function readCapped(response, max) {
  if (!response.body) return { text: '', isTruncated: false }
  const reader = response.body.getReader()
  const chunks = []
  let size = 0
  let isTruncated = false
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (size + value.length > max) {
      if (max > size) chunks.push(value.subarray(0, max - size))
      isTruncated = true
      reader.cancel().catch(() => {})
      break
    }
    chunks.push(value)
    size += value.length
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), isTruncated }
}

/**
 * A gateway for the phenotype's `network` block: `{ gatewayFetch, stats() }`. `now` is the clock
 * of the rate window.
 */
function createGateway(network, { now = Date.now } = {}) {
  const config = { ...DEFAULTS, ...network }
  const allowed = Array.isArray(config.allowedDomains) ? config.allowedDomains : []
  let started = []
  let totalRequests = 0
  let totalBytes = 0

  async function gatewayFetch(url, options = {}) {
    let hostname
    try {
      hostname = new URL(String(url)).hostname
    } catch {
      throw new NetworkGatewayError('DOMAIN_BLOCKED', `Invalid URL: ${url}`)
    }
    if (!isAllowed(hostname, allowed)) {
      throw new NetworkGatewayError('DOMAIN_BLOCKED', `Domain "${hostname}" is not in the allowed list: [${allowed.join(', ')}]; add it to network.allowedDomains in the gene's phenotype.json`)
    }
    const t = now()
    started = started.filter((s) => s > t - WINDOW_MS)
    if (started.length >= config.maxRequestsPerMin) {
      throw new NetworkGatewayError('RATE_LIMITED', `Rate limit exceeded: ${config.maxRequestsPerMin} requests/minute (network.maxRequestsPerMin)`)
    }
    started.push(t)
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), config.maxTimeoutMs)
    try {
      const response = await fetch(url, { method: options.method || 'POST', headers: options.headers, body: options.body, signal: controller.signal, redirect: 'manual' })
      const { text, isTruncated } = await readCapped(response, config.maxResponseBytes)
      totalRequests++
      totalBytes += text.length
      const headers = {}
      response.headers.forEach((v, k) => { headers[k] = v })
      return { status: response.status, headers, body: text, isTruncated }
    } catch (e) {
      if (e instanceof NetworkGatewayError) throw e
      if (controller.signal.aborted) throw new NetworkGatewayError('TIMEOUT', `Request to ${url} timed out after ${config.maxTimeoutMs}ms (network.maxTimeoutMs)`)
      throw new NetworkGatewayError('NETWORK_ERROR', `Request to ${url} failed: ${e.cause && e.cause.message ? e.cause.message : e.message}`)
    } finally {
      clearTimeout(timer)
    }
  }

  return { gatewayFetch, stats: () => ({ totalRequests, totalBytes, windowRequests: started.length }) }
}

module.exports = { createGateway, NetworkGatewayError, DEFAULTS }
