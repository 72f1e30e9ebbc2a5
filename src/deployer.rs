//! The deployer's views and migration (R-HOST-2, R-MIG): `inspectAgentMemory`,
//! `getAgentMemory`, `listAgentMemoryPage`, `exportAgentMemory`, `importAgentMemory`, and the
//! audit log read whole or page by page (`NativeAuditLogReader`). Conversion only; the rules
//! live in the core's `inspect`, `bundle` and `audit_log` modules.

use crate::convert::{Builder, JsAny, JsOut};
use crate::{guard, CoreResult};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use rotifer_memory_core::bundle::{self, OnConflict};
use rotifer_memory_core::transfer;
use rotifer_memory_core::agent_move::{self, MoveOptions, Step};
use rotifer_memory_core::inspect::{self, Usage};
use rotifer_memory_core::memory::AgentOptions;
use rotifer_memory_core::time::format_ms;
use rotifer_memory_core::model::{parse_key_prefix, parse_optional_category};
use rotifer_memory_core::{Arg, MemoryError};

fn time_or_null(b: &Builder, t: Option<i64>) -> CoreResult<napi::sys::napi_value> {
    match t {
        Some(t) => b.string(&format_ms(t)),
        None => b.null(),
    }
}

fn usage_object(b: &Builder, agent_id: &str, u: &Usage) -> CoreResult<napi::sys::napi_value> {
    let mut categories = Vec::with_capacity(u.categories.len());
    for (c, cu) in &u.categories {
        let o = b.object(&[
            (c"entries", b.number(cu.entries as f64)?),
            (c"bytes", b.number(cu.bytes as f64)?),
            (c"evictableBytes", b.number(cu.evictable_bytes as f64)?),
            (c"nextExpiry", time_or_null(b, cu.next_expiry)?),
        ])?;
        categories.push((c.as_str(), o));
    }
    let names = [c"PREFERENCE", c"PATTERN", c"CONTEXT", c"CACHE"];
    let by_name: Vec<_> = names
        .iter()
        .map(|n| (*n, categories.iter().find(|(c, _)| c.as_bytes() == n.to_bytes()).map(|c| c.1)))
        .filter_map(|(n, v)| v.map(|v| (n, v)))
        .collect();
    let p = &u.data_policy;
    b.object(&[
        (c"agentId", b.string(agent_id)?),
        (c"quota", b.number(u.quota as f64)?),
        (c"used", b.number(u.used as f64)?),
        (c"available", b.number(u.quota.saturating_sub(u.used) as f64)?),
        (c"entries", b.number(u.entries as f64)?),
        (c"evictableBytes", b.number(u.evictable_bytes() as f64)?),
        (c"nextExpiry", time_or_null(b, u.next_expiry())?),
        (
            c"dataPolicy",
            b.object(&[
                (c"anonymizationSupported", b.boolean(p.anonymization_supported)?),
                (
                    c"maxRetentionDays",
                    match p.max_retention_days {
                        Some(d) => b.number(d as f64)?,
                        None => b.null()?,
                    },
                ),
            ])?,
        ),
        (c"categories", b.object(&by_name)?),
    ])
}

/// `inspectAgentMemory({ agentId, root? }, now)`: usage figures, or `null` if never created.
#[napi]
pub fn inspect_agent_memory(env: Env, options: JsAny, now: JsAny) -> Result<JsOut, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "now", "url"])?;
        let b = Builder::new(env.raw());
        Ok(JsOut(match inspect::inspect(&o.agent()?, crate::call_time(&now)?)? {
            Some(u) => usage_object(&b, &o.agent_id, &u)?,
            None => b.null()?,
        }))
    })
}

/// `getAgentMemory({ agentId, root?, key }, now)`: the entry with its value, or `null`.
#[napi]
pub fn get_agent_memory(env: Env, options: JsAny, now: JsAny, make_entry: JsAny) -> Result<JsOut, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "key", "now", "url"])?;
        let b = Builder::new(env.raw());
        let factory = b.factory(&make_entry)?;
        let key = o.get("key").unwrap_or(&Arg::Undefined);
        Ok(JsOut(match inspect::get_entry(&o.agent()?, key, crate::call_time(&now)?)? {
            Some(e) => b.entry(&e, factory)?,
            None => b.null()?,
        }))
    })
}

/// `exportAgentMemory({ agentId, root?, includeCache?, output? }, now)`: the bundle's bytes;
/// with `output`, also written to that file.
#[napi]
pub fn export_agent_memory(options: JsAny, now: JsAny) -> Result<Buffer, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "includeCache", "output", "now", "url"])?;
        let include_cache = bundle::parse_include_cache(o.get("includeCache"))?;
        let output = bundle::parse_output(o.get("output"))?;
        let exported = transfer::export_agent_memory_of(&o.agent()?, include_cache, crate::call_time(&now)?)?;
        if let Some(path) = output {
            bundle::write_bundle_file(&path, &exported.bytes)?;
        }
        Ok(Buffer::from(exported.bytes))
    })
}

/// `importAgentMemory({ agentId, root?, onConflict? }, bundle, now)`: what was imported.
#[napi]
pub fn import_agent_memory(env: Env, options: JsAny, bundle_value: JsAny, now: JsAny) -> Result<JsOut, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "bundle", "onConflict", "now", "url"])?;
        let on_conflict = OnConflict::parse(o.get("onConflict").unwrap_or(&Arg::Undefined))?;
        let bytes = bundle::bundle_bytes(bundle_value.to_bulk_bytes()?)?;
        let r = transfer::import_agent_memory_of(&o.agent()?, &bytes, on_conflict, crate::call_time(&now)?)?;
        let b = Builder::new(env.raw());
        Ok(JsOut(b.object(&[
            (c"created", b.number(r.created as f64)?),
            (c"updated", b.number(r.updated as f64)?),
            (c"skipped", b.number(r.skipped as f64)?),
            (c"expired", b.number(r.expired as f64)?),
        ])?))
    })
}

/// `readAgentAuditLog({ agentId, root? })`: the agent's audit lines in every log file, oldest
/// first, each with `"committed"` (R-AUD-6, R-AUD-7), as JSON text
/// `{"lines":[…],"skipped":N,"lastSeq":N|null}`: the lines go over as written, with the one
/// field added. The judgement is the core's (`audit_log::read_agent_log`).
#[napi]
pub fn read_agent_audit_log(options: JsAny) -> Result<String, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "url"])?;
        let log = rotifer_memory_core::audit_log::read_agent_log_of(&o.agent()?)?;
        let mut out = String::with_capacity(log.lines.iter().map(|l| l.len() + 1).sum::<usize>() + 64);
        out.push_str("{\"lines\":[");
        for (i, line) in log.lines.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(line);
        }
        let last_seq = log.last_seq.map_or("null".to_string(), |s| s.to_string());
        out.push_str(&format!("],\"skipped\":{},\"lastSeq\":{last_seq}}}", log.skipped));
        Ok(out)
    })
}

/// `deleteAgentDatabase({ agentId, root?, url? }, now)`: the agent's database and companion files
/// (on PostgreSQL, its rows) removed after one `memory.drop` audit line
/// (`memory::delete_agent_database_of`): `{ existed, entries, used, removed: [path…], binding }`,
/// `binding` being `sqlite` or the URL without its password.
#[napi]
pub fn delete_agent_database(env: Env, options: JsAny, now: JsAny) -> Result<JsOut, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "now", "url"])?;
        let agent = o.agent()?;
        let r = rotifer_memory_core::memory::delete_agent_database_of(&agent, crate::call_time(&now)?)?;
        let b = Builder::new(env.raw());
        let removed = r.removed.iter().map(|p| b.string(&p.display().to_string())).collect::<CoreResult<Vec<_>>>()?;
        Ok(JsOut(b.object(&[
            (c"existed", b.boolean(r.existed)?),
            (c"entries", b.number(r.entries as f64)?),
            (c"used", b.number(r.used as f64)?),
            (c"removed", b.array(&removed)?),
            (c"binding", b.string(&agent.shown())?),
        ])?))
    })
}

/// `agentMemoryBinding({ agentId, root?, url? })`: where the agent's memory lives (R-BIND-1),
/// as views show it: `sqlite`, or the PostgreSQL URL without its password. Connects to nothing.
#[napi]
pub fn agent_memory_binding(options: JsAny) -> Result<String, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "url"])?;
        Ok(o.agent()?.shown())
    })
}

/// A whole number from `min` to `max` given as option `name`, or `default` when absent.
fn count_option(name: &str, v: Option<&Arg>, min: u32, max: u32, default: u32) -> CoreResult<u32> {
    match v {
        None | Some(Arg::Undefined) => Ok(default),
        Some(Arg::Number(n)) if n.fract() == 0.0 && *n >= f64::from(min) && *n <= f64::from(max) => Ok(*n as u32),
        Some(other) => Err(MemoryError::invalid(format!(
            "options.{name} must be a whole number from {min} to {max}, not {}",
            match other {
                Arg::Number(n) => n.to_string(),
                o => o.kind().to_string(),
            }
        ))),
    }
}

fn flag_option(name: &str, v: Option<&Arg>) -> CoreResult<bool> {
    match v {
        None | Some(Arg::Undefined) => Ok(false),
        Some(Arg::Bool(b)) => Ok(*b),
        Some(other) => Err(MemoryError::invalid(format!("options.{name} must be a boolean, not {}", other.kind()))),
    }
}

/// `listAgentMemoryPage({ agentId, root?, category?, keyPrefix?, after?, limit?, totals? }, now)`:
/// the text of `{ entries, more, totals: { entries, bytes, quota } | null }`
/// (`inspect::list_agent_memory_page`), which `index.js` parses: faster than objects built here.
#[napi]
pub fn list_agent_memory_page(options: JsAny, now: JsAny) -> Result<String, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "category", "keyPrefix", "after", "limit", "totals", "now", "url"])?;
        let category = parse_optional_category(o.get("category").unwrap_or(&Arg::Undefined))?;
        let prefix = parse_key_prefix("keyPrefix", o.get("keyPrefix").unwrap_or(&Arg::Undefined))?;
        let after = match o.get("after") {
            None | Some(Arg::Undefined) | Some(Arg::Null) => None,
            Some(Arg::Str(s)) => Some(s.as_str()),
            Some(other) => return Err(MemoryError::invalid(format!("options.after must be the last key of the page before, not {}", other.kind()))),
        };
        let limit = count_option("limit", o.get("limit"), 1, inspect::MAX_PAGE, 1000)?;
        let totals = flag_option("totals", o.get("totals"))?;
        let page = inspect::list_page(&o.agent()?, category, prefix.as_deref(), after, limit, totals, crate::call_time(&now)?)?;
        Ok(page.to_json())
    })
}

/// An agent's audit lines page by page, and followed (`audit_log::LogReader`); `openAgentAuditLog`
/// in `index.js` wraps it. Pages go over as JSON text, the lines as written.
#[napi]
pub struct NativeAuditLogReader {
    inner: rotifer_memory_core::audit_log::LogReader,
}

#[napi]
impl NativeAuditLogReader {
    /// `{ agentId, root?, follow? }`.
    #[napi(constructor)]
    pub fn new(options: JsAny) -> Result<Self, String> {
        guard(|| {
            let arg = options.to_arg()?;
            let o = AgentOptions::parse("options", &arg, &["agentId", "root", "follow", "url"])?;
            let follow = flag_option("follow", o.get("follow"))?;
            Ok(NativeAuditLogReader { inner: rotifer_memory_core::audit_log::LogReader::of(&o.agent()?, follow)? })
        })
    }

    /// The agent's lines read so far (handed out or not).
    #[napi(getter)]
    pub fn lines(&self) -> f64 {
        self.inner.len() as f64
    }

    /// The lines read and not handed out yet.
    #[napi(getter)]
    pub fn remaining(&self) -> f64 {
        self.inner.remaining() as f64
    }

    /// The agent's lines read so far by action: `{ "memory.create": 12, … }`.
    #[napi(getter)]
    pub fn actions(&self) -> std::collections::HashMap<String, f64> {
        self.inner.actions.iter().map(|(a, n)| (a.clone(), *n as f64)).collect()
    }

    #[napi(getter)]
    pub fn skipped(&self) -> f64 {
        self.inner.skipped as f64
    }

    #[napi(getter)]
    pub fn last_seq(&self) -> Option<f64> {
        self.inner.last_seq.map(|s| s as f64)
    }

    /// Skips up to `n` lines not handed out yet.
    #[napi]
    pub fn skip(&mut self, n: JsAny) -> Result<(), String> {
        guard(|| {
            let n = count_option("n", Some(&n.to_arg()?), 0, u32::MAX, 0)?;
            self.inner.skip(n as usize);
            Ok(())
        })
    }

    /// Up to `max` lines not handed out yet, as the text of a JSON array; `null` when none is left.
    #[napi]
    pub fn next(&mut self, max: JsAny) -> Result<Option<String>, String> {
        guard(|| {
            let max = count_option("max", Some(&max.to_arg()?), 1, u32::MAX, 1)?;
            let mut out = String::from("[");
            let n = self.inner.next_lines(max as usize, |line| {
                if out.len() > 1 {
                    out.push(',');
                }
                out.push_str(&String::from_utf8_lossy(line));
            })?;
            out.push(']');
            Ok((n > 0).then_some(out))
        })
    }

    /// When following: reads what was appended since the last look; returns how many new lines
    /// of the agent there are.
    #[napi]
    pub fn poll(&mut self) -> Result<f64, String> {
        guard(|| Ok(self.inner.poll()? as f64))
    }
}

/// `setupMemoryBinding({ adminUrl, role?, password? })` (R-BIND-4, `rotifer binding setup`): the
/// `{ fromVersion, toVersion, roleUrl, passwordSet }` (`postgres::setup::setup_binding`).
#[napi]
pub fn setup_memory_binding(env: Env, options: JsAny) -> Result<JsOut, String> {
    guard(|| {
        let Arg::Object(fields) = options.to_arg()? else {
            return Err(MemoryError::invalid("options must be an object: { adminUrl, role?, password? }"));
        };
        let mut admin_url = None;
        let mut role = None;
        let mut password = None;
        for (name, value) in &fields {
            let slot = match name.as_str() {
                "adminUrl" => &mut admin_url,
                "role" => &mut role,
                "password" => &mut password,
                other => return Err(MemoryError::invalid(format!("options.{other} is not an option of setupMemoryBinding (adminUrl, role, password)"))),
            };
            match value {
                Arg::Undefined => {}
                Arg::Str(s) => *slot = Some(s.clone()),
                v => return Err(MemoryError::invalid(format!("options.{name} must be a string, not {}", v.kind()))),
            }
        }
        let admin_url = admin_url.ok_or_else(|| MemoryError::invalid("options.adminUrl is required: the administrator's postgres:// URL"))?;
        let done = rotifer_memory_core::postgres::setup::setup_binding(&admin_url, role.as_deref(), password.as_deref())?;
        let b = Builder::new(env.raw());
        Ok(JsOut(b.object(&[
            (c"fromVersion", b.number(f64::from(done.report.from_version))?),
            (c"toVersion", b.number(f64::from(done.report.to_version))?),
            (c"roleUrl", match &done.role_url {
                Some(u) => b.string(u)?,
                None => b.null()?,
            }),
            (c"passwordSet", b.boolean(done.password_set)?),
        ])?))
    })
}

/// `migrateAgentMemory({ agentId, root?, to, includeCache?, onConflict?, onStep? }, now)`
/// (R-MIG-4): the memory moved to `to`; `onStep(name)` is called after each step.
#[napi]
pub fn migrate_agent_memory(env: Env, options: JsAny, on_step: JsAny, now: JsAny) -> Result<JsOut, String> {
    guard(|| {
        let arg = options.to_arg()?;
        let o = AgentOptions::parse("options", &arg, &["agentId", "root", "to", "includeCache", "onConflict", "onStep", "now"])?;
        let to = match o.get("to") {
            Some(Arg::Str(s)) => s.clone(),
            _ => return Err(MemoryError::invalid("to must be a postgres:// URL or \"sqlite\"")),
        };
        let options = MoveOptions {
            include_cache: bundle::parse_include_cache(o.get("includeCache"))?,
            on_conflict: OnConflict::parse(o.get("onConflict").unwrap_or(&Arg::Undefined))?,
        };
        let b = Builder::new(env.raw());
        let mut tell = |step: Step| b.call_back(&on_step, step.as_str());
        let m = agent_move::migrate_agent_memory(&o.layout, &o.agent_id, &to, options, crate::call_time(&now)?, &mut tell)?;
        let counts: Vec<_> = m.counts.iter().map(|(c, n)| (c.as_str(), *n)).collect();
        let count = |name: &str| counts.iter().find(|c| c.0 == name).map_or(0, |c| c.1) as f64;
        Ok(JsOut(b.object(&[
            (c"from", b.string(&m.from)?),
            (c"to", b.string(&m.to)?),
            (c"move", b.string(&m.move_id)?),
            (c"counts", b.object(&[
                (c"PREFERENCE", b.number(count("PREFERENCE"))?),
                (c"PATTERN", b.number(count("PATTERN"))?),
                (c"CONTEXT", b.number(count("CONTEXT"))?),
                (c"CACHE", b.number(count("CACHE"))?),
            ])?),
            (c"entriesSha256", b.string(&m.entries_sha256)?),
            (c"created", b.number(m.imported.created as f64)?),
            (c"updated", b.number(m.imported.updated as f64)?),
            (c"skipped", b.number(m.imported.skipped as f64)?),
            (c"replaced", b.number(m.replaced as f64)?),
            (c"cacheLeft", b.number(m.cache_left as f64)?),
        ])?))
    })
}
