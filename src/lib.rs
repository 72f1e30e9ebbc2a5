//! The Node.js binding: argument conversion and error mapping over `rotifer-memory-core`,
//! nothing else. `index.js` wraps these natives into the public API.
//!
//! Every entry point runs inside `guard`, which turns a Rust panic into
//! `MEMORY_STORAGE_ERROR` (R-ERR-3). Errors carry the code in `error.code`; `index.js` turns
//! them into `MemoryError`.

mod backup;
mod convert;
mod deployer;
mod read;
mod sandbox;
mod wasm;

use convert::{Builder, JsAny, JsOut};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use rotifer_memory_core::memory::AgentOptions;
use rotifer_memory_core::model::{check_test_gene_id, parse_data_policy, parse_key_prefix, parse_optional_category, parse_quota_arg};
use rotifer_memory_core::{time, Arg, GeneMemory, GeneOptions, MemoryError, TestMemory};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

pub(crate) type CoreResult<T> = std::result::Result<T, MemoryError>;

fn to_js_error(e: MemoryError) -> napi::Error<String> {
    napi::Error::new(e.code.as_str().to_string(), e.message)
}

/// Runs an entry point, mapping its error and any panic to a JS error with a memory code.
pub(crate) fn guard<T>(f: impl FnOnce() -> CoreResult<T>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(to_js_error),
        Err(panic) => {
            let what = rotifer_memory_core::error::panic_message(panic.as_ref());
            Err(to_js_error(MemoryError::storage(format!(
                "internal error in rotifer-memory ({what}); nothing was changed by this call. Please report it"
            ))))
        }
    }
}

/// SHA-256 of `data` (a string as UTF-8) as lowercase hex: the CLI's gene ids and cache keys,
/// without loading node:crypto (a tenth of a command's start-up).
#[napi]
pub fn sha256_hex(data: Either<String, Buffer>) -> Result<String, String> {
    guard(|| {
        Ok(match &data {
            Either::A(text) => rotifer_memory_core::model::sha256_hex(text.as_bytes()),
            Either::B(bytes) => rotifer_memory_core::model::sha256_hex(bytes),
        })
    })
}

/// The clock of a call: the `now` the JS side passes (from its test clock), or the system's,
/// read when the call first needs it.
pub(crate) fn call_time(now: &JsAny) -> CoreResult<time::CallTime> {
    match now.to_arg()? {
        Arg::Undefined | Arg::Null => Ok(time::CallTime::system()),
        Arg::Number(n) => time::check_now(n).map(time::CallTime::from),
        other => Err(MemoryError::invalid(format!("now() must return a number of milliseconds, not {}", other.kind()))),
    }
}

/// `call_time`, read now.
pub(crate) fn now_ms(now: &JsAny) -> CoreResult<i64> {
    Ok(call_time(now)?.ms())
}

/// A gene's memory handle; `GeneMemoryAccess` in `index.js` wraps it. Reads go through
/// `readFunction` (see `read.rs`) with the handle `readHandle` gives.
#[napi]
pub struct NativeGeneMemory {
    inner: Arc<GeneMemory>,
}

#[napi]
impl NativeGeneMemory {
    #[napi(constructor)]
    pub fn new(options: JsAny) -> Result<Self, String> {
        guard(|| {
            let options = GeneOptions::parse(&options.to_arg()?, &["now"])?;
            Ok(NativeGeneMemory { inner: Arc::new(GeneMemory::open(options)?) })
        })
    }

    /// The handle of this memory for the function `readFunction` returns.
    #[napi]
    pub fn read_handle(&self, env: Env) -> Result<JsOut, String> {
        guard(|| Ok(JsOut(read::handle(env.raw(), &self.inner)?)))
    }

    #[napi]
    pub fn write(
        &self,
        env: Env,
        key: JsAny,
        value: JsAny,
        category: JsAny,
        access_policy: JsAny,
        retention_policy: JsAny,
        now: JsAny,
        make_entry: JsAny,
    ) -> Result<JsOut, String> {
        guard(|| {
            let b = Builder::new(env.raw());
            let factory = b.factory(&make_entry)?;
            let e = self.inner.write(
                &key.to_arg()?,
                value.to_arg()?,
                &category.to_arg()?,
                &access_policy.to_arg()?,
                &retention_policy.to_arg()?,
                call_time(&now)?,
            )?;
            Ok(JsOut(b.entry(&e, factory)?))
        })
    }

    #[napi]
    pub fn query(&self, env: Env, filter: JsAny, now: JsAny, make_entry: JsAny) -> Result<JsOut, String> {
        guard(|| {
            let b = Builder::new(env.raw());
            let factory = b.factory(&make_entry)?;
            let entries = self.inner.query(&filter.to_arg()?, call_time(&now)?)?;
            let items = entries.iter().map(|e| b.entry(e, factory)).collect::<CoreResult<Vec<_>>>()?;
            Ok(JsOut(b.array(&items)?))
        })
    }

    #[napi]
    pub fn delete(&self, key: JsAny, now: JsAny) -> Result<(), String> {
        guard(|| self.inner.delete(&key.to_arg()?, call_time(&now)?))
    }
}

/// `read(handle, key, category, now?)`: `readMemory`, with `makeEntry` bound (see `read.rs`).
#[napi]
pub fn read_function(env: Env, make_entry: JsAny) -> Result<JsOut, String> {
    guard(|| Ok(JsOut(read::function(env.raw(), &make_entry)?)))
}

/// `createAgentMemory({ agentId, root?, quota?, dataPolicy? })`.
#[napi]
pub fn create_agent_memory(options: JsAny) -> Result<(), String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "quota", "dataPolicy", "url"])?;
        let quota = parse_quota_arg(o.get("quota"))?;
        let policy = parse_data_policy(o.get("dataPolicy").unwrap_or(&Arg::Undefined))?;
        rotifer_memory_core::memory::create_agent_memory_of(&o.agent()?, quota, policy)
    })
}

/// `ensureAgentMemory({ agentId, root?, quota?, dataPolicy? })`: whether the memory was missing.
#[napi]
pub fn ensure_agent_memory(options: JsAny) -> Result<bool, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "quota", "dataPolicy", "url"])?;
        let quota = parse_quota_arg(o.get("quota"))?;
        let policy = parse_data_policy(o.get("dataPolicy").unwrap_or(&Arg::Undefined))?;
        rotifer_memory_core::memory::ensure_agent_memory_of(&o.agent()?, quota, policy)
    })
}

/// `parseMemoryQuota(text)`: bytes (R-QUO-2).
#[napi]
pub fn parse_memory_quota(text: JsAny) -> Result<f64, String> {
    guard(|| match text.to_arg()? {
        Arg::Str(s) => Ok(rotifer_memory_core::quota::parse_memory_quota(&s)? as f64),
        other => Err(MemoryError::invalid(format!("the memory quota must be text such as 512KB, 50MB or 1.5GB, not {}", other.kind()))),
    })
}

/// `listAgentMemory({ agentId, root?, category?, keyPrefix? }, now)`.
#[napi]
pub fn list_agent_memory(env: Env, options: JsAny, now: JsAny) -> Result<JsOut, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "category", "keyPrefix", "now", "url"])?;
        let category = parse_optional_category(o.get("category").unwrap_or(&Arg::Undefined))?;
        let prefix = parse_key_prefix("keyPrefix", o.get("keyPrefix").unwrap_or(&Arg::Undefined))?;
        let list = rotifer_memory_core::inspect::list_all(&o.agent()?, category, prefix.as_deref(), call_time(&now)?)?;
        let b = Builder::new(env.raw());
        let items = list.iter().map(|l| b.listing(l)).collect::<CoreResult<Vec<_>>>()?;
        Ok(JsOut(b.array(&items)?))
    })
}

/// `deleteAgentMemory({ agentId, root?, key? , category?, keyPrefix? }, now)`: how many were deleted.
#[napi]
pub fn delete_agent_memory(options: JsAny, now: JsAny) -> Result<f64, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "key", "category", "keyPrefix", "now", "url"])?;
        let n = rotifer_memory_core::memory::delete_agent_memory_of(&o.agent()?, o.get("key"), o.get("category"), o.get("keyPrefix"), call_time(&now)?)?;
        Ok(n as f64)
    })
}

/// A test memory's folder and lifetime; `createTestMemory` in `index.js` wraps it.
#[napi]
pub struct NativeTestMemory {
    inner: TestMemory,
}

#[napi]
impl NativeTestMemory {
    /// `{ quota?, dataPolicy?, url? }`; the JS side handles `geneId`, `domain` and `now`.
    #[napi(constructor)]
    pub fn new(options: JsAny) -> Result<Self, String> {
        guard(|| {
            let arg = options.to_arg()?;
            let arg = if arg.is_absent() { Arg::Object(vec![]) } else { arg };
            let fields = rotifer_memory_core::model::option_fields("options", &arg, &["geneId", "domain", "quota", "dataPolicy", "now", "url"])?;
            let get = |n: &str| fields.iter().find(|f| f.0 == n).map(|f| f.1);
            let quota = parse_quota_arg(get("quota"))?;
            let policy = parse_data_policy(get("dataPolicy").unwrap_or(&Arg::Undefined))?;
            check_test_gene_id(get("geneId").unwrap_or(&Arg::Undefined))?;
            let inner = match get("url") {
                None | Some(Arg::Undefined) | Some(Arg::Null) => TestMemory::create(quota, policy)?,
                Some(Arg::Str(url)) if url == rotifer_memory_core::binding::SQLITE => TestMemory::create(quota, policy)?,
                Some(Arg::Str(url)) => TestMemory::create_on(url, quota, policy)?,
                Some(other) => return Err(MemoryError::invalid(format!("url must be a postgres:// URL or \"sqlite\", not {}", other.kind()))),
            };
            Ok(NativeTestMemory { inner })
        })
    }

    /// The temporary project root that holds this memory.
    #[napi(getter)]
    pub fn root(&self) -> String {
        self.inner.root().to_string_lossy().into_owned()
    }

    /// Refuses a `forGene` id that is not a v2 id (see `check_test_gene_id`).
    #[napi]
    pub fn check_gene_id(&self, gene_id: JsAny) -> Result<(), String> {
        guard(|| check_test_gene_id(&gene_id.to_arg()?))
    }

    #[napi(getter)]
    pub fn agent_id(&self) -> String {
        self.inner.agent_id().to_string()
    }

    #[napi]
    pub fn dispose(&self) -> Result<(), String> {
        guard(|| {
            self.inner.dispose();
            Ok(())
        })
    }
}

/// Writes the summary lines of refusals counted by live gene handles (R-AUD-1): called at
/// process exit, since handles still referenced then are never dropped.
#[napi]
pub fn flush_denial_logs() -> Result<(), String> {
    guard(|| {
        rotifer_memory_core::audit::flush_all_denial_logs();
        Ok(())
    })
}

/// The five error codes (spec §11), from their one home in the core: `lib/memory-error.js`
/// takes its list from here.
#[napi]
pub fn memory_error_codes() -> Vec<String> {
    rotifer_memory_core::ErrorCode::ALL.iter().map(|c| c.as_str().to_string()).collect()
}

/// Panics inside a guarded entry point, to prove that no panic reaches Node (R-ERR-3).
#[napi(js_name = "__panicForTest")]
pub fn panic_for_test() -> Result<(), String> {
    guard(|| -> CoreResult<()> { panic!("deliberate panic for the R-ERR-3 test") })
}
