//! The audit log as a whole (R-AUD-6, R-AUD-7): its rotation settings in `rotifer.json`, its
//! files oldest first, and whether each change line it holds committed.
//!
//! The rule (README "Audit and telemetry", which any reader of the files can apply by itself):
//! a change line of agent A with `"tx": S` committed iff S <= A's `last_seq` now AND no later
//! attempt of A at S begins after it (a line of A with `"tx": S, "txLine": 1`). Attempts at S
//! are serialised under A's write lock and each is one `write` of contiguous lines, its first
//! change line `txLine` 1; a failed attempt leaves `last_seq` below S, so the next one reuses
//! S. Lines without `tx` (refusals, lines of versions before R-AUD-6) count as committed. An
//! agent whose database does not exist is judged by its lines alone: the last attempt at each
//! S counts as committed.

use crate::error::{MemoryError, Result};
use crate::layout::{lock_path, rotated_path, Layout, LogLock, Rotation};
use crate::storage::store::{read_agent, AgentStore, IfMissing};
use rusqlite::{Transaction, TransactionBehavior};
use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// R-AUD-7 defaults: `audit.jsonl` rotates at 64 MB, and 8 rotated files are kept (at most
/// 9 × 64 MB on disk).
pub const DEFAULT_MAX_SIZE: u64 = 64 * 1024 * 1024;
pub const DEFAULT_KEEP: u32 = 8;
/// Bounds of the settings: a smaller log rotates at every append, more files are not a bound.
pub const MIN_MAX_SIZE: u64 = 1024;
pub const MAX_KEEP: u32 = 1000;

pub const DEFAULT_ROTATION: Rotation = Rotation { max_size: DEFAULT_MAX_SIZE, keep: DEFAULT_KEEP };

// ---------------------------------------------------------------------------------------------
// Settings

/// The rotation of the logs of `layout`'s root: `"audit": { "maxSize": "64MB", "keep": 8 }` in
/// its `rotifer.json`, each field optional. No `rotifer.json`, or one that is not JSON (which the
/// CLI reports itself), gives the defaults; a bad `audit` field is an error naming it.
///
/// Looked at again (one `stat`) at most once a second, and read again only when it changed: a
/// change to the settings applies within a second.
pub fn rotation(layout: &Layout) -> Result<Rotation> {
    type Stamp = (u64, u64, i64, i64, u64);
    type Cache = Mutex<HashMap<PathBuf, (Stamp, Rotation, std::time::Instant)>>;
    const LOOK_AGAIN: std::time::Duration = std::time::Duration::from_secs(1);
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let file = layout.root.join("rotifer.json");
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let lock = || cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r, looked)) = lock().get(&file) {
        if looked.elapsed() < LOOK_AGAIN {
            return Ok(*r);
        }
    }
    let meta = fs::metadata(&file).ok();
    let stamp = meta.map(|m| (m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.len()));
    if let Some(entry) = lock().get_mut(&file) {
        if Some(entry.0) == stamp {
            entry.2 = std::time::Instant::now();
            return Ok(entry.1);
        }
    }
    let r = match stamp {
        Some(_) => parse_rotation(&file, &fs::read(&file).unwrap_or_default())?,
        None => DEFAULT_ROTATION,
    };
    let mut cache = lock();
    if cache.len() > 64 {
        cache.clear(); // test memories each have a root of their own
    }
    cache.insert(file, (stamp.unwrap_or_default(), r, std::time::Instant::now()));
    Ok(r)
}

/// The `audit` field of the `rotifer.json` at `file`, whose bytes are `text`.
pub fn parse_rotation(file: &Path, text: &[u8]) -> Result<Rotation> {
    let Ok(serde_json::Value::Object(project)) = serde_json::from_slice::<serde_json::Value>(text) else {
        return Ok(DEFAULT_ROTATION);
    };
    let bad = |field: &str, why: String| {
        MemoryError::storage(format!("{} field \"audit{field}\" {why}; the audit log cannot be written until it is fixed", file.display()))
    };
    let audit = match project.get("audit") {
        None | Some(serde_json::Value::Null) => return Ok(DEFAULT_ROTATION),
        Some(serde_json::Value::Object(a)) => a,
        Some(_) => return Err(bad("", "must be an object such as { \"maxSize\": \"64MB\", \"keep\": 8 }".into())),
    };
    let mut r = DEFAULT_ROTATION;
    for (name, value) in audit {
        match (name.as_str(), value) {
            ("maxSize", serde_json::Value::String(t)) => {
                r.max_size = crate::quota::parse_size(t).map_err(|why| bad(".maxSize", why))?;
            }
            ("maxSize", serde_json::Value::Number(n)) if n.as_u64().is_some() => r.max_size = n.as_u64().unwrap_or(0),
            ("maxSize", v) => return Err(bad(".maxSize", format!("is {v}: give a size such as \"64MB\" or \"512KB\" (1 KB = 1024 bytes), or a number of bytes"))),
            ("keep", v) => match v.as_u64() {
                Some(k) if (1..=MAX_KEEP as u64).contains(&k) => r.keep = k as u32,
                _ => return Err(bad(".keep", format!("is {v}: give how many rotated files to keep, a whole number from 1 to {MAX_KEEP} (default {DEFAULT_KEEP})"))),
            },
            (other, _) => return Err(bad(&format!(".{other}"), "is not a setting: the audit settings are \"maxSize\" and \"keep\"".into())),
        }
    }
    if r.max_size < MIN_MAX_SIZE {
        return Err(bad(".maxSize", format!("is {} bytes, below the least, 1KB", r.max_size)));
    }
    Ok(r)
}

// ---------------------------------------------------------------------------------------------
// Reading every file

/// The log files of `path` (`audit.jsonl`) open, oldest first, each with the size it had: taken
/// under the log's lock shared, so no rotation runs meanwhile, and no line is lost to one that
/// runs while they are read (a renamed or dropped file stays readable through its descriptor).
/// Rotated files are never written again; the log itself is read only up to its size then.
fn open_files(path: &Path) -> Result<Vec<(PathBuf, File, u64)>> {
    let lock = if fs::symlink_metadata(lock_path(path)).is_ok() { LogLock::open(path).ok() } else { None };
    let _shared = lock.as_ref().and_then(|l| l.hold(libc::LOCK_SH).ok());
    let mut numbers: Vec<u32> = Vec::new();
    let dir = path.parent().unwrap_or(Path::new("."));
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_prefix(&format!("{stem}.")).and_then(|r| r.strip_suffix(".jsonl")).and_then(|n| n.parse::<u32>().ok());
            if let Some(n) = n.filter(|n| *n >= 1 && rotated_path(path, *n).file_name() == Some(e.file_name().as_os_str())) {
                numbers.push(n);
            }
        }
    }
    numbers.sort_unstable_by(|a, b| b.cmp(a));
    numbers.push(0);
    let mut files = Vec::new();
    for n in numbers {
        let p = rotated_path(path, n);
        match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC).open(&p) {
            Ok(f) => {
                let len = f.metadata().map_err(|e| unreadable(&p, e))?.len();
                files.push((p, f, len));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(unreadable(&p, e)),
        }
    }
    Ok(files)
}

fn unreadable(path: &Path, e: impl std::fmt::Display) -> MemoryError {
    MemoryError::storage(format!("cannot read the audit log {} ({e}); make it a readable regular file", path.display()))
}

/// Calls `each` with every line (without its newline) of `files`, in order.
fn for_each_line(files: Vec<(PathBuf, File, u64)>, mut each: impl FnMut(&[u8])) -> Result<()> {
    for (path, file, len) in files {
        let mut reader = BufReader::with_capacity(1 << 16, file.take(len));
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).map_err(|e| unreadable(&path, e))? == 0 {
                break;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            each(&line);
        }
    }
    Ok(())
}

/// What a reader needs of a line.
#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    ts: std::borrow::Cow<'a, str>,
    #[serde(rename = "agentId", borrow)]
    agent_id: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    #[allow(dead_code)]
    action: std::borrow::Cow<'a, str>,
    tx: Option<i64>,
    #[serde(rename = "txLine")]
    tx_line: Option<u64>,
}

/// The line's head if it is a whole audit line: a JSON object with an RFC 3339 `ts`, and
/// `agentId` and `action` strings.
fn head(line: &[u8]) -> Option<Head<'_>> {
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

// ---------------------------------------------------------------------------------------------
// The commit judgement (R-AUD-6)

/// What a line says of its transaction: `tx`, and `txLine` (1 for an attempt's first change line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxMark {
    pub tx: Option<i64>,
    pub tx_line: Option<u64>,
}

/// Whether each of one agent's lines (in log order) committed, given its `last_seq` (`None`: no
/// database). See the module's doc for the rule. Lines with a `tx` but no `txLine` (written by the
/// version that added `tx`) make one attempt of each run of lines with the same `tx`.
pub fn judge(marks: &[TxMark], last_seq: Option<i64>) -> Vec<bool> {
    let starts: Vec<bool> = marks
        .iter()
        .enumerate()
        .map(|(i, m)| match (m.tx, m.tx_line) {
            (None, _) => false,
            (Some(_), Some(n)) => n == 1,
            (Some(tx), None) => i == 0 || marks[i - 1] != TxMark { tx: Some(tx), tx_line: None },
        })
        .collect();
    let mut retried: HashSet<i64> = HashSet::new();
    let mut committed = vec![true; marks.len()];
    for i in (0..marks.len()).rev() {
        if let Some(s) = marks[i].tx {
            committed[i] = !retried.contains(&s) && last_seq.is_none_or(|l| s <= l);
            if starts[i] {
                retried.insert(s);
            }
        }
    }
    committed
}

/// One agent's audit lines, judged.
#[derive(Debug)]
pub struct AgentLog {
    /// Each line as written, with `"committed": true|false` added as its last field.
    pub lines: Vec<String>,
    /// How many lines of the files (any agent's) are not whole audit lines.
    pub skipped: u64,
    /// The agent's `last_seq`, `None` if it has no database.
    pub last_seq: Option<i64>,
}

/// The lines of `agent_id` in every audit file of `layout`, oldest first, each marked committed
/// or not (R-AUD-6, R-AUD-7). The agent's `last_seq` is read under its write lock, with the files
/// opened (and their sizes taken) before the lock is let go: every attempt whose lines are read
/// had then committed or failed for good, so the judgement is exact for the lines read.
pub fn read_agent_log(layout: &Layout, agent_id: &str) -> Result<AgentLog> {
    crate::model::check_agent_id(agent_id)?;
    let path = layout.audit_path();
    let (last_seq, files) = match AgentStore::open(layout, agent_id, IfMissing::Skip)? {
        Some(store) => store.read_only(|conn| {
            // The write lock, only to wait for an attempt in progress; nothing is written.
            let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
            let agent = read_agent(&tx)?;
            let files = open_files(&path)?;
            drop(tx);
            Ok((Some(agent.last_seq), files))
        })?,
        None => (None, open_files(&path)?),
    };
    let mut skipped = 0;
    let mut lines = Vec::new();
    let mut marks = Vec::new();
    for_each_line(files, |line| {
        let trimmed = line.trim_ascii_end();
        if trimmed.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match head(trimmed) {
            None => skipped += 1,
            Some(h) if h.agent_id == agent_id => {
                marks.push(TxMark { tx: h.tx, tx_line: h.tx_line });
                lines.push(String::from_utf8_lossy(trimmed).into_owned());
            }
            Some(_) => {}
        }
    })?;
    for (line, committed) in lines.iter_mut().zip(judge(&marks, last_seq)) {
        // A whole audit line is a JSON object: it ends with `}`.
        line.truncate(line.trim_end().len() - 1);
        line.push_str(if committed { ",\"committed\":true}" } else { ",\"committed\":false}" });
    }
    Ok(AgentLog { lines, skipped, last_seq })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(tx: Option<i64>, tx_line: Option<u64>) -> TxMark {
        TxMark { tx, tx_line }
    }

    #[test]
    fn r_aud_6_the_last_attempt_at_a_tx_is_the_one_that_may_have_committed() {
        let marks = [
            m(Some(1), Some(1)),
            m(Some(2), Some(1)), // attempt at 2 that failed (commit refused: disk full)
            m(Some(2), Some(2)),
            m(None, None), // a refusal
            m(Some(2), Some(1)), // the retry at 2, which committed
            m(Some(2), Some(2)),
            m(Some(3), Some(1)), // killed before its commit
        ];
        assert_eq!(judge(&marks, Some(2)), [true, false, false, true, true, true, false]);
        // No database: the lines alone, the last attempt at each tx counts.
        assert_eq!(judge(&marks, None), [true, false, false, true, true, true, true]);
    }

    #[test]
    fn r_aud_6_lines_without_tx_line_make_one_attempt_per_run() {
        let marks = [m(Some(1), None), m(Some(1), None), m(Some(2), None), m(Some(2), None)];
        assert_eq!(judge(&marks, Some(1)), [true, true, false, false]);
    }

    #[test]
    fn r_aud_7_settings_are_checked_and_name_the_file_and_field() {
        let f = Path::new("/p/rotifer.json");
        assert_eq!(parse_rotation(f, b"{}").unwrap(), DEFAULT_ROTATION);
        assert_eq!(parse_rotation(f, b"not json").unwrap(), DEFAULT_ROTATION);
        assert_eq!(parse_rotation(f, br#"{"audit":{"maxSize":"2KB","keep":3}}"#).unwrap(), Rotation { max_size: 2048, keep: 3 });
        assert_eq!(parse_rotation(f, br#"{"audit":{"maxSize":4096}}"#).unwrap(), Rotation { max_size: 4096, keep: DEFAULT_KEEP });
        for (text, field) in [
            (r#"{"audit":{"maxSize":"64 parsecs"}}"#, "audit.maxSize"),
            (r#"{"audit":{"maxSize":"12"}}"#, "audit.maxSize"),
            (r#"{"audit":{"maxSize":100}}"#, "audit.maxSize"),
            (r#"{"audit":{"keep":0}}"#, "audit.keep"),
            (r#"{"audit":{"keep":2.5}}"#, "audit.keep"),
            (r#"{"audit":{"max_size":"1MB"}}"#, "audit.max_size"),
            (r#"{"audit":"64MB"}"#, "audit"),
        ] {
            let e = parse_rotation(f, text.as_bytes()).unwrap_err();
            assert!(e.message.contains("/p/rotifer.json") && e.message.contains(&format!("\"{field}\"")), "{text}: {}", e.message);
        }
    }
}
