'use strict'
// SVG charts drawn from a benchmark's results (the object bench/run.js writes as JSON), so that
// the pictures in docs/ always show a run and nothing else. No dependencies: plain SVG text.
//
// - bench-cost-by-size.svg: per-call cost against the agent's size (log scale), one panel per
//   operation, one line per store;
// - bench-concurrency.svg: writes per second with N processes updating one agent;
// - bench-ratios.svg: every ratio with a target, against its target.

const fs = require('node:fs')
const path = require('node:path')

const COLORS = { ours: '#d9480f', baseline: '#1c7ed6', copy: '#868e96' }
const NAMES = { ours: 'ours', baseline: 'lean better-sqlite3', copy: 'better-sqlite3, our schema copied' }
const DASH = { ours: '', baseline: '6 3', copy: '2 3' }
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"'

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const num = (x) => +x.toFixed(1)

function text(x, y, s, { size = 12, anchor = 'start', weight = 'normal', fill = '#222' } = {}) {
  return `<text x="${num(x)}" y="${num(y)}" font-size="${size}" text-anchor="${anchor}" font-weight="${weight}" fill="${fill}">${esc(s)}</text>`
}

const line = (x1, y1, x2, y2, stroke = '#ccc', extra = '') =>
  `<line x1="${num(x1)}" y1="${num(y1)}" x2="${num(x2)}" y2="${num(y2)}" stroke="${stroke}" ${extra}/>`

function svg(width, height, body) {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>\n` +
    `<rect width="${width}" height="${height}" fill="#fff"/>\n${body.join('\n')}\n</svg>\n`
  )
}

/** Up to about six round tick values from 0 to at least `max`. */
function ticks(max) {
  if (!(max > 0)) return [0, 1]
  const raw = max / 5
  const p = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw)
  const out = []
  for (let v = 0; v < max + step * 0.999; v += step) out.push(+v.toPrecision(12))
  return out
}

const shortN = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n))
const fmtUs = (us) => (us >= 1000 ? `${+(us / 1000).toPrecision(3)} ms` : `${+us.toPrecision(3)} µs`)

function legend(x, y, sides) {
  const parts = []
  let at = x
  for (const side of sides) {
    parts.push(line(at, y - 4, at + 24, y - 4, COLORS[side], `stroke-width="2.5" stroke-dasharray="${DASH[side]}"`))
    parts.push(text(at + 30, y, NAMES[side], { size: 12 }))
    at += 44 + NAMES[side].length * 6.6
  }
  return parts
}

function caption(out) {
  const m = out.machine
  return `${out.mode} run ${out.startedAt.slice(0, 10)}${out.source ? ` at ${out.source.commit}${out.source.modified ? '+' : ''}` : ''}; ${m.cpus} × ${m.cpu}; Node ${m.node}`
}

/** Per-call cost against entries, for read hit, update and prefix query, every store. */
function costBySize(out) {
  const W = 960
  const H = 390
  const panelW = 280
  const top = 94
  const plotH = 220
  const ops = [
    ['readHit', 'readMemory hit'],
    ['update', 'writeMemory update (100 bytes)'],
    ['query', 'queryMemory prefix, limit 100'],
  ]
  const sizes = out.growth.map((p) => p.entries)
  const lx = (n, x0) => x0 + ((Math.log(n) - Math.log(sizes[0])) / (Math.log(sizes.at(-1)) - Math.log(sizes[0]))) * (panelW - 60)
  const body = [text(20, 26, 'Per-call cost against the size of the agent (lower is better)', { size: 16, weight: 'bold' })]
  body.push(...legend(20, 48, ['ours', 'baseline', 'copy']))
  ops.forEach(([op, name], i) => {
    const x0 = 20 + i * (panelW + 30) + 50
    const xEnd = x0 + panelW - 60
    const values = out.growth.flatMap((p) => [p[op].oursUs, p[op].baselineUs, p[op].copyUs]).filter((v) => v != null)
    const t = ticks(Math.max(...values))
    const y = (v) => top + plotH - (v / t.at(-1)) * plotH
    body.push(text(x0 + (panelW - 60) / 2, top - 14, name, { size: 13, anchor: 'middle', weight: 'bold' }))
    for (const v of t) {
      body.push(line(x0, y(v), xEnd, y(v), '#eee'))
      body.push(text(x0 - 6, y(v) + 4, fmtUs(v), { size: 10, anchor: 'end', fill: '#555' }))
    }
    for (const n of sizes) {
      body.push(line(lx(n, x0), top + plotH, lx(n, x0), top + plotH + 4, '#888'))
      body.push(text(lx(n, x0), top + plotH + 17, shortN(n), { size: 11, anchor: 'middle', fill: '#555' }))
    }
    body.push(line(x0, top + plotH, xEnd, top + plotH, '#888'))
    body.push(text(x0 + (panelW - 60) / 2, top + plotH + 34, 'entries (log scale)', { size: 11, anchor: 'middle', fill: '#555' }))
    for (const side of ['copy', 'baseline', 'ours']) {
      const key = { ours: 'oursUs', baseline: 'baselineUs', copy: 'copyUs' }[side]
      const pts = out.growth.filter((p) => p[op][key] != null).map((p) => [lx(p.entries, x0), y(p[op][key])])
      if (pts.length === 0) continue
      body.push(
        `<polyline fill="none" stroke="${COLORS[side]}" stroke-width="2.5" stroke-dasharray="${DASH[side]}" points="${pts.map(([a, b]) => `${num(a)},${num(b)}`).join(' ')}"/>`,
      )
      for (const [a, b] of pts) body.push(`<circle cx="${num(a)}" cy="${num(b)}" r="3.5" fill="${COLORS[side]}"/>`)
    }
  })
  body.push(text(20, H - 10, caption(out), { size: 10, fill: '#777' }))
  return svg(W, H, body)
}

/** Writes per second with N processes updating one agent: ours against the lean baseline. */
function concurrency(out) {
  const W = 720
  const H = 340
  const x0 = 80
  const top = 64
  const plotH = 210
  const rows = out.concurrency
  const t = ticks(Math.max(...rows.flatMap((r) => [r.ours, r.baseline])))
  const y = (v) => top + plotH - (v / t.at(-1)) * plotH
  const groupW = (W - x0 - 30) / rows.length
  const barW = Math.min(60, groupW / 3)
  const body = [text(20, 26, 'N processes updating one agent: writes per second (higher is better)', { size: 16, weight: 'bold' })]
  body.push(...legend(20, 48, ['ours', 'baseline']))
  for (const v of t) {
    body.push(line(x0, y(v), W - 30, y(v), '#eee'))
    body.push(text(x0 - 6, y(v) + 4, v.toLocaleString('en-US'), { size: 10, anchor: 'end', fill: '#555' }))
  }
  rows.forEach((r, i) => {
    const cx = x0 + groupW * i + groupW / 2
    ;[
      ['ours', r.ours, cx - barW - 2],
      ['baseline', r.baseline, cx + 2],
    ].forEach(([side, v, bx]) => {
      body.push(`<rect x="${num(bx)}" y="${num(y(v))}" width="${num(barW)}" height="${num(top + plotH - y(v))}" fill="${COLORS[side]}"/>`)
      body.push(text(bx + barW / 2, y(v) - 4, Math.round(v).toLocaleString('en-US'), { size: 10, anchor: 'middle', fill: '#333' }))
    })
    body.push(text(cx, top + plotH + 18, `${r.writers} process${r.writers > 1 ? 'es' : ''}`, { size: 12, anchor: 'middle' }))
    body.push(text(cx, top + plotH + 34, `time per write ×${r.ratio.toFixed(2)}`, { size: 11, anchor: 'middle', fill: '#555' }))
  })
  body.push(line(x0, top + plotH, W - 30, top + plotH, '#888'))
  body.push(text(20, H - 10, caption(out), { size: 10, fill: '#777' }))
  return svg(W, H, body)
}

/** Rows whose ratio is against the lean store and has a target (not rows with another baseline). */
const againstLean = (r) => r.limit != null && (r.kind === 'time' || r.kind === 'growth') && !r.baselineIs

/** Every such ratio, as a bar, with its target marked. */
function ratios(out) {
  const rows = out.rows.filter(againstLean)
  const W = 900
  const rowH = 26
  const top = 56
  const x0 = 430
  const plotW = W - x0 - 110
  const H = top + rows.length * rowH + 40
  const max = Math.max(2.2, ...rows.map((r) => r.ratio), ...rows.map((r) => r.limit)) * 1.05
  const x = (v) => x0 + (v / max) * plotW
  const body = [text(20, 26, 'Ours against the lean hand-rolled store: ratio and target (lower is better)', { size: 16, weight: 'bold' })]
  for (let v = 0; v <= max; v += 0.5) {
    body.push(line(x(v), top - 6, x(v), top + rows.length * rowH, v === 1 ? '#999' : '#eee'))
    body.push(text(x(v), top - 10, v.toFixed(1), { size: 10, anchor: 'middle', fill: '#555' }))
  }
  rows.forEach((r, i) => {
    const yy = top + i * rowH
    const label = r.label.length > 64 ? r.label.slice(0, 63) + '…' : r.label
    body.push(text(x0 - 8, yy + rowH / 2 + 4, label, { size: 11, anchor: 'end' }))
    const fill = r.verdict === 'met' ? '#2f9e44' : '#e03131'
    body.push(`<rect x="${num(x0)}" y="${num(yy + 5)}" width="${num(x(r.ratio) - x0)}" height="${rowH - 10}" fill="${fill}" opacity="0.85"/>`)
    body.push(line(x(r.limit), yy + 2, x(r.limit), yy + rowH - 2, '#111', 'stroke-width="2"'))
    body.push(text(x(Math.max(r.ratio, r.limit)) + 6, yy + rowH / 2 + 4, `${r.ratio.toFixed(2)} (${r.verdict})`, { size: 10, fill: '#333' }))
  })
  body.push(text(20, H - 10, `${caption(out)}. Black tick: the target; green: met; red: missed.`, { size: 10, fill: '#777' }))
  return svg(W, H, body)
}

/** Writes the charts the results have data for into `dir`; answers their paths. */
function write(out, dir) {
  fs.mkdirSync(dir, { recursive: true })
  const written = []
  const put = (name, content) => {
    const file = path.join(dir, name)
    fs.writeFileSync(file, content)
    written.push(file)
  }
  if (out.growth?.length >= 2) put('bench-cost-by-size.svg', costBySize(out))
  if (out.concurrency?.length) put('bench-concurrency.svg', concurrency(out))
  if (out.rows.some(againstLean)) put('bench-ratios.svg', ratios(out))
  return written
}

module.exports = { write, costBySize, concurrency, ratios }
