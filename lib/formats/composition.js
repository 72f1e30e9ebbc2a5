'use strict'
// The `composition` of an agent record (R-RUN-7): its parser, its writer and its errors. Two
// forms read, both to one plan the runtime evaluates (lib/runtime/composition.js):
//
// - upstream's, as its `agent create` writes it, naming genes of the record's `genome`:
//     {"type":"Single"} {"type":"Seq"}                      the genome in order
//     {"type":"Par","branches":["a","b"],"merge":"first|concat|merge"}
//     {"type":"Cond","predicate":{"field","equals"} | {"field","op","value"},"thenBranch":"a","elseBranch":"b"}
//     {"type":"Try","primary":"a","fallback":"b"}
//     {"type":"TryPool"}                                    domain failover over the genome
//   A field left out takes upstream's default: `branches` the genome, `merge` "first",
//   `thenBranch`/`primary` the first gene and `elseBranch`/`fallback` the second, `op` "Eq",
//   `value` the predicate's `equals`.
// - this project's expressions (composition files, records written by earlier versions), where a
//   branch is itself an expression: {"type":"Gene","name"}, {"type":"Seq","steps":[…]},
//   `then`/`else` for `thenBranch`/`elseBranch`, merges WaitAll, FirstSuccess, Majority, and a
//   Par `deadline` ("500ms", "5s", "1.5m").
// A branch may be a gene name or an expression in either form. The plan: Gene, Seq{steps},
// Par{branches, merge (WaitAll|FirstSuccess|Majority), deadlineMs}, Cond{predicate{field, op,
// value}, then, else}, Try{primary, fallback}, TryPool{genes}.

const { isGeneName, GENE_NAME_RULE } = require('../cli/project')

/** `--composition` kinds over `--genes`, as upstream's `agent create` takes them. */
const KINDS = ['Seq', 'Par', 'Cond', 'Try', 'TryPool']
/** `--par-merge` values and what they mean (upstream's agent-run maps them so). */
const PAR_MERGES = { first: 'FirstSuccess', concat: 'WaitAll', merge: 'WaitAll' }
const MERGES = ['WaitAll', 'FirstSuccess', 'Majority']
const OPS = ['Eq', 'Neq', 'Gt', 'Lt', 'Gte', 'Lte', 'Contains']
/** The predicate upstream's `agent create --composition Cond` writes. */
const DEFAULT_PREDICATE = { field: 'type', equals: 'primary' }

const FIELDS = {
  Single: [],
  Gene: ['name'],
  Seq: ['steps'],
  Par: ['branches', 'merge', 'deadline'],
  Cond: ['predicate', 'thenBranch', 'elseBranch', 'then', 'else'],
  Try: ['primary', 'fallback'],
  TryPool: [],
}
const TYPES = Object.keys(FIELDS)
const DURATION = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)$/
const UNIT_MS = { ms: 1, s: 1000, m: 60000 }
const MAX_DEPTH = 64

/** A composition that is not valid; the message starts with the place (`composition.branches[1]`). */
class CompositionError extends Error {}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const shown = (v) => (v === undefined ? 'nothing' : JSON.stringify(v))

/**
 * The plan of `value` (a record's `composition`). `genome`: the record's genes, which upstream's
 * fields default to and every named gene must be one of (null: any gene name, for a composition
 * file that names its genes itself). `legacy`: a record written by an earlier version, whose Par
 * without `merge` meant WaitAll. Throws CompositionError naming the first problem.
 */
function parseComposition(value, { genome = null, legacy = false } = {}) {
  // Records of earlier versions say "Seq"; upstream's agent-run reads a bare type too.
  const top = typeof value === 'string' ? { type: value } : value === undefined ? { type: 'Seq' } : value
  return node(top, 'composition', 0, { genome, legacy, top: true })
}

function node(value, where, depth, opts) {
  const fail = (msg) => { throw new CompositionError(`${where}: ${msg}`) }
  if (depth > MAX_DEPTH) fail(`nested more than ${MAX_DEPTH} levels deep`)
  if (typeof value === 'string' && !opts.top) return gene(value, where, opts)
  if (!isObject(value)) fail(`must be a gene name or an object with a "type": ${TYPES.join(', ')} (got ${shown(value)})`)
  const fields = FIELDS[value.type]
  if (!fields) fail(`"type" must be one of ${TYPES.join(', ')}, not ${shown(value.type)}`)
  for (const key of Object.keys(value)) {
    if (key !== 'type' && !fields.includes(key)) {
      fail(`unknown field ${JSON.stringify(key)} in ${value.type}; ${fields.length ? `it takes ${fields.map((f) => `"${f}"`).join(', ')}` : 'it takes no other field'}`)
    }
  }
  const inner = { ...opts, top: false }
  const sub = (v, name) => node(v, `${where}.${name}`, depth + 1, inner)
  const list = (key) => {
    if (!Array.isArray(value[key]) || value[key].length === 0) fail(`"${key}" must be a non-empty array of gene names or compositions`)
    return value[key].map((v, i) => sub(v, `${key}[${i}]`))
  }
  /** A branch field, or the genome's gene `index` when it is left out (upstream's default). */
  const branch = (keys, index) => {
    const key = keys.find((k) => k in value)
    if (key !== undefined) return sub(value[key], key)
    if (!opts.genome || opts.genome.length <= index) fail(`${value.type} needs "${keys[0]}" (upstream's default, gene ${index + 1} of the genome, is missing)`)
    return gene(opts.genome[index], `${where}.${keys[0]}`, opts)
  }
  const genomeSteps = () => {
    if (!opts.genome) fail(`${value.type} without "steps" runs the agent's genome; in a composition file, name the genes: {"type":"Seq","steps":["a","b"]}`)
    return opts.genome.map((g, i) => gene(g, `genome[${i}]`, opts))
  }

  switch (value.type) {
    case 'Gene':
      return gene(value.name, `${where}.name`, opts)
    case 'Single':
      // Runs as a Seq of the genome; `single` only keeps the record's word for display.
      return { type: 'Seq', steps: genomeSteps(), single: true }
    case 'Seq':
      return { type: 'Seq', steps: 'steps' in value ? list('steps') : genomeSteps() }
    case 'Par': {
      const branches = 'branches' in value ? list('branches') : genomeSteps()
      return { type: 'Par', branches, merge: parseMerge(value.merge, opts.legacy, fail), deadlineMs: parseDeadline(value.deadline, fail) }
    }
    case 'Cond': {
      if ('thenBranch' in value && 'then' in value) fail('give "thenBranch" or "then", not both')
      if ('elseBranch' in value && 'else' in value) fail('give "elseBranch" or "else", not both')
      const predicate = parsePredicate(value.predicate, fail)
      return { type: 'Cond', predicate, then: branch(['thenBranch', 'then'], 0), else: branch(['elseBranch', 'else'], 1) }
    }
    case 'Try':
      return { type: 'Try', primary: branch(['primary'], 0), fallback: branch(['fallback'], 1) }
    case 'TryPool':
      if (!opts.top) fail('TryPool fails over between the genes of each domain of the whole genome; it is a composition of its own, never a branch')
      return { type: 'TryPool', genes: genomeSteps().map((g) => g.name) }
  }
  return fail('unreachable')
}

function gene(name, where, { genome }) {
  if (!isGeneName(name)) throw new CompositionError(`${where}: must be a gene name (${GENE_NAME_RULE}), not ${shown(name)}`)
  if (genome && !genome.includes(name)) throw new CompositionError(`${where}: gene "${name}" is not in the agent's genome (${genome.join(', ')}); add it to "genome" or fix the name`)
  return { type: 'Gene', name }
}

/** A Par `merge`: upstream's first|concat|merge or ours; absent: "first" (WaitAll in legacy records). */
function parseMerge(merge, legacy, fail) {
  if (merge === undefined) return legacy ? 'WaitAll' : 'FirstSuccess'
  if (Object.prototype.hasOwnProperty.call(PAR_MERGES, merge)) return PAR_MERGES[merge]
  if (MERGES.includes(merge)) return merge
  return fail(`"merge" must be one of ${[...Object.keys(PAR_MERGES), ...MERGES].join(', ')}, not ${shown(merge)}`)
}

/** `{field, equals}` or `{field, op, value}`: `op` defaults to Eq, `value` to `equals`. */
function parsePredicate(p, fail) {
  if (!isObject(p)) fail(`"predicate" must be an object {"field": …, "equals": …} or {"field": …, "op": …, "value": …}, not ${shown(p)}`)
  for (const key of Object.keys(p)) {
    if (!['field', 'op', 'value', 'equals'].includes(key)) fail(`unknown field ${JSON.stringify(key)} in the predicate; it takes "field", "op", "value", "equals"`)
  }
  if (typeof p.field !== 'string' || p.field === '') fail('predicate "field" must be the name of a top-level field of the input')
  const op = p.op === undefined ? 'Eq' : p.op
  if (!OPS.includes(op)) fail(`predicate "op" must be one of ${OPS.join(', ')}, not ${shown(p.op)}`)
  if (!('value' in p) && !('equals' in p)) fail('the predicate needs a "value" (or "equals") to compare with')
  return { field: p.field, op, value: 'value' in p ? p.value : p.equals }
}

/** A Par `deadline`: "500ms", "5s", "1.5m" (or absent). */
function parseDeadline(text, fail) {
  if (text === undefined || text === null) return null
  const m = typeof text === 'string' ? DURATION.exec(text) : null
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]] : NaN
  if (!(ms > 0)) fail(`"deadline" must be a duration such as "500ms", "5s" or "1.5m", not ${shown(text)}`)
  return ms
}

/**
 * The composition upstream's `agent create` writes for `--genes <names> --composition <kind>`:
 * one gene is `Single`; Par gets `branches` and `merge` (`parMerge`, default "first"); Cond the
 * default predicate; Try of more than two genes is a chain (each fallback tries the next).
 * Cond and Try need at least two genes (CompositionError otherwise).
 */
function compositionOfGenes(kind, names, { parMerge = 'first' } = {}) {
  if (!KINDS.includes(kind)) throw new CompositionError(`no composition ${kind}`)
  if ((kind === 'Cond' || kind === 'Try') && names.length < 2) throw new CompositionError(`--composition ${kind} needs at least two genes`)
  if (names.length === 1) return { type: 'Single' }
  switch (kind) {
    case 'Seq': return { type: 'Seq' }
    case 'Par': return { type: 'Par', branches: [...names], merge: parMerge }
    case 'Cond': return { type: 'Cond', predicate: { ...DEFAULT_PREDICATE }, thenBranch: names[0], elseBranch: names[1] }
    case 'Try': return names.slice(0, -1).reduceRight((fallback, primary) => ({ type: 'Try', primary, fallback }), names[names.length - 1])
    case 'TryPool': return { type: 'TryPool' }
  }
  throw new CompositionError(`no composition ${kind}`)
}

/** The gene names of plan `node`, in written order (a gene used twice appears twice). */
function leaves(node) {
  switch (node.type) {
    case 'Gene': return [node.name]
    case 'Seq': return node.steps.flatMap(leaves)
    case 'Par': return node.branches.flatMap(leaves)
    case 'Cond': return [...leaves(node.then), ...leaves(node.else)]
    case 'Try': return [...leaves(node.primary), ...leaves(node.fallback)]
    case 'TryPool': return [...node.genes]
  }
  return []
}

/** A plan in one line: `Seq(a, b)`, `Par/first(a, Try(b, c))`, `TryPool(a, b)`. */
function describeComposition(node) {
  const parts = (list) => list.map(describeComposition).join(', ')
  switch (node.type) {
    case 'Gene': return node.name
    case 'Seq': return `${node.single ? 'Single' : 'Seq'}(${parts(node.steps)})`
    case 'Par': return `Par/${node.merge}(${parts(node.branches)})`
    case 'Cond': return `Cond(${parts([node.then, node.else])})`
    case 'Try': return `Try(${parts([node.primary, node.fallback])})`
    case 'TryPool': return `TryPool(${node.genes.join(', ')})`
  }
  return String(node.type)
}

module.exports = { KINDS, PAR_MERGES, CompositionError, parseComposition, compositionOfGenes, leaves, describeComposition }
