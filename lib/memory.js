'use strict'
// The public API over the native binding. These wrappers convert arguments only as far as the
// binding needs (the test clock is read here) and turn native failures into MemoryError; every
// rule of the contract lives in the Rust core.

const { MemoryError, toMemoryError } = require('./memory-error')

/**
 * The gene id of `createTestMemory().memory` when no `geneId` is given: `v2:` + the SHA-256 of
 * `rotifer:test-gene` (written out: hashing it at load would load node:crypto for every command).
 */
const TEST_GENE_ID = 'v2:7759e4b5284d196e16a77261b499c6be0712504110c3a99aa8de48bcaaa1951f'

/**
 * Makes a MemoryEntry from the fields the native calls hand over: an object literal built here
 * is much cheaper than one defined property by property through Node-API.
 */
function makeEntry(
  entryId, category, key, value, createdBy, lastAccessedBy, createdAt, updatedAt,
  readScope, writeScope, sharePolicy, hasRetention, maxRetentionDays, autoDeleteOnTermination, anonymizationSupported,
) {
  return {
    entryId,
    category,
    key,
    value,
    createdBy,
    lastAccessedBy,
    createdAt,
    updatedAt,
    accessPolicy: { readScope, writeScope, sharePolicy },
    retentionPolicy: hasRetention ? { maxRetentionDays, autoDeleteOnTermination, anonymizationSupported } : null,
  }
}

function disposedError() {
  return new MemoryError('MEMORY_STORAGE_ERROR', 'this test memory was disposed (its files are deleted); create a new one with createTestMemory()')
}

function unavailable() {
  return new MemoryError('MEMORY_STORAGE_ERROR', 'native binding unavailable')
}

/** `options.now`, checked: a function, or nothing. */
function clockOf(options) {
  const now = options != null && typeof options === 'object' ? options.now : undefined
  if (now === undefined || now === null) return undefined
  if (typeof now !== 'function') {
    throw new MemoryError('MEMORY_INVALID_INPUT', 'options.now must be a function returning milliseconds since the epoch')
  }
  return now
}

function create(native) {
  if (!native) {
    class GeneMemoryAccess {
      constructor(options) {}
      readMemory() { throw unavailable() }
      writeMemory() { throw unavailable() }
      queryMemory() { throw unavailable() }
      deleteMemory() { throw unavailable() }
    }
    const fail = () => { throw unavailable() }
    return {
      GeneMemoryAccess,
      createAgentMemory: fail,
      ensureAgentMemory: fail,
      parseMemoryQuota: fail,
      listAgentMemory: fail,
      deleteAgentMemory: fail,
      createTestMemory: fail,
      createMemoryImports: fail,
      inspectAgentMemory: fail,
      getAgentMemory: fail,
      exportAgentMemory: fail,
      importAgentMemory: fail,
      migrateAgentMemory: fail,
      backupAgentMemory: fail,
      restoreAgentMemory: fail,
      deleteAgentDatabase: fail,
      readAgentAuditLog: fail,
      listAgentMemoryPage: fail,
      openAgentAuditLog: fail,
      agentMemoryBinding: fail,
      setupMemoryBinding: fail,
      TEST_GENE_ID,
    }
  }

  // Refusals a gene handle counted instead of writing are summarised when it is dropped; the
  // handles still alive at exit are never dropped, so their summaries are written here.
  process.once('exit', () => {
    try {
      native.flushDenialLogs()
    } catch {}
  })

  // readMemory, the call genes make most, is a plain function with the entry factory bound
  // once: cheaper to call than a method of the native class.
  const read = native.readFunction(makeEntry)

  class GeneMemoryAccess {
    #native
    #now
    #handle

    constructor(options) {
      try {
        this.#now = clockOf(options)
        this.#native = new native.NativeGeneMemory(options)
        this.#handle = this.#native.readHandle()
      } catch (e) {
        throw toMemoryError(e)
      }
    }

    readMemory(key, category) {
      try {
        if (this.#now) return read(this.#handle, key, category, this.#now())
        return category === undefined ? read(this.#handle, key) : read(this.#handle, key, category)
      } catch (e) {
        throw toMemoryError(e)
      }
    }

    writeMemory(key, value, category, accessPolicy, retentionPolicy) {
      try {
        return this.#native.write(key, value, category, accessPolicy, retentionPolicy, this.#now && this.#now(), makeEntry)
      } catch (e) {
        throw toMemoryError(e)
      }
    }

    queryMemory(filter) {
      try {
        return this.#native.query(filter, this.#now && this.#now(), makeEntry)
      } catch (e) {
        throw toMemoryError(e)
      }
    }

    deleteMemory(key) {
      try {
        this.#native.delete(key, this.#now && this.#now())
      } catch (e) {
        throw toMemoryError(e)
      }
    }
  }

  /** A handle of a test memory: once the memory is disposed, every call says so. */
  class TestGeneMemoryAccess extends GeneMemoryAccess {
    #isDisposed

    constructor(options, isDisposed) {
      super(options)
      this.#isDisposed = isDisposed
    }

    #check() {
      if (this.#isDisposed()) throw disposedError()
    }

    readMemory(...args) { this.#check(); return super.readMemory(...args) }
    writeMemory(...args) { this.#check(); return super.writeMemory(...args) }
    queryMemory(...args) { this.#check(); return super.queryMemory(...args) }
    deleteMemory(...args) { this.#check(); return super.deleteMemory(...args) }
  }

  function call(fn) {
    try {
      return fn()
    } catch (e) {
      throw toMemoryError(e)
    }
  }

  const createAgentMemory = (options) => call(() => native.createAgentMemory(options))
  const ensureAgentMemory = (options) => call(() => native.ensureAgentMemory(options))
  const parseMemoryQuota = (text) => call(() => native.parseMemoryQuota(text))
  const listAgentMemory = (options) => call(() => native.listAgentMemory(options, clockOf(options)?.()))
  const deleteAgentMemory = (options) => call(() => native.deleteAgentMemory(options, clockOf(options)?.()))
  const inspectAgentMemory = (options) => call(() => native.inspectAgentMemory(options, clockOf(options)?.()))
  const getAgentMemory = (options) => call(() => native.getAgentMemory(options, clockOf(options)?.(), makeEntry))
  const exportAgentMemory = (options) => call(() => native.exportAgentMemory(options, clockOf(options)?.()))
  // R-AUD-6/7: every audit file, oldest first, each line judged committed or not by the core.
  const readAgentAuditLog = (options) => call(() => JSON.parse(native.readAgentAuditLog(options)))
  // The deployer's listing and the audit log a page at a time (the CLI streams them).
  const listAgentMemoryPage = (options) => call(() => JSON.parse(native.listAgentMemoryPage(options, clockOf(options)?.())))
  const openAgentAuditLog = (options) => call(() => {
    const reader = new native.NativeAuditLogReader(options)
    return {
      get lines() { return reader.lines },
      get remaining() { return reader.remaining },
      get skipped() { return reader.skipped },
      get actions() { return reader.actions },
      get lastSeq() { return reader.lastSeq },
      skip: (n) => call(() => reader.skip(n)),
      next: (max = 1000) => call(() => {
        const text = reader.next(max)
        return text === null ? null : JSON.parse(text)
      }),
      poll: () => call(() => reader.poll()),
    }
  })
  // The bundle goes over on its own, so that a large one is copied once and never as an option.
  const importAgentMemory = (options) => call(() => {
    const isObject = options !== null && typeof options === 'object'
    const bundle = isObject ? options.bundle : undefined
    return native.importAgentMemory(isObject ? { ...options, bundle: undefined } : options, bundle, clockOf(options)?.())
  })

  // R-MIG-4: onStep goes over on its own (a function is no option the core reads).
  const migrateAgentMemory = (options) => call(() => {
    const isObject = options !== null && typeof options === 'object'
    const onStep = isObject ? options.onStep : undefined
    return native.migrateAgentMemory(isObject ? { ...options, onStep: undefined } : options, onStep, clockOf(options)?.())
  })
  const backupAgentMemory = (options) => call(() => native.backupAgentMemory(options))
  const restoreAgentMemory = (options) => call(() => native.restoreAgentMemory(options, clockOf(options)?.()))
  const deleteAgentDatabase = (options) => call(() => native.deleteAgentDatabase(options, clockOf(options)?.()))
  // Where the agent's memory lives (R-BIND-1), as views show it: `sqlite` or the URL without its password.
  const agentMemoryBinding = (options) => call(() => native.agentMemoryBinding(options))
  const setupMemoryBinding = (options) => call(() => native.setupMemoryBinding(options))

  // Test memories still open; each is deleted when the process exits (R-HOST-4).
  const openTestMemories = new Set()
  let exitHookInstalled = false

  function createTestMemory(options) {
    return call(() => {
      const now = clockOf(options)
      const opts = options == null ? {} : options
      const store = new native.NativeTestMemory(opts)
      if (!exitHookInstalled) {
        exitHookInstalled = true
        process.once('exit', () => {
          for (const s of openTestMemories) s.dispose()
          openTestMemories.clear()
        })
      }
      openTestMemories.add(store)
      let disposed = false
      const forGene = (geneId, domain) => {
        if (disposed) throw disposedError()
        call(() => store.checkGeneId(geneId))
        return new TestGeneMemoryAccess({ agentId: store.agentId, root: store.root, geneId, domain, now }, () => disposed)
      }
      let memory
      try {
        memory = forGene(opts.geneId === undefined ? TEST_GENE_ID : opts.geneId, opts.domain)
      } catch (e) {
        openTestMemories.delete(store)
        store.dispose()
        throw e
      }
      return {
        memory,
        forGene,
        // Where the memory lives: with a gene's id, enough for `new GeneMemoryAccess` in another
        // thread (a worker) to reach this same memory.
        agentId: store.agentId,
        root: store.root,
        dispose() {
          disposed = true
          openTestMemories.delete(store)
          store.dispose()
        },
      }
    })
  }

  return {
    GeneMemoryAccess,
    createAgentMemory,
    ensureAgentMemory,
    parseMemoryQuota,
    listAgentMemory,
    deleteAgentMemory,
    createTestMemory,
    inspectAgentMemory,
    getAgentMemory,
    exportAgentMemory,
    importAgentMemory,
    migrateAgentMemory,
    backupAgentMemory,
    restoreAgentMemory,
    deleteAgentDatabase,
    readAgentAuditLog,
    listAgentMemoryPage,
    openAgentAuditLog,
    agentMemoryBinding,
    setupMemoryBinding,
    // Loaded on first use: most processes never make WASM imports.
    createMemoryImports: (...args) => require('./wasm-imports').memoryImportsFor(native, clockOf)(...args),
    TEST_GENE_ID,
  }
}

module.exports = { create, unavailable }
