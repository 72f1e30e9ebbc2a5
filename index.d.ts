// Type definitions for @rotifer/playground/memory — the Agent Memory API.
//
// Every Agent owns one persistent memory. A gene run by Node.js receives it as `ctx.memory`,
// the second argument of `express(input, ctx)`. All calls are synchronous. Every failure
// throws a `MemoryError` whose `code` says what went wrong.

/**
 * What an entry holds, which decides eviction when the quota is hit (R-CAT, R-QUO-3):
 * - `PREFERENCE`: learned user habits and preferences. Never evicted.
 * - `PATTERN`: patterns found across runs. Evicted after `CACHE`, oldest first.
 * - `CONTEXT`: knowledge about a task or domain. Evicted after `PATTERN`, oldest first.
 * - `CACHE`: results that can be recomputed. Evicted first, oldest first.
 *
 * Always upper case; any other spelling is `MEMORY_INVALID_INPUT`.
 */
export type MemoryCategory = 'PREFERENCE' | 'PATTERN' | 'CONTEXT' | 'CACHE'

/**
 * Who may read (`readScope`) or write and delete (`writeScope`) an entry (R-ACC):
 * - `CREATOR_GENE_ONLY`: only the gene that created it (an upgraded gene has a new id!).
 * - `SAME_DOMAIN`: the creator and every gene of the creator's phenotype domain.
 * - `ALL_GENES`: every gene of the agent.
 * - `DEPLOYER_CONFIGURED`: reserved; always denied in this version, and cannot be set.
 */
export type MemoryScope = 'CREATOR_GENE_ONLY' | 'SAME_DOMAIN' | 'ALL_GENES' | 'DEPLOYER_CONFIGURED'

/**
 * Whether an entry may leave the agent. `ANONYMIZED_SHARE` and `KNOWLEDGE_GENE` need an agent
 * data policy with `anonymizationSupported: true`; otherwise the write is denied.
 */
export type MemorySharePolicy = 'PRIVATE' | 'ANONYMIZED_SHARE' | 'KNOWLEDGE_GENE'

/** An entry's access policy: exactly these three fields. */
export interface MemoryAccessPolicy {
  readScope: MemoryScope
  writeScope: MemoryScope
  sharePolicy: MemorySharePolicy
}

/** How long an entry is kept: exactly these three fields. */
export interface RetentionPolicy {
  /** Whole days from 1 to 2147483647 after the last write; `null` keeps it forever. */
  maxRetentionDays: number | null
  /** Stored and validated; not acted on in this version. */
  autoDeleteOnTermination: boolean
  anonymizationSupported: boolean
}

/** One stored entry. Every call returns fresh copies: changing them changes nothing stored. */
export interface MemoryEntry {
  /** Lowercase hex SHA-256 of `agentId ‖ 0x00 ‖ key`; never changes. */
  entryId: string
  category: MemoryCategory
  key: string
  value: Uint8Array
  /** v2 id of the gene that created the entry. */
  createdBy: string
  /** v2 id of the gene that last read or wrote it (queries do not count). */
  lastAccessedBy: string
  /** RFC 3339 UTC with milliseconds, e.g. `2026-11-30T01:38:19.123Z`. */
  createdAt: string
  updatedAt: string
  accessPolicy: MemoryAccessPolicy
  /** `null`: the entry follows the agent's data policy. */
  retentionPolicy: RetentionPolicy | null
}

/** What `queryMemory` matches; `undefined` and `null` fields count as not given. */
export interface MemoryFilter {
  category?: MemoryCategory | null | undefined
  /** A plain prefix of the key: `%`, `_`, `*`, `?` and `\` are ordinary characters. */
  keyPrefix?: string | null | undefined
  /** RFC 3339; entries with `updatedAt >= since`. */
  since?: string | null | undefined
  /** RFC 3339; entries with `updatedAt < until`. */
  until?: string | null | undefined
  /** A whole number from 1 to 1000; default 100. */
  limit?: number | null | undefined
}

/** The agent's data policy, set by the deployer. Default: no anonymization, no maximum. */
export interface DataPolicy {
  anonymizationSupported?: boolean | undefined
  /** Entries may not ask to be kept longer; entries with `retentionPolicy: null` expire after it. */
  maxRetentionDays?: number | null | undefined
}

/** The codes a `MemoryError` can carry. */
export type MemoryErrorCode =
  | 'MEMORY_NOT_FOUND'
  | 'MEMORY_ACCESS_DENIED'
  | 'MEMORY_QUOTA_EXCEEDED'
  | 'MEMORY_INVALID_INPUT'
  | 'MEMORY_STORAGE_ERROR'

/**
 * Thrown by every failing memory call.
 * - `MEMORY_NOT_FOUND`: deleting a key that does not exist (or has expired).
 * - `MEMORY_ACCESS_DENIED`: the entry's policy forbids it, a non-creator tried to change a
 *   policy, the write breaks the agent's data policy, the gene has no v2 id, or the gene runs
 *   outside an agent.
 * - `MEMORY_QUOTA_EXCEEDED`: no room even after evicting every evictable entry; nothing was
 *   written or evicted.
 * - `MEMORY_INVALID_INPUT`: a bad key, category, value, policy, filter or limit, or a query
 *   whose result would exceed 4 MiB.
 * - `MEMORY_STORAGE_ERROR`: the disk, the database or the audit log failed, or the native
 *   binding is unavailable. Memory never falls back to another store.
 */
export declare class MemoryError extends Error {
  /** @throws TypeError if `code` is not one of the five codes. */
  constructor(code: MemoryErrorCode, message: string, options?: { cause?: unknown })
  readonly name: 'MemoryError'
  readonly code: MemoryErrorCode
}

/** The five codes, in the order of the specification (only `MEMORY_STORAGE_ERROR` when the native binding is unavailable: every call then fails with it). */
export declare const MEMORY_ERROR_CODES: readonly MemoryErrorCode[]

/** Options of a `GeneMemoryAccess` (set by the host that runs the gene). */
export interface GeneMemoryOptions {
  /** The agent the memory belongs to; `null`: the gene runs alone and every call is denied. */
  agentId: string | null
  /** The gene's v2 id (`v2:` + 64 lowercase hex digits); invalid or `null`: every call is denied. */
  geneId: string | null
  /** The gene's phenotype domain, e.g. `text.format`. */
  domain?: string | null | undefined
  /** Project root holding `.rotifer/`; default: nearest ancestor of the working directory with `rotifer.json`, else the working directory. */
  root?: string | undefined
  /**
   * Where the memory lives: a `postgres://` or `postgresql://` URL, or `"sqlite"` for the file.
   * Default: the agent record's `memoryUrl`, then `ROTIFER_MEMORY_URL`, then `rotifer.json`'s
   * `memory.url`, else the SQLite file under `root`. On PostgreSQL each call is one round trip
   * to the server, and blocks the event loop while it lasts, as every call does.
   */
  url?: string | undefined
  /** A test clock: milliseconds since the epoch. */
  now?: (() => number) | undefined
}

/** A gene's view of its agent's memory: what `ctx.memory` is. */
export declare class GeneMemoryAccess {
  constructor(options: GeneMemoryOptions)

  /**
   * The entry stored under `key`, or `null` if there is none (or it is of another `category`).
   * Throws `MEMORY_ACCESS_DENIED` if the entry exists but this gene may not read it.
   */
  readMemory(key: string, category?: MemoryCategory | null): MemoryEntry | null

  /**
   * Creates the entry, or replaces the value (and category) of an existing one, and returns it.
   * Keys: 1 to 1024 UTF-8 bytes, no NUL. Values: at most 1 MiB.
   * When the quota is full, older `CACHE`, then `PATTERN`, then `CONTEXT` entries are evicted.
   * On an existing entry, omitted policies are kept; only its creator may change them.
   * `retentionPolicy: null` means "follow the agent's data policy".
   */
  writeMemory(
    key: string,
    value: Uint8Array,
    category: MemoryCategory,
    accessPolicy?: MemoryAccessPolicy,
    retentionPolicy?: RetentionPolicy | null,
  ): MemoryEntry

  /** The entries this gene may read that match `filter`, most recently updated first. */
  queryMemory(filter?: MemoryFilter | null): MemoryEntry[]

  /** Deletes the entry; throws `MEMORY_NOT_FOUND` if there is none. */
  deleteMemory(key: string): void
}

/**
 * The second argument of a gene's `express(input, ctx)`:
 * `export function express(input: In, ctx: GeneContext): Out`.
 *
 * Each memory call is atomic; a run is not: when `express` throws (or times out) after a write,
 * the write stays. Catch the `MemoryError` of a `CACHE` write so that it never fails the run.
 * Test a gene with `@rotifer/playground/testing` (`runGene`, `createTestMemory`).
 */
export interface GeneContext {
  /** This gene's view of its agent's memory (every call is denied when the gene runs alone). */
  memory: GeneMemoryAccess
  /**
   * The network of a Hybrid gene (phenotype `"fidelity": "Hybrid"` with a `network` block), as
   * upstream's gateway gives it; absent for every other gene. Only hosts `network.allowedDomains`
   * names are reached, each request is stopped after `network.maxTimeoutMs`, a body is cut at
   * `network.maxResponseBytes` (`isTruncated`), at most `network.maxRequestsPerMin` start in 60 s.
   * A refused request rejects with an error whose `code` is `DOMAIN_BLOCKED`, `RATE_LIMITED`,
   * `TIMEOUT` or `NETWORK_ERROR`; redirects are not followed.
   */
  gatewayFetch?: GatewayFetch | undefined
}

/** `ctx.gatewayFetch(url, { method, headers, body })`; `method` defaults to `POST`. */
export type GatewayFetch = (
  url: string,
  options?: { method?: string | undefined; headers?: Record<string, string> | undefined; body?: string | undefined },
) => Promise<GatewayResponse>

/** What `ctx.gatewayFetch` resolves to: the body as text, cut at the phenotype's bound. */
export interface GatewayResponse {
  status: number
  headers: Record<string, string>
  body: string
  isTruncated: boolean
}

/** Creates (or reconfigures) an agent's memory with a quota (default 10 MB) and a data policy. */
export declare function createAgentMemory(options: {
  agentId: string
  root?: string | undefined
  /** Where: a `postgres://` URL or `"sqlite"`; default as `GeneMemoryOptions.url` says. */
  url?: string | undefined
  /** `"50MB"`, `"512KB"`, `"1.5GB"` (1 KB = 1024 bytes), or a number of bytes. */
  quota?: string | number | undefined
  dataPolicy?: DataPolicy | undefined
}): void

/**
 * Creates an agent's memory with this quota and data policy if it has no database, and leaves
 * an existing one exactly as it is (never reconfigures it). A host that keeps agent records calls
 * it before opening an agent, so a deleted database comes back with the agent's limits, not the
 * defaults. Returns `true` if the database was missing (it now exists with these limits, unless
 * another caller created it at the same moment).
 */
export declare function ensureAgentMemory(options: {
  agentId: string
  root?: string | undefined
  /** Where: a `postgres://` URL or `"sqlite"`; default as `GeneMemoryOptions.url` says. */
  url?: string | undefined
  /** `"50MB"`, `"512KB"`, `"1.5GB"` (1 KB = 1024 bytes), or a number of bytes. */
  quota?: string | number | undefined
  dataPolicy?: DataPolicy | undefined
}): boolean

/** Bytes for a quota text such as `50MB`; throws `MEMORY_INVALID_INPUT` otherwise. */
export declare function parseMemoryQuota(text: string): number

/** A line of the deployer's list: never the value. */
export interface MemoryListing {
  key: string
  category: MemoryCategory
  size: number
  createdBy: string
  updatedAt: string
}

/** Every live entry of an agent, by key, whatever its access policy. */
export declare function listAgentMemory(options: {
  agentId: string
  root?: string | undefined
  category?: MemoryCategory | undefined
  /** Only keys starting with these characters (a plain prefix, no wildcards). */
  keyPrefix?: string | undefined
  now?: (() => number) | undefined
}): MemoryListing[]

/**
 * Deletes one key, or every entry of a category, of a key prefix, or of both, whatever the
 * access policies; returns how many. `key` goes alone; a missing key throws `MEMORY_NOT_FOUND`.
 */
export declare function deleteAgentMemory(options: {
  agentId: string
  root?: string | undefined
  key?: string | undefined
  category?: MemoryCategory | undefined
  /** A non-empty plain prefix (no wildcards). */
  keyPrefix?: string | undefined
  now?: (() => number) | undefined
}): number

/** Usage of one category of an agent's memory. */
export interface CategoryUsage {
  entries: number
  /** Sum of the entries' sizes (UTF-8 bytes of key + bytes of value). */
  bytes: number
  /** What eviction could free: `bytes`, except 0 for `PREFERENCE` (never evicted). */
  evictableBytes: number
  /** When the first entry of the category expires (RFC 3339), or `null`. */
  nextExpiry: string | null
}

/** Where an agent's quota went, as its database enforces it. */
export interface AgentMemoryUsage {
  agentId: string
  /** The quota the database enforces, in bytes. */
  quota: number
  used: number
  available: number
  entries: number
  evictableBytes: number
  nextExpiry: string | null
  dataPolicy: DataPolicy
  categories: Record<MemoryCategory, CategoryUsage>
}

/**
 * The usage figures of an agent's memory, or `null` if it was never created. Only reads: never
 * creates a database, purges nothing, writes no audit line; expired entries do not count.
 */
export declare function inspectAgentMemory(options: { agentId: string; root?: string | undefined; now?: (() => number) | undefined }): AgentMemoryUsage | null

/**
 * One live entry with its value, whatever its access policy (the deployer's read), or `null`.
 * Not audited, and `lastAccessedBy` is left as it is.
 */
export declare function getAgentMemory(options: { agentId: string; root?: string | undefined; key: string; now?: (() => number) | undefined }): MemoryEntry | null

/**
 * The agent's memory as a bundle (R-MIG-2, JSON Lines): `PREFERENCE`, `PATTERN` and `CONTEXT`
 * entries, `CACHE` ones only with `includeCache`; expired entries never. With `output`, the
 * bundle is also written to that file (under a temporary name, then renamed; mode 0600).
 * Returns a Node `Buffer`. Throws `MEMORY_NOT_FOUND` if the agent's memory was never created.
 */
export declare function exportAgentMemory(options: {
  agentId: string
  root?: string | undefined
  /** Where: a `postgres://` URL or `"sqlite"`; default as `GeneMemoryOptions.url` says. */
  url?: string | undefined
  includeCache?: boolean | undefined
  output?: string | undefined
  now?: (() => number) | undefined
}): Uint8Array

/**
 * Imports a bundle into an agent (R-MIG-3): everything is checked first, then every entry lands
 * in one transaction, or none does. `onConflict` decides about keys the agent has already:
 * `"fail"` (default, the import is refused), `"skip"` or `"replace"`. A refused bundle throws
 * `MemoryError` naming the line and why (`MEMORY_INVALID_INPUT`; `MEMORY_ACCESS_DENIED` for the
 * data policy; `MEMORY_QUOTA_EXCEEDED`: import never evicts).
 */
export declare function importAgentMemory(options: {
  agentId: string
  root?: string | undefined
  /** Where: a `postgres://` URL or `"sqlite"`; default as `GeneMemoryOptions.url` says. */
  url?: string | undefined
  bundle: Uint8Array | string
  onConflict?: 'fail' | 'skip' | 'replace' | undefined
  now?: (() => number) | undefined
}): { created: number; updated: number; skipped: number; expired: number }

/** A step of `migrateAgentMemory`, told once it is done. The move's commit point is `"fenced"`. */
export type MigrationStep = 'held' | 'imported' | 'verified' | 'intent' | 'fenced' | 'named' | 'settled'

/**
 * Moves an agent's memory to another binding (R-MIG-4; what `rotifer agent migrate` runs): from
 * where R-BIND-1 puts it now to `to`, a `postgres://` URL or `"sqlite"`. The agent must have a
 * record (`rotifer agent create`). The source's writers wait while its bundle is taken and
 * imported into the target in one transaction (`PREFERENCE`, `PATTERN`, `CONTEXT`, and `CACHE`
 * with `includeCache`), the target is read back and compared, then the record names the target.
 * The source is kept, marked as moved: every later call on it fails with
 * `MEMORY_STORAGE_ERROR` naming the new binding. Both sides get a `memory.migrate` audit line.
 * A crash at any step leaves exactly one binding in use, with every acknowledged write (see
 * docs/postgres.md, "Moving an agent"). `entryId`s and values, creators, policies and times are
 * kept; `lastAccessedBy` becomes `createdBy`, as for every import.
 */
export declare function migrateAgentMemory(options: {
  agentId: string
  root?: string | undefined
  to: string
  includeCache?: boolean | undefined
  onConflict?: 'fail' | 'skip' | 'replace' | undefined
  /** Called after each step, synchronously; what it throws stops the move there. */
  onStep?: ((step: MigrationStep) => void) | undefined
  now?: (() => number) | undefined
}): {
  /** Where the memory was and is now, without passwords. */
  from: string
  to: string
  /** The move's id, in both audit lines. */
  move: string
  counts: { PREFERENCE: number; PATTERN: number; CONTEXT: number; CACHE: number }
  /** The target's `entriesSha256` after the move, as `exportAgentMemory` would give it. */
  entriesSha256: string
  created: number
  updated: number
  skipped: number
  /** Entries of a copy an earlier move had left on the target, replaced. */
  replaced: number
  /** `CACHE` entries left on the source. */
  cacheLeft: number
}

/**
 * A consistent copy of the agent's memory, made while it is in use (SQLite's online backup: one
 * snapshot), written to `file` (which must not exist yet) under a temporary name, then moved
 * into place; mode 0600. The copy is a standalone database file, with no WAL beside it, that
 * `restoreAgentMemory` puts back. Throws `MEMORY_NOT_FOUND` if the memory was never created,
 * `MEMORY_INVALID_INPUT` if `file` exists.
 */
export declare function backupAgentMemory(options: { agentId: string; root?: string | undefined; url?: string | undefined; file: string }): {
  /** Entries in the backup, and their sizes (R-ENT-2) summed. */
  entries: number
  used: number
  /** The backup file's size in bytes. */
  bytes: number
}

/**
 * Deletes the agent's memory as a whole: its database `<agentId>.db`, then its `-wal`, `-shm`,
 * `-lineage` and every `-wal`/`-shm` moved aside as `*.orphaned-*`. One `memory.drop` audit
 * line (actor `"deployer"`, no `tx`) is written first; if it cannot be written, nothing is
 * removed (`MEMORY_STORAGE_ERROR`). A process that has the agent open fails its next call with
 * `MEMORY_STORAGE_ERROR` (its database was deleted under it) and never writes into it. A file
 * that cannot be removed fails the call, naming what was removed; calling again finishes.
 */
export declare function deleteAgentDatabase(options: { agentId: string; root?: string | undefined; now?: (() => number) | undefined }): {
  /** Whether the database existed (if not, nothing was audited; stray companions are removed). */
  existed: boolean
  /** Live entries and their bytes when it was deleted (0 if it could not be read). */
  entries: number
  used: number
  /** The files removed, the database first (none on PostgreSQL). */
  removed: string[]
  /** Where the memory was: `"sqlite"`, or the PostgreSQL URL without its password. */
  binding: string
}

/**
 * Where the agent's memory lives (R-BIND-1: `url`, the agent record's `memoryUrl`,
 * `ROTIFER_MEMORY_URL`, `rotifer.json`'s `memory.url`, else the SQLite file), as the views show
 * it: `"sqlite"`, or the PostgreSQL URL without its password. Connects to nothing.
 */
export declare function agentMemoryBinding(options: { agentId: string; root?: string | undefined; url?: string | undefined }): string

/**
 * Sets up a PostgreSQL database for memory, or moves its schema forward (`rotifer binding
 * setup`): as the administrator at `adminUrl`, in one transaction, idempotently. With `role`,
 * makes or updates that deployment's login role (its grants and timeouts), and with `password`
 * sets its password (sent as a SCRAM verifier, never as text). Answers the URL the deployment's
 * hosts use: the administrator's, with `role` as its user and no password.
 */
export declare function setupMemoryBinding(options: { adminUrl: string; role?: string | undefined; password?: string | undefined }): {
  /** The schema's version before (0: none) and after. */
  fromVersion: number
  toVersion: number
  /** With `role`: `postgresql://<role>@<host>/<db>…`, no password in it. */
  roleUrl: string | null
  passwordSet: boolean
}

/**
 * Replaces every entry of the agent with those of a backup made by `backupAgentMemory`, as one
 * change: every process with the agent open sees it at its next call. Everything is checked
 * first (the file, its schema, that it is this agent's, every entry, the agent's data policy
 * and quota: a restore evicts nothing); a refusal changes nothing. The agent keeps its quota
 * and data policy; entries that expired by its rules are left out. Audited as one
 * `memory.restore` line with actor `"deployer"`. Never copy a backup over the database file by
 * hand while the agent may be open: use this.
 */
export declare function restoreAgentMemory(options: { agentId: string; root?: string | undefined; url?: string | undefined; file: string; now?: (() => number) | undefined }): {
  /** Entries put back. */
  entries: number
  /** Entries the agent held before (all replaced). */
  replaced: number
  /** Entries of the backup that had expired, left out. */
  expired: number
  /** Bytes the agent holds after the restore. */
  used: number
}

/**
 * The agent's lines of the audit log (`audit.jsonl` and its rotated files `audit.<n>.jsonl`,
 * oldest first), each as written plus `committed` (R-AUD-6): whether the change it records
 * committed. A change line of the agent with `tx` S committed iff S <= the agent's `last_seq` and
 * no later line of the agent has `tx` S and `txLine` 1 (a later attempt at S); lines without `tx`
 * (refusals) count as committed; an agent without a database is judged by its lines alone.
 * `skipped`: lines of the files that are not whole audit lines; `lastSeq`: null without a database.
 */
export declare function readAgentAuditLog(options: { agentId: string; root?: string | undefined }): {
  lines: Array<{ ts: string; agentId: string; action: string; tx?: number; txLine?: number; committed: boolean; [field: string]: unknown }>
  skipped: number
  lastSeq: number | null
}

/**
 * `listAgentMemory` a page at a time: the first `limit` (1 to 100,000, default 1,000) entries by
 * key after the key `after` (the last key of the page before). `more`: whether more match. With
 * `totals: true`, the count, bytes and quota of the whole listing, from this page's read (else
 * `null`). Each page is a read of its own; none holds a transaction open for the next.
 */
export declare function listAgentMemoryPage(options: {
  agentId: string
  root?: string | undefined
  category?: MemoryCategory | undefined
  keyPrefix?: string | undefined
  after?: string | null | undefined
  limit?: number | undefined
  totals?: boolean | undefined
  now?: (() => number) | undefined
}): {
  entries: MemoryListing[]
  more: boolean
  totals: { entries: number; bytes: number; quota: number } | null
}

/** An audit line as `readAgentAuditLog` returns it. */
export type AuditLine = { ts: string; agentId: string; action: string; tx?: number; txLine?: number; committed: boolean; [field: string]: unknown }

/**
 * The agent's audit lines, judged as `readAgentAuditLog` judges them, handed out a page at a
 * time; with `follow`, also the lines appended later (`poll`), across rotations.
 */
export interface AgentAuditLogReader {
  /** The agent's lines read so far, handed out or not. */
  readonly lines: number
  /** Lines read and not handed out yet. */
  readonly remaining: number
  /** Lines of the files read (any agent's) that are not whole audit lines. */
  readonly skipped: number
  /** The agent's `last_seq` at the last look; null without a database. */
  readonly lastSeq: number | null
  /** The agent's lines read so far, by action: `{ "memory.create": 12, … }`. */
  readonly actions: Record<string, number>
  /** Up to `max` (default 1,000) lines not handed out yet, oldest first; null when none is left. */
  next(max?: number): AuditLine[] | null
  /** Passes over up to `n` lines not handed out yet. */
  skip(n: number): void
  /** With `follow`: reads what was appended since the last look; returns how many new lines. */
  poll(): number
}

export declare function openAgentAuditLog(options: { agentId: string; root?: string | undefined; follow?: boolean | undefined }): AgentAuditLogReader

/** An ephemeral memory for tests: empty, shared by all handles, deleted on `dispose()` or exit. */
export interface TestMemory {
  /** The memory of the test gene (`geneId`, default `TEST_GENE_ID`). */
  memory: GeneMemoryAccess
  /** The same memory as another gene sees it; `geneId` must be a v2 id (else `MEMORY_INVALID_INPUT`). */
  forGene(geneId: string, domain?: string): GeneMemoryAccess
  /**
   * Where the memory lives: `new GeneMemoryAccess({ agentId, root, geneId, domain })` reaches
   * the same memory, for instance from a worker thread (the `rotifer` CLI runs genes in one).
   */
  readonly agentId: string
  readonly root: string
  /** Deletes the memory; every later call on its handles throws `MEMORY_STORAGE_ERROR` saying so. */
  dispose(): void
}

export declare function createTestMemory(options?: {
  /** A v2 id (`rotifer gene id <gene>` prints a gene's); anything else is `MEMORY_INVALID_INPUT`. Default `TEST_GENE_ID`. */
  geneId?: string | undefined
  domain?: string | undefined
  quota?: string | number | undefined
  dataPolicy?: DataPolicy | undefined
  now?: (() => number) | undefined
  /**
   * A `postgres://` URL: the test memory is an agent of its own on that server (set up with
   * `rotifer binding setup`), dropped by `dispose()`. Default: a SQLite file in a private temporary
   * folder, whatever `ROTIFER_MEMORY_URL` or `rotifer.json` say.
   */
  url?: string | undefined
}): TestMemory

/** The v2 id `createTestMemory().memory` uses when no `geneId` is given. */
export declare const TEST_GENE_ID: string

/** `false` when the native binding could not be loaded; every call then throws. */
export declare const nativeBindingLoaded: boolean

/**
 * A host function of the module `rotifer` (R-WASM): `(req_ptr, req_len, out_ptr, out_cap) -> i32`.
 * Returns the bytes written to `out`, or a negative code: -1 out too small (response kept for a
 * byte-identical retry), -2 access denied, -4 deadline passed, -8 quota exceeded,
 * -10 invalid input, -12 not found, -13 storage error.
 */
export type MemoryHostFunction = (reqPtr: number, reqLen: number, outPtr: number, outCap: number) => number

/** The four host functions; put them under `imports.rotifer`. */
export type MemoryImports = {
  readMemory: MemoryHostFunction
  writeMemory: MemoryHostFunction
  queryMemory: MemoryHostFunction
  deleteMemory: MemoryHostFunction
}

/**
 * What the host functions need of a WASM instance's memory: a `WebAssembly.Memory` is one. Typed
 * by its shape, so that these types need no DOM library (`lib: ["dom"]`) to compile.
 */
export interface WasmMemory {
  readonly buffer: ArrayBuffer
}

/**
 * Memory host functions for a WASM gene run by Node's own `WebAssembly` (R-WASM-6).
 * Requests and responses are JSON; values are base64 (see the WASM protocol in the README).
 * Create one imports object per instance: the response kept after a -1, the deadline and the
 * bound on audit lines of refused calls belong to the imports object.
 * @param options the options of `GeneMemoryAccess`, plus `deadline` (ms since the epoch): calls at or after it get -4.
 * @param memory returns the instance's exported memory (known only after instantiation); read on every host call.
 * @throws MemoryError if the options are invalid or `memory` is not a function.
 */
export declare function createMemoryImports(
  options: GeneMemoryOptions & { deadline?: number | undefined },
  memory: () => WasmMemory,
): MemoryImports
