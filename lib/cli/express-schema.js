'use strict'
// The JSON Schemas of a gene's input and output, read from the TypeScript types of its
// `express(input, ctx)` (or JSDoc types in a JavaScript gene), for `rotifer wrap` to write a
// phenotype whose schemas say what the gene takes. TypeScript is loaded only here, and only
// type-checks the one file (and what it imports) against a few global types of our own
// (express-schema-lib.d.ts) instead of its libraries: no emit, nothing run.
//
// What maps: string, number, boolean, null, literal unions (an `enum`), arrays and tuples,
// object types and interfaces (`properties`, `required` from the non-optional ones), string
// index signatures and `Record<string, T>` (`additionalProperties`), other unions (`anyOf`),
// and a returned `Promise<T>` (its `T`). What cannot be said in JSON (functions, `Date`,
// `Uint8Array`, `any`, `unknown`, types nested deeper than 6) is left open (`{}`).

const path = require('node:path')

const MAX_DEPTH = 6
/** The global types the checker needs, in place of TypeScript's libraries (seconds to load). */
const MINI_LIB = path.join(__dirname, 'express-schema-lib.d.ts')
const OPAQUE = new Set(['Date', 'Uint8Array', 'ArrayBuffer', 'Map', 'Set', 'WeakMap', 'WeakSet', 'RegExp', 'Promise', 'Function', 'Buffer'])
const NAMES = ['express', 'default', 'main']

/**
 * `{ input, output, reason }` for the gene source `file`: each schema, or null when its type
 * says nothing usable (no `express`, an untyped parameter, `any`). `reason` says why the input
 * schema is null. Never throws for a gene that does not type-check: what can be read is used.
 */
function expressSchemas(file) {
  const ts = require('typescript')
  const program = ts.createProgram([file, MINI_LIB], {
    allowJs: true,
    checkJs: false,
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    types: [],
    noLib: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
  })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(file)
  const moduleSymbol = source && checker.getSymbolAtLocation(source)
  const shown = path.basename(file)
  if (!moduleSymbol) return { input: null, output: null, reason: `${shown} exports nothing` }
  const exported = checker.getExportsOfModule(moduleSymbol)
  const symbol = NAMES.map((n) => exported.find((s) => s.escapedName === n)).find(Boolean)
  if (!symbol) return { input: null, output: null, reason: `${shown} exports no express function` }
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  const signature = checker.getTypeOfSymbolAtLocation(target, source).getCallSignatures()[0]
  if (!signature) return { input: null, output: null, reason: `${shown}'s express is not a function` }

  const toSchema = schemaMaker(ts, checker, source)
  let output = toSchema(unwrapPromise(ts, checker, signature.getReturnType()), 0)
  if (output !== null && output.type !== 'object') output = null
  const param = signature.getParameters()[0]
  if (!param) return { input: null, output, reason: "express takes no input parameter" }
  const inputType = checker.getTypeOfSymbolAtLocation(param, source)
  const input = toSchema(inputType, 0)
  if (input === null || input.type !== 'object') return { input: null, output, reason: `the type of express's input (${checker.typeToString(inputType)}) is not an object type` }
  return { input, output, reason: null }
}

function unwrapPromise(ts, checker, type) {
  const awaited = typeof checker.getAwaitedType === 'function' ? checker.getAwaitedType(type) : undefined
  return awaited || type
}

/** `(type, depth) => schema | null`: null stands for "anything" ({}). */
function schemaMaker(ts, checker, source) {
  const F = ts.TypeFlags
  const open = () => null
  function toSchema(type, depth) {
    if (depth > MAX_DEPTH) return open()
    const f = type.flags
    if (f & (F.Any | F.Unknown | F.Never)) return open()
    if (type.isUnion()) return unionSchema(type, depth)
    if (f & F.StringLiteral) return { type: 'string', enum: [type.value] }
    if (f & F.NumberLiteral) return { type: 'number', enum: [type.value] }
    if (f & F.BooleanLiteral) return { type: 'boolean' }
    if (f & F.String) return { type: 'string' }
    if (f & F.Number) return { type: 'number' }
    if (f & F.Boolean) return { type: 'boolean' }
    if (f & F.Null) return { type: 'null' }
    if (f & (F.Object | F.Intersection)) return objectSchema(type, depth)
    return open()
  }

  function unionSchema(type, depth) {
    const parts = type.types.filter((t) => !(t.flags & (F.Undefined | F.Void)))
    if (parts.length === 0) return open()
    if (parts.every((t) => t.flags & F.BooleanLiteral)) return { type: 'boolean' }
    if (parts.length === 1) return toSchema(parts[0], depth)
    if (parts.every((t) => t.flags & F.StringLiteral)) return { type: 'string', enum: parts.map((t) => t.value) }
    if (parts.every((t) => t.flags & F.NumberLiteral)) return { type: 'number', enum: parts.map((t) => t.value) }
    // `true | false` inside a wider union arrives as two literals: one boolean.
    const booleans = parts.filter((t) => t.flags & F.BooleanLiteral)
    const rest = parts.filter((t) => !(t.flags & F.BooleanLiteral))
    const schemas = [...rest.map((t) => toSchema(t, depth + 1)), ...(booleans.length ? [{ type: 'boolean' }] : [])]
    if (schemas.some((s) => s === null)) return open()
    return { anyOf: schemas }
  }

  function objectSchema(type, depth) {
    if (type.getCallSignatures().length > 0) return open()
    const name = type.symbol && type.symbol.escapedName
    if (name && OPAQUE.has(String(name))) return open()
    if (checker.isArrayType(type)) {
      const [item] = checker.getTypeArguments(type)
      const items = item ? toSchema(item, depth + 1) : null
      return items ? { type: 'array', items } : { type: 'array' }
    }
    if (checker.isTupleType(type)) return { type: 'array' }
    const schema = { type: 'object' }
    const properties = {}
    const required = []
    for (const prop of checker.getPropertiesOfType(type)) {
      const propType = checker.getTypeOfSymbolAtLocation(prop, source)
      if (propType.getCallSignatures().length > 0) continue
      properties[prop.name] = toSchema(propType, depth + 1) || {}
      if (!(prop.flags & ts.SymbolFlags.Optional)) required.push(prop.name)
    }
    const index = checker.getIndexInfosOfType(type).find((i) => i.keyType.flags & F.String)
    if (Object.keys(properties).length > 0 || !index) schema.properties = properties
    if (required.length > 0) schema.required = required
    if (index) {
      const values = toSchema(index.type, depth + 1)
      schema.additionalProperties = values || true
    }
    return schema
  }

  return toSchema
}

module.exports = { expressSchemas }
