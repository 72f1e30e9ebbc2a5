'use strict'
// Command-line parsing for one command, from its declaration. Hand-written rather than
// node:util.parseArgs because `--genes a b c` takes several words and errors must name the
// command they belong to.
//
// Option forms: `--name=value` or `--name value` (a value may start with a single `-`, so
// `--memory-quota -5MB` reaches the quota check); boolean flags take no value; a `list` option
// takes every following word up to the next option, and commas also separate its items. An
// option may declare a one-letter `short` form (`-d value` for `--domain value`).
// `--` ends the options.

const { UsageError } = require('./errors')
const { didYouMean } = require('./suggest')

/**
 * Parses `argv` for `command` ({ name, positionals: [names], options: { name: { type } } }).
 * Returns `{ positionals: { name: value }, options: { name: value } }`. Options not given are
 * absent; list options are arrays; flags are `true`.
 */
function parseArgs(argv, command) {
  const usage = (msg) => new UsageError(msg, command.name)
  const specs = command.options || {}
  const positionals = []
  const options = {}
  let i = 0
  let onlyPositionals = false

  const takeValue = (name, inline) => {
    if (inline !== undefined) return inline
    const next = argv[i + 1]
    if (next === undefined || next.startsWith('--')) throw usage(`--${name} needs a value`)
    i++
    return next
  }

  for (; i < argv.length; i++) {
    const arg = argv[i]
    if (onlyPositionals || !arg.startsWith('-') || arg === '-') {
      positionals.push(arg)
      continue
    }
    if (arg === '--') {
      onlyPositionals = true
      continue
    }
    let name
    let inline
    if (!arg.startsWith('--')) {
      // A short form (`-d value`), for the options that declare one, as upstream's commands do.
      const short = Object.keys(specs).find((n) => specs[n].short !== undefined && `-${specs[n].short}` === arg)
      if (short === undefined) throw usage(`unknown option ${arg}`)
      name = short
    } else {
      const eq = arg.indexOf('=')
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
      inline = eq === -1 ? undefined : arg.slice(eq + 1)
    }
    const spec = Object.prototype.hasOwnProperty.call(specs, name) ? specs[name] : undefined
    if (!spec) throw usage(`unknown option --${name}${didYouMean(name, Object.keys(specs), (n) => `--${n}`)}`)

    if (spec.type === 'boolean') {
      if (inline !== undefined) throw usage(`--${name} takes no value`)
      options[name] = true
    } else if (spec.type === 'list') {
      const items = options[name] || []
      if (inline !== undefined) {
        items.push(...splitList(inline))
      } else {
        while (i + 1 < argv.length && !argv[i + 1].startsWith('-')) items.push(...splitList(argv[++i]))
      }
      if (items.length === 0) throw usage(`--${name} needs at least one value`)
      options[name] = items
    } else {
      if (name in options) throw usage(`--${name} is given more than once`)
      options[name] = takeValue(name, inline)
    }
  }

  const names = command.positionals || []
  // Positionals listed in `optionalPositionals` come last and may be left out.
  const required = names.filter((n) => !(command.optionalPositionals || []).includes(n))
  if (positionals.length < required.length) {
    throw usage(`missing <${names[positionals.length]}>`)
  }
  if (positionals.length > names.length) {
    throw usage(`unexpected argument ${JSON.stringify(positionals[names.length])}`)
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.required && !(name in options)) throw usage(`--${name} is required`)
  }
  return { positionals: Object.fromEntries(names.map((n, k) => [n, positionals[k]])), options }
}

function splitList(text) {
  return text.split(',').map((s) => s.trim()).filter((s) => s !== '')
}

/** True when the words before any `--` ask for help. */
function wantsHelp(argv) {
  for (const arg of argv) {
    if (arg === '--') return false
    if (arg === '--help' || arg === '-h') return true
  }
  return false
}

module.exports = { parseArgs, wantsHelp }
