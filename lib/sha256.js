'use strict'
// SHA-256 as lowercase hex, of a string (as UTF-8) or bytes: gene ids, cache keys. Through the
// addon, which every command loads anyway; node:crypto takes about 3 ms to load, a tenth of a
// command's start-up, and is the fallback when the addon is missing.

const native = require('./native')

/** Lowercase hex SHA-256 of `data` (a string, as UTF-8, or a Buffer / Uint8Array). */
function sha256Hex(data) {
  if (native && typeof native.sha256Hex === 'function') return native.sha256Hex(typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength))
  return require('node:crypto').createHash('sha256').update(data).digest('hex')
}

module.exports = { sha256Hex }
