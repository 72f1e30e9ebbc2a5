'use strict'
// Evaluating a composition plan (R-RUN-7) with upstream's semantics
// (crates/rotifer-core/src/algebra/executor.rs): Seq feeds each output to the next gene, Par
// gives every branch the same input and merges (WaitAll: {branch_0, …}; FirstSuccess; Majority),
// Cond picks a branch on a top-level field of the input, Try hands its fallback
// {error, original_input}. The plan comes from lib/formats/composition.js; TryPool is
// try-pool.js's. Genes are run through `env.runGene`; this file only decides which gene gets
// which input and how results merge.

const { isDeepStrictEqual } = require('node:util')
const { CompositionFailure, isRecoverable } = require('./failures')
const { leaves } = require('../formats/composition')

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Cond: the predicate on the input's top-level field. */
function holds({ field, op, value }, input) {
  const actual = isObject(input) && Object.prototype.hasOwnProperty.call(input, field) ? input[field] : undefined
  const comparable = (typeof actual === 'number' && typeof value === 'number') || (typeof actual === 'string' && typeof value === 'string')
  switch (op) {
    case 'Eq': return isDeepStrictEqual(actual, value)
    case 'Neq': return !isDeepStrictEqual(actual, value)
    case 'Gt': return comparable && actual > value
    case 'Lt': return comparable && actual < value
    case 'Gte': return comparable && actual >= value
    case 'Lte': return comparable && actual <= value
    case 'Contains':
      if (typeof actual === 'string') return typeof value === 'string' && actual.includes(value)
      if (Array.isArray(actual)) return actual.some((item) => isDeepStrictEqual(item, value))
      return false
  }
  return false
}

/** The input `Try` gives its fallback. */
function fallbackInput(error, input) {
  return {
    error: {
      code: error.code,
      message: error.reason,
      retryable: error.code === 'TIMEOUT',
      details: error.details || { gene: error.gene },
    },
    original_input: input,
  }
}

/** A Par merge over the branch results (`{ ok, value }` / `{ ok: false, error }`). */
function merge(node, results) {
  const successes = results.filter((r) => r.ok)
  const failed = results.map((r, i) => (r.ok ? null : `branch_${i}: ${r.error.message}`)).filter(Boolean)
  const details = { branches: results.map((r, i) => (r.ok ? { branch: i, ok: true } : { branch: i, ok: false, code: r.error.code, message: r.error.reason })) }
  switch (node.merge) {
    case 'WaitAll': {
      const first = results.find((r) => !r.ok)
      if (first) throw first.error
      return Object.fromEntries(results.map((r, i) => [`branch_${i}`, r.value]))
    }
    case 'FirstSuccess':
      if (successes.length > 0) return successes[0].value
      throw new CompositionFailure('PAR_NO_SUCCESS', `Par (FirstSuccess): no branch succeeded (${failed.join('; ')})`, details)
    case 'Majority':
      if (successes.length * 2 > results.length) return successes[0].value
      throw new CompositionFailure('PAR_NO_MAJORITY', `Par (Majority): ${successes.length} of ${results.length} branches succeeded, not more than half (${failed.join('; ')})`, details)
  }
  throw new Error(`unknown merge ${node.merge}`)
}

/**
 * Evaluates `node` on `input`. `env`: `runGene(name, input, deadline)` → output (throws the
 * runtime's failures), `isWasm(name)`, `notice(text)` (one line for stderr), `deadline` (the
 * run's, ms since the epoch).
 */
async function evaluate(node, input, env, deadline = env.deadline) {
  switch (node.type) {
    case 'Gene':
      return env.runGene(node.name, input, deadline)
    case 'Seq': {
      let value = input
      for (const step of node.steps) value = await evaluate(step, value, env, deadline)
      return value
    }
  }
  // R-RUN-7: a Par, Cond or Try holding a gene that is not compiled runs all its genes in order
  // (upstream's sequential fallback), so that every gene can use memory.
  const names = leaves(node)
  const notWasm = [...new Set(names.filter((n) => !env.isWasm(n)))]
  if (notWasm.length > 0) {
    env.notice(`note: ${node.type} of ${names.join(', ')} holds genes that are not compiled (${notWasm.join(', ')}); falling back to sequential execution, as upstream does: its genes run once each, in written order, as a sequence, and every one uses memory`)
    let value = input
    for (const name of names) value = await env.runGene(name, value, deadline)
    return value
  }
  switch (node.type) {
    case 'Par': {
      const results = []
      // Branches run one after another, each on the same input, and all of them run; as if they
      // ran side by side, each has the whole Par deadline from its own start.
      for (const branch of node.branches) {
        const branchDeadline = node.deadlineMs === null ? deadline : Math.min(deadline, Date.now() + node.deadlineMs)
        try {
          results.push({ ok: true, value: await evaluate(branch, input, env, branchDeadline) })
        } catch (e) {
          if (!isRecoverable(e)) throw e
          results.push({ ok: false, error: e })
        }
      }
      return merge(node, results)
    }
    case 'Cond':
      return evaluate(holds(node.predicate, input) ? node.then : node.else, input, env, deadline)
    case 'Try':
      try {
        return await evaluate(node.primary, input, env, deadline)
      } catch (e) {
        if (!isRecoverable(e)) throw e
        return evaluate(node.fallback, fallbackInput(e, input), env, deadline)
      }
  }
  throw new Error(`unknown composition type ${node.type}`)
}

module.exports = { evaluate }
