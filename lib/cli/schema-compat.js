'use strict'
// Whether each gene of a Seq feeds the next (R-RUN-7): upstream's structural check of
// `agent create`, gene by gene. For each pair, the producer's outputSchema.properties must hold
// every field the consumer's inputSchema requires, and a field both name must have the same
// "type" (an integer feeds a number). The result is upstream's: PASS, FAIL with what is missing
// or mismatched, or UNCHECKED when the producer's outputSchema lists no properties. Only FAIL is
// worth a warning; nothing is refused, since a gene may well add what its schema does not say.

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

/** True when a value of JSON Schema type `produced` is accepted where `consumed` is expected. */
function feeds(produced, consumed) {
  if (consumed === undefined || produced === undefined) return true
  if (consumed === produced) return true
  return consumed === 'number' && produced === 'integer'
}

/** The check of `producer` → `consumer` (genes from readGene): `{ result, detail }`. */
function checkPair(producer, consumer) {
  const out = producer.phenotype.outputSchema
  const input = consumer.phenotype.inputSchema
  if (!isObject(out) || !isObject(out.properties) || !isObject(input)) return { result: 'UNCHECKED', detail: 'schema properties not defined' }
  const produced = out.properties
  const required = Array.isArray(input.required) ? input.required.filter((f) => typeof f === 'string') : []
  const consumed = isObject(input.properties) ? input.properties : {}
  const missing = required.filter((f) => !Object.prototype.hasOwnProperty.call(produced, f))
  const typeOf = (schema) => (isObject(schema) ? schema.type : undefined)
  const mismatched = Object.keys(consumed)
    .filter((f) => Object.prototype.hasOwnProperty.call(produced, f) && !feeds(typeOf(produced[f]), typeOf(consumed[f])))
    .map((f) => `${f}: ${typeOf(produced[f])} ≠ ${typeOf(consumed[f])}`)
  const details = []
  if (missing.length) details.push(`missing: [${missing.join(', ')}]`)
  if (mismatched.length) details.push(`type mismatch: [${mismatched.join('; ')}]`)
  return details.length ? { result: 'FAIL', detail: details.join(', ') } : { result: 'PASS', detail: 'structural subtype check passed' }
}

/** Upstream's warning lines for the Seq `genes`, in order: `A → B: FAIL — missing: [field]`. */
function seqWarnings(genes) {
  const warnings = []
  for (let i = 0; i + 1 < genes.length; i++) {
    const { result, detail } = checkPair(genes[i], genes[i + 1])
    if (result === 'FAIL') warnings.push(`${genes[i].name} → ${genes[i + 1].name}: FAIL — ${detail}`)
  }
  return warnings
}

module.exports = { checkPair, seqWarnings }
