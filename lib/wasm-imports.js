'use strict'
// createMemoryImports (R-WASM-6): the host functions `readMemory`, `writeMemory`, `queryMemory`
// and `deleteMemory` that a WASM gene imports from the module `rotifer`, for Node's own
// `WebAssembly`. The protocol (request parsing, responses, return codes, the kept response)
// lives in the Rust core; this file only checks that the gene's pointers lie inside its memory
// and hands the native protocol views of that memory.

const { MemoryError, toMemoryError } = require('./memory-error')

const CALLS = Object.freeze(['readMemory', 'writeMemory', 'queryMemory', 'deleteMemory'])
/** Returned when not even the native protocol could answer (MEMORY_STORAGE_ERROR). */
const STORAGE_ERROR = -13
const EMPTY = new Uint8Array(0)

const tag = (v) => Object.prototype.toString.call(v)

/** The instance's memory buffer, read anew on every call: `memory.grow` replaces it. */
function bufferOf(memory) {
  // Without the memory the gene cannot be answered at all: the host wired the imports wrongly
  // (or a start function called them before instantiation returned), so the host is told.
  const wrong = (cause) =>
    new MemoryError(
      'MEMORY_INVALID_INPUT',
      "createMemoryImports: memory() must return the instance's WebAssembly.Memory, e.g. () => instance.exports.memory; it is read on every host call, so the instance must exist by then",
      cause === undefined ? undefined : { cause },
    )
  let m
  try {
    m = memory()
  } catch (e) {
    throw wrong(e)
  }
  const buffer = m != null ? m.buffer : undefined
  const kind = tag(buffer)
  if (kind !== '[object ArrayBuffer]' && kind !== '[object SharedArrayBuffer]') throw wrong()
  return buffer
}

function hostFunction(host, name, memory, clock) {
  const maxRequest = host.maxRequestBytes
  const fn = function (reqPtr, reqLen, outPtr, outCap) {
    const buffer = bufferOf(memory)
    // WASM passes i32s, which JS sees signed; wasm32 pointers and lengths are unsigned.
    reqPtr >>>= 0
    reqLen >>>= 0
    outPtr >>>= 0
    outCap >>>= 0
    const size = buffer.byteLength
    const inBounds = reqPtr + reqLen <= size && outPtr + outCap <= size
    const out = inBounds ? new Uint8Array(buffer, outPtr, outCap) : EMPTY
    try {
      const now = clock === undefined ? undefined : clock()
      // A bad pointer is the gene's input error (-10), never an exception thrown into it.
      if (!inBounds) return host.outOfBounds(now)
      let request = new Uint8Array(buffer, reqPtr, reqLen)
      // Other threads may write a shared memory at any moment: the protocol reads a private copy.
      // A request over the limit is refused by its length alone, never read: it is not copied
      // (a 2 GiB request would take seconds and gigabytes).
      if (tag(buffer) === '[object SharedArrayBuffer]' && reqLen <= maxRequest) request = request.slice()
      return host.call(name, request, out, now)
    } catch (e) {
      // A test clock that threw, or an internal failure: the gene gets its code and envelope.
      const err = toMemoryError(e)
      try {
        return host.fail(out, err.code, err.message)
      } catch {
        return STORAGE_ERROR
      }
    }
  }
  Object.defineProperty(fn, 'name', { value: name })
  return fn
}

/**
 * `createMemoryImports` over a loaded native binding. `clockOf` reads `options.now` the same
 * way as `GeneMemoryAccess` does.
 */
function memoryImportsFor(native, clockOf) {
  return function createMemoryImports(options, memory) {
    let host
    let clock
    try {
      if (typeof memory !== 'function') {
        throw new MemoryError(
          'MEMORY_INVALID_INPUT',
          "createMemoryImports(options, memory): memory must be a function returning the instance's WebAssembly.Memory (known only after instantiation), e.g. () => instance.exports.memory",
        )
      }
      clock = clockOf(options)
      host = new native.NativeWasmHost(options)
    } catch (e) {
      throw toMemoryError(e)
    }
    const imports = {}
    for (const name of CALLS) imports[name] = hostFunction(host, name, memory, clock)
    return imports
  }
}

module.exports = { memoryImportsFor }
