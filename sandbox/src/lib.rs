//! The WASM gene sandbox of the Rotifer playground (R-RUN-5): wasmtime with fuel metering, a
//! 256 MiB memory cap, a deadline enforced by epoch interruption, and the playground's host
//! functions, the four memory calls going straight into the core's R-WASM protocol.
//!
//! `check` compiles a module and refuses, before it runs, anything the sandbox cannot run;
//! `run` runs it once; `cache` keeps compiled modules by content hash; `ir` reads and writes
//! the playground's IR custom sections (`rotifer compile`). Nothing here knows Node.js.

// In dependency order: each module uses only those above it.
pub mod limits;
pub mod logs;
mod state;
mod engine;
mod abi;
mod bounds;
mod guest;
mod host;
mod wasi;
mod linker;
mod check;
mod run;
pub mod watchdog;
pub mod cache;
pub mod ir;

pub use check::{check, load, GeneKind, GeneModule};
pub use engine::interrupt_all;
pub use run::{parse_context, run, Outcome, Report, RunOptions};
