// Type definitions for @rotifer/playground/testing — helpers for a gene author's own tests.
//
// `geneId(folder)` is what `rotifer gene id` prints; `runGene(folder, input, { memory })` runs
// the gene as `rotifer agent run` does (the same loader, a worker thread, its input checked
// against the inputSchema, the same `ctx`) on a test memory.

import type { TestMemory } from './index'

export { createTestMemory, TEST_GENE_ID } from './index'
export type { TestMemory } from './index'

/**
 * The v2 id of the gene in `folder` (a path; relative to the working directory): `v2:` + the
 * SHA-256 of its `phenotype.json` with keys sorted and without `irHash`.
 * @throws Error if the folder has no valid `phenotype.json` (the message names the field and the fix).
 */
export declare function geneId(folder: string): string

/** Options of `runGene`. */
export interface RunGeneOptions {
  /**
   * The memory `ctx.memory` works on: a test memory (`createTestMemory()`), shared with the
   * test and with other runs, or `{ agentId, root }`. Default: a fresh test memory, deleted
   * after the run.
   */
  memory?: TestMemory | { readonly agentId: string; readonly root: string } | null | undefined
  /** Seconds the gene may run, loading included (default 60, as `rotifer agent run`). */
  timeout?: number | undefined
  /** Run the source under Node even when the gene is compiled (`--no-sandbox`). */
  noSandbox?: boolean | undefined
}

/** How a run failed: `code` is the code `Try` and `testsuite.json`'s `expectedError` see. */
export interface GeneRunError extends Error {
  /** `INVALID_INPUT`, a `MEMORY_…` code, an error envelope's code, the name of what the gene threw, `GENE_CRASHED`, … */
  code: string
  /** The failure's message. */
  reason: string
}

/**
 * Runs the gene in `folder` once on `input` (default `{ "name": "world" }`) and resolves to its
 * output, a JSON value. Rejects with a `GeneRunError` when the gene fails (its input not
 * matching the inputSchema: code `INVALID_INPUT`).
 */
export declare function runGene<Output = unknown>(folder: string, input?: unknown, options?: RunGeneOptions): Promise<Output>
