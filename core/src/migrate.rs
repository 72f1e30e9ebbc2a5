//! Schema migrations (R-HOST-1): a database of schema version 1 is brought to version 2 when it
//! is opened, in one transaction, so that a crash or an error leaves it a complete version 1.

use crate::error::Result;
use crate::store::{refuse_foreign_schema, schema_of, storage, SchemaObject, ENTRIES_INDEXES, ENTRIES_TABLE};
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::path::Path;
use std::sync::OnceLock;

/// The schema that version 1 of this package created, as it created it (a rowid table with a
/// separate key index, and three full indexes). Frozen: a version-1 file must match it exactly
/// before it is migrated, as a version-2 file must match `SCHEMA`.
pub const SCHEMA_V1: &str = "
CREATE TABLE agent (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  agent_id TEXT NOT NULL,
  quota INTEGER NOT NULL,
  anonymization_supported INTEGER NOT NULL,
  max_retention_days INTEGER,
  used_bytes INTEGER NOT NULL,
  last_seq INTEGER NOT NULL
);
CREATE TABLE entries (
  key BLOB NOT NULL UNIQUE,          -- UTF-8 bytes: BLOB order is byte order, for prefix ranges
  entry_id TEXT NOT NULL,
  category INTEGER NOT NULL,
  value BLOB NOT NULL,
  size INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  creator_domain TEXT,
  last_accessed_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  read_scope INTEGER NOT NULL,
  write_scope INTEGER NOT NULL,
  share_policy INTEGER NOT NULL,
  ret_set INTEGER NOT NULL,          -- 0: retentionPolicy null (follow the agent)
  ret_days INTEGER,
  ret_auto_delete INTEGER NOT NULL,
  ret_anonymization INTEGER NOT NULL,
  expires_at INTEGER                 -- derived: when R-RET-1/2 makes it expire; NULL never
);
CREATE INDEX entries_by_recency ON entries (updated_at, seq);
CREATE INDEX entries_by_category ON entries (category, updated_at, seq);
CREATE INDEX entries_by_expiry ON entries (expires_at);
";

/// The columns of the entries table, the same in versions 1 and 2.
const COLUMNS: &str = "key, entry_id, category, value, size, created_by, creator_domain, last_accessed_by, created_at, \
     updated_at, seq, read_scope, write_scope, share_policy, ret_set, ret_days, ret_auto_delete, ret_anonymization, expires_at";

fn v1_schema() -> &'static [SchemaObject] {
    static V1: OnceLock<Vec<SchemaObject>> = OnceLock::new();
    V1.get_or_init(|| schema_of(SCHEMA_V1))
}

/// Migrates the version-1 database on `conn` to version 2: under `BEGIN IMMEDIATE`, so another
/// process or thread opening it at the same time waits, then finds version 2 and does nothing.
/// The agent row is kept as it is (byte total, sequence); every entry row is copied unchanged.
/// A version-1 file whose schema is not exactly `SCHEMA_V1` is refused, untouched. On any
/// error the transaction rolls back and the file is the version-1 database it was.
/// Answers the schema version the database has now.
pub(crate) fn v1_to_v2(conn: &Connection, path: &Path) -> Result<i64> {
    let failed = |e: rusqlite::Error| {
        storage(path, format!("could not be migrated from schema version 1 to 2 ({e}); it was left at version 1, as it was"))
    };
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate).map_err(failed)?;
    // Re-read inside the lock: another connection may have migrated it since our first look.
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(failed)?;
    if version != 1 {
        return Ok(version); // migrated by another connection first (or changed): the caller checks it
    }
    refuse_foreign_schema(&tx, path, v1_schema())?;
    // The old table is renamed, not the new one: the new table's SQL in `sqlite_master` is then
    // exactly `ENTRIES_TABLE`, which the schema check compares with.
    tx.execute_batch(
        "DROP INDEX entries_by_recency; DROP INDEX entries_by_category; DROP INDEX entries_by_expiry;
         ALTER TABLE entries RENAME TO entries_v1;",
    )
    .map_err(failed)?;
    tx.execute_batch(ENTRIES_TABLE).map_err(failed)?;
    // In key order: each row lands at the end of the key-ordered table.
    tx.execute_batch(&format!("INSERT INTO entries ({COLUMNS}) SELECT {COLUMNS} FROM entries_v1 ORDER BY key;")).map_err(failed)?;
    #[cfg(test)]
    tests::after_copy().map_err(failed)?;
    tx.execute_batch("DROP TABLE entries_v1;").map_err(failed)?;
    tx.execute_batch(ENTRIES_INDEXES).map_err(failed)?;
    tx.execute_batch("PRAGMA user_version = 2;").map_err(failed)?;
    tx.commit().map_err(failed)?;
    Ok(2)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        static FAIL_AFTER_COPY: Cell<bool> = const { Cell::new(false) };
    }

    /// Makes the next migration on this thread fail after it copied the rows.
    pub(crate) fn fail_after_copy() {
        FAIL_AFTER_COPY.with(|f| f.set(true));
    }

    pub(super) fn after_copy() -> rusqlite::Result<()> {
        if FAIL_AFTER_COPY.with(|f| f.replace(false)) {
            return Err(rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR), Some("test: the copy failed".into())));
        }
        Ok(())
    }
}
