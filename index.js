'use strict'
// @rotifer/playground/memory — the Agent Memory API.
//
// Loads the native binding. If it cannot be loaded, importing still works and every memory
// call throws MemoryError MEMORY_STORAGE_ERROR "native binding unavailable" (R-ERR-2): memory
// never falls back to another store.

const { MemoryError, MEMORY_ERROR_CODES } = require('./lib/memory-error')
const { create } = require('./lib/memory')
const native = require('./lib/native')

module.exports = {
  ...create(native),
  MemoryError,
  MEMORY_ERROR_CODES,
  /** True when the native binding loaded; memory calls throw otherwise. */
  nativeBindingLoaded: native !== null,
}
