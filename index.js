'use strict'
// @rotifer/playground/memory — the Agent Memory API.
//
// Loads the native binding. If it cannot be loaded, importing still works and every memory
// call throws MemoryError MEMORY_STORAGE_ERROR "native binding unavailable" (R-ERR-2): memory
// never falls back to another store.

const { MemoryError, MEMORY_ERROR_CODES } = require('./lib/memory-error')
const { create } = require('./lib/memory')

function loadNative() {
  try {
    // An explicit library path is used as it is: a missing file means no binding.
    const override = process.env.NAPI_RS_NATIVE_LIBRARY_PATH
    return override ? require(override) : require('./binding.js')
  } catch (e) {
    return null
  }
}

const native = loadNative()

module.exports = {
  ...create(native),
  MemoryError,
  MEMORY_ERROR_CODES,
  /** True when the native binding loaded; memory calls throw otherwise. */
  nativeBindingLoaded: native !== null,
}
