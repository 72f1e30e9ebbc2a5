'use strict'
// The native binding, loaded once; null if it cannot be loaded (R-ERR-2: then every memory call
// throws MEMORY_STORAGE_ERROR "native binding unavailable", and memory never falls back to
// another store).

function loadNative() {
  try {
    // An explicit library path is used as it is: a missing file means no binding.
    const override = process.env.NAPI_RS_NATIVE_LIBRARY_PATH
    if (override) return require(override)
    // The one platform this package is built for, loaded straight from its file: the generic
    // loader (binding.js) is 38 KB to compile and reads /usr/bin/ldd, a few milliseconds of
    // every command's start-up.
    if (process.platform === 'linux' && process.arch === 'x64') {
      try {
        return require('../rotifer-memory.linux-x64-gnu.node')
      } catch {
        // not built here, or not loadable (musl): the generic loader says which
      }
    }
    return require('../binding.js')
  } catch (e) {
    return null
  }
}

module.exports = loadNative()
