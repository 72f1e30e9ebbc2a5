//! The rows as the store reads and writes them: an entry with its derived facts, the agent row,
//! and the statements every path shares (R-ENT, R-RET-1/2, R-QUO-1).

use crate::error::{MemoryError, Result};
use crate::model::{AccessPolicy, Category, DataPolicy, Entry, RetentionPolicy, Scope, SharePolicy};
use crate::time::MS_PER_DAY;
use rusqlite::{Connection, OptionalExtension};

/// The columns `StoredEntry::from_row` reads, in its order.
macro_rules! entry_columns {
    () => {
        "key, entry_id, category, value, size, created_by, creator_domain, last_accessed_by, \
         created_at, updated_at, seq, read_scope, write_scope, share_policy, ret_set, ret_days, ret_auto_delete, ret_anonymization"
    };
}
pub const ENTRY_COLUMNS: &str = entry_columns!();

pub(crate) const LOAD_SQL: &str = concat!("SELECT ", entry_columns!(), " FROM entries WHERE key = ?1");
pub(crate) const LOAD_BY_ROWID_SQL: &str = concat!("SELECT ", entry_columns!(), " FROM entries WHERE rowid = ?1");
// `IS NOT NULL` lets the partial expiry index answer it (without it, SQLite reads every row).
pub(crate) const NEXT_EXPIRY_SQL: &str = "SELECT MIN(expires_at) FROM entries WHERE expires_at IS NOT NULL";
pub(crate) const EXPIRED_SQL: &str = "SELECT key, category, size FROM entries WHERE expires_at <= ?1 ORDER BY expires_at, seq";
pub(crate) const DELETE_EXPIRED_SQL: &str = "DELETE FROM entries WHERE expires_at <= ?1";
// The latest `updated_at`: one seek to the end of each category's run of `entries_by_category`.
pub(crate) const LATEST_UPDATE_SQL: &str = "SELECT MAX(t) FROM (SELECT MAX(updated_at) AS t FROM entries WHERE category = 0 \
     UNION ALL SELECT MAX(updated_at) FROM entries WHERE category = 1 \
     UNION ALL SELECT MAX(updated_at) FROM entries WHERE category = 2 \
     UNION ALL SELECT MAX(updated_at) FROM entries WHERE category = 3)";

/// The highest sequence number (R-AUD-6) an agent takes: 2^53 - 1, the last integer a JS reader
/// of the audit log's `tx` reads exactly. A write that would pass it is refused.
pub const MAX_SEQ: i64 = (1 << 53) - 1;

/// An entry with the facts only the store needs.
#[derive(Debug, Clone)]
pub struct StoredEntry {
    pub entry: Entry,
    pub size: u64,
    pub seq: i64,
    pub creator_domain: Option<String>,
}

thread_local! {
    /// Bytes of entries loaded on this thread since the last `take_loaded_bytes`: what a read or
    /// query made the store do, whatever it answered (a category mismatch, a denial, a row skipped
    /// as unreadable, a query refused as too large).
    static LOADED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts `units` of work the store did for a call beyond the entries it loaded (a query's
/// statement steps: the rows it walked and sorted), as loaded bytes are counted.
pub fn note_work(units: u64) {
    LOADED.with(|l| l.set(l.get().saturating_add(units)));
}

/// The entry bytes loaded on this thread since the last call, and starts counting again.
pub fn take_loaded_bytes() -> u64 {
    LOADED.with(|l| l.replace(0))
}

impl StoredEntry {
    pub fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredEntry> {
        if let Ok(size) = row.get::<_, i64>(4) {
            LOADED.with(|l| l.set(l.get().saturating_add(size.max(0) as u64)));
        }
        let bad = |what: &str| rusqlite::Error::InvalidColumnName(format!("corrupt entry: {what}"));
        let key: Vec<u8> = row.get(0)?;
        let key = String::from_utf8(key).map_err(|_| bad("key"))?;
        let retention = if row.get::<_, i64>(14)? != 0 {
            Some(RetentionPolicy {
                max_retention_days: row.get(15)?,
                auto_delete_on_termination: row.get(16)?,
                anonymization_supported: row.get(17)?,
            })
        } else {
            None
        };
        Ok(StoredEntry {
            entry: Entry {
                key,
                entry_id: row.get(1)?,
                category: Category::from_i64(row.get(2)?).ok_or_else(|| bad("category"))?,
                value: row.get(3)?,
                created_by: row.get(5)?,
                last_accessed_by: row.get(7)?,
                created_at: row.get(8)?,
                updated_at: row.get(9)?,
                access_policy: AccessPolicy {
                    read_scope: Scope::from_i64(row.get(11)?).ok_or_else(|| bad("readScope"))?,
                    write_scope: Scope::from_i64(row.get(12)?).ok_or_else(|| bad("writeScope"))?,
                    share_policy: SharePolicy::from_i64(row.get(13)?).ok_or_else(|| bad("sharePolicy"))?,
                },
                retention_policy: retention,
            },
            size: row.get::<_, i64>(4)? as u64,
            seq: row.get(10)?,
            creator_domain: row.get(6)?,
        })
    }

    pub fn owner(&self) -> crate::access::Owner<'_> {
        crate::access::Owner { created_by: &self.entry.created_by, creator_domain: self.creator_domain.as_deref() }
    }
}

/// The agent row: quota, data policy and the running totals.
#[derive(Debug, Clone, Copy)]
pub struct AgentRow {
    pub quota: u64,
    pub policy: DataPolicy,
    pub used: u64,
    pub last_seq: i64,
}

/// When an entry expires (R-RET-1, R-RET-2), or `None` for never.
pub fn expires_at(updated_at: i64, retention: Option<&RetentionPolicy>, policy: &DataPolicy) -> Option<i64> {
    let days = match retention {
        Some(r) => r.max_retention_days,
        None => policy.max_retention_days,
    };
    days.map(|d| updated_at.saturating_add(d.saturating_mul(MS_PER_DAY)))
}

pub fn read_agent(conn: &Connection) -> Result<AgentRow> {
    conn.prepare_cached("SELECT quota, anonymization_supported, max_retention_days, used_bytes, last_seq FROM agent WHERE id = 1")?
        .query_row([], |r| {
            Ok(AgentRow {
                quota: r.get::<_, i64>(0)? as u64,
                policy: DataPolicy { anonymization_supported: r.get(1)?, max_retention_days: r.get(2)? },
                used: r.get::<_, i64>(3)? as u64,
                last_seq: r.get(4)?,
            })
        })
        .optional()?
        .ok_or_else(|| MemoryError::storage("the memory database has no agent row: it is damaged; restore it from a backup"))
}

/// SQLite's data version of the main database: it changes with every commit, of this
/// connection or any other, as seen by the last transaction (`SQLITE_FCNTL_DATA_VERSION`).
pub(crate) fn data_version(conn: &Connection) -> Result<u32> {
    let mut version: u32 = 0;
    let rc = unsafe {
        rusqlite::ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_DATA_VERSION,
            (&mut version as *mut u32).cast(),
        )
    };
    if rc != rusqlite::ffi::SQLITE_OK {
        return Err(MemoryError::storage(format!("cannot read the database's data version (SQLite error {rc})")));
    }
    Ok(version)
}

/// The earliest expiry in the store, if any entry can expire.
pub(crate) fn next_expiry(conn: &Connection) -> Result<Option<i64>> {
    Ok(conn.prepare_cached(NEXT_EXPIRY_SQL)?.query_row([], |r| r.get(0))?)
}

pub fn load_entry(conn: &Connection, key: &str) -> Result<Option<StoredEntry>> {
    let mut stmt = conn.prepare_cached(LOAD_SQL)?;
    Ok(stmt.query_row([key.as_bytes()], StoredEntry::from_row).optional()?)
}

