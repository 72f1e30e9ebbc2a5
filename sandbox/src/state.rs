//! What a running gene's store holds: its limits, its memory protocol, its log, its context,
//! its WASI streams, and why the run was stopped, if it was.

use crate::logs::RunLog;
use rotifer_memory_core::wasm::WasmHost;
use wasmtime::StoreLimits;

/// Why the epoch callback stopped the gene.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Deadline,
    Interrupted,
}

pub struct RunState {
    pub limits: StoreLimits,
    /// The R-WASM protocol, bound to the agent, the gene's v2 id and domain, and the deadline;
    /// `None` when the gene imports no memory call.
    pub memory: Option<WasmHost>,
    pub log: RunLog,
    /// `rotifer.readContext`'s object.
    pub context: serde_json::Map<String, serde_json::Value>,
    pub deadline_ms: Option<i64>,
    pub stopped: Option<Stop>,
    /// The last `rotifer.logicalTimestamp` given: each is later than the one before.
    pub last_timestamp: i64,
    pub stdin: Vec<u8>,
    pub stdin_read: usize,
    pub stdout: Vec<u8>,
}

/// A WASI gene's `proc_exit(status)`: ends the run.
#[derive(Debug)]
pub struct ProcExit(pub i32);

impl std::fmt::Display for ProcExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the WASI command exited with status {}", self.0)
    }
}
impl std::error::Error for ProcExit {}

/// A bound a gene ran into inside a host call: the run fails with this code and message.
#[derive(Debug)]
pub struct HostLimit {
    pub code: &'static str,
    pub message: String,
}

impl std::fmt::Display for HostLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for HostLimit {}
