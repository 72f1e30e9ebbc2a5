//! The audit log (R-AUD-1..3) and the telemetry events (R-AUD-4).
//!
//! Lines are collected while a call runs and appended in one write before the call commits
//! (write-ahead, R-AUD-2). Keys and reasons are JSON-escaped by serde, so no key can forge a
//! line; values are never written.

use crate::layout::{append_lines, Layout};
use crate::error::{MemoryError, Result};
use crate::model::{entry_id, Category};
use crate::time::format_ms;
use serde::Serialize;

/// The `action` of an audit line, without its `memory.` prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    Delete,
    Evict,
    Expire,
    QuotaReject,
    AccessDenied,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "memory.create",
            Action::Update => "memory.update",
            Action::Delete => "memory.delete",
            Action::Evict => "memory.evict",
            Action::Expire => "memory.expire",
            Action::QuotaReject => "memory.quota_reject",
            Action::AccessDenied => "memory.access_denied",
        }
    }
}

/// Who did it: a gene, the deployer, or nobody (expiry, eviction, a caller with no v2 id).
#[derive(Debug, Clone, Copy)]
pub enum Actor<'a> {
    Gene(&'a str),
    Deployer,
    System,
}

#[derive(Serialize)]
struct Line<'a> {
    ts: String,
    #[serde(rename = "agentId")]
    agent_id: &'a str,
    action: &'static str,
    actor: Option<&'a str>,
    key: Option<&'a str>,
    #[serde(rename = "entryId")]
    entry_id: Option<String>,
    category: Option<&'static str>,
    size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    op: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    quota: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    used: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    evictable: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    needed: Option<u64>,
}

/// What a quota rejection needed and had (R-AUD-3).
#[derive(Debug, Clone, Copy)]
pub struct QuotaFacts {
    pub quota: u64,
    pub used: u64,
    pub evictable: u64,
    pub needed: u64,
}

/// A denial's details (R-AUD-3).
#[derive(Debug, Clone, Copy)]
pub struct Denial<'a> {
    pub op: &'a str,
    pub code: &'a str,
    pub reason: &'a str,
}

/// The lines and events one call produces, written by `flush` before the call commits.
pub struct AuditBatch<'a> {
    pub agent_id: &'a str,
    pub now: i64,
    lines: Vec<u8>,
    events: Vec<u8>,
}

/// The subject of a line: the entry's key, category and size, where known.
#[derive(Debug, Clone, Copy, Default)]
pub struct Subject<'a> {
    pub key: Option<&'a str>,
    pub category: Option<Category>,
    pub size: Option<u64>,
}

impl<'a> AuditBatch<'a> {
    pub fn new(agent_id: &'a str, now: i64) -> Self {
        AuditBatch { agent_id, now, lines: Vec::new(), events: Vec::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Appends one line for a change or a quota rejection.
    pub fn record(&mut self, action: Action, actor: Actor<'_>, subject: Subject<'_>, quota: Option<QuotaFacts>) {
        self.push(action, actor, subject, None, quota);
    }

    /// Appends a denial line, and a telemetry event unless the user opted out (R-AUD-4).
    pub fn deny(&mut self, actor: Actor<'_>, subject: Subject<'_>, denial: Denial<'_>) {
        self.push(Action::AccessDenied, actor, subject, Some(denial), None);
        if telemetry_enabled() {
            #[derive(Serialize)]
            struct Event<'a> {
                ts: String,
                event: &'static str,
                #[serde(rename = "agentId")]
                agent_id: &'a str,
                #[serde(rename = "geneId")]
                gene_id: Option<&'a str>,
                op: &'a str,
                code: &'a str,
            }
            let gene_id = match actor {
                Actor::Gene(id) => Some(id),
                _ => None,
            };
            let event = Event { ts: format_ms(self.now), event: "memory.access_denied", agent_id: self.agent_id, gene_id, op: denial.op, code: denial.code };
            write_json_line(&mut self.events, &event);
        }
    }

    fn push(&mut self, action: Action, actor: Actor<'_>, s: Subject<'_>, denial: Option<Denial<'_>>, quota: Option<QuotaFacts>) {
        let line = Line {
            ts: format_ms(self.now),
            agent_id: self.agent_id,
            action: action.as_str(),
            actor: match actor {
                Actor::Gene(id) => Some(id),
                Actor::Deployer => Some("deployer"),
                Actor::System => None,
            },
            key: s.key,
            entry_id: s.key.map(|k| entry_id(self.agent_id, k)),
            category: s.category.map(Category::as_str),
            size: s.size,
            op: denial.map(|d| d.op),
            code: denial.map(|d| d.code),
            reason: denial.map(|d| d.reason),
            quota: quota.map(|q| q.quota),
            used: quota.map(|q| q.used),
            evictable: quota.map(|q| q.evictable),
            needed: quota.map(|q| q.needed),
        };
        write_json_line(&mut self.lines, &line);
    }

    /// Writes the audit lines; fails (and the caller must not commit) if they cannot be written.
    pub fn flush_audit(&mut self, layout: &Layout) -> Result<()> {
        if self.lines.is_empty() {
            return Ok(());
        }
        let path = layout.audit_path();
        // `.rotifer` must be a real folder (O_NOFOLLOW guards only the file itself). It almost
        // always is: one lookup, and the full check (which creates it) only when it is not.
        match std::fs::symlink_metadata(layout.rotifer_dir()) {
            Ok(m) if m.file_type().is_dir() => {}
            _ => layout.ensure_dirs(false)?,
        }
        append_lines(&path, &self.lines).map_err(|e| {
            MemoryError::storage(format!(
                "cannot append to the audit log {} ({e}); nothing was changed. Make it a writable regular file",
                layout.audit_path().display()
            ))
        })?;
        self.lines.clear();
        Ok(())
    }

    /// Writes the telemetry events. Best effort: telemetry never fails a call.
    pub fn flush_telemetry(&mut self, layout: &Layout) {
        if !self.events.is_empty() {
            let _ = append_lines(&layout.telemetry_path(), &self.events);
            self.events.clear();
        }
    }
}

fn write_json_line<T: Serialize>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    // Serializing these plain structs cannot fail.
    if serde_json::to_writer(&mut *out, value).is_ok() {
        escape_line_separators(out, start);
        out.push(b'\n');
    }
}

/// JSON allows U+0085, U+2028 and U+2029 raw inside strings, but many line readers (Python's
/// `splitlines`, log shippers) end a line there: escaped, a key holding them cannot start a line.
pub(crate) fn escape_line_separators(out: &mut Vec<u8>, start: usize) {
    let line = &out[start..];
    if !line.windows(2).any(|w| w == [0xE2, 0x80] || w == [0xC2, 0x85]) {
        return;
    }
    let escaped = String::from_utf8_lossy(line)
        .replace('\u{85}', "\\u0085")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029");
    out.truncate(start);
    out.extend_from_slice(escaped.as_bytes());
}

/// R-AUD-4: off when `ROTIFER_TELEMETRY` is `0`, `false` or `off`, or `DO_NOT_TRACK` is set to
/// anything non-empty other than `0`/`false`.
pub fn telemetry_enabled() -> bool {
    let off = |v: &str| matches!(v.to_ascii_lowercase().as_str(), "0" | "false" | "off");
    if let Ok(v) = std::env::var("ROTIFER_TELEMETRY") {
        if off(&v) {
            return false;
        }
    }
    if let Ok(v) = std::env::var("DO_NOT_TRACK") {
        let v = v.to_ascii_lowercase();
        if !v.is_empty() && v != "0" && v != "false" {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_cannot_forge_lines() {
        // R-AUD-3: a key with a newline and a fake line inside stays one JSON line.
        let mut b = AuditBatch::new("agent", 0);
        let evil = "k\"}\n{\"action\":\"memory.delete\"";
        b.record(Action::Create, Actor::Gene("v2:x"), Subject { key: Some(evil), category: Some(Category::Cache), size: Some(3) }, None);
        let text = String::from_utf8(b.lines.clone()).unwrap();
        assert_eq!(text.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["key"], evil);
        assert_eq!(v["action"], "memory.create");
        assert_eq!(v["ts"], "1970-01-01T00:00:00.000Z");
        assert_eq!(v["entryId"], entry_id("agent", evil));
        // Field order is the documented one.
        assert!(text.starts_with("{\"ts\":"));
    }

    #[test]
    fn unicode_line_separators_are_escaped() {
        // R-AUD-3: U+0085, U+2028 and U+2029 never appear raw, so no line reader splits a line.
        let mut b = AuditBatch::new("agent", 0);
        let evil = "a\u{2028}{\"action\":\"memory.delete\"}\u{2029}b\u{85}c\u{2027}";
        b.record(Action::Create, Actor::Gene("v2:x"), Subject { key: Some(evil), category: None, size: None }, None);
        let text = String::from_utf8(b.lines.clone()).unwrap();
        assert!(!text.contains(['\u{85}', '\u{2028}', '\u{2029}']), "{text}");
        assert!(text.contains("\\u2028") && text.contains("\\u2029") && text.contains("\\u0085"));
        let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["key"], evil);
    }

    #[test]
    fn denials_carry_op_code_reason() {
        let mut b = AuditBatch::new("agent", 0);
        b.deny(Actor::System, Subject::default(), Denial { op: "read", code: "MEMORY_ACCESS_DENIED", reason: "no v2 id" });
        let v: serde_json::Value = serde_json::from_slice(&b.lines).unwrap();
        assert_eq!(v["actor"], serde_json::Value::Null);
        assert_eq!(v["op"], "read");
        assert_eq!(v["reason"], "no v2 id");
        assert_eq!(v["key"], serde_json::Value::Null);
    }
}
