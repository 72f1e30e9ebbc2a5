// @rotifer/playground/memory for ES modules: the very objects `require` gives (one MemoryError
// class whichever way a module imports it), as named exports and as the default export.
// Keep the names in step with index.js: __test__/esm.test.js checks that they are.
import { createRequire } from 'node:module'

const api = createRequire(import.meta.url)('./index.js')

export const {
  GeneMemoryAccess,
  MemoryError,
  MEMORY_ERROR_CODES,
  TEST_GENE_ID,
  agentMemoryBinding,
  backupAgentMemory,
  createAgentMemory,
  createMemoryImports,
  createTestMemory,
  deleteAgentDatabase,
  deleteAgentMemory,
  ensureAgentMemory,
  listAgentMemory,
  listAgentMemoryPage,
  exportAgentMemory,
  getAgentMemory,
  importAgentMemory,
  migrateAgentMemory,
  inspectAgentMemory,
  nativeBindingLoaded,
  openAgentAuditLog,
  parseMemoryQuota,
  readAgentAuditLog,
  restoreAgentMemory,
  setupMemoryBinding,
} = api

export default api
