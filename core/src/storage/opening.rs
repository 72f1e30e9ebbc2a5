//! Opening an agent's database (R-HOST-1): a new one built whole under a temporary name and moved
//! into place, an existing one checked before SQLite reads it, every connection configured.
//!
//! - WAL, `synchronous=NORMAL`, a `busy_timeout`, and no automatic checkpoint (every checkpoint is
//!   the store's, bracketed by the lineage stamp).
//! - A database file that exists is always a complete one: an empty or damaged file is reported,
//!   never rebuilt.

use super::files::unique_suffix;
use super::integrity::DbFile;
use super::lineage::Lineage;
use super::rows::read_agent;
use super::schema::{check_version, expected_schema, harden_connection, refuse_foreign_schema, SCHEMA, SCHEMA_VERSION};
use crate::error::{storage, MemoryError, Result};
use crate::storage::files::create_private_file;
use crate::model::DataPolicy;
use rusqlite::{params, Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn configure_connection(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Every checkpoint is this package's, bracketed by the lineage stamp (`checkpoint`).
    conn.execute_batch("PRAGMA wal_autocheckpoint = 0")?;
    conn.set_prepared_statement_cache_capacity(64);
    // 16 MB of page cache, as better-sqlite3 sets: SQLite's default 2 MB misses on a few
    // thousand entries already.
    conn.execute_batch("PRAGMA cache_size = -16000")?;
    Ok(())
}

/// Process-wide SQLite settings, made once before the first connection: memory statistics off,
/// since they take a global mutex on every allocation and nothing here reads them.
pub(crate) fn configure_sqlite() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| unsafe {
        // Fails harmlessly (SQLITE_MISUSE) if SQLite was already initialised by someone else.
        rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::os::raw::c_int);
    });
}

pub(crate) fn sqlite_flags() -> OpenFlags {
    OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW
}

/// Makes sure a complete database file is at `path` (building one if there is none) and opens
/// the descriptor of it that the store keeps: anything that is not a database is refused
/// through that descriptor, before SQLite could read a leftover WAL over it. No other
/// descriptor of the file is opened (see `Slot`).
/// With `limits` `None` (the deployer's reads), a missing database is `Ok(None)`, never built.
pub(crate) fn open_database_file(path: &Path, agent_id: &str, limits: Option<(u64, DataPolicy)>) -> Result<Option<DbFile>> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => return Err(storage(path, "is a symlink; memory databases are never opened through links")),
        Ok(m) if !m.is_file() => return Err(storage(path, "is not a regular file")),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match limits {
            Some(limits) => build_new_database(path, agent_id, limits)?,
            None => return Ok(None),
        },
        Err(e) => return Err(storage(path, e)),
    }
    let file = DbFile::open(path)?;
    file.check_database()?;
    Ok(Some(file))
}

/// Opens the agent's database, which `open_database_file` made sure is there.
pub(crate) fn open_connection(path: &Path) -> Result<Connection> {
    configure_sqlite();
    let conn = Connection::open_with_flags(path, sqlite_flags()).map_err(|e| storage(path, e))?;
    if let Err(e) = check_connection(&conn, path) {
        // A refused database is left as it is: closing must not checkpoint a WAL into it.
        let _ = conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
        return Err(e);
    }
    Ok(conn)
}

/// Hardens and configures a new connection, and refuses a database this package cannot use
/// (another schema version, planted SQL, no agent row).
pub(crate) fn check_connection(conn: &Connection, path: &Path) -> Result<()> {
    harden_connection(conn).map_err(|e| storage(path, e))?;
    // The file is named once: `storage` adds the path, so SQLite's own prefix goes.
    let unprefixed = |e: MemoryError| storage(path, e.message.strip_prefix(crate::error::SQLITE_FAILED).unwrap_or(&e.message));
    configure_connection(conn).map_err(unprefixed)?;
    let checked = (|| -> rusqlite::Result<(i64, String)> {
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        conn.execute_batch("PRAGMA synchronous = NORMAL")?;
        Ok((version, mode))
    })();
    let (version, mode) = checked.map_err(|e| storage(path, format!("{e}; the file was left as it is")))?;
    let version = if version == 1 { crate::storage::migrate::v1_to_v2(conn, path)? } else { version };
    check_version(version, path)?;
    refuse_foreign_schema(conn, path, expected_schema())?;
    if !mode.eq_ignore_ascii_case("wal") {
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)).map_err(|e| storage(path, e))?;
    }
    read_agent(conn).map_err(unprefixed)?;
    Ok(())
}

/// The statements that make a new database's contents: the schema, its version, the agent row.
pub(crate) fn build_contents(conn: &Connection, agent_id: &str, (quota, policy): (u64, DataPolicy), last_seq: i64) -> rusqlite::Result<()> {
    conn.execute_batch(&format!("BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"))?;
    conn.execute(
        "INSERT INTO agent (id, agent_id, quota, anonymization_supported, max_retention_days, used_bytes, last_seq) VALUES (1, ?1, ?2, ?3, ?4, 0, ?5)",
        params![agent_id, quota as i64, policy.anonymization_supported, policy.max_retention_days, last_seq],
    )?;
    Ok(())
}

/// The bytes of a new database, as `build_new_database` makes one (the same statements, no
/// transaction numbered yet), built in memory and marked for WAL (file format 2, as a database
/// built in WAL mode is): written to a new file, it opens as one. For test memories, which are
/// made by the thousand.
pub(crate) fn database_image(agent_id: &str, limits: (u64, DataPolicy)) -> Result<Vec<u8>> {
    let failed = |e: rusqlite::Error| MemoryError::storage(format!("cannot build a new memory database: {e}"));
    let conn = Connection::open_in_memory().map_err(failed)?;
    harden_connection(&conn).map_err(failed)?;
    build_contents(&conn, agent_id, limits, 0).map_err(failed)?;
    let mut size: rusqlite::ffi::sqlite3_int64 = 0;
    // SAFETY: the connection is open; the copy SQLite returns is ours to free, once read.
    let mut image = unsafe {
        let data = rusqlite::ffi::sqlite3_serialize(conn.handle(), c"main".as_ptr(), &mut size, 0);
        if data.is_null() {
            return Err(MemoryError::storage("cannot build a new memory database: out of memory"));
        }
        let copy = std::slice::from_raw_parts(data, size as usize).to_vec();
        rusqlite::ffi::sqlite3_free(data.cast());
        copy
    };
    if image.len() < 100 || &image[..16] != b"SQLite format 3\0" {
        return Err(MemoryError::storage("cannot build a new memory database: SQLite gave no database image"));
    }
    // Header bytes 18 and 19, the file format's write and read versions: 2 is WAL.
    image[18] = 2;
    image[19] = 2;
    Ok(image)
}

/// Builds a complete database under a temporary name, then links it into place: if another
/// process won the race, its database is used and ours is dropped. `limits` are the quota and
/// data policy it starts with.
pub(crate) fn build_new_database(path: &Path, agent_id: &str, (quota, policy): (u64, DataPolicy)) -> Result<()> {
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    if std::fs::symlink_metadata(&wal).is_ok() {
        return Err(storage(
            path,
            "is missing but its -wal file is there: the database was removed by hand. Nothing was created; restore the database or remove the -wal and -shm files",
        ));
    }
    // A database made again (the old one deleted) numbers its transactions past those the audit
    // log names for the agent, so that the lines of the old one keep their verdict (R-AUD-6).
    let last_seq = root_of(path).map_or(0, |root| super::audit::latest_tx(&crate::storage::files::Layout::at(root), agent_id).unwrap_or(0));
    let tmp = PathBuf::from(format!("{}.init-{}", path.display(), unique_suffix()));
    let result = (|| -> Result<()> {
        drop(create_private_file(&tmp).map_err(|e| storage(&tmp, e))?);
        let conn = Connection::open_with_flags(&tmp, sqlite_flags()).map_err(|e| storage(&tmp, e))?;
        let built = (|| -> rusqlite::Result<()> {
            harden_connection(&conn)?;
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))?;
            build_contents(&conn, agent_id, (quota, policy), last_seq)
        })();
        built.map_err(|e| storage(&tmp, e))?;
        conn.close().map_err(|(_, e)| storage(&tmp, e))?;
        match move_into_place(&tmp, path) {
            Ok(()) => Lineage::lock(path)?.stamp_now(),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(storage(path, e)),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", tmp.display()));
    }
    result
}

/// The project root of the database at `path` (`<root>/.rotifer/memory/<agent>.db`).
fn root_of(path: &Path) -> Option<&Path> {
    path.parent()?.parent()?.parent()
}

/// Renames `tmp` to `path` unless `path` exists, in one step: the database never has two names,
/// which an opener would refuse as a hard link. Where the file system cannot (no
/// `RENAME_NOREPLACE`), links then unlinks.
pub(crate) fn move_into_place(tmp: &Path, path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (from, to) = (c(tmp)?, c(path)?);
    let rc = unsafe { libc::renameat2(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::RENAME_NOREPLACE) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) => std::fs::hard_link(tmp, path),
        _ => Err(e),
    }
}


