'use strict'
// Compositions (R-RUN-4, R-RUN-5): the playground's expression form, checked whole, and its
// evaluation. Genes are run through `env.runGene`; this file only decides which gene gets which
// input and how results merge.
//
//   {"type":"Gene","name":"g"}
//   {"type":"Seq","steps":[…]}
//   {"type":"Par","branches":[…],"merge":"WaitAll|FirstSuccess|Majority","deadline":"5s"}
//   {"type":"Cond","predicate":{"field","op","value"},"then":…,"else":…}
//   {"type":"Try","primary":…,"fallback":…}

const { isDeepStrictEqual } = require('node:util')
const { isGeneName, GENE_NAME_RULE } = require('../cli/project')
const { CompositionFailure, isRecoverable } = require('./failures')

const FIELDS = {
  Gene: { required: ['name'], optional: [] },
  Seq: { required: ['steps'], optional: [] },
  Par: { required: ['branches'], optional: ['merge', 'deadline'] },
  Cond: { required: ['predicate', 'then', 'else'], optional: [] },
  Try: { required: ['primary', 'fallback'], optional: [] },
}
const MERGES = ['WaitAll', 'FirstSuccess', 'Majority']
const OPS = ['Eq', 'Neq', 'Gt', 'Lt', 'Gte', 'Lte', 'Contains']
const DURATION = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)$/
const UNIT_MS = { ms: 1, s: 1000, m: 60000 }
const MAX_DEPTH = 64

/** Thrown for an expression that is not a valid composition; `where` names the bad part. */
class CompositionError extends Error {}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * Checks `value` as a composition expression and returns it normalised: every node checked, Par
 * `merge` defaulted to WaitAll and `deadline` turned into `deadlineMs` (or null). Throws
 * CompositionError naming the first problem (`composition.steps[1]: …`).
 */
function parseComposition(value, where = 'composition', depth = 0) {
  const fail = (msg) => { throw new CompositionError(`${where}: ${msg}`) }
  if (depth > MAX_DEPTH) fail(`nested more than ${MAX_DEPTH} levels deep`)
  if (!isObject(value)) fail('must be an object with a "type": Seq, Par, Cond, Try or Gene')
  const fields = FIELDS[value.type]
  if (!fields) fail(`"type" must be one of Seq, Par, Cond, Try or Gene, not ${JSON.stringify(value.type)}`)
  for (const key of Object.keys(value)) {
    if (key !== 'type' && !fields.required.includes(key) && !fields.optional.includes(key)) {
      fail(`unknown field ${JSON.stringify(key)} in ${value.type}; it takes ${[...fields.required, ...fields.optional].map((f) => `"${f}"`).join(', ')}`)
    }
  }
  for (const key of fields.required) if (!(key in value)) fail(`${value.type} needs "${key}"`)
  const sub = (v, name) => parseComposition(v, `${where}.${name}`, depth + 1)
  const list = (key) => {
    if (!Array.isArray(value[key]) || value[key].length === 0) fail(`"${key}" must be a non-empty array`)
    return value[key].map((v, i) => sub(v, `${key}[${i}]`))
  }

  switch (value.type) {
    case 'Gene':
      if (!isGeneName(value.name)) fail(`"name" must be a gene name (${GENE_NAME_RULE}), not ${JSON.stringify(value.name)}`)
      return { type: 'Gene', name: value.name }
    case 'Seq':
      return { type: 'Seq', steps: list('steps') }
    case 'Par': {
      const merge = value.merge === undefined ? 'WaitAll' : value.merge
      if (!MERGES.includes(merge)) fail(`"merge" must be WaitAll, FirstSuccess or Majority, not ${JSON.stringify(value.merge)}`)
      return { type: 'Par', branches: list('branches'), merge, deadlineMs: parseDeadline(value.deadline, fail) }
    }
    case 'Cond': {
      const p = value.predicate
      if (!isObject(p)) fail('"predicate" must be an object { "field", "op", "value" }')
      for (const key of Object.keys(p)) if (!['field', 'op', 'value'].includes(key)) fail(`unknown field ${JSON.stringify(key)} in the predicate; it takes "field", "op", "value"`)
      if (typeof p.field !== 'string' || p.field === '') fail('predicate "field" must be the name of a top-level field of the input')
      if (!OPS.includes(p.op)) fail(`predicate "op" must be one of ${OPS.join(', ')}, not ${JSON.stringify(p.op)}`)
      if (!('value' in p)) fail('the predicate needs a "value" to compare with')
      return { type: 'Cond', predicate: { field: p.field, op: p.op, value: p.value }, then: sub(value.then, 'then'), else: sub(value.else, 'else') }
    }
    case 'Try':
      return { type: 'Try', primary: sub(value.primary, 'primary'), fallback: sub(value.fallback, 'fallback') }
  }
  return fail('unreachable')
}

/** A Par `deadline`: "500ms", "5s", "1.5m" (or absent). */
function parseDeadline(text, fail) {
  if (text === undefined || text === null) return null
  const m = typeof text === 'string' ? DURATION.exec(text) : null
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]] : NaN
  if (!(ms > 0)) fail(`"deadline" must be a duration such as "500ms", "5s" or "1.5m", not ${JSON.stringify(text)}`)
  return ms
}

/**
 * The composition `--composition Seq|Par|Try` makes of `--genes`: Seq in order, Par over the
 * genes (WaitAll), or Try of the first with the rest as fallbacks in order.
 */
function compositionOfGenes(kind, names) {
  const leaves = names.map((name) => ({ type: 'Gene', name }))
  if (kind === 'Seq') return { type: 'Seq', steps: leaves }
  if (kind === 'Par') return { type: 'Par', branches: leaves, merge: 'WaitAll' }
  if (kind === 'Try') return leaves.reduceRight((fallback, primary) => ({ type: 'Try', primary, fallback }))
  throw new Error(`no composition ${kind} of genes`)
}

/** The gene names of `node`, in written order (a gene used twice appears twice). */
function leaves(node) {
  switch (node.type) {
    case 'Gene': return [node.name]
    case 'Seq': return node.steps.flatMap(leaves)
    case 'Par': return node.branches.flatMap(leaves)
    case 'Cond': return [...leaves(node.then), ...leaves(node.else)]
    case 'Try': return [...leaves(node.primary), ...leaves(node.fallback)]
  }
  return []
}

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
  // R-RUN-5: a Par, Cond or Try holding a gene that is not WASM runs all its genes in order.
  const names = leaves(node)
  const notWasm = [...new Set(names.filter((n) => !env.isWasm(n)))]
  if (notWasm.length > 0) {
    env.notice(`note: ${node.type} of ${names.join(', ')} holds genes that are not WASM (${notWasm.join(', ')}); so that every gene can use memory, its genes run once each, in written order, as a sequence`)
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

module.exports = { parseComposition, compositionOfGenes, leaves, evaluate, CompositionError }
