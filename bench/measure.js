'use strict'
// Timing: alternating rounds of ours and the baseline, medians, and a collected heap
// before every timed batch so that one side's garbage is not collected on the other's clock.

const v8 = require('node:v8')
const vm = require('node:vm')

/** `gc()`, exposed at run time so that `node bench/run.js` needs no flag. */
function exposeGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc
  v8.setFlagsFromString('--expose-gc')
  return vm.runInNewContext('gc')
}

const gc = exposeGc()

const tick = () => new Promise((resolve) => setImmediate(resolve))

/** Collects garbage and lets native finalizers run (they close unreferenced stores). */
async function settle() {
  gc()
  await tick()
  await tick()
}

/**
 * Which clock the ratios use. `wall`: elapsed time, what the caller waits (the default).
 * `cpu`: this process's CPU time (user + system, every thread): on a busy shared machine it
 * leaves out the time spent waiting for a core, but it also leaves out waiting for the disk and
 * counts the work of background threads (such as the garbage collector's). Both are always
 * recorded.
 */
let primary = 'wall'
function useClock(name) {
  if (name !== 'cpu' && name !== 'wall') throw new Error(`unknown clock ${name}; use cpu or wall`)
  primary = name
}
const other = () => (primary === 'cpu' ? 'wall' : 'cpu')

/** Starts both clocks; the function it answers stops them: `{ wall, cpu }` in nanoseconds. */
function startTimer() {
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  return () => {
    const wall = Number(process.hrtime.bigint() - t0)
    const c = process.cpuUsage(c0)
    return { wall, cpu: (c.user + c.system) * 1000 }
  }
}

function median(xs) {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** The sides a case can have: ours, the lean baseline, and (optionally) the schema copy. */
const SIDES = ['ours', 'baseline', 'copy']

/**
 * Runs each case's sides in alternating rounds (ours, baseline[, copy], ours, …) after `warmup`
 * rounds. Every round runs each case's sides back to back, so that all the cases are measured
 * in the same stretch of time.
 *
 * Each side is `async (round) => ({ wall, cpu, calls })`: it times its own batch with
 * `startTimer` (so that per-round setup stays off the clock) and answers both times and the
 * number of calls it made. Warm-up rounds are negative. `copy` is optional. For each case, on
 * the primary clock: per-call medians in microseconds, and the ratio: the median of the
 * per-round ratios ours/baseline (each round's sides ran back to back, so a slow stretch of the
 * machine affects them alike); with a copy, `copyUs` and `copyRatio` (ours/copy) alike. `alt`
 * holds the same figures on the other clock.
 */
async function interleave({ rounds, warmup, cases }) {
  const sidesOf = (c) => SIDES.filter((s) => typeof c[s] === 'function')
  for (let w = 1; w <= warmup; w++) {
    for (const c of cases) {
      for (const side of sidesOf(c)) {
        await settle()
        await c[side](-w)
      }
    }
  }
  const samples = cases.map((c) => {
    const s = { cpu: {}, wall: {} }
    for (const side of sidesOf(c)) {
      s.cpu[side] = []
      s.wall[side] = []
    }
    return s
  })
  const record = (s, side, t) => {
    s.cpu[side].push(t.cpu / t.calls / 1e3)
    s.wall[side].push(t.wall / t.calls / 1e3)
  }
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < cases.length; i++) {
      for (const side of sidesOf(cases[i])) {
        await settle()
        record(samples[i], side, await cases[i][side](r))
      }
    }
  }
  return samples.map((s) => {
    const { samples: alt, ...altSummary } = summarize(s[other()])
    return { clock: primary, ...summarize(s[primary]), alt: { clock: other(), ...altSummary, samples: alt } }
  })
}

function summarize(samples) {
  const ratios = (side) => samples.ours.map((x, i) => x / samples[side][i])
  const out = {
    oursUs: median(samples.ours),
    baselineUs: median(samples.baseline),
    ratio: median(ratios('baseline')),
    roundRatios: ratios('baseline'),
  }
  if (samples.copy) {
    out.copyUs = median(samples.copy)
    out.copyRatio = median(ratios('copy'))
  }
  out.samples = samples
  return out
}

/** One case of `interleave`. */
async function alternate({ rounds, warmup, ours, baseline, copy }) {
  return (await interleave({ rounds, warmup, cases: [{ ours, baseline, copy }] }))[0]
}

/** Results of `interleave` for one case, measured in several blocks, as one result. */
function merge(results) {
  const join = (pick) => {
    const j = {}
    for (const side of SIDES) if (pick(results[0])[side]) j[side] = results.flatMap((m) => pick(m)[side])
    return j
  }
  const { samples: alt, ...altSummary } = summarize(join((m) => m.alt.samples))
  return { clock: results[0].clock, ...summarize(join((m) => m.samples)), alt: { clock: results[0].alt.clock, ...altSummary, samples: alt } }
}

/** How much the per-call medians grew from `first` to `later`, for ours and for the baseline. */
function growth(first, later) {
  const g = { ours: later.oursUs / first.oursUs, baseline: later.baselineUs / first.baselineUs }
  if (first.copyUs !== undefined) g.copy = later.copyUs / first.copyUs
  return g
}

/** A small seeded generator (mulberry32): the same key order for both sides and every run. */
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `count` integers in [0, n), reproducible from `seed`. */
function picks(seed, count, n) {
  const next = rng(seed)
  const out = new Array(count)
  for (let i = 0; i < count; i++) out[i] = Math.floor(next() * n)
  return out
}

module.exports = { gc, settle, startTimer, useClock, median, interleave, alternate, merge, growth, picks }
