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

/** A byte count the way quotas are written: `50 MB`, `1.5 GB`, or plain bytes. */
function formatBytes(n) {
  const units = [['GB', 1024 ** 3], ['MB', 1024 ** 2], ['KB', 1024]]
  for (const [unit, size] of units) {
    if (n >= size && (n * 100) % size === 0) return `${n / size} ${unit}`
  }
  return `${n} bytes`
}

/** Rows of cells as aligned columns, the header first; the last column is not padded. */
function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => printable(c)))
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)))
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n')
}

module.exports = { printable, formatBytes, table }
