'use strict'
// Output that is written as it is made, for listings that may hold hundreds of thousands of
// lines (`agent memory list`, `agent memory log`): lines go out in chunks, the first as soon as
// the first page is read, and tables are laid out from their first rows instead of from all of
// them. The table helpers of format.js measure every cell grapheme by grapheme; here plain
// ASCII (nearly every key, time and id) is measured by its length and the rest by format.js.

const { displayWidth, printable, truncate, graphemes } = require('./format')

// Characters of one column each, one UTF-16 unit each: printable ASCII, Latin letters and
// signs (not the soft hyphen, which takes none), and "…" (what cut text ends with).
const ASCII = /^[\x20-\x7e\u00a0-\u00ac\u00ae-\u02ff\u2026]*$/

/** Columns `text` takes on a terminal (fast for plain ASCII). */
function width(text) {
  return ASCII.test(text) ? text.length : displayWidth(text)
}

/** `text` cut to at most `w` columns, ending in `…` when cut. */
function cut(text, w) {
  if (ASCII.test(text)) return text.length <= w ? text : w <= 0 ? '' : `${text.slice(0, w - 1)}…`
  return w <= 0 ? '' : truncate(text, w)
}

/**
 * `text` cut to at most `w` columns in the middle: its start, `…`, and its end, which is kept
 * longer (two thirds), since ids and keys that share a start differ at the end
 * (`user/000/item-00104` at 12: `user…m-00104`).
 */
function cutMiddle(text, w) {
  if (width(text) <= w) return text
  if (w <= 1) return w <= 0 ? '' : '…'
  const tail = Math.ceil((w - 1) * 2 / 3)
  const head = w - 1 - tail
  if (ASCII.test(text)) return `${text.slice(0, head)}…${text.slice(text.length - tail)}`
  const gs = graphemes(text)
  let start = ''
  let used = 0
  for (const g of gs) {
    if (used + g.width > head) break
    start += g.segment
    used += g.width
  }
  let end = ''
  used = 0
  for (let i = gs.length - 1; i >= 0; i--) {
    if (used + gs[i].width > tail) break
    end = gs[i].segment + end
    used += gs[i].width
  }
  return `${start}…${end}`
}

/** `text` safe to print (format.js `printable`), with plain text passed through as it is. */
function safe(text) {
  const s = String(text)
  return ASCII.test(s) ? s : printable(s)
}

/**
 * How wide lines may be: the terminal's width when stdout is one; else `COLUMNS` when it is a
 * positive whole number; else 80.
 */
function outputWidth(stream = process.stdout) {
  if (stream.isTTY && stream.columns > 0) return stream.columns
  const env = Number(process.env.COLUMNS)
  return Number.isInteger(env) && env > 0 ? env : 80
}

/**
 * Lines written in chunks through `io.out` (one call per chunk): `line(text)` keeps a line,
 * `flush()` writes what is kept. A chunk goes out by itself once it holds `chunkLines` lines.
 */
function lineWriter(io, chunkLines = 2000) {
  let kept = []
  const flush = () => {
    if (kept.length === 0) return
    const text = kept.join('\n')
    kept = []
    io.out(text)
  }
  return {
    line(text) {
      kept.push(text)
      if (kept.length >= chunkLines) flush()
    },
    flush,
  }
}

/**
 * A table laid out once, from its header and first rows, then rendered row by row.
 *
 * `columns`: `{ header, right?, min?, grow?, middle? }` in order. Every column is as wide as the widest of
 * its header, `min` and first rows' cells (cells are made printable first). A cell may be a
 * string, or an object `{ long, short }`: the long forms are used when the first rows fit whole
 * with them, else the short ones. When lines are wider than `maxWidth`, the columns with `grow` (a rank: 1 is cut
 * first) are cut down to what is left, not below their header or 12 columns, then if need be
 * not below their header or 5. Later rows' cells are cut to their column (with `…`) in the
 * columns with `grow`; in the others (sizes, actions: short, never cut) a wider cell pushes what
 * follows, as little as the padding allows; the line then takes the room back from that row's
 * cells in the columns with `grow`, so short cells (a size and its unit) always show whole. A
 * column with `middle` (keys, ids) is cut in the middle, keeping the end that tells cells
 * apart (`cutMiddle`). Every line, whatever its cells, is cut to `maxWidth` at last.
 * A last column marked `optional` is left out of the layout when lines would not fit with it
 * whole; `fits(row)` tells whether a row shows whole (its cell can then go on a line of its own).
 * With `maxWidth: Infinity` nothing is cut, and longer cells of later rows push their line.
 */
function streamTable(columns, firstRows, maxWidth) {
  const n = columns.length
  const form = (cell, long) => (cell !== null && typeof cell === 'object' ? (long ? cell.long : cell.short) : cell)
  const cells = (row, long) => row.map((c) => safe(form(c, long)))
  const natural = (long) => {
    const ws = columns.map((c) => Math.max(width(c.header), c.min || 0))
    for (const r of firstRows) {
      const cs = cells(r, long)
      for (let i = 0; i < n; i++) ws[i] = Math.max(ws[i], width(cs[i]))
    }
    return ws
  }
  const total = (ws) => ws.reduce((a, b) => a + b, 0) + 2 * (n - 1)
  const floorOf = (ws, i) => (columns[i].grow ? Math.min(ws[i], Math.max(width(columns[i].header), 12)) : ws[i])
  let long = true
  let widths = natural(true)
  const hasForms = firstRows.some((r) => r.some((c) => c !== null && typeof c === 'object'))
  // A last column that is `optional` gives its room up when the lines do not fit with it whole
  // (its header is left out; `fits` then says no for a row with something in it): first if it
  // is empty in the first rows, else only once the short forms are not enough.
  let hidden = false
  const hide = () => {
    hidden = true
    widths[n - 1] = -2
  }
  const optional = columns[n - 1].optional
  if (optional && total(widths) > maxWidth && firstRows.every((r) => cells(r, true)[n - 1] === '')) hide()
  // The long forms only when the first rows fit whole with them.
  if (hasForms && total(widths) > maxWidth) {
    long = false
    widths = natural(false)
    if (hidden) widths[n - 1] = -2
  }
  if (optional && !hidden && total(widths) > maxWidth) hide()
  const order = columns.map((c, i) => [c.grow, i]).filter(([g]) => g).sort((a, b) => a[0] - b[0]).map(([, i]) => i)
  // First down to 12 columns (or the header), then, if that is not enough, to 5 (or the header).
  for (const floor of [floorOf, (ws, i) => Math.min(ws[i], Math.max(width(columns[i].header), 5))]) {
    for (const i of order) {
      const over = total(widths) - maxWidth
      if (over <= 0) break
      widths[i] = Math.max(floor(widths, i), widths[i] - over)
    }
  }
  const cutCells = maxWidth !== Infinity
  const cutTo = (i, t, w) => (columns[i].middle ? cutMiddle(t, w) : cut(t, w))
  /** The line of `texts` with columns `ws`, and the columns it takes. */
  const lay = (texts, ws) => {
    // Each cell measured once; the line's width is the sum of what was put in it.
    // A cell wider than its column is cut if its column may be (`grow`), else it pushes what
    // follows, which takes the overflow back from its padding where it can (`debt`).
    let line = ''
    let w = 0
    let debt = 0
    for (let i = 0; i < n; i++) {
      let t = texts[i]
      let tw = width(t)
      if (cutCells && tw > ws[i] && i < n - 1 && columns[i].grow) {
        t = cutTo(i, t, ws[i])
        tw = width(t)
      }
      if (i > 0) {
        line += '  '
        w += 2
      }
      let fill = i === n - 1 && !columns[i].right ? 0 : ws[i] - tw
      if (fill < 0) {
        debt -= fill
        fill = 0
      } else {
        const back = Math.min(fill, debt)
        fill -= back
        debt -= back
      }
      line += columns[i].right ? ' '.repeat(fill) + t : fill > 0 && i < n - 1 ? t + ' '.repeat(fill) : t
      w += tw + fill
    }
    const trimmed = line.trimEnd()
    return { line: trimmed, w: w - (line.length - trimmed.length) }
  }
  const render = (texts) => {
    let { line, w } = lay(texts, widths)
    if (cutCells && w > maxWidth) {
      // A wide cell pushed the line over: this row's cuttable cells give the room back (not
      // below 5 columns), rather than the end of the line (a size's unit) being cut.
      const ws = widths.slice()
      let over = w - maxWidth
      for (const i of order) {
        if (over <= 0) break
        if (i === n - 1) continue
        // Its padding in this row first, then its text, down to 5 columns.
        const to = Math.max(Math.min(width(texts[i]), ws[i], 5), ws[i] - over)
        over -= ws[i] - to
        ws[i] = to
      }
      ;({ line, w } = lay(texts, ws))
    }
    return cutCells && w > maxWidth ? cut(line, maxWidth) : line
  }
  /** Whether `row` shows whole: no cell is cut. */
  const fits = (row) => {
    if (!cutCells) return true
    const texts = cells(row, long)
    let at = 0
    for (let i = 0; i < n - 1; i++) {
      if (width(texts[i]) > widths[i]) return false
      at += widths[i] + 2
    }
    return texts[n - 1] === '' || (!hidden && at + width(texts[n - 1]) <= maxWidth)
  }
  return {
    header: () => render(columns.map((c, i) => (hidden && i === n - 1 ? '' : c.header))),
    row: (row) => render(cells(row, long)),
    /** A line of its own under a row, indented by 4, for text that did not fit in it. */
    continuation: (text) => {
      const t = `    ${printable(text)}`
      return cutCells && width(t) > maxWidth ? cut(t, maxWidth) : t
    },
    fits,
    widths,
  }
}

/**
 * A JSON array written element by element, exactly as `JSON.stringify(all, null, 2)` would
 * print it: `item(value)` for each, then `end()`.
 */
function jsonArrayWriter(out) {
  let pending = null
  let any = false
  return {
    item(value) {
      if (!any) out.line('[')
      if (pending !== null) out.line(`${pending},`)
      pending = `  ${JSON.stringify(value, null, 2).replace(/\n/g, '\n  ')}`
      any = true
    },
    end() {
      if (pending !== null) out.line(pending)
      out.line(any ? ']' : '[]')
      out.flush()
    },
  }
}

module.exports = { width, cut, cutMiddle, outputWidth, lineWriter, streamTable, jsonArrayWriter }
