'use strict'
// "Did you mean …?": the known name closest to a mistyped one, as git and cargo suggest.

/** Edit distance with transpositions (optimal string alignment), by code point. */
function distance(a, b) {
  const s = [...a]
  const t = [...b]
  const d = Array.from({ length: s.length + 1 }, (_, i) => [i, ...Array(t.length).fill(0)])
  for (let j = 1; j <= t.length; j++) d[0][j] = j
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  }
  return d[s.length][t.length]
}

/**
 * The candidate closest to `name`, or null when none is close: at most a third of the name's
 * length in edits (at least 1), ignoring case; ties go to the first candidate given.
 */
function closest(name, candidates) {
  const wanted = String(name).toLowerCase()
  const limit = Math.max(1, Math.floor([...wanted].length / 3))
  let best = null
  let bestDistance = Infinity
  for (const c of candidates) {
    const dist = distance(wanted, String(c).toLowerCase())
    if (dist < bestDistance) {
      best = c
      bestDistance = dist
    }
  }
  return bestDistance <= limit ? best : null
}

/** `; did you mean "x"?` for the closest candidate (shown by `show`), or '' when none is close. */
function didYouMean(name, candidates, show = (c) => c) {
  const c = closest(name, candidates)
  return c === null ? '' : `; did you mean "${show(c)}"?`
}

module.exports = { closest, didYouMean, distance }
