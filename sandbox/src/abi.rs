//! The gene ABI: every host function a gene may import (module, name and type). The checks
//! compare a module's imports against it; the host functions define exactly these.

/// The module of the playground's host functions.
pub const ROTIFER: &str = "rotifer";
/// The WASI module a command gene imports.
pub const WASI: &str = "wasi_snapshot_preview1";

/// Value types, as the signatures below write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V {
    I32,
    I64,
}

/// One host function: module, name, parameters, results.
pub struct HostFn(pub &'static str, pub &'static str, pub &'static [V], pub &'static [V]);

use V::{I32, I64};

const MEMORY_CALL: (&[V], &[V]) = (&[I32, I32, I32, I32], &[I32]);

/// Every function a gene may import, with its type.
pub const HOST_FUNCTIONS: &[HostFn] = &[
    HostFn(ROTIFER, "readMemory", MEMORY_CALL.0, MEMORY_CALL.1),
    HostFn(ROTIFER, "writeMemory", MEMORY_CALL.0, MEMORY_CALL.1),
    HostFn(ROTIFER, "queryMemory", MEMORY_CALL.0, MEMORY_CALL.1),
    HostFn(ROTIFER, "deleteMemory", MEMORY_CALL.0, MEMORY_CALL.1),
    HostFn(ROTIFER, "log", &[I32, I32, I32], &[]),
    HostFn(ROTIFER, "readContext", &[I32, I32, I32, I32], &[I32]),
    HostFn(ROTIFER, "remainingBudget", &[], &[I64]),
    HostFn(ROTIFER, "logicalTimestamp", &[], &[I64]),
    HostFn("env", "log", &[I32, I32], &[]),
    HostFn(WASI, "fd_read", &[I32, I32, I32, I32], &[I32]),
    HostFn(WASI, "fd_write", &[I32, I32, I32, I32], &[I32]),
    HostFn(WASI, "fd_close", &[I32], &[I32]),
    HostFn(WASI, "fd_seek", &[I32, I64, I32, I32], &[I32]),
    HostFn(WASI, "fd_fdstat_get", &[I32, I32], &[I32]),
    HostFn(WASI, "environ_sizes_get", &[I32, I32], &[I32]),
    HostFn(WASI, "environ_get", &[I32, I32], &[I32]),
    HostFn(WASI, "args_sizes_get", &[I32, I32], &[I32]),
    HostFn(WASI, "args_get", &[I32, I32], &[I32]),
    HostFn(WASI, "clock_time_get", &[I32, I64, I32], &[I32]),
    HostFn(WASI, "random_get", &[I32, I32], &[I32]),
    HostFn(WASI, "proc_exit", &[I32], &[]),
];

pub fn is_memory_call(module: &str, name: &str) -> bool {
    module == ROTIFER && rotifer_memory_core::wasm::Call::from_name(name).is_some()
}

/// The host functions, as a message lists them.
pub fn listed(of: impl Fn(&HostFn) -> bool) -> String {
    HOST_FUNCTIONS.iter().filter(|f| of(f)).map(|f| format!("{}.{}", f.0, f.1)).collect::<Vec<_>>().join(", ")
}

