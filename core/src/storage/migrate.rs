//! Schema migrations (R-HOST-1): a database of schema version 1 is brought to version 2 when it
//! is opened, in one transaction, so that a crash or an error leaves it a complete version 1.

use crate::error::Result;
use super::schema::{refuse_foreign_schema, schema_of, SchemaObject, ENTRIES_INDEXES};
use crate::error::storage;
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::path::Path;
use std::sync::OnceLock;

/// The schema that version 1 of this package created, as it created it: the tables of version
/// 2, two recency indexes, and an expiry index of every entry. Frozen: a version-1 file must
/// match it exactly before it is migrated, as a version-2 file must match `SCHEMA`.
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

fn v1_schema() -> &'static [SchemaObject] {
    static V1: OnceLock<Vec<SchemaObject>> = OnceLock::new();
    V1.get_or_init(|| schema_of(SCHEMA_V1))
}

/// Migrates the version-1 database on `conn` to version 2: under `BEGIN IMMEDIATE`, so another
/// process or thread opening it at the same time waits, then finds version 2 and does nothing.
/// The tables and their rows stay as they are (agent row, byte total, sequence, every entry);
/// the indexes are rebuilt as `SCHEMA` has them. A version-1 file whose schema is not exactly
/// `SCHEMA_V1` is refused, untouched. On any error the transaction rolls back and the file is
/// the version-1 database it was. Answers the schema version the database has now.
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
    // All three go, and `SCHEMA`'s indexes are built from its own text: the result is exactly
    // what a new database has, which the schema check then compares with.
    tx.execute_batch("DROP INDEX entries_by_recency; DROP INDEX entries_by_category; DROP INDEX entries_by_expiry;").map_err(failed)?;
    #[cfg(test)]
    tests::midway(path).map_err(failed)?;
    tx.execute_batch(ENTRIES_INDEXES).map_err(failed)?;
    tx.execute_batch("PRAGMA user_version = 2;").map_err(failed)?;
    tx.commit().map_err(failed)?;
    Ok(2)
}

#[cfg(test)]
pub(crate) mod tests {
    //! The migration's transaction: a failure in the middle leaves version 1, and connections
    //! that race to migrate migrate once. (What a migrated database holds and how it behaves:
    //! `core/tests/migrate.rs`; a file made by version 1 itself: `__test__/migrate.test.js`.)

    use super::*;
    use crate::storage::files::Layout;
    use crate::storage::store::tests::TempRoot;
    use crate::storage::store::{AgentStore, IfMissing};
    use std::cell::Cell;
    use std::path::PathBuf;
    use std::sync::Mutex;

    thread_local! {
        static FAIL_MIDWAY: Cell<bool> = const { Cell::new(false) };
    }
    /// The databases whose migration got past dropping the old indexes, once per migration.
    static MIGRATING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    /// Runs in the middle of a migration: the old indexes are gone, the new ones not built.
    pub(super) fn midway(path: &Path) -> rusqlite::Result<()> {
        MIGRATING.lock().unwrap().push(path.to_path_buf());
        if FAIL_MIDWAY.with(|f| f.replace(false)) {
            return Err(rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR), Some("test: failed midway".into())));
        }
        Ok(())
    }

    fn migrations(path: &Path) -> usize {
        MIGRATING.lock().unwrap().iter().filter(|p| p.as_path() == path).count()
    }

    /// A version-1 database of agent "a" under `root`, built from `SCHEMA_V1`, with `n` entries.
    fn v1_database(root: &Path, n: i64) -> PathBuf {
        let layout = Layout::at(root).real().unwrap();
        layout.ensure_dirs(true).unwrap();
        let path = layout.db_path("a");
        drop(crate::storage::files::create_private_file(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).unwrap();
        conn.execute_batch(&format!("BEGIN; {SCHEMA_V1} PRAGMA user_version = 1; COMMIT;")).unwrap();
        conn.execute("INSERT INTO agent VALUES (1, 'a', 1000000, 0, NULL, ?1, ?2)", [n * 10, n]).unwrap();
        for i in 0..n {
            conn.execute(
                "INSERT INTO entries (key, entry_id, category, value, size, created_by, creator_domain, last_accessed_by, created_at, \
                 updated_at, seq, read_scope, write_scope, share_policy, ret_set, ret_days, ret_auto_delete, ret_anonymization, expires_at) \
                 VALUES (?1, 'id', ?2, zeroblob(5), 10, 'g', NULL, 'g', ?3, ?3, ?4, 0, 0, 0, 0, NULL, 0, 0, NULL)",
                rusqlite::params![format!("k{i:03}").into_bytes(), i % 4, 1_000 + i, i + 1],
            )
            .unwrap();
        }
        conn.close().unwrap();
        path
    }

    fn rows(path: &Path) -> (i64, Vec<SchemaObject>, Vec<(Vec<u8>, i64, i64)>) {
        let conn = Connection::open(path).unwrap();
        let version = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        let mut stmt = conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").unwrap();
        let schema = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().collect::<rusqlite::Result<_>>().unwrap();
        let mut stmt = conn.prepare("SELECT key, category, seq FROM entries ORDER BY key").unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().collect::<rusqlite::Result<_>>().unwrap();
        (version, schema, rows)
    }

    #[test]
    fn a_migration_that_fails_midway_leaves_the_version_1_database() {
        let dir = TempRoot::new();
        let path = v1_database(&dir.0, 30);
        let before = rows(&path);
        assert_eq!(before.0, 1);
        FAIL_MIDWAY.with(|f| f.set(true));
        let err = AgentStore::open(&Layout::at(&dir.0), "a", IfMissing::Skip).err().expect("the migration failed");
        assert_eq!(err.code, crate::ErrorCode::StorageError);
        assert!(err.message.contains("could not be migrated from schema version 1 to 2") && err.message.contains("left at version 1"), "{}", err.message);
        assert_eq!(migrations(&path), 1, "it failed after dropping the old indexes");
        let after = rows(&path);
        assert_eq!(after, before, "version, schema and every entry as they were");
        assert_eq!(after.1, v1_schema(), "exactly the version-1 schema");
        // Opened again, it migrates.
        let store = AgentStore::open(&Layout::at(&dir.0), "a", IfMissing::Skip).unwrap().unwrap();
        store.close();
        let migrated = rows(&path);
        assert_eq!(migrated.0, 2);
        assert_eq!(migrated.2, before.2);
    }

    #[test]
    fn connections_racing_to_migrate_migrate_once() {
        let dir = TempRoot::new();
        let path = v1_database(&dir.0, 200);
        let before = rows(&path);
        // Each has read version 1 before any of them locks, as racing openers have.
        let barrier = std::sync::Barrier::new(4);
        let versions: Vec<i64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let conn = Connection::open(&path).unwrap();
                        conn.busy_timeout(std::time::Duration::from_secs(30)).unwrap();
                        assert_eq!(conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0)).unwrap(), 1);
                        barrier.wait();
                        v1_to_v2(&conn, &path).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(versions, [2, 2, 2, 2], "each finds version 2 in the end");
        assert_eq!(migrations(&path), 1, "exactly one migrated");
        let after = rows(&path);
        assert_eq!(after.2, before.2, "every entry, once");
        let store = AgentStore::open(&Layout::at(&dir.0), "a", IfMissing::Skip).unwrap().unwrap();
        store.close();
    }

    #[test]
    fn a_version_1_file_with_planted_sql_is_refused_and_left_as_it_is() {
        let dir = TempRoot::new();
        let path = v1_database(&dir.0, 3);
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TRIGGER t AFTER INSERT ON entries BEGIN DELETE FROM entries; END;").unwrap();
        conn.close().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let err = AgentStore::open(&Layout::at(&dir.0), "a", IfMissing::Skip).err().expect("refused");
        assert!(err.message.contains("holds a trigger \"t\""), "{}", err.message);
        assert_eq!(migrations(&path), 0);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "byte for byte as it was");
    }
}
