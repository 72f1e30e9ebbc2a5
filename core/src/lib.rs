//! rotifer-memory-core: the Agent Memory API of the Rotifer playground, without Node.js.
//!
//! One module per concern: `model` (entries and validation), `access` (who may do what),
//! `quota` (quota text), `store` (SQLite), `integrity` (is the database file still the one
//! opened?), `audit` (audit and telemetry lines), `audit_log` (the log's files, rotation settings and commit judgement), `layout` (files and folders), `memory` (the
//! calls), `inspect` (the deployer's read-only views), `bundle` (export and import, R-MIG),
//! `wasm` (the host-call JSON protocol).
//! Front ends hand in `Arg`s, so JS and WASM callers share one validation.

pub mod access;
pub mod arg;
pub mod audit;
pub mod audit_log;
pub mod bundle;
pub mod error;
pub mod inspect;
pub mod integrity;
pub mod layout;
pub mod lineage;
pub mod memory;
pub mod migrate;
pub mod model;
pub mod quota;
pub mod store;
pub mod time;
pub mod wasm;

pub use arg::Arg;
pub use error::{ErrorCode, MemoryError, Result};
pub use layout::Layout;
pub use memory::{create_agent_memory, delete_agent_memory, ensure_agent_memory, list_agent_memory, GeneMemory, GeneOptions, Listing, TestMemory};
pub use model::{AccessPolicy, Category, DataPolicy, Entry, RetentionPolicy, Scope, SharePolicy};
