//! The errors the four calls answer when they refuse (R-ERR, R-ACC, R-QUO-4, R-LIM-4): one
//! implementation of their messages, whichever binding found the reason (R-BIND-2).

use crate::error::MemoryError;
use crate::model::MAX_QUERY_BYTES;

/// R-ACC-5: a handle with no agent.
pub const NO_AGENT: &str = "memory works only inside an agent: this gene runs on its own (no agentId), so every memory call is denied. Run it with `rotifer agent run`, or use `rotifer test` / createTestMemory() to try it";

/// R-ACC-4: a handle with no valid v2 gene id.
pub const NO_GENE_ID: &str = "this gene has no valid v2 id (v2: followed by 64 lower-case hex digits), so every memory call is denied; give GeneMemoryOptions.geneId the id that `rotifer gene id <gene>` prints";

/// R-ACC-3: `op` of `key` refused for `reason` (the denial is recorded).
pub fn denied(op: &str, key: &str, reason: &str) -> MemoryError {
    MemoryError::denied(format!("{op} of {key:?} denied: {reason}"))
}

/// R-QUO-4: a write of `size` bytes that no eviction makes room for. The gene learns only what
/// it knows already (its write's size, the quota): the audit line keeps the other figures for
/// the deployer, since they count entries the gene may not read, and a rejection changes
/// nothing, so it could probe their sizes over and over.
pub fn quota_exceeded(key: &str, size: u64, quota: u64) -> MemoryError {
    MemoryError::quota(format!(
        "writing {key:?} ({size} bytes) does not fit in the quota of {}, even after evicting every CACHE, PATTERN and CONTEXT entry that could go; nothing was written or evicted. Delete entries (PREFERENCE entries are never evicted) or ask the deployer to raise the quota",
        crate::quota::describe_quota(quota)
    ))
}

/// R-API-4: a delete of a key with no live entry.
pub fn no_entry(key: &str) -> MemoryError {
    MemoryError::not_found(format!("no entry with key {key:?} (never written, deleted, or expired)"))
}

/// R-LIM-4: a query whose matching entries total more than 4 MiB (never cut short).
pub fn query_too_big(limit: u32) -> MemoryError {
    MemoryError::invalid(format!(
        "the entries this query matches total more than 4 MiB ({MAX_QUERY_BYTES} bytes); lower filter.limit (now {limit}) or narrow the filter"
    ))
}
