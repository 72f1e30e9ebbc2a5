'use strict'
// Plain-text output helpers.

// Text safe to print on a terminal (keys are written by genes, possibly from untrusted input):
// control characters, escape sequences and bidi controls shown escaped, never sent raw.
const { printable } = require('./terminal-text')

/**
 * A quota in the units quotas are written in: `50MB`, `0.5KB`, `1024GB` (a number with at most
 * three decimals, at least half a unit), or null when no unit gives one. The memory API's
 * messages use the same rule (`describe_quota` in core/src/quota.rs).
 */
function quotaUnits(n) {
  for (const [unit, size] of [['GB', 1024 ** 3], ['MB', 1024 ** 2], ['KB', 1024]]) {
    if ((n * 1000) % size === 0 && n * 2 >= size) return `${n / size}${unit}`
  }
  return null
}

/**
 * A quota for people: `50MB (52428800 bytes)`, or `1000 bytes` when no unit fits; with
 * `exact: false` just `50MB`.
 */
function formatQuota(n, { exact = true } = {}) {
  const units = quotaUnits(n)
  const bytes = n === 1 ? '1 byte' : `${n} bytes`
  if (!units) return bytes
  return exact ? `${units} (${bytes})` : units
}

/** A size for reading at a glance: `17 B`, `1.2 KB`, `35 MB`, `1024 GB` (1 KB = 1024 bytes). */
function formatSize(n) {
  if (n < 1024) return `${n} B`
  let value = n
  let unit = 'B'
  for (const u of ['KB', 'MB', 'GB']) {
    if (value < 1024) break
    value /= 1024
    unit = u
  }
  return `${value < 9.95 ? value.toFixed(1) : Math.round(value)} ${unit}`
}

// East Asian wide and fullwidth ranges: two terminal columns each.
const WIDE = [
  [0x1100, 0x115f], [0x2e80, 0x303e], [0x3041, 0x33ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff],
  [0xa000, 0xa4cf], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe30, 0xfe4f], [0xff00, 0xff60],
  [0xffe0, 0xffe6], [0x1f300, 0x1f64f], [0x1f900, 0x1f9ff], [0x20000, 0x2fffd], [0x30000, 0x3fffd],
]
// Made on first use: making a segmenter costs milliseconds, and plain text never needs one.
let segmenterMade = null
const segmenter = { segment: (text) => (segmenterMade = segmenterMade || new Intl.Segmenter(undefined, { granularity: 'grapheme' })).segment(text) }

/** Columns one grapheme takes on a terminal: 2 for wide characters and emoji, 0 for marks. */
function graphemeWidth(g) {
  const emoji = /\p{Extended_Pictographic}/u.test(g) && (g.includes('\u{fe0f}') || g.codePointAt(0) >= 0x1f000)
  if (emoji || /\p{Regional_Indicator}/u.test(g)) return 2
  const cp = g.codePointAt(0)
  if (/^[\p{Mn}\p{Me}\p{Cf}]/u.test(g)) return 0
  return WIDE.some(([a, b]) => cp >= a && cp <= b) ? 2 : 1
}

/** Characters one column wide each, with nothing to join (ASCII, Latin, `…`, dashes, quotes). */
const NARROW_ONLY = /^[\x20-\x7e\u00a0-\u02ff\u2010-\u2027]*$/

/** Columns `text` takes on a terminal. */
function displayWidth(text) {
  text = String(text)
  // The common case needs no grapheme segmentation (whose first use costs milliseconds).
  if (NARROW_ONLY.test(text)) return text.length
  let w = 0
  for (const { segment } of segmenter.segment(String(text))) w += graphemeWidth(segment)
  return w
}

/** `text` cut to at most `width` columns, ending in `…` when cut (never inside a grapheme). */
function truncate(text, width) {
  text = String(text)
  if (displayWidth(text) <= width) return text
  let out = ''
  let w = 0
  for (const { segment } of segmenter.segment(text)) {
    const gw = graphemeWidth(segment)
    if (w + gw > width - 1) break
    out += segment
    w += gw
  }
  return out + '…'
}

/** The graphemes of `text` with the columns each takes: `[{ segment, width }]`. */
function graphemes(text) {
  return [...segmenter.segment(String(text))].map(({ segment }) => ({ segment, width: graphemeWidth(segment) }))
}

function pad(text, width, right) {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)))
  return right ? fill + text : text + fill
}

/**
 * Rows of cells as aligned columns, the header first; the last column is not padded. Cells are
 * made printable and measured in terminal columns (CJK and emoji take two). Options: `right`,
 * the indexes of right-aligned columns; `maxWidth` with `shrink`, the index of the column
 * that is cut (with `…`) so that lines fit; `style(text, row)` decorates a finished line.
 */
function table(header, rows, { right = [], maxWidth = Infinity, shrink = -1, style = (line) => line } = {}) {
  const all = [header, ...rows].map((r) => r.map((c) => printable(c)))
  const widths = header.map((_, i) => Math.max(...all.map((r) => displayWidth(r[i]))))
  if (shrink >= 0) {
    const others = widths.reduce((sum, w, i) => sum + (i === shrink ? 0 : w), 0) + 2 * (widths.length - 1)
    const room = Math.max(displayWidth(all[0][shrink]), 12, maxWidth - others)
    if (widths[shrink] > room) {
      widths[shrink] = room
      for (const r of all) r[shrink] = truncate(r[shrink], room)
    }
  }
  return all
    .map((r, n) => style(r.map((c, i) => (i === r.length - 1 && !right.includes(i) ? c : pad(c, widths[i], right.includes(i)))).join('  '), n))
    .join('\n')
}

/** True when text for `stream` may be coloured: a terminal, and NO_COLOR unset or empty. */
function useColor(stream) {
  return Boolean(stream && stream.isTTY) && !process.env.NO_COLOR
}

const bold = (text) => `\x1b[1m${text}\x1b[22m`
const red = (text) => `\x1b[31m${text}\x1b[39m`

module.exports = { printable, formatQuota, formatSize, displayWidth, truncate, graphemes, table, useColor, bold, red }

/**
 * The columns output for `stream` may take: the terminal's width; when it is not a terminal,
 * `COLUMNS` if set to a number, else `fallback`.
 */
function terminalWidth(stream, fallback) {
  if (stream && stream.isTTY && stream.columns > 0) return stream.columns
  const env = Number(process.env.COLUMNS)
  return Number.isInteger(env) && env > 0 ? env : fallback
}

module.exports.terminalWidth = terminalWidth

// --- Layout for the width of a terminal (additions; `table` above is unchanged) ---

/** `1 entry`, `2 entries`: a count with its noun. */
function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`
}

/** A data policy in words: `anonymization not supported, entries kept at most 1 day`. */
function policyText(p) {
  return `anonymization ${p.anonymizationSupported ? 'supported' : 'not supported'}, ` +
    (p.maxRetentionDays === null ? 'no retention limit' : `entries kept at most ${plural(p.maxRetentionDays, 'day')}`)
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g

/** Columns `text` takes, not counting colour escapes. */
function visibleWidth(text) {
  return displayWidth(String(text).replace(ANSI, ''))
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/**
 * A bar of `width` cells filled to `fraction` (0 to 1, more is shown full) in eighths of a
 * cell, the rest in light shade: `██▌░░░░░░░`. With `color`, green, then yellow from 75 %, red
 * from 90 %.
 */
function usageBar(fraction, width, { color = false } = {}) {
  const f = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0))
  let eighths = Math.round(f * width * 8)
  // Anything above zero shows at least a sliver.
  if (eighths === 0 && f > 0) eighths = 1
  const full = Math.floor(eighths / 8)
  const part = EIGHTHS[eighths % 8]
  const filled = '█'.repeat(full) + part
  const empty = '░'.repeat(width - full - (part ? 1 : 0))
  if (!color) return filled + empty
  const hue = f >= 0.9 ? 31 : f >= 0.75 ? 33 : 32
  return `\x1b[${hue}m${filled}\x1b[39m\x1b[2m${empty}\x1b[22m`
}

/** `4.8%`, `0.1%` for a sliver, `<0.1%` below that, `100%`. */
function percent(fraction) {
  if (!(fraction > 0)) return '0%'
  const p = fraction * 100
  if (p < 0.1) return '<0.1%'
  return p >= 99.95 ? `${Math.round(p)}%` : `${p.toFixed(1)}%`
}

/**
 * Rows of cells as aligned columns, the header first, cut to fit `maxWidth` columns: the
 * columns listed in `shrink` (in that order) are cut with `…`, each down to `min[i]` (or its
 * header's width), until the lines fit. Cells are made printable, except those of the columns
 * in `raw` (already safe, possibly coloured). `right`: right-aligned columns; `style(line, n)`
 * decorates a finished line (n 0: the header). The last column is not padded.
 */
function fitTable(header, rows, { right = [], maxWidth = Infinity, shrink = [], min = {}, raw = [], style = (line) => line } = {}) {
  const all = [header, ...rows].map((r) => r.map((c, i) => (raw.includes(i) ? String(c) : printable(c))))
  const widths = header.map((_, i) => Math.max(...all.map((r) => visibleWidth(r[i]))))
  const total = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1)
  for (const i of shrink) {
    const over = total() - maxWidth
    if (over <= 0) break
    const floor = Math.max(visibleWidth(all[0][i]), min[i] || 1)
    const w = Math.max(floor, widths[i] - over)
    if (w < widths[i]) {
      widths[i] = w
      for (const r of all) r[i] = truncate(r[i], w)
    }
  }
  const padCell = (c, w, alignRight) => {
    const fill = ' '.repeat(Math.max(0, w - visibleWidth(c)))
    return alignRight ? fill + c : c + fill
  }
  return all
    .map((r, n) => style(r.map((c, i) => (i === r.length - 1 && !right.includes(i) ? c : padCell(c, widths[i], right.includes(i)))).join('  '), n))
    .join('\n')
}

/**
 * `  label  value` lines for a record: the value wrapped at spaces to `width` columns, its
 * continuation lines under its first.
 */
function field(label, value, width, labelWidth = 14) {
  const lead = `  ${label.padEnd(labelWidth)}`
  const room = Math.max(20, width - lead.length)
  const words = String(value).split(' ')
  const lines = []
  let line = ''
  for (const w of words) {
    if (line && visibleWidth(`${line} ${w}`) > room) {
      lines.push(line)
      line = w
    } else {
      line = line ? `${line} ${w}` : w
    }
  }
  lines.push(line)
  // One word too long for beside the label (a Gene ID at 80 columns): on its own line.
  if (lines.length === 1 && visibleWidth(lead + line) > width && visibleWidth(line) + 4 <= width) return `${lead.trimEnd()}\n    ${line}`
  return lines.map((l, i) => (i === 0 ? lead : ' '.repeat(lead.length)) + l).join('\n')
}

/** `v2:1a2b3c4d…`: enough of a v2 id to tell genes apart at a glance (others unchanged). */
function shortGeneId(id) {
  return /^v2:[0-9a-f]{64}$/.test(id) ? `${id.slice(0, 11)}…` : id
}

Object.assign(module.exports, { plural, policyText, usageBar, percent, fitTable, field, visibleWidth, shortGeneId })

/** A quota at a glance, in its own unit when it has one: `8 MB`, `1.5 GB`, else as formatSize. */
function quotaSize(n) {
  const units = quotaUnits(n)
  return units ? units.replace(/(KB|MB|GB)$/, ' $1') : formatSize(n)
}

module.exports.quotaSize = quotaSize
