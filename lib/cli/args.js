'use strict'
// Command-line parsing for one command, from its declaration. The words are split as
// `commander`'s Command#parseOptions splits them (`--name=value`, `--name value`, `-g value`,
// `-gvalue`, variadic values, `--`; `tokenize` below follows its rules, without loading it: it
// costs a fifth of Node's own start); what each option means and every message are this file's,
// so errors name the command they belong to, say what to write, and exit 2.
//
// Option forms: `--name=value` or `--name value` (a value may start with a single `-`, so
// `--memory-quota -5MB` reaches the quota check); boolean flags take no value; a `list` option
// takes every following word up to the next option, and commas also separate its items. An
// option may declare a one-letter `short` form (`-d value` for `--domain value`), and a
// `choices` list: any other value is a usage error naming the accepted ones. `--` ends the
// options. `--no-x` is an option of its own, never the negation of `--x`. One rule for
// repetition: an option given twice is a usage error (`--json --json` as `--limit 1 --limit 2`),
// except a `list` option, whose every word and repetition adds values (`-g a -g b`).

const { UsageError } = require('./errors')
const didYouMean = (...args) => require('./suggest').didYouMean(...args)

/** Thrown by `tokenize` when the last word is an option that needs a value. */
class MissingValue extends Error {
  constructor(name) {
    super(name)
    this.optionName = name
  }
}

/**
 * Splits `argv` by `specs` as commander's parseOptions does (commander 14, for a command with no
 * subcommands, every value required, no option a digit): `onOption(name, value)` for each option
 * met (value undefined for a flag); returns `{ operands, unknown }`, `unknown` holding the first
 * word that looks like an unknown option and every word after it.
 */
function tokenize(argv, specs, onOption) {
  const byFlag = new Map()
  for (const [name, spec] of Object.entries(specs)) {
    byFlag.set(`--${name}`, name)
    if (spec.short !== undefined) byFlag.set(`-${spec.short}`, name)
  }
  const takesValue = (name) => specs[name].type !== 'boolean'
  const maybeOption = (arg) => arg.length > 1 && arg[0] === '-'
  const negativeNumber = (arg) => /^-(\d+|\d*\.\d+)(e[+-]?\d+)?$/.test(arg)
  const operands = []
  const unknown = []
  let dest = operands
  let variadic = null
  let group = null
  let i = 0
  while (i < argv.length || group) {
    const arg = group ?? argv[i++]
    group = null
    if (arg === '--') {
      if (dest === unknown) dest.push(arg)
      dest.push(...argv.slice(i))
      break
    }
    if (variadic && (!maybeOption(arg) || negativeNumber(arg))) {
      onOption(variadic, arg)
      continue
    }
    variadic = null
    if (maybeOption(arg) && byFlag.has(arg)) {
      const name = byFlag.get(arg)
      if (takesValue(name)) {
        const value = argv[i++]
        if (value === undefined) throw new MissingValue(name)
        onOption(name, value)
      } else {
        onOption(name, undefined)
      }
      variadic = specs[name].type === 'list' ? name : null
      continue
    }
    // `-gvalue`, or a group of short flags `-ab`.
    if (arg.length > 2 && arg[0] === '-' && arg[1] !== '-' && byFlag.has(`-${arg[1]}`)) {
      const name = byFlag.get(`-${arg[1]}`)
      if (takesValue(name)) {
        onOption(name, arg.slice(2))
      } else {
        onOption(name, undefined)
        group = `-${arg.slice(2)}`
      }
      continue
    }
    // `--name=value` of an option that takes one.
    if (/^--[^=]+=/.test(arg)) {
      const eq = arg.indexOf('=')
      const name = byFlag.get(arg.slice(0, eq))
      if (name !== undefined && takesValue(name)) {
        onOption(name, arg.slice(eq + 1))
        continue
      }
    }
    if (dest === operands && maybeOption(arg) && !negativeNumber(arg)) dest = unknown
    dest.push(arg)
  }
  return { operands, unknown }
}

/** `; did you mean …` and the accepted values, for a bad value of a `choices` option. */
function choiceError(name, value, choices) {
  const close = didYouMean(value, choices)
  return `invalid --${name} ${JSON.stringify(value)}${close}: use ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}`
}

/** The unit of a size, as a word of its own: `MB`, `kb`, `GB`. */
const SIZE_UNIT = /^[kmg]b$/i

/**
 * Parses `argv` for `command` ({ name, positionals: [names], options: { name: { type } } }).
 * Returns `{ positionals: { name: value }, options: { name: value } }`. Options not given are
 * absent; list options are arrays; flags are `true`.
 */
function parseArgs(argv, command) {
  const usage = (msg, opts) => new UsageError(msg, command.name, opts)
  const specs = command.options || {}
  const options = {}
  // Which word gave each value: `--name=value` (inline) or the next word.
  const inline = (name, value) => argv.includes(`--${name}=${value}`)

  // `--x` and `--no-x` are options of their own; every repetition is seen.
  const onOption = (name, value) => {
    const spec = specs[name]
    if (spec.type === 'boolean') {
      if (name in options) throw usage(`--${name} is given more than once`)
      options[name] = true
    } else if (spec.type === 'list') {
      if (value.startsWith('-') && !inline(name, value)) throw usage(`--${name} needs at least one value`)
      options[name] = [...(options[name] || []), ...splitList(value)]
    } else {
      if (name in options) throw usage(`--${name} is given more than once`)
      if (value.startsWith('--') && !inline(name, value)) throw usage(`--${name} needs a value`)
      options[name] = value
    }
  }

  let operands
  let unknown
  try {
    ;({ operands, unknown } = tokenize(argv, specs, onOption))
  } catch (e) {
    // The last word is an option without its value.
    if (e instanceof MissingValue) {
      const name = e.optionName
      throw usage(specs[name].type === 'list' ? `--${name} needs at least one value` : `--${name} needs a value`)
    }
    throw e
  }
  // Everything from the first unknown option on is `unknown`; the option comes first.
  if (unknown.length > 0) throw unknownOption(unknown[0], specs, usage)

  for (const [name, spec] of Object.entries(specs)) {
    if (spec.type === 'list' && name in options && options[name].length === 0) throw usage(`--${name} needs at least one value`)
    if (spec.choices && spec.type !== 'list' && name in options && !spec.choices.includes(options[name])) {
      throw usage(choiceError(name, options[name], spec.choices), { seeHelp: false })
    }
  }

  const names = command.positionals || []
  // Positionals listed in `optionalPositionals` come last and may be left out.
  const required = names.filter((n) => !(command.optionalPositionals || []).includes(n))
  if (operands.length < required.length) {
    throw usage(`missing <${names[operands.length]}>`)
  }
  if (operands.length > names.length) throw unexpected(operands[names.length], argv, specs, usage)
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.required && !(name in options)) throw usage(`--${name} is required`)
  }
  return { positionals: Object.fromEntries(names.map((n, k) => [n, operands[k]])), options }
}

function unknownOption(arg, specs, usage) {
  if (!arg.startsWith('--')) return usage(`unknown option ${arg}`)
  const eq = arg.indexOf('=')
  const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
  // `--flag=value` for a flag: commander leaves it unknown.
  if (eq !== -1 && Object.prototype.hasOwnProperty.call(specs, name) && specs[name].type === 'boolean') {
    return usage(`--${name} takes no value`)
  }
  return usage(`unknown option --${name}${didYouMean(name, Object.keys(specs), (n) => `--${n}`)}`)
}

/**
 * `unexpected argument "MB"`, with the fix when it is plainly the rest of an option's value
 * the shell split (`--memory-quota 50 MB`).
 */
function unexpected(word, argv, specs, usage) {
  const at = argv.indexOf(word)
  const before = at >= 2 ? argv[at - 2] : null
  const value = at >= 1 ? argv[at - 1] : null
  const name = before && before.startsWith('--') ? before.slice(2) : null
  const spec = name && Object.prototype.hasOwnProperty.call(specs, name) ? specs[name] : null
  // A size (`value: '<size>'`) whose unit the shell split off: `--memory-quota 50 MB`.
  if (spec && spec.value === '<size>' && /^[0-9.]+$/.test(value) && SIZE_UNIT.test(word)) {
    return usage(`unexpected argument ${JSON.stringify(word)}: to give --${name} "${value} ${word}", write --${name}=${value}${word} or quote it: --${name} "${value} ${word}"`, { seeHelp: false })
  }
  if (/\s/.test(word) === false && value !== null && value.startsWith('--') && value.includes('=') === false) {
    const n = value.slice(2)
    if (Object.prototype.hasOwnProperty.call(specs, n) && specs[n].type === 'boolean') {
      return usage(`unexpected argument ${JSON.stringify(word)}: --${n} takes no value`)
    }
  }
  return usage(`unexpected argument ${JSON.stringify(word)}`)
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

module.exports = { parseArgs, wantsHelp, tokenize }
