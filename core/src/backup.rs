//! Backing up and restoring one agent's memory as a whole (R-HOST-1b). A backup is a consistent
//! copy made while the agent is in use (SQLite's online backup, one snapshot), a standalone
//! database file that needs no WAL beside it. A restore puts one back as one transaction on the
//! agent's own database, which every process with the agent open sees at its next call, like
//! any commit: never a file copied under an open connection. The agent keeps its quota and data
//! policy; the sequence number never goes back (R-AUD-6); the restore is audited with actor
//! `deployer` (`memory.restore`), written ahead of its commit (R-AUD-2).

use crate::access::{data_policy_violation, unsupported_scope};
use crate::storage::audit::Actor;
use crate::error::{MemoryError, Result};
use crate::storage::files::{create_private_file, Layout};
use crate::model::{check_agent_id, check_domain, entry_id, is_valid_gene_id, MAX_KEY_BYTES, MAX_RETENTION_DAYS, MAX_VALUE_BYTES};
use crate::quota::MAX_QUOTA;
use crate::time::{check_not_future, MAX_MS};
use rusqlite::types::ValueRef;
use crate::storage::files::unique_suffix;
use crate::storage::opening::move_into_place;
use crate::storage::schema::{self, harden_connection, refuse_foreign_schema, schema_of};
use crate::model::DataPolicy;
use crate::storage::opening::build_contents;
use crate::storage::store::{expires_at, read_agent, write_entry_row, AgentStore, IfMissing, StoredEntry, ENTRY_COLUMNS};
use crate::time::CallTime;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// What a backup holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackedUp {
    pub entries: u64,
    /// The entries' sizes (R-ENT-2), summed.
    pub used: u64,
    /// The backup file's size.
    pub bytes: u64,
}

/// What a restore did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Restored {
    /// Entries put back.
    pub entries: u64,
    /// Entries the agent held before, all gone.
    pub replaced: u64,
    /// Entries of the backup that had expired by the agent's rules: left out.
    pub expired: u64,
    /// The bytes the agent holds after it.
    pub used: u64,
}

/// Writes a consistent copy of the agent's memory to `dest`, a file that must not exist yet:
/// under a temporary name in the same folder (0600), then moved into place. An agent whose
/// memory was never created is `MEMORY_NOT_FOUND`.
pub fn backup_agent_memory(layout: &Layout, agent_id: &str, dest: &Path) -> Result<BackedUp> {
    check_agent_id(agent_id)?;
    let store = AgentStore::open(layout, agent_id, IfMissing::Skip)?
        .ok_or_else(|| MemoryError::not_found(format!("agent {agent_id:?} has no memory to back up")))?;
    new_backup_file(dest, |out, fail| {
        store.read_only(|conn| {
            // All pages in one step: one read transaction, one snapshot, never restarted.
            use rusqlite::backup::{Backup, StepResult};
            let backup = Backup::new(conn, out).map_err(|e| fail(&e))?;
            let give_up = std::time::Instant::now() + std::time::Duration::from_secs(30);
            loop {
                match backup.step(-1).map_err(|e| fail(&e))? {
                    StepResult::Done => return Ok(()),
                    StepResult::More => {}
                    // Another connection holds a lock the copy needs: wait as a busy call would.
                    _ if std::time::Instant::now() < give_up => std::thread::sleep(std::time::Duration::from_millis(5)),
                    _ => return Err(fail(&"the database stayed locked for 30 s")),
                }
            }
        })
    })
}

/// A backup of agent `agent_id` made from its rows elsewhere (another binding's): the same
/// standalone file `backup_agent_memory` makes, holding `entries` with their sequence numbers,
/// the agent's limits and `last_seq`, so that `restore_agent_memory` reads it alike.
pub fn write_backup(dest: &Path, agent_id: &str, quota: u64, policy: DataPolicy, last_seq: i64, entries: &[StoredEntry]) -> Result<BackedUp> {
    check_agent_id(agent_id)?;
    new_backup_file(dest, |out, fail| {
        (|| -> Result<()> {
            build_contents(out, agent_id, (quota, policy), last_seq)?;
            let tx = out.unchecked_transaction()?;
            for e in entries {
                write_entry_row(&tx, e, &policy, false)?;
            }
            tx.execute("UPDATE agent SET used_bytes = ?1 WHERE id = 1", [entries.iter().map(|e| e.size as i64).sum::<i64>()])?;
            tx.commit()?;
            Ok(())
        })()
        .map_err(|e| fail(&e.message))
    })
}

/// Makes the backup file `dest`: refused if it exists; else a temporary file in the same folder
/// (0600) that `fill` writes a database into, made standalone (journal mode `DELETE`: no WAL
/// beside it to lose when it is copied), flushed, and moved into place. A failure leaves no file.
fn new_backup_file(dest: &Path, fill: impl FnOnce(&mut Connection, &dyn Fn(&dyn std::fmt::Display) -> MemoryError) -> Result<()>) -> Result<BackedUp> {
    let fail = |what: &dyn std::fmt::Display| MemoryError::storage(format!("cannot write the backup {} ({what}); nothing was written", dest.display()));
    if std::fs::symlink_metadata(dest).is_ok() {
        return Err(MemoryError::invalid(format!("the backup file {} exists already; remove it or choose another name (a backup never replaces a file)", dest.display())));
    }
    let name = dest.file_name().ok_or_else(|| MemoryError::invalid(format!("{:?} names no file", dest.display().to_string())))?;
    let dir = dest.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp: PathBuf = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), unique_suffix()));
    let written = (|| -> Result<BackedUp> {
        drop(create_private_file(&tmp).map_err(|e| fail(&e))?);
        let mut out = Connection::open_with_flags(&tmp, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW)
            .map_err(|e| fail(&e))?;
        fill(&mut out, &fail)?;
        let (entries, used): (i64, i64) = (|| -> rusqlite::Result<(i64, i64)> {
            out.query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()))?;
            out.query_row("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM entries", [], |r| Ok((r.get(0)?, r.get(1)?)))
        })()
        .map_err(|e| fail(&e))?;
        out.close().map_err(|(_, e)| fail(&e))?;
        let file = std::fs::File::open(&tmp).map_err(|e| fail(&e))?;
        file.sync_all().map_err(|e| fail(&e))?;
        let bytes = file.metadata().map_err(|e| fail(&e))?.len();
        move_into_place(&tmp, dest).map_err(|e| fail(&e))?;
        Ok(BackedUp { entries: entries as u64, used: used as u64, bytes })
    })();
    let _ = std::fs::remove_file(&tmp);
    written
}

/// A backup file opened and checked as far as that does not depend on the agent's state: the
/// file, its schema, that it is this agent's, every column as a write stores it.
pub struct CheckedBackup {
    src: Connection,
    /// The backup's own `last_seq`: a restore numbers its change past it.
    pub last_seq: i64,
}

/// Opens `file` as a backup of `agent_id` (`own_db`: the agent's database file, which is no
/// backup of it) and checks it (`CheckedBackup`).
pub fn read_backup(file: &Path, own_db: &Path, agent_id: &str) -> Result<CheckedBackup> {
    check_agent_id(agent_id)?;
    let src = open_backup(file, own_db)?;
    let bad = |what: String| MemoryError::invalid(format!("the backup {} {what}; nothing was restored", file.display()));
    let backup_agent = read_agent(&src).map_err(|e| bad(format!("has no usable agent row ({})", e.message)))?;
    let owner: String = src.query_row("SELECT agent_id FROM agent WHERE id = 1", [], |r| r.get(0)).map_err(|e| bad(e.to_string()))?;
    if owner != agent_id {
        return Err(bad(format!(
            "is of agent {owner:?}, not {agent_id:?}: restore it into {owner:?}, or move entries between agents with export and import"
        )));
    }
    // Every column as a write would store it, before the store is even opened.
    check_agent_row(&src).map_err(&bad)?;
    check_entry_columns(&src, backup_agent.last_seq, backup_agent.used).map_err(&bad)?;
    Ok(CheckedBackup { src, last_seq: backup_agent.last_seq })
}

/// Whether entry `e` of the backup is restored into an agent with `policy` at `now`: refused
/// (the whole restore) if a write would refuse it; `false` if it has expired by the agent's rules.
fn judge_entry(agent_id: &str, file: &Path, policy: &DataPolicy, now: i64, e: &StoredEntry) -> Result<bool> {
    let bad = |what: String| MemoryError::invalid(format!("the backup {} {what}; nothing was restored", file.display()));
    check_entry(agent_id, e).map_err(|what| bad(format!("holds an entry (key {:?}) that {what}", e.entry.key)))?;
    for (column, ms) in [("created_at", e.entry.created_at), ("updated_at", e.entry.updated_at)] {
        check_not_future(ms, now).map_err(|what| bad(format!("holds an entry (key {:?}) whose {column} {what}", e.entry.key)))?;
    }
    if let Some(reason) = unsupported_scope(&e.entry.access_policy).or_else(|| data_policy_violation(policy, &e.entry.access_policy, e.entry.retention_policy.as_ref())) {
        return Err(MemoryError::denied(format!(
            "the backup {} holds an entry (key {:?}) that the agent's data policy refuses: {reason}; nothing was restored",
            file.display(),
            e.entry.key
        )));
    }
    Ok(!expires_at(e.entry.updated_at, e.entry.retention_policy.as_ref(), policy).is_some_and(|t| t <= now))
}

/// The refusal of a restore that the agent's quota cannot hold.
fn over_quota(file: &Path, used: u64, quota: u64) -> MemoryError {
    MemoryError::quota(format!(
        "the backup {} holds {used} bytes, over the agent's quota of {} (a restore evicts nothing); raise the quota first; nothing was restored",
        file.display(),
        crate::quota::describe_quota(quota)
    ))
}

/// What the `memory.restore` audit line says.
pub fn restore_reason(file: &Path, r: &Restored) -> String {
    format!(
        "restored from {} by the deployer: {} entries ({} bytes) replace {}{}",
        file.display(),
        r.entries,
        r.used,
        r.replaced,
        if r.expired > 0 { format!("; {} expired entries of the backup left out", r.expired) } else { String::new() }
    )
}

/// A restore into an agent held elsewhere (another binding), decided before anything changes:
/// the entries put back, in write order, and the report (`replaced` left for the binding to
/// count); refused as `restore_agent_memory` refuses.
pub fn plan_restore(b: &CheckedBackup, file: &Path, agent_id: &str, policy: &DataPolicy, quota: u64, now: i64) -> Result<(Restored, Vec<StoredEntry>)> {
    let mut plan = Restored::default();
    let mut kept = Vec::new();
    for_each_entry(&b.src, file, |e| {
        if judge_entry(agent_id, file, policy, now, e)? {
            plan.entries += 1;
            plan.used += e.size;
            kept.push(e.clone());
        } else {
            plan.expired += 1;
        }
        Ok(())
    })?;
    if plan.used > quota {
        return Err(over_quota(file, plan.used, quota));
    }
    Ok((plan, kept))
}

/// Replaces every entry of the agent with those of the backup `file`, in one transaction:
/// everything is checked first (the file, its schema, its agent, every entry as a write would
/// be, the agent's data policy and quota: a restore evicts nothing), then all entries land, or
/// none. The agent keeps its quota and data policy. Entries expired by its rules are left out.
pub fn restore_agent_memory(layout: &Layout, agent_id: &str, file: &Path, now: impl Into<CallTime>) -> Result<Restored> {
    let backup = read_backup(file, &layout.real()?.db_path(agent_id), agent_id)?;
    let store = AgentStore::open(layout, agent_id, IfMissing::Create)?.ok_or_else(|| MemoryError::storage("memory could not be opened"))?;
    store.write(now, |tx| {
        // Every check before any change: a refusal commits nothing of the restore.
        let policy = tx.agent.policy;
        let mut plan = Restored::default();
        for_each_entry(&backup.src, file, |e| {
            if judge_entry(agent_id, file, &policy, tx.now, e)? {
                plan.entries += 1;
                plan.used += e.size;
            } else {
                plan.expired += 1;
            }
            Ok(())
        })?;
        if plan.used > tx.agent.quota {
            return Err(over_quota(file, plan.used, tx.agent.quota));
        }
        plan.replaced = tx.delete_all_entries()?;
        let now = tx.now;
        for_each_entry(&backup.src, file, |e| {
            if !expires_at(e.entry.updated_at, e.entry.retention_policy.as_ref(), &policy).is_some_and(|t| t <= now) {
                tx.put_entry(e, false)?;
            }
            Ok(())
        })
        .map_err(|e| MemoryError::storage(format!("restoring from {} failed midway ({}); nothing was restored", file.display(), e.message)))?;
        tx.set_used(plan.used);
        // Past every number in use, here and in the backup: lines before it keep their verdict.
        // The line carries this attempt's number (a failed attempt at it before is superseded).
        tx.raise_seq(backup.last_seq);
        tx.next_seq();
        tx.batch.record_restore(Actor::Deployer, &restore_reason(file, &plan), Some(plan.used), None);
        Ok(plan)
    })
}

/// The backup file, opened read-only as it is (`immutable`: no WAL or journal beside it is
/// read, nothing is written), hardened as every connection is, and refused unless it is a
/// memory database of schema version 1 or 2 with nothing planted in it and pages that read.
///
/// The file is read only through SQLite (never a descriptor of ours: it could be a database
/// this process has open, whose locks closing one would drop), and refused if it is the agent's
/// own database, or has a WAL beside it holding changes the file lacks (a copy of a database in
/// use is not a backup; `immutable` would read it without them).
fn open_backup(file: &Path, own_db: &Path) -> Result<Connection> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |what: &dyn std::fmt::Display| MemoryError::invalid(format!("the backup {} {what}; nothing was restored", file.display()));
    let meta = std::fs::metadata(file).map_err(|e| refuse(&format!("cannot be read ({e})")))?;
    if !meta.is_file() {
        return Err(refuse(&"is not a regular file"));
    }
    if std::fs::metadata(own_db).is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino())) {
        return Err(refuse(&"is the agent's own database; give a file made by rotifer agent memory backup"));
    }
    let wal = PathBuf::from(format!("{}-wal", file.display()));
    if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 32) {
        return Err(refuse(&format!(
            "has a WAL beside it ({}) holding changes the file itself may lack: it is a copy of a database in use, not a backup. Make one with rotifer agent memory backup, or checkpoint that copy first (sqlite3 FILE 'PRAGMA wal_checkpoint(TRUNCATE)')",
            wal.display()
        )));
    }
    let real = std::fs::canonicalize(file).map_err(|e| refuse(&e))?;
    let uri = format!("file:{}?immutable=1", uri_path(&real));
    let conn = Connection::open_with_flags(uri, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| refuse(&format!("cannot be opened ({e})")))?;
    harden_connection(&conn).map_err(|e| refuse(&e))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => refuse(&"is not a SQLite database"),
        _ => refuse(&format!("cannot be read ({e})")),
    })?;
    let expected = match version {
        schema::SCHEMA_VERSION => schema_of(schema::SCHEMA),
        1 => schema_of(crate::storage::migrate::SCHEMA_V1),
        v => return Err(refuse(&format!("has schema version {v}, which this version of rotifer-memory cannot restore (it reads 1 and {})", schema::SCHEMA_VERSION))),
    };
    refuse_foreign_schema(&conn, file, &expected).map_err(|e| MemoryError::invalid(format!("{}; nothing was restored", e.message)))?;
    let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(|e| refuse(&format!("is damaged ({e})")))?;
    if check != "ok" {
        return Err(refuse(&format!("is damaged (SQLite's quick_check: {check})")));
    }
    Ok(conn)
}

/// Calls `f` with every entry of the backup, in write order.
fn for_each_entry(src: &Connection, file: &Path, mut f: impl FnMut(&StoredEntry) -> Result<()>) -> Result<()> {
    let damaged = |e: rusqlite::Error| MemoryError::invalid(format!("the backup {} holds an entry that cannot be read ({e}); nothing was restored", file.display()));
    let mut stmt = src.prepare(&format!("SELECT {ENTRY_COLUMNS} FROM entries ORDER BY seq")).map_err(damaged)?;
    let mut rows = stmt.query([]).map_err(damaged)?;
    while let Some(row) = rows.next().map_err(damaged)? {
        f(&StoredEntry::from_row(row).map_err(damaged)?)?;
    }
    Ok(())
}

/// What is wrong with an entry of a backup of `agent_id`, if anything: what a write would refuse,
/// and the facts the store derives (id, size) not matching.
fn check_entry(agent_id: &str, e: &StoredEntry) -> std::result::Result<(), String> {
    let en = &e.entry;
    if en.key.is_empty() || en.key.len() > MAX_KEY_BYTES || en.key.contains('\0') {
        return Err("has a key no write accepts".into());
    }
    if en.value.len() > MAX_VALUE_BYTES {
        return Err(format!("has a value over {MAX_VALUE_BYTES} bytes"));
    }
    if e.size != (en.key.len() + en.value.len()) as u64 {
        return Err(format!("records a size of {} bytes for {} bytes of key and value", e.size, en.key.len() + en.value.len()));
    }
    if en.entry_id != entry_id(agent_id, &en.key) {
        return Err("has an entryId that is not this agent's".into());
    }
    if !is_valid_gene_id(&en.created_by) || !is_valid_gene_id(&en.last_accessed_by) {
        return Err("names a creator or last accessor that is not a v2 id".into());
    }
    if en.updated_at < en.created_at {
        return Err("was updated before it was created".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Every column as a write stores it

/// The highest `last_seq` a backup may carry: 2^52. A database of ours gets there only after
/// 4.5 × 10^15 changes (143 years at a million a second); above it the numbers would soon pass
/// 2^53, where a JS reader of the audit log can no longer tell two transactions apart, and then
/// `i64`, where they would wrap.
pub const MAX_BACKUP_SEQ: i64 = 1 << 52;

/// What a column holds, checked against what the store writes there.
struct Column<'r> {
    name: &'static str,
    value: ValueRef<'r>,
}

impl<'r> Column<'r> {
    /// Column `i` of `row`, named `name` in what is said of it.
    fn of(row: &'r rusqlite::Row<'_>, i: usize, name: &'static str) -> std::result::Result<Column<'r>, String> {
        Ok(Column { name, value: row.get_ref(i).map_err(|e| e.to_string())? })
    }

    fn shown(&self) -> String {
        match self.value {
            ValueRef::Null => "NULL".into(),
            ValueRef::Integer(i) => i.to_string(),
            ValueRef::Real(f) => format!("{f} (a real number)"),
            ValueRef::Text(t) => format!("the text {:?}", String::from_utf8_lossy(&t[..t.len().min(64)])),
            ValueRef::Blob(b) => format!("a blob of {} bytes", b.len()),
        }
    }

    /// An integer from `lo` to `hi`.
    fn int(&self, lo: i64, hi: i64) -> std::result::Result<i64, String> {
        match self.value {
            ValueRef::Integer(i) if (lo..=hi).contains(&i) => Ok(i),
            _ => Err(format!("{} is {}, where a write stores a whole number from {lo} to {hi}", self.name, self.shown())),
        }
    }

    /// NULL, or an integer from `lo` to `hi`.
    fn opt_int(&self, lo: i64, hi: i64) -> std::result::Result<Option<i64>, String> {
        match self.value {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(i) if (lo..=hi).contains(&i) => Ok(Some(i)),
            _ => Err(format!("{} is {}, where a write stores NULL or a whole number from {lo} to {hi}", self.name, self.shown())),
        }
    }

    /// A boolean as the store writes one: 0 or 1.
    fn flag(&self) -> std::result::Result<bool, String> {
        match self.value {
            ValueRef::Integer(0) => Ok(false),
            ValueRef::Integer(1) => Ok(true),
            _ => Err(format!("{} is {}, where a write stores a boolean as 0 or 1", self.name, self.shown())),
        }
    }
}

/// The agent row as a write leaves it: a quota a deployer can set, a data policy one can
/// give, a byte total, and a sequence number within `MAX_BACKUP_SEQ`.
fn check_agent_row(src: &Connection) -> std::result::Result<(), String> {
    const COLUMNS: [&str; 5] = ["quota", "anonymization_supported", "max_retention_days", "used_bytes", "last_seq"];
    let mut stmt = src.prepare(&format!("SELECT {} FROM agent WHERE id = 1", COLUMNS.join(", "))).map_err(|e| format!("has an agent row that cannot be read ({e})"))?;
    let mut rows = stmt.query([]).map_err(|e| format!("has an agent row that cannot be read ({e})"))?;
    let row = rows.next().map_err(|e| e.to_string())?.ok_or("has no agent row")?;
    let col = |i: usize| Column::of(row, i, COLUMNS[i]);
    let in_agent = |what: String| format!("has an agent row whose {what}");
    col(0)?.int(1, MAX_QUOTA as i64).map_err(in_agent)?;
    col(1)?.flag().map_err(in_agent)?;
    col(2)?.opt_int(1, MAX_RETENTION_DAYS).map_err(in_agent)?;
    col(3)?.int(0, i64::MAX).map_err(in_agent)?;
    col(4)?.int(0, MAX_BACKUP_SEQ).map_err(|what| in_agent(format!("{what} (no database of ours numbers its changes that far)")))?;
    Ok(())
}

/// Every entry's columns as a write stores them (those `StoredEntry::from_row` reads leniently:
/// booleans, times, retention days, the domain, sequence numbers), then the facts across rows:
/// sequence numbers distinct and at most the agent's `last_seq`, sizes summing to `used_bytes`.
/// `expires_at` is not read: the restore derives it again.
fn check_entry_columns(src: &Connection, last_seq: i64, used: u64) -> std::result::Result<(), String> {
    const COLUMNS: [&str; 11] =
        ["key", "value", "size", "creator_domain", "created_at", "updated_at", "seq", "ret_set", "ret_days", "ret_auto_delete", "ret_anonymization"];
    let unreadable = |e: rusqlite::Error| format!("holds an entry that cannot be read ({e})");
    let mut stmt = src.prepare(&format!("SELECT {} FROM entries ORDER BY seq", COLUMNS.join(", "))).map_err(unreadable)?;
    let mut rows = stmt.query([]).map_err(unreadable)?;
    let mut previous_seq: Option<i64> = None;
    let mut total: u64 = 0;
    while let Some(row) = rows.next().map_err(unreadable)? {
        let col = |i: usize| Column::of(row, i, COLUMNS[i]);
        let key = match row.get_ref(0).map_err(|e| e.to_string())? {
            ValueRef::Blob(b) => String::from_utf8_lossy(b).into_owned(),
            other => String::from_utf8_lossy(other.as_bytes().unwrap_or(b"?")).into_owned(),
        };
        let at = |what: String| format!("holds an entry (key {key:?}) whose {what}");
        match (col(0)?.value, col(1)?.value) {
            (ValueRef::Blob(_), ValueRef::Blob(_)) => {}
            (ValueRef::Blob(_), _) => return Err(at(format!("value is {}, where a write stores a blob", col(1)?.shown()))),
            _ => return Err(at(format!("key is {}, where a write stores its UTF-8 bytes as a blob", col(0)?.shown()))),
        }
        total = total.saturating_add(col(2)?.int(1, (MAX_KEY_BYTES + MAX_VALUE_BYTES) as i64).map_err(at)? as u64);
        match col(3)?.value {
            ValueRef::Null => {}
            ValueRef::Text(t) if std::str::from_utf8(t).is_ok_and(|d| check_domain(d).is_ok()) => {}
            _ => return Err(at(format!("creator_domain is {}, where a write stores NULL or a domain like \"text.format\"", col(3)?.shown()))),
        }
        let created = col(4)?.int(0, MAX_MS).map_err(|w| at(format!("{w} (a write's time: ms from 1970 to year 9999)")))?;
        let updated = col(5)?.int(0, MAX_MS).map_err(|w| at(format!("{w} (a write's time: ms from 1970 to year 9999)")))?;
        if updated < created {
            return Err(at(format!("updated_at {updated} is before its created_at {created}")));
        }
        let seq = col(6)?.int(1, last_seq).map_err(|w| at(format!("{w} (the backup's last_seq)")))?;
        if previous_seq == Some(seq) {
            return Err(at(format!("seq {seq} is another entry's too, where every write takes a number of its own")));
        }
        previous_seq = Some(seq);
        let set = col(7)?.flag().map_err(at)?;
        let days = col(8)?.opt_int(1, MAX_RETENTION_DAYS).map_err(at)?;
        let auto_delete = col(9)?.flag().map_err(at)?;
        let anonymization = col(10)?.flag().map_err(at)?;
        if !set {
            // No retention policy of its own: a write stores NULL and 0s beside it.
            for (name, given) in [("ret_days", days.is_some()), ("ret_auto_delete", auto_delete), ("ret_anonymization", anonymization)] {
                if given {
                    return Err(at(format!("{name} is set while ret_set is 0 (no retention policy of its own), where a write stores NULL or 0")));
                }
            }
        }
    }
    if total != used {
        return Err(format!("has an agent row whose used_bytes is {used}, where its entries' sizes sum to {total}"));
    }
    Ok(())
}

/// A path as a URI's path: every byte but unreserved ones and `/` percent-encoded.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_escape_what_a_uri_would_read_as_syntax() {
        assert_eq!(uri_path(Path::new("/tmp/a b/x?immutable=0#y%z.db")), "/tmp/a%20b/x%3Fimmutable%3D0%23y%25z.db");
        assert_eq!(uri_path(Path::new("/plain/file-1_2.~db")), "/plain/file-1_2.~db");
    }
}
