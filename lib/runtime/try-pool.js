'use strict'
// TryPool (R-RUN-7): upstream's domain failover (`src/runtime/domain-failover.ts`). The genome's
// genes are pooled by their phenotype's domain; each domain runs its active gene (the first of
// the domain, or the fittest by the saved state) on the input, and on a failure tries the others,
// fittest first, until one succeeds. Success adds 0.05 to a gene's fitness (at most 1), failure
// takes 0.15 (at least 0); every gene starts at 0.5. The output is `{ <domain>: output }`; a
// domain where every gene failed fails the run, after the state is saved. Domains run one after
// another, in the order of the genome (upstream starts them together); every gene uses memory.

const { isRecoverable } = require('./failures')
const { CliError } = require('../cli/errors')
const { printable } = require('../cli/terminal-text')

const INITIAL = 0.5
const REWARD = 0.05
const PENALTY = 0.15

/**
 * Runs the pool of `genes` (name → gene with `domain`) over `names` (the genome) on `input`.
 * `state`: the saved figures (gene → {fitness, successes, failures}); `runGene(name, input)`;
 * `step(line)` hears of each attempt. Resolves to `{ output, state }`, or rejects with a
 * CliError naming the domains that failed, whose `state` is the figures to save.
 */
async function runTryPool({ names, genes, input, state, runGene, step = () => {} }) {
  const pools = new Map()
  const entries = new Map()
  for (const name of names) {
    if (entries.has(name)) continue
    const saved = state[name]
    const entry = { name, fitness: saved ? saved.fitness : INITIAL, successes: saved ? saved.successes : 0, failures: saved ? saved.failures : 0 }
    entries.set(name, entry)
    const domain = genes.get(name).domain
    if (!pools.has(domain)) pools.set(domain, [])
    pools.get(domain).push(entry)
  }
  // Fittest first; among equals, the order of the genome (a stable sort).
  const ranked = (domain) => [...pools.get(domain)].sort((a, b) => b.fitness - a.fitness)
  const output = {}
  const failed = []
  for (const domain of pools.keys()) {
    // Upstream's active gene: the first of the domain, or the fittest once a state is saved.
    const active = ranked(domain)[0]
    const errors = []
    let done = false
    for (const candidate of [active, ...ranked(domain).filter((e) => e !== active)]) {
      try {
        const value = await runGene(candidate.name, input)
        candidate.successes++
        candidate.fitness = Math.min(1, candidate.fitness + REWARD)
        step(`TryPool ${domain}: ${candidate.name} succeeded${candidate === active ? '' : ` (switched from ${active.name})`}`)
        output[domain] = value
        done = true
        break
      } catch (e) {
        if (!isRecoverable(e)) throw Object.assign(e, { state: stateOf(entries) })
        candidate.failures++
        candidate.fitness = Math.max(0, candidate.fitness - PENALTY)
        step(`TryPool ${domain}: ${candidate.name} failed (${printable(`${e.code}: ${e.reason}`)})`)
        errors.push(`${candidate.name}: ${printable(`${e.code}: ${e.reason}`)}`)
      }
    }
    if (!done) failed.push(`${domain} (${errors.join('; ')})`)
  }
  if (failed.length > 0) {
    throw Object.assign(new CliError(`TryPool: every gene of ${failed.length === 1 ? 'domain' : 'domains'} ${failed.join(', ')} failed`), { state: stateOf(entries) })
  }
  return { output, state: stateOf(entries) }
}

function stateOf(entries) {
  return Object.fromEntries([...entries.values()].map((e) => [e.name, { fitness: e.fitness, successes: e.successes, failures: e.failures }]))
}

module.exports = { runTryPool }
