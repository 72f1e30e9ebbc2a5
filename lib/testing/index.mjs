// @rotifer/playground/testing for ES modules: the very objects `require` gives.
import { createRequire } from 'node:module'

const api = createRequire(import.meta.url)('./index.js')

export const { geneId, runGene, createTestMemory, TEST_GENE_ID } = api

export default api
