//! The audit log (R-AUD-1..3) and the telemetry events (R-AUD-4).
//!
//! Lines are collected while a call runs and appended in one write before the call commits
//! (write-ahead, R-AUD-2). Keys and reasons are JSON-escaped by serde, so no key can forge a
//! line; values are never written.
//!
//! What a gene can make us write by calls that change nothing (denials, quota rejections) is
//! bounded per handle by a `DenialLog`: see its doc comment and the README's audit section.

use super::files::Layout;
use super::logs::{append_lines, for_each_line, open_files, rotation};
use super::watch::Look;
use crate::error::{ErrorCode, MemoryError, Result};
use crate::model::{entry_id, Category};
use crate::time::format_ms;
use serde::Serialize;
use std::sync::{Arc, Mutex, OnceLock, Weak};

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
    /// The database replaced as a whole: restored by the deployer, or found replaced by hand.
    Restore,
    /// The agent's whole database deleted by the deployer (`rotifer agent delete`): written
    /// before any file is removed, with no `tx` (no transaction of the database commits it).
    Drop,
    /// The agent's memory moved to another binding, or arrived from one (R-MIG-4).
    Migrate,
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
            Action::Restore => "memory.restore",
            Action::Drop => "memory.drop",
            Action::Migrate => "memory.migrate",
        }
    }

    /// Whether the line records a change to memory (not a refusal, which changes nothing).
    pub fn is_change(self) -> bool {
        !matches!(self, Action::QuotaReject | Action::AccessDenied)
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
    action: &'a str,
    /// The transaction of a change (R-AUD-6): the agent's write sequence number it commits
    /// (`last_seq` once it has). A reader tells a change that committed from one that did not
    /// by that number (`audit_log::committed`); refusals, which change nothing, have none.
    #[serde(skip_serializing_if = "Option::is_none")]
    tx: Option<i64>,
    /// The line's place among the change lines of its attempt, from 1: a `txLine` 1 begins an
    /// attempt, so a retry at the same `tx` after a failed commit is told apart (R-AUD-6).
    #[serde(rename = "txLine", skip_serializing_if = "Option::is_none")]
    tx_line: Option<u32>,
    actor: Option<&'a str>,
    key: Option<&'a str>,
    /// The whole key's length in UTF-8 bytes, when `key` shows only its beginning (a change
    /// line's key past `CHANGE_KEY_JSON_BYTES`); `entryId` names the whole key.
    #[serde(rename = "keyBytes", skip_serializing_if = "Option::is_none")]
    key_bytes: Option<u64>,
    #[serde(rename = "entryId")]
    entry_id: Option<String>,
    category: Option<&'a str>,
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
    /// A summary line: how many refusals it stands for, and since when.
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    since: Option<String>,
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
    /// The gene handle's bound on refusal lines; `None` for the deployer's calls.
    denials: Option<Arc<DenialLog>>,
    /// How fresh a look at the kernel's change reports the logs need (`layout::append_lines`).
    look: Look,
    /// The transaction the changes recorded belong to (R-AUD-6), inside a changing call.
    tx: Option<i64>,
    /// How many change lines were recorded (each line's `txLine`).
    change_lines: u32,
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
        AuditBatch { agent_id, now, lines: Vec::new(), events: Vec::new(), denials: None, look: Look::Now, tx: None, change_lines: 0 }
    }

    /// The changes recorded from now on belong to transaction `tx` (R-AUD-6).
    pub fn in_transaction(mut self, tx: i64) -> Self {
        self.tx = Some(tx);
        self
    }

    /// Whether a change was recorded: its transaction must move the agent's sequence number to
    /// at least its `tx`, so that a reader can tell it committed.
    pub fn has_changes(&self) -> bool {
        self.change_lines > 0
    }

    /// A change line's `txLine`: its place among the attempt's change lines.
    fn next_tx_line(&mut self) -> Option<u32> {
        self.change_lines += 1;
        Some(self.change_lines)
    }

    /// For a changing call, which looked at the kernel's change reports itself a moment ago:
    /// its lines rely on a look made in the last `RECENT_LOOK` (`Look::Recent`), and look again
    /// only if there was none, say after a long eviction.
    pub fn after_a_look(mut self) -> Self {
        self.look = Look::Recent;
        self
    }

    /// Refusals recorded from now on count against `log` (one gene handle's bound).
    pub fn bound_by(&mut self, log: Option<&Arc<DenialLog>>) {
        self.denials = log.cloned();
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The lines recorded so far, as they would be written.
    #[cfg(test)]
    pub(crate) fn lines_for_test(&self) -> &[u8] {
        &self.lines
    }

    /// Appends one line for a change or a quota rejection. A rejection counts against the
    /// handle's `DenialLog`, which may count it instead of writing it.
    pub fn record(&mut self, action: Action, actor: Actor<'_>, subject: Subject<'_>, quota: Option<QuotaFacts>) {
        if action != Action::QuotaReject {
            return self.push(action, actor, subject, None, quota);
        }
        if self.admit(action, "write", ErrorCode::QuotaExceeded.as_str(), subject.key) {
            self.push_refusal(action, actor, subject, None, quota);
        }
        self.summarise_if_due();
    }

    /// Appends the line of a restore (R-HOST-1b): `reason` says what happened, `size` the bytes
    /// the agent holds after it. `tx`: the transaction number the line carries, if not this
    /// attempt's own (a restore found at open numbers itself past every number the log holds,
    /// lines of a database that is gone among them).
    pub fn record_restore(&mut self, actor: Actor<'_>, reason: &str, size: Option<u64>, tx: Option<i64>) {
        let mut line = make_line(self.agent_id, self.now, Action::Restore, actor, Subject { size, ..Subject::default() }, None, None);
        line.reason = Some(reason);
        line.tx = tx.or(self.tx);
        line.tx_line = self.next_tx_line();
        write_json_line(&mut self.lines, &line);
    }

    /// Appends the line of a move (R-MIG-4, `Action::Migrate`) on one side of it: `reason`
    /// says where from or to, and what went; `size` the bytes the agent holds after it.
    pub fn record_migrate(&mut self, reason: &str, size: Option<u64>) {
        let mut line = make_line(
            self.agent_id,
            self.now,
            Action::Migrate,
            Actor::Deployer,
            Subject {
                size,
                ..Subject::default()
            },
            None,
            None,
        );
        line.reason = Some(reason);
        line.tx = self.tx;
        line.tx_line = self.next_tx_line();
        write_json_line(&mut self.lines, &line);
    }

    /// Appends the line of a deleted database (`Action::Drop`): `reason` says what goes,
    /// `size` the bytes the agent held. It carries no `tx`, so readers count it as done: it is
    /// written before the files are removed, and a removal cut short is finished by the next.
    pub fn record_drop(&mut self, actor: Actor<'_>, reason: &str, size: Option<u64>) {
        let mut line = make_line(self.agent_id, self.now, Action::Drop, actor, Subject { size, ..Subject::default() }, None, None);
        line.reason = Some(reason);
        write_json_line(&mut self.lines, &line);
    }

    /// Appends a denial line, and a telemetry event unless the user opted out (R-AUD-4); or,
    /// past the handle's bound, counts it for a later summary line.
    pub fn deny(&mut self, actor: Actor<'_>, subject: Subject<'_>, denial: Denial<'_>) {
        if self.admit(Action::AccessDenied, denial.op, denial.code, subject.key) {
            self.push_refusal(Action::AccessDenied, actor, subject, Some(denial), None);
            self.event(actor, denial.op, denial.code, None);
        }
        self.summarise_if_due();
    }

    /// Whether a refusal gets a line of its own (always, for a batch with no `DenialLog`).
    fn admit(&mut self, action: Action, op: &str, code: &str, key: Option<&str>) -> bool {
        match &self.denials {
            Some(log) => log.admit(action, op, code, key, self.now),
            None => true,
        }
    }

    /// The summary lines the handle's `DenialLog` owes, if one is due now.
    fn summarise_if_due(&mut self) {
        if let Some(log) = self.denials.clone() {
            if let Some(due) = log.take_due(self.now) {
                self.summarise(&log, &due);
            }
        }
    }

    /// One line (and telemetry event, for denials) per group of counted refusals.
    fn summarise(&mut self, log: &DenialLog, due: &[Counted]) {
        let actor = match &log.gene_id {
            Some(id) => Actor::Gene(id),
            None => Actor::System,
        };
        for c in due {
            let reason = (c.action == Action::AccessDenied).then(|| {
                format!(
                    "{} more denials of {} by this gene handle since {}, counted instead of written one by one (repeats of the line before, or past the {FULL_REFUSAL_LINES} lines a handle writes in full)",
                    c.count, c.op, format_ms(c.since)
                )
            });
            let denial = reason.as_deref().map(|reason| Denial { op: &c.op, code: &c.code, reason });
            let mut line = make_line(self.agent_id, self.now, c.action, actor, Subject::default(), denial, None);
            if c.action == Action::QuotaReject {
                line.op = None;
            }
            line.count = Some(c.count);
            line.since = Some(format_ms(c.since));
            write_json_line(&mut self.lines, &line);
            if c.action == Action::AccessDenied {
                self.event(actor, &c.op, &c.code, Some((c.count, c.since)));
            }
        }
    }

    /// A telemetry event for a denial (R-AUD-4), or for `count` of them since a time.
    fn event(&mut self, actor: Actor<'_>, op: &str, code: &str, summary: Option<(u64, i64)>) {
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
                #[serde(skip_serializing_if = "Option::is_none")]
                count: Option<u64>,
                #[serde(skip_serializing_if = "Option::is_none")]
                since: Option<String>,
            }
            let gene_id = match actor {
                Actor::Gene(id) => Some(id),
                _ => None,
            };
            let event = Event {
                ts: format_ms(self.now),
                event: "memory.access_denied",
                agent_id: self.agent_id,
                gene_id,
                op,
                code,
                count: summary.map(|s| s.0),
                since: summary.map(|s| format_ms(s.1)),
            };
            write_json_line(&mut self.events, &event);
        }
    }

    /// A line; a change line's key cut to `CHANGE_KEY_JSON_BYTES` of JSON, its length given.
    fn push(&mut self, action: Action, actor: Actor<'_>, s: Subject<'_>, denial: Option<Denial<'_>>, quota: Option<QuotaFacts>) {
        let cut = s.key.filter(|_| action.is_change()).and_then(fit_change_key);
        let subject = Subject { key: cut.as_deref().or(s.key), ..s };
        let mut line = make_line(self.agent_id, self.now, action, actor, subject, denial, quota);
        if cut.is_some() {
            line.entry_id = s.key.map(|k| entry_id(self.agent_id, k));
            line.key_bytes = s.key.map(|k| k.len() as u64);
        }
        if action.is_change() {
            line.tx = self.tx;
            line.tx_line = self.next_tx_line();
        }
        write_json_line(&mut self.lines, &line);
    }

    /// A refusal's line, its key cut to `REFUSAL_KEY_BYTES`: the `entryId` (a SHA-256 of the
    /// whole key) still names it.
    fn push_refusal(&mut self, action: Action, actor: Actor<'_>, s: Subject<'_>, denial: Option<Denial<'_>>, quota: Option<QuotaFacts>) {
        let short = s.key.map(shorten_key);
        let mut line = make_line(self.agent_id, self.now, action, actor, Subject { key: short.as_deref(), ..s }, denial, quota);
        line.entry_id = s.key.map(|k| entry_id(self.agent_id, k));
        write_json_line(&mut self.lines, &line);
    }

    /// Writes the audit lines; fails (and the caller must not commit) if they cannot be written.
    pub fn flush_audit(&mut self, layout: &Layout) -> Result<()> {
        if self.lines.is_empty() {
            return Ok(());
        }
        let failed = |e: MemoryError| MemoryError::storage(format!("the audit log could not be written: {}; nothing was changed", e.message));
        let rotation = rotation(layout).map_err(failed)?;
        let prepare = || {
            layout.ensure_log_dir()?;
            layout.ensure_reserve(); // when the log is (re)opened: rarely, and best effort
            Ok(())
        };
        append_lines(&layout.audit_path(), &self.lines, self.look, &prepare, Some(rotation)).map_err(failed)?;
        self.lines.clear();
        Ok(())
    }

    /// Writes the telemetry events. Best effort: telemetry never fails a call.
    pub fn flush_telemetry(&mut self, layout: &Layout) {
        if !self.events.is_empty() {
            // Rotated as the audit log is, with its settings (R-AUD-7).
            let rotation = rotation(layout).ok();
            let _ = append_lines(&layout.telemetry_path(), &self.events, self.look, &|| layout.ensure_log_dir(), rotation);
            self.events.clear();
        }
    }
}

/// One line of the audit log, before it is serialised.
fn make_line<'l>(agent_id: &'l str, now: i64, action: Action, actor: Actor<'l>, s: Subject<'l>, denial: Option<Denial<'l>>, quota: Option<QuotaFacts>) -> Line<'l> {
    Line {
        ts: format_ms(now),
        agent_id,
        action: action.as_str(),
        tx: None,
        tx_line: None,
        actor: match actor {
            Actor::Gene(id) => Some(id),
            Actor::Deployer => Some("deployer"),
            Actor::System => None,
        },
        key: s.key,
        key_bytes: None,
        entry_id: s.key.map(|k| entry_id(agent_id, k)),
        category: s.category.map(Category::as_str),
        size: s.size,
        op: denial.map(|d| d.op),
        code: denial.map(|d| d.code),
        reason: denial.map(|d| d.reason),
        quota: quota.map(|q| q.quota),
        used: quota.map(|q| q.used),
        evictable: quota.map(|q| q.evictable),
        needed: quota.map(|q| q.needed),
        count: None,
        since: None,
    }
}

// ---------------------------------------------------------------------------------------------
// The bound on refusal lines (R-AUD-1/4)

/// How many refusal lines one gene handle writes in full; later refusals are counted.
pub const FULL_REFUSAL_LINES: u32 = 10;
/// Counted refusals are summarised at most this often, and when the handle goes away.
pub const SUMMARY_INTERVAL_MS: i64 = 60_000;
/// How much of a key a refusal line shows; its `entryId` (SHA-256 of the whole key) names it.
pub const REFUSAL_KEY_BYTES: usize = 64;

/// The refusals (denials and quota rejections) of one gene handle: a `GeneMemoryAccess`, or one
/// set of WASM imports. Refusals change nothing, so a gene can repeat them as fast as it can
/// call; without a bound it could fill the disk through the logs that every agent of the
/// project shares. The rule:
///
/// - a refusal gets a line of its own (key cut to `REFUSAL_KEY_BYTES`, telemetry event for a
///   denial) unless it repeats the handle's last such line (same action, op, code and key) or
///   the handle has written `FULL_REFUSAL_LINES` of them already;
/// - the others are counted per action, op and code, and written as one summary line each
///   (`"count"`, `"since"`) at the first refusal `SUMMARY_INTERVAL_MS` after the first one
///   counted, and when the handle is dropped or the process exits.
///
/// So a handle adds at most `FULL_REFUSAL_LINES` lines, plus a few summary lines a minute,
/// and every refusal is in the log, one by one or in a count.
pub struct DenialLog {
    layout: Layout,
    agent_id: String,
    gene_id: Option<String>,
    state: Mutex<DenialState>,
}

#[derive(Default)]
struct DenialState {
    full_lines: u32,
    /// What the last full line refused: action, op, code, key.
    last: Option<(Action, String, String, Option<String>)>,
    counted: Vec<Counted>,
    /// The latest clock reading seen: the time of the summary written at drop.
    last_now: i64,
}

/// Refusals counted instead of written, of one action, op and code.
#[derive(Debug, Clone)]
struct Counted {
    action: Action,
    op: String,
    code: String,
    count: u64,
    since: i64,
}

impl DenialLog {
    /// The log of a handle of `gene_id` (`None`: no valid v2 id) on `agent_id`'s memory.
    pub fn new(layout: Layout, agent_id: &str, gene_id: Option<&str>) -> Arc<DenialLog> {
        let log = Arc::new(DenialLog {
            layout,
            agent_id: agent_id.to_string(),
            gene_id: gene_id.map(str::to_string),
            state: Mutex::new(DenialState::default()),
        });
        let mut live = lock(live_logs());
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(&log));
        log
    }

    fn state(&self) -> std::sync::MutexGuard<'_, DenialState> {
        lock(&self.state)
    }

    /// Whether this refusal gets a line of its own; if not, it is counted.
    fn admit(&self, action: Action, op: &str, code: &str, key: Option<&str>, now: i64) -> bool {
        let mut st = self.state();
        st.last_now = st.last_now.max(now);
        let what = (action, op.to_string(), code.to_string(), key.map(str::to_string));
        if st.full_lines < FULL_REFUSAL_LINES && st.last.as_ref() != Some(&what) {
            st.full_lines += 1;
            st.last = Some(what);
            return true;
        }
        match st.counted.iter_mut().find(|c| c.action == action && c.op == op && c.code == code) {
            Some(c) => c.count += 1,
            None => st.counted.push(Counted { action, op: op.to_string(), code: code.to_string(), count: 1, since: now }),
        }
        false
    }

    /// The counted refusals, if their summary is due at `now`.
    fn take_due(&self, now: i64) -> Option<Vec<Counted>> {
        let mut st = self.state();
        let first = st.counted.iter().map(|c| c.since).min()?;
        (now.saturating_sub(first) >= SUMMARY_INTERVAL_MS).then(|| std::mem::take(&mut st.counted))
    }

    /// Writes the summary of every refusal counted so far (best effort: nothing else would
    /// write it). Called when the handle goes away and at process exit.
    pub fn flush(&self) {
        let (counted, now) = {
            let mut st = self.state();
            (std::mem::take(&mut st.counted), st.last_now)
        };
        if counted.is_empty() {
            return;
        }
        let mut batch = AuditBatch::new(&self.agent_id, now);
        batch.summarise(self, &counted);
        let _ = batch.flush_audit(&self.layout);
        batch.flush_telemetry(&self.layout);
    }
}

impl Drop for DenialLog {
    fn drop(&mut self) {
        self.flush();
    }
}

fn live_logs() -> &'static Mutex<Vec<Weak<DenialLog>>> {
    static LIVE: OnceLock<Mutex<Vec<Weak<DenialLog>>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(Vec::new()))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes the summaries every live handle owes: for the front end's process-exit hook, since
/// handles still referenced at exit are never dropped.
pub fn flush_all_denial_logs() {
    let live: Vec<Arc<DenialLog>> = lock(live_logs()).iter().filter_map(Weak::upgrade).collect();
    for log in live {
        log.flush();
    }
}

/// How many bytes a change line's key takes in JSON at most (its escapes counted: a control
/// character takes 6). A longer key shows its beginning, `…`, and `keyBytes`; its `entryId`
/// (SHA-256 of the whole key) names it. So a change line stays under about 700 bytes whatever
/// its key, and a gene rewriting one long key makes us write a fraction of what SQLite writes
/// for the same change (a page of WAL, 4 KiB, at the least).
pub const CHANGE_KEY_JSON_BYTES: usize = 256;

/// The bytes `c` takes inside a JSON string as written here (serde's escapes, and
/// `escape_line_separators`).
fn json_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        '\u{85}' | '\u{2028}' | '\u{2029}' => 6,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// A change line's `key` when the whole one would take more than `CHANGE_KEY_JSON_BYTES` of
/// JSON: its first characters, then `…`, within that; `None` if it fits whole.
fn fit_change_key(key: &str) -> Option<String> {
    if key.chars().map(json_len).sum::<usize>() <= CHANGE_KEY_JSON_BYTES {
        return None;
    }
    let room = CHANGE_KEY_JSON_BYTES - '…'.len_utf8();
    let mut used = 0;
    let end = key
        .char_indices()
        .find(|(_, c)| {
            used += json_len(*c);
            used > room
        })
        .map_or(key.len(), |(i, _)| i);
    Some(format!("{}…", &key[..end]))
}

/// `key` cut to at most `REFUSAL_KEY_BYTES` (on a character boundary), with `…` when cut.
fn shorten_key(key: &str) -> std::borrow::Cow<'_, str> {
    if key.len() <= REFUSAL_KEY_BYTES {
        return key.into();
    }
    let mut end = REFUSAL_KEY_BYTES;
    while !key.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &key[..end]).into()
}

/// An audit row of the PostgreSQL binding (R-BIND-3), as its server functions stored it.
#[derive(Debug, Clone, Copy)]
pub struct StoredRow<'a> {
    pub ts: i64,
    pub tx: Option<i64>,
    pub tx_line: Option<u32>,
    pub action: &'a str,
    pub actor: Option<&'a str>,
    pub key: Option<&'a str>,
    pub category: Option<&'a str>,
    pub size: Option<u64>,
    /// A denial's `op`, `code` and `reason`, a rejection's sizes, a trim's figures.
    pub facts: Option<&'a serde_json::Value>,
}

/// The line of `row` (no newline), of the shape this module writes to the file (R-AUD-3): the
/// same fields in the same order, a change line's key cut as `push` cuts it, a refusal's as
/// `push_refusal` does; facts of no field of the file's lines (a trim's) come last.
pub fn stored_row_line(agent_id: &str, row: &StoredRow<'_>) -> Vec<u8> {
    let action = [Action::Create, Action::Update, Action::Delete, Action::Evict, Action::Expire, Action::QuotaReject, Action::AccessDenied, Action::Restore, Action::Drop, Action::Migrate]
        .into_iter()
        .find(|a| a.as_str() == row.action);
    let refusal = action.is_some_and(|a| !a.is_change());
    let facts = row.facts.and_then(|f| f.as_object());
    let text = |name: &str| facts.and_then(|f| f.get(name)).and_then(|v| v.as_str());
    let number = |name: &str| facts.and_then(|f| f.get(name)).and_then(|v| v.as_u64());
    let cut_change = row.key.filter(|_| !refusal).and_then(fit_change_key);
    let cut_refusal = row.key.filter(|_| refusal).map(shorten_key);
    let line = Line {
        ts: format_ms(row.ts),
        agent_id,
        action: row.action,
        tx: row.tx,
        tx_line: row.tx_line,
        actor: row.actor,
        key: cut_change.as_deref().or(cut_refusal.as_deref()).or(row.key),
        key_bytes: cut_change.as_ref().and(row.key).map(|k| k.len() as u64),
        entry_id: row.key.map(|k| entry_id(agent_id, k)),
        category: row.category,
        size: row.size,
        op: text("op"),
        code: text("code"),
        reason: text("reason"),
        quota: number("quota"),
        used: number("used"),
        evictable: number("evictable"),
        needed: number("needed"),
        count: number("count"),
        since: text("since").map(str::to_string),
    };
    let mut out = Vec::with_capacity(256);
    write_json_line(&mut out, &line);
    out.pop(); // the newline
    const KNOWN: [&str; 10] = ["op", "code", "reason", "quota", "used", "evictable", "needed", "count", "since", "size"];
    if let Some(f) = facts {
        for (name, value) in f.iter().filter(|(n, _)| !KNOWN.contains(&n.as_str())) {
            out.pop(); // the closing brace
            out.push(b',');
            let start = out.len();
            let _ = serde_json::to_writer(&mut out, name);
            out.push(b':');
            let _ = serde_json::to_writer(&mut out, value);
            escape_line_separators(&mut out, start);
            out.push(b'}');
        }
    }
    out
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

// ---------------------------------------------------------------------------------------------
// Reading the log back

/// What a reader needs of a line.
#[derive(serde::Deserialize)]
pub(crate) struct Head<'a> {
    #[serde(borrow)]
    pub ts: std::borrow::Cow<'a, str>,
    #[serde(rename = "agentId", borrow)]
    pub agent_id: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    #[allow(dead_code)]
    pub action: std::borrow::Cow<'a, str>,
    pub tx: Option<i64>,
    #[serde(rename = "txLine")]
    pub tx_line: Option<u64>,
}

/// The line's head if it is a whole audit line: a JSON object with an RFC 3339 `ts`, and
/// `agentId` and `action` strings.
pub(crate) fn head(line: &[u8]) -> Option<Head<'_>> {
    let h: Head<'_> = serde_json::from_slice(line).ok()?;
    chrono::DateTime::parse_from_rfc3339(&h.ts).ok()?;
    Some(h)
}

/// The highest transaction number the audit log, rotated files included, names for `agent_id`
/// (R-AUD-6), if any: what a restore must number past. Reads every file, which only a restore
/// does.
pub fn latest_tx(layout: &Layout, agent_id: &str) -> Option<i64> {
    let mut latest = None;
    let files = open_files(&layout.audit_path()).ok()?;
    for_each_line(files, |line| {
        if let Some(h) = head(line).filter(|h| h.agent_id == agent_id) {
            latest = latest.max(h.tx);
        }
    })
    .ok()?;
    latest
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
    fn r_aud_3_a_change_line_shows_at_most_256_bytes_of_json_of_its_key() {
        let gene = format!("v2:{}", "a".repeat(64));
        let cases = [
            ("\u{1}".repeat(1024), true),
            ("é".repeat(512), true),
            ("\"".repeat(1024), true),
            ("\u{2028}".repeat(300), true),
            ("a".repeat(1024), true),
            ("a".repeat(CHANGE_KEY_JSON_BYTES), false),
            ("\u{1}".repeat(CHANGE_KEY_JSON_BYTES / 6), false),
        ];
        for (key, cut) in cases {
            for action in [Action::Create, Action::Update, Action::Delete, Action::Evict, Action::Expire] {
                let mut b = AuditBatch::new("agent", 0).in_transaction(7);
                b.record(action, Actor::Gene(&gene), Subject { key: Some(&key), category: Some(Category::Cache), size: Some(1025) }, None);
                let text = String::from_utf8(b.lines.clone()).unwrap();
                assert!(text.len() < 700, "{} bytes for a key of {}", text.len(), key.len());
                let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
                let shown = v["key"].as_str().unwrap();
                let shown_json = serde_json::to_string(shown).unwrap();
                assert!(shown_json.len() <= CHANGE_KEY_JSON_BYTES + 2 + 12, "{} bytes of key JSON", shown_json.len());
                assert_eq!(v["entryId"], entry_id("agent", &key), "the entry id names the whole key");
                if cut {
                    let kept = shown.strip_suffix('…').unwrap();
                    assert!(key.starts_with(kept) && kept.len() > 30, "{shown:?}");
                    assert_eq!(v["keyBytes"], key.len());
                } else {
                    assert_eq!(shown, key);
                    assert!(v.get("keyBytes").is_none());
                }
                assert_eq!((v["tx"].as_i64(), v["txLine"].as_i64()), (Some(7), Some(1)));
            }
        }
    }

    #[test]
    fn refusal_keys_are_cut_on_a_character_boundary() {
        assert_eq!(shorten_key("short"), "short");
        let k = "a".repeat(REFUSAL_KEY_BYTES);
        assert_eq!(shorten_key(&k), k, "exactly the limit is kept whole");
        // 'é' is 2 bytes: 63 bytes of 'a' then 'é' would cross byte 64, so it is left out.
        let k = format!("{}é{}", "a".repeat(REFUSAL_KEY_BYTES - 1), "b".repeat(10));
        assert_eq!(shorten_key(&k), format!("{}…", "a".repeat(REFUSAL_KEY_BYTES - 1)));
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
