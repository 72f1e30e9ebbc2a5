'use strict'
// Inputs made from a gene's `inputSchema` for `rotifer test` (R-RUN-9): the one sample input of
// the standard checks (a gene with no testsuite.json), built by upstream's rule, and the fuzz
// inputs of a suite's `config`, generated deterministically from its `seed`.

/**
 * The standard checks' input, by upstream's rule: for each property of the schema, its first
 * `enum` value, else its `default`, else by type: "test_value", the middle of `minimum`
 * (default 0) and `maximum` (default minimum + 10) rounded down (1 when that is 0), true, [],
 * {}, or null.
 */
function sampleInput(schema) {
  const out = {}
  const properties = schema && typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {}
  for (const [key, prop] of Object.entries(properties)) {
    const p = prop && typeof prop === 'object' ? prop : {}
    if (Array.isArray(p.enum) && p.enum.length > 0) out[key] = p.enum[0]
    else if (p.default !== undefined) out[key] = p.default
    else if (p.type === 'string') out[key] = 'test_value'
    else if (p.type === 'number' || p.type === 'integer') {
      const min = typeof p.minimum === 'number' ? p.minimum : 0
      const max = typeof p.maximum === 'number' ? p.maximum : min + 10
      out[key] = Math.floor((min + max) / 2) || 1
    } else if (p.type === 'boolean') out[key] = true
    else if (p.type === 'array') out[key] = []
    else if (p.type === 'object') out[key] = {}
    else out[key] = null
  }
  return out
}

/** A seeded pseudo-random generator (mulberry32): the same seed gives the same numbers. */
function randomOf(seed) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = ['', 'a', 'rotifer', 'Hello, world!', 'ünïcødé ✓', '  spaced  ', '0', 'line\nbreak', '{"json":true}', 'x'.repeat(64)]

/** A value for `schema`, drawn with `rand`; `depth` bounds nesting. Aims at valid values. */
function valueOf(schema, rand, depth) {
  const s = schema && typeof schema === 'object' ? schema : {}
  const pick = (list) => list[Math.floor(rand() * list.length)]
  if ('const' in s) return s.const
  if (Array.isArray(s.enum) && s.enum.length > 0) return pick(s.enum)
  for (const key of ['oneOf', 'anyOf']) if (Array.isArray(s[key]) && s[key].length > 0) return valueOf(pick(s[key]), rand, depth)
  let type = Array.isArray(s.type) ? pick(s.type) : s.type
  if (type === undefined) type = s.properties ? 'object' : s.items ? 'array' : pick(['string', 'number', 'boolean', 'object'])
  switch (type) {
    case 'string': {
      let text = pick(WORDS)
      const min = Number.isInteger(s.minLength) ? s.minLength : 0
      const max = Number.isInteger(s.maxLength) ? s.maxLength : Infinity
      while ([...text].length < min) text += 'x'
      return [...text].slice(0, max).join('')
    }
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : -1000
      const max = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : Math.max(min, 0) + 1000
      const edges = [min, max, 0, 1, -1].filter((n) => n >= min && n <= max)
      const n = rand() < 0.3 && edges.length > 0 ? pick(edges) : min + rand() * (max - min)
      return type === 'integer' ? Math.min(max, Math.max(Math.ceil(min), Math.round(n))) : n
    }
    case 'boolean':
      return rand() < 0.5
    case 'null':
      return null
    case 'array': {
      const min = Number.isInteger(s.minItems) ? s.minItems : 0
      const max = Number.isInteger(s.maxItems) ? s.maxItems : min + 4
      const count = depth > 3 ? min : min + Math.floor(rand() * (max - min + 1))
      return Array.from({ length: count }, () => valueOf(s.items, rand, depth + 1))
    }
    case 'object':
    default: {
      const out = {}
      const props = s.properties && typeof s.properties === 'object' ? s.properties : {}
      const required = Array.isArray(s.required) ? s.required : []
      for (const [key, prop] of Object.entries(props)) {
        if (required.includes(key) || (depth <= 3 && rand() < 0.6)) out[key] = valueOf(prop, rand, depth + 1)
      }
      for (const key of required) if (!(key in out)) out[key] = 'x'
      return out
    }
  }
}

/** The `i`-th fuzz input (from 0) of a suite with `seed`, for `schema`. */
function fuzzInput(schema, seed, i) {
  return valueOf(schema, randomOf(Math.imul(seed + 1, 2654435761) + i), 0)
}

module.exports = { sampleInput, fuzzInput }
