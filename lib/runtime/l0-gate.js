'use strict'
// The L0 gate (R-RUN-3): upstream's pre-execution check, made before a gene's code is loaded,
// on every path that runs a gene (agent run, run, test, runGene; compiled or not, --no-sandbox
// included). It checks what the gene declares against what this runtime grants, with upstream's
// checks and messages (crates/rotifer-core/src/l0/gate.rs), in its permissive mode: only what is
// declared is checked.
//
// A gene declares its permissions in its phenotype's `permissions`, upstream's PermissionSet
// (`{ allowed_domains, resource_limits: { max_memory_bytes, max_execution_time_ms,
// max_fuel_units }, network_access, file_system_access }`, every field optional). The
// constraints are the sandbox's bounds (its memory cap and fuel) and the run's timeout.
//
// Three outcomes, as upstream's evaluateL0: `pass`; `violation` (the gate ran and says no: the
// gene never runs); `unavailable` (the gate could not judge: its permissions do not read, or the
// native binding is missing). An unavailable gate refuses an installed gene (a
// `.cloud-manifest.json` written by an installer) and lets the project's own gene run, with a
// warning, as upstream does.

const fs = require('node:fs')
const path = require('node:path')
const native = require('../native')
const { CliError } = require('../cli/errors')

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const isCount = (v) => Number.isSafeInteger(v) && v >= 0
const isStringList = (v) => Array.isArray(v) && v.every((s) => typeof s === 'string')
const LIMITS = ['max_memory_bytes', 'max_execution_time_ms', 'max_fuel_units']

/**
 * The permissions `phenotype` declares, as `{ permissions }` (`{}` when it declares none), or
 * `{ problem }` naming the field that does not read as upstream's PermissionSet.
 */
function declaredPermissions(phenotype) {
  if (!('permissions' in phenotype)) return { permissions: {} }
  const p = phenotype.permissions
  if (!isObject(p)) return { problem: `"permissions" must be an object, not ${JSON.stringify(p)}` }
  if (p.allowed_domains != null && !isStringList(p.allowed_domains)) return { problem: '"permissions.allowed_domains" must be an array of domains' }
  if (p.resource_limits != null) {
    if (!isObject(p.resource_limits)) return { problem: '"permissions.resource_limits" must be an object' }
    for (const k of LIMITS) {
      const v = p.resource_limits[k]
      if (v != null && !isCount(v)) return { problem: `"permissions.resource_limits.${k}" must be a whole number, not ${JSON.stringify(v)}` }
    }
  }
  if (p.network_access != null && typeof p.network_access !== 'boolean') return { problem: '"permissions.network_access" must be true or false' }
  if (p.file_system_access != null && !isStringList(p.file_system_access)) return { problem: '"permissions.file_system_access" must be an array of paths' }
  return { permissions: p }
}

/**
 * Upstream's L0Gate::check of a gene in `domain` with `permissions` against `constraints`
 * (`{ maxMemoryBytes, maxFuel, maxExecutionTimeMs }`): `{ passed, violations, checksPerformed }`,
 * each violation upstream's message.
 */
function l0Check(domain, permissions, constraints) {
  const violations = []
  let checksPerformed = 0
  if (Array.isArray(permissions.allowed_domains)) {
    checksPerformed++
    if (!permissions.allowed_domains.some((d) => domain === d || domain.startsWith(`${d}.`))) violations.push(`domain '${domain}' is not in the allowed list`)
  }
  const limits = permissions.resource_limits || {}
  const over = (requested, limit, text) => {
    if (requested == null) return
    checksPerformed++
    if (requested > limit) violations.push(text(requested, limit))
  }
  over(limits.max_memory_bytes, constraints.maxMemoryBytes, (r, l) => `requested memory ${r} bytes exceeds limit ${l} bytes`)
  over(limits.max_fuel_units, constraints.maxFuel, (r, l) => `requested fuel ${r} exceeds limit ${l}`)
  over(limits.max_execution_time_ms, constraints.maxExecutionTimeMs, (r, l) => `execution timeout ${r}ms exceeds limit ${l}ms`)
  // Network: permissive, as upstream's; a call the gene was not granted is refused when made
  // (the gateway of a Hybrid gene, no network at all in the sandbox).
  checksPerformed++
  if (Array.isArray(permissions.file_system_access)) {
    checksPerformed++
    for (const p of permissions.file_system_access) {
      if (p.includes('..') || p.startsWith('/')) violations.push(`filesystem access to '${p}' not permitted`)
    }
  }
  return { passed: violations.length === 0, violations, checksPerformed }
}

/** The constraints a run within `seconds` gets; null when the native binding is missing. */
function runConstraints(seconds) {
  if (!native || typeof native.wasmLimits !== 'function') return null
  const limits = native.wasmLimits()
  return { maxMemoryBytes: limits.memoryBytes, maxFuel: limits.fuel, maxExecutionTimeMs: Math.round(seconds * 1000) }
}

/** Upstream's evaluateL0 for `gene` (from readGene) run within `seconds`. */
function evaluateL0(gene, seconds) {
  const constraints = runConstraints(seconds)
  if (!constraints) return { kind: 'unavailable', detail: 'native addon failed to load' }
  const { permissions, problem } = declaredPermissions(gene.phenotype)
  if (problem) return { kind: 'unavailable', detail: `phenotype unreadable (${problem})` }
  const result = l0Check(gene.domain, permissions, constraints)
  return result.passed ? { kind: 'pass', checksPerformed: result.checksPerformed } : { kind: 'violation', detail: result.violations.join('; ') }
}

/**
 * True when the gene in `dir` came from elsewhere: its `.cloud-manifest.json` was written by an
 * installer (`installed_at`). A manifest written by publishing (`published_at` only) is the
 * author's own gene; anything else (no stamp, both, unreadable) counts as installed: fail closed.
 */
function isExternallySourced(dir) {
  const file = path.join(dir, '.cloud-manifest.json')
  if (!fs.existsSync(file)) return false
  try {
    const m = JSON.parse(fs.readFileSync(file, 'utf8'))
    return !(isObject(m) && typeof m.published_at === 'string' && !('installed_at' in m))
  } catch {
    return true
  }
}

/**
 * Passes `gene` through the gate before it is loaded: throws CliError `L0 gate blocked '<gene>':
 * …` (exit 1) on a violation, or when the gate cannot run on an installed gene; `notice(line)`
 * receives the warning when it cannot run on a local one.
 */
function gateGene(gene, { seconds, notice }) {
  const l0 = evaluateL0(gene, seconds)
  if (l0.kind === 'violation') {
    throw new CliError(`L0 gate blocked '${gene.name}': ${l0.detail} (the "permissions" of ${path.join(gene.where, 'phenotype.json')} ask for more than this runtime grants; the gene was not run)`)
  }
  if (l0.kind === 'unavailable') {
    if (isExternallySourced(gene.dir)) throw new CliError(`L0 gate blocked '${gene.name}': could not run (${l0.detail}) on an installed gene; it was not run`)
    notice(`warning: L0 gate could not run (${l0.detail}) — running this local gene unchecked.`)
  }
  return l0
}

module.exports = { declaredPermissions, l0Check, evaluateL0, isExternallySourced, gateGene }
