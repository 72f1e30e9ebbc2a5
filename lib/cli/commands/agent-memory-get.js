'use strict'
// `rotifer agent memory get`: one entry with its value, whatever its access policy. The
// deployer's read is not audited (plain reads are not logged) and never changes lastAccessedBy.

const memory = require('../../../index.js')
const { CliError } = require('../errors')
const { findAgent } = require('../agents')
const { geneNamesById } = require('../project')
const { printable, plural, shortGeneId, terminalWidth } = require('../format')
const { hasUnsafeText } = require('../terminal-text')

/**
 * The value as text when that is safe to print: valid UTF-8 and no control character other
 * than tab and newline (escape sequences could rewrite the terminal), no bidi control (it could
 * reorder what is shown). Otherwise `null`.
 */
function asText(bytes) {
  let text
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return null
  }
  return hasUnsafeText(text) ? null : text
}

function retentionText(r) {
  if (r === null) return "follows the agent's data policy"
  const days = r.maxRetentionDays === null ? 'kept forever' : `kept ${plural(r.maxRetentionDays, 'day')} after its last update`
  return `${days}; autoDeleteOnTermination ${r.autoDeleteOnTermination}; anonymizationSupported ${r.anonymizationSupported}`
}

const get = {
  name: 'agent memory get',
  summary: 'show one entry of an agent\'s memory with its value',
  usage: 'rotifer agent memory get <agent> <key> [--json]',
  description: [
    'Shows the entry with this key, whatever its access policy: its fields and its value, as text',
    'when it is valid UTF-8 without control characters (tab and newline aside), else in base64.',
    'Reading is not audited and never changes lastAccessedBy. A key with no live entry fails.',
  ],
  positionals: ['agent', 'key'],
  options: {
    json: { type: 'boolean', help: 'print the MemoryEntry as JSON, value always in base64' },
  },
  examples: ['rotifer agent memory get my-agent formatter/indent', 'rotifer agent memory get my-agent formatter/indent --json'],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    const e = memory.getAgentMemory({ agentId: agent.id, root, key: positionals.key })
    if (e === null) {
      throw new CliError(`agent "${agent.name}" has no entry with key ${JSON.stringify(positionals.key)}; see rotifer agent memory list ${agent.name}`)
    }
    const value = Buffer.from(e.value.buffer, e.value.byteOffset, e.value.byteLength)
    if (options.json) {
      io.out(JSON.stringify({ ...e, value: value.toString('base64') }, null, 2))
      return 0
    }
    const names = geneNamesById(root)
    // At a terminal a gene id is shortened when its line would not fit; piped, always in full.
    const width = terminalWidth(process.stdout, Infinity)
    const gene = (id) => {
      const full = names.has(id) ? `${id} (${names.get(id)})` : id
      return 16 + full.length <= width ? full : names.has(id) ? `${shortGeneId(id)} (${names.get(id)})` : shortGeneId(id)
    }
    const text = asText(e.value)
    const p = e.accessPolicy
    const rows = [
      ['key', printable(e.key)],
      ['category', e.category],
      ['entryId', e.entryId],
      ['size', `${Buffer.byteLength(e.key) + value.length} bytes (value ${value.length})`],
      ['createdBy', gene(e.createdBy)],
      ['lastAccessedBy', gene(e.lastAccessedBy)],
      ['createdAt', e.createdAt],
      ['updatedAt', e.updatedAt],
      ['accessPolicy', `read ${p.readScope}, write ${p.writeScope}, share ${p.sharePolicy}`],
      ['retentionPolicy', retentionText(e.retentionPolicy)],
      [text === null ? 'value (base64)' : 'value (text)', text === null ? value.toString('base64') : text],
    ]
    for (const [name, v] of rows) io.out(`${name.padEnd(16)}${v}`)
    return 0
  },
}

module.exports = { get, asText }
