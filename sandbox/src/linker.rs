//! The linker every gene is instantiated with: the playground's host functions and the WASI
//! subset, defined once per process.

use crate::state::RunState;
use crate::{engine, host, wasi};
use std::sync::OnceLock;
use wasmtime::Linker;

/// The linker every gene is instantiated with: all host functions, defined once.
pub fn linker() -> Result<&'static Linker<RunState>, String> {
    static LINKER: OnceLock<Result<Linker<RunState>, String>> = OnceLock::new();
    LINKER
        .get_or_init(|| {
            let mut linker = Linker::new(engine::engine()?);
            host::link(&mut linker).and_then(|_| wasi::link(&mut linker)).map_err(|e| format!("the sandbox's host functions could not be defined: {e}"))?;
            Ok(linker)
        })
        .as_ref()
        .map_err(Clone::clone)
}
