'use strict'
// The native binding, loaded once; null if it cannot be loaded (R-ERR-2: then every memory call
// throws MEMORY_STORAGE_ERROR "native binding unavailable", and memory never falls back to
// another store).

function loadNative() {
  try {
    // An explicit library path is used as it is: a missing file means no binding.
    const override = process.env.NAPI_RS_NATIVE_LIBRARY_PATH
    return override ? require(override) : require('../binding.js')
  } catch (e) {
    return null
  }
}

module.exports = loadNative()
