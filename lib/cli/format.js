'use strict'
// Plain-text output helpers.

/**
 * Text safe to print on a terminal. Keys are written by genes, possibly from untrusted input:
 * control characters (newlines, escape sequences) are shown escaped, never sent raw.
 */
function printable(text) {
  // eslint-disable-next-line no-control-regex
  return String(text).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const named = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }[c]
    return named || `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
  })
}

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
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/** Columns one grapheme takes on a terminal: 2 for wide characters and emoji, 0 for marks. */
function graphemeWidth(g) {
  const emoji = /\p{Extended_Pictographic}/u.test(g) && (g.includes('\u{fe0f}') || g.codePointAt(0) >= 0x1f000)
  if (emoji || /\p{Regional_Indicator}/u.test(g)) return 2
  const cp = g.codePointAt(0)
  if (/^[\p{Mn}\p{Me}\p{Cf}]/u.test(g)) return 0
  return WIDE.some(([a, b]) => cp >= a && cp <= b) ? 2 : 1
}

/** Columns `text` takes on a terminal. */
function displayWidth(text) {
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

module.exports = { printable, formatQuota, formatSize, displayWidth, truncate, table, useColor, bold, red }

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
