'use strict'

const native = require('./native')

/**
 * The five codes a memory call can fail with (spec §11), from their one home, the Rust core.
 * Without the native binding every call fails with MEMORY_STORAGE_ERROR, the only code then.
 */
const MEMORY_ERROR_CODES = Object.freeze(native ? native.memoryErrorCodes() : ['MEMORY_STORAGE_ERROR'])

const KNOWN = new Set(MEMORY_ERROR_CODES)

/** Every failure of the memory API throws one of these (R-ERR-1). */
class MemoryError extends Error {
  constructor(code, message, options) {
    // A misspelt code would silently become another failure: refuse it.
    if (!KNOWN.has(code)) {
      throw new TypeError(`MemoryError code must be one of ${MEMORY_ERROR_CODES.join(', ')}, not ${JSON.stringify(code)}`)
    }
    super(message, options)
    this.code = code
  }
}

Object.defineProperty(MemoryError.prototype, 'name', {
  value: 'MemoryError',
  writable: true,
  configurable: true,
  enumerable: false,
})

/**
 * The error to throw for `e`: native errors carry their code in `e.code`; anything else
 * (a test clock or a getter that threw) becomes a storage error with `e` as its cause.
 */
function toMemoryError(e) {
  if (e instanceof MemoryError) return e
  if (e && KNOWN.has(e.code)) return new MemoryError(e.code, e.message)
  const what = e && e.message ? e.message : String(e)
  return new MemoryError('MEMORY_STORAGE_ERROR', `memory call failed: ${what}`, { cause: e })
}

module.exports = { MemoryError, MEMORY_ERROR_CODES, toMemoryError }
