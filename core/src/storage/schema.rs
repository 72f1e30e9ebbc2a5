//! The schema this package creates (version 2) and what it refuses in a database it opens: another
//! version, planted SQL (R-HOST-1). Every connection is hardened before its first statement.

use crate::error::{storage, Result};
use rusqlite::Connection;
use std::path::Path;
use std::sync::OnceLock;

/// The schema version this package creates and reads; version 1 is migrated on open (`migrate`).
pub const SCHEMA_VERSION: i64 = 2;
macro_rules! entries_indexes {
    () => {
        "
CREATE INDEX entries_by_category ON entries (category, updated_at, seq);
CREATE INDEX entries_by_expiry ON entries (expires_at) WHERE expires_at IS NOT NULL;
"
    };
}

// The tables of version 1: entries in a rowid table with its key index. A `WITHOUT ROWID` table
// keyed by `key` would save the key index, but it keeps whole rows in its B-tree cells, so every
// key comparison of a lookup reads a row that spills to overflow pages whole (rows over ~1 KB: a
// read of a 2 KB value cost twice as long, of a 100 KB value 3.5 times). Recency order over all
// categories is served by merging the per-category runs of `entries_by_category` (see
// `memory::run_query`), so an update touches one recency index, not two; entries that never
// expire are not in the expiry index at all.
pub(crate) const SCHEMA: &str = concat!(
    "
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
);",
    entries_indexes!()
);

/// The indexes of the entries table: what a migration from version 1 builds.
pub(crate) const ENTRIES_INDEXES: &str = entries_indexes!();

/// What every connection gets before its first statement: SQL stored in the database (a
/// planted trigger, view or default) may not call functions with side effects, and the schema
/// cannot be edited by writing to `sqlite_master` (SQLite's defensive mode).
pub(crate) fn harden_connection(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::config::DbConfig;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.execute_batch("PRAGMA trusted_schema = OFF")
}

/// The schema this package creates, as `sqlite_master` holds it (type, name, table, SQL), read
/// from a database built from `SCHEMA` itself: a schema change needs no second list.
pub(crate) fn expected_schema() -> &'static [SchemaObject] {
    static EXPECTED: OnceLock<Vec<SchemaObject>> = OnceLock::new();
    EXPECTED.get_or_init(|| schema_of(SCHEMA))
}

/// What `sqlite_master` holds for a database built from `sql`.
pub(crate) fn schema_of(sql: &str) -> Vec<SchemaObject> {
    let conn = Connection::open_in_memory().expect("an in-memory database opens");
    conn.execute_batch(sql).expect("a schema of this package is valid SQL");
    schema_objects(&conn).expect("sqlite_master of an in-memory database reads")
}

pub(crate) type SchemaObject = (String, String, String, Option<String>);

pub(crate) fn schema_objects(conn: &Connection) -> rusqlite::Result<Vec<SchemaObject>> {
    let mut stmt = conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    rows.collect()
}

/// Refuses a database whose schema is not exactly `expected` (what this package creates, or
/// created in the version the file says it is): a trigger, view, table or index added by anyone
/// who could edit the file (or carried in by a restored backup) would run, or be read, inside
/// this process.
pub(crate) fn refuse_foreign_schema(conn: &Connection, path: &Path, expected: &[SchemaObject]) -> Result<()> {
    let found = schema_objects(conn).map_err(|e| storage(path, format!("its schema cannot be read ({e}); the file was left as it is")))?;
    if let Some((kind, name, table, _)) = found.iter().find(|o| !expected.contains(o)) {
        return Err(storage(
            path,
            format!(
                "holds a {kind} {name:?} (on {table:?}) that rotifer-memory did not create, or one it did create but changed; such SQL would run inside this process. The file was left as it is: restore the database from a backup, or remove the {kind} with the sqlite3 shell if you know where it came from"
            ),
        ));
    }
    if let Some((kind, name, _, _)) = expected.iter().find(|o| !found.contains(o)) {
        return Err(storage(path, format!("lacks the {kind} {name:?} that rotifer-memory creates; it is damaged or not a memory database. The file was left as it is: restore it from a backup")));
    }
    Ok(())
}

/// Refuses a database of any schema version but `SCHEMA_VERSION`, saying what to do about it.
pub(crate) fn check_version(version: i64, path: &Path) -> Result<()> {
    match version {
        SCHEMA_VERSION => Ok(()),
        v if v > SCHEMA_VERSION => Err(storage(
            path,
            format!(
                "has schema version {v}, written by a newer rotifer-memory; this version of the package reads schema version {SCHEMA_VERSION} (and migrates version 1). The file was left as it is: upgrade @rotifer/playground to open it"
            ),
        )),
        v => Err(storage(
            path,
            format!("has schema version {v}, which no rotifer-memory wrote (it reads version {SCHEMA_VERSION} and migrates version 1); it is damaged or not a memory database. The file was left as it is"),
        )),
    }
}

