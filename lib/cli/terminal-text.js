'use strict'
// Text the CLI did not write itself (a gene's error code and message, its output, its logs, the
// keys it stored) made safe to print on a terminal: no control character, escape sequence or
// bidi override reaches the terminal raw, and no newline inside such text starts a line that
// could pass for one of the CLI's own. Every print point of gene-supplied text goes through here.

/**
 * What a terminal acts on rather than shows: the C0 controls (ESC starts CSI and OSC sequences:
 * cursor moves, clear screen, window titles), DEL, the C1 controls (U+009B is a CSI on its own,
 * U+009D an OSC), the line and paragraph separators, and the bidi controls that reorder what
 * follows (the marks U+061C, U+200E, U+200F; embeddings and overrides U+202A–U+202E; isolates
 * U+2066–U+2069).
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
// eslint-disable-next-line no-control-regex
const UNSAFE_BUT_NEWLINE_AND_TAB = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const NAMED = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }
const hex4 = (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`

/**
 * `text` on one line with nothing a terminal acts on: newline, carriage return and tab as `\n`,
 * `\r`, `\t`, every other unsafe character as `\uXXXX` (the escapes JSON uses).
 */
function printable(text) {
  return String(text).replace(UNSAFE, (c) => NAMED[c] || hex4(c))
}

/**
 * JSON text (from JSON.stringify, indented or not) safe to print, meaning the same value:
 * JSON.stringify already escapes the C0 controls inside strings; DEL, the C1 controls, the
 * separators and the bidi controls, which it leaves raw, become `\uXXXX` escapes. They can only
 * occur inside strings, where that escape is valid JSON. The newlines of the layout stay.
 */
function printableJson(jsonText) {
  return jsonText.replace(UNSAFE_BUT_NEWLINE_AND_TAB, hex4)
}

/**
 * One line of a gene's log (a line it wrote to stdout or stderr) safe to print: unsafe
 * characters shown as `\u{1b}`, the escapes the sandbox's log uses; tab kept. `line` must hold
 * no newline: split a gene's text into lines first, each printed with its own prefix.
 */
function printableLogLine(line) {
  return String(line).replace(UNSAFE, (c) => (c === '\t' ? c : `\\u{${c.charCodeAt(0).toString(16)}}`))
}

/** True when `text` holds a character a terminal acts on other than newline and tab. */
function hasUnsafeText(text) {
  return String(text).search(UNSAFE_BUT_NEWLINE_AND_TAB) !== -1
}

module.exports = { printable, printableJson, printableLogLine, hasUnsafeText }
