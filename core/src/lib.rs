//! rotifer-memory-core: the Agent Memory API of the Rotifer playground, without Node.js.
//!
//! One module per concern: `model` (entries and validation), `access` (who may do what),
//! `quota` (quota text), `time`, `error`; `storage` (files, logs, audit lines and SQLite: see its
//! module doc for the order of its layers); above them `audit_log` (an agent's lines, judged
//! committed or not), `inspect` (the deployer's read-only views), `memory` (the calls, over
//! `inspect`; on PostgreSQL through `memory_pg`, with the messages of `refusals`): no module imports one that imports it back), `bundle` (export
//! and import, R-MIG), `agent_move` (a memory moved to another binding, R-MIG-4), `backup`
//! (backup and restore, R-HOST-1b), `wasm` (the host-call JSON protocol). Front ends hand in
//! `Arg`s, so JS and WASM callers share one validation.

pub mod access;
pub mod agent_move;
pub mod arg;
pub mod backup;
pub mod audit_log;
pub mod binding;
pub mod bundle;
pub mod error;
pub mod inspect;
pub mod memory;
mod memory_pg;
pub mod model;
pub mod postgres;
pub mod quota;
pub mod refusals;
pub mod storage;
pub mod time;
pub mod transfer;
pub mod wasm;

#[cfg(test)]
mod test_support;

// The storage modules under the names they had before the storage layer became a folder.
pub use storage::{audit, integrity, lineage, migrate, store};
pub use storage::files as layout;

pub use arg::Arg;
pub use error::{ErrorCode, MemoryError, Result};
pub use layout::Layout;
pub use memory::{create_agent_memory, delete_agent_memory, ensure_agent_memory, list_agent_memory, GeneMemory, GeneOptions, Listing, TestMemory};
pub use model::{AccessPolicy, Category, DataPolicy, Entry, RetentionPolicy, Scope, SharePolicy};
