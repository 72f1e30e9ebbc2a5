//! The deployer's backup and restore (R-HOST-1b): `backupAgentMemory` and
//! `restoreAgentMemory`. Conversion only; the rules live in the core's `backup` module (`transfer` picks the binding).

use crate::convert::{Builder, JsAny, JsOut};
use crate::{call_time, guard, CoreResult};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use rotifer_memory_core::transfer;
use rotifer_memory_core::memory::AgentOptions;
use rotifer_memory_core::{Arg, MemoryError};
use std::path::PathBuf;

/// `file` of both calls: a path (relative to the working directory), never empty.
fn file_of(o: &AgentOptions<'_>) -> CoreResult<PathBuf> {
    match o.get("file") {
        Some(Arg::Str(s)) if !s.is_empty() && !s.contains('\0') => Ok(PathBuf::from(s)),
        _ => Err(MemoryError::invalid("options.file must be the path of the backup file")),
    }
}

/// `backupAgentMemory({ agentId, root?, file })`: `{ entries, used, bytes }`.
#[napi]
pub fn backup_agent_memory(env: Env, options: JsAny) -> Result<JsOut, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "file", "url"])?;
        let r = transfer::backup_agent_memory_of(&o.agent()?, &file_of(&o)?)?;
        let b = Builder::new(env.raw());
        Ok(JsOut(b.object(&[
            (c"entries", b.number(r.entries as f64)?),
            (c"used", b.number(r.used as f64)?),
            (c"bytes", b.number(r.bytes as f64)?),
        ])?))
    })
}

/// `restoreAgentMemory({ agentId, root?, file }, now)`: `{ entries, replaced, expired, used }`.
#[napi]
pub fn restore_agent_memory(env: Env, options: JsAny, now: JsAny) -> Result<JsOut, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "file", "now", "url"])?;
        let r = transfer::restore_agent_memory_of(&o.agent()?, &file_of(&o)?, call_time(&now)?)?;
        let b = Builder::new(env.raw());
        Ok(JsOut(b.object(&[
            (c"entries", b.number(r.entries as f64)?),
            (c"replaced", b.number(r.replaced as f64)?),
            (c"expired", b.number(r.expired as f64)?),
            (c"used", b.number(r.used as f64)?),
        ])?))
    })
}
