//! Schema version 1 to 2 (R-HOST-1): a version-1 database built from the version-1 schema
//! migrates when it is opened, every row comes over unchanged, and it then behaves exactly as
//! the version-2 database it was copied from: queries (R-API-3), eviction order (R-QUO-3),
//! expiry and purge (R-RET-1, R-RET-4), byte total and sequence.

mod common;

use common::{gene, obj, s, DAY, T0};
use rotifer_memory_core::layout::{create_private_file, Layout};
use rotifer_memory_core::migrate::SCHEMA_V1;
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::{create_agent_memory, list_agent_memory, Arg, GeneMemory, GeneOptions};
use rusqlite::types::Value;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

const COLUMNS: &str = "key, entry_id, category, value, size, created_by, creator_domain, last_accessed_by, created_at, \
     updated_at, seq, read_scope, write_scope, share_policy, ret_set, ret_days, ret_auto_delete, ret_anonymization, expires_at";

struct Root(PathBuf);
impl Root {
    fn new(name: &str) -> Root {
        let p = std::env::temp_dir().join(format!("rotifer-migrate-{name}-{}-{:?}", std::process::id(), std::time::SystemTime::now()));
        std::fs::create_dir(&p).unwrap();
        Root(std::fs::canonicalize(p).unwrap())
    }
    fn db(&self) -> PathBuf {
        Layout::at(&self.0).real().unwrap().db_path("a")
    }
    fn memory(&self) -> GeneMemory {
        GeneMemory::open(GeneOptions { agent_id: Some("a".into()), gene_id: Some(gene('a')), domain: Some("d".into()), root: Some(self.0.to_string_lossy().into()), url: None }).unwrap()
    }
}
impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

type Rows = Vec<Vec<Value>>;

/// Every entry row (all columns, by key) and the agent row.
fn dump(db: &Path) -> (Rows, Rows) {
    let conn = Connection::open(db).unwrap();
    let all = |sql: &str| -> Rows {
        let mut stmt = conn.prepare(sql).unwrap();
        let n = stmt.column_count();
        stmt.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect()).unwrap().collect::<rusqlite::Result<_>>().unwrap()
    };
    (all(&format!("SELECT {COLUMNS} FROM entries ORDER BY key")), all("SELECT * FROM agent"))
}

fn version(db: &Path) -> i64 {
    Connection::open(db).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
}

/// A version-1 database at `root`'s path of agent "a", built from `SCHEMA_V1`, holding `rows`.
fn build_v1(root: &Root, (entries, agent): &(Rows, Rows)) {
    let layout = Layout::at(&root.0).real().unwrap();
    layout.ensure_dirs(true).unwrap();
    drop(create_private_file(&root.db()).unwrap());
    let mut conn = Connection::open(root.db()).unwrap();
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).unwrap();
    let tx = conn.transaction().unwrap();
    tx.execute_batch(&format!("{SCHEMA_V1} PRAGMA user_version = 1;")).unwrap();
    tx.execute("INSERT INTO agent VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", rusqlite::params_from_iter(&agent[0])).unwrap();
    let marks = vec!["?"; 19].join(", ");
    for row in entries {
        tx.execute(&format!("INSERT INTO entries ({COLUMNS}) VALUES ({marks})"), rusqlite::params_from_iter(row)).unwrap();
    }
    tx.commit().unwrap();
    conn.close().unwrap();
}

fn retention(days: i64) -> Arg {
    obj(&[("maxRetentionDays", Arg::Number(days as f64)), ("autoDeleteOnTermination", Arg::Bool(false)), ("anonymizationSupported", Arg::Bool(false))])
}

/// Entries of every category, some expiring after one day, some after ten, most never; some
/// rewritten, so that key order, write order and recency order all differ.
fn fill(m: &GeneMemory) {
    let cats = ["CACHE", "PATTERN", "CONTEXT", "PREFERENCE"];
    for i in 0..48u32 {
        let key = format!("k{:03}", (i * 37) % 101);
        let ret = match i % 6 {
            1 => retention(1),
            4 => retention(10),
            _ => Arg::Undefined,
        };
        m.write(&s(&key), Arg::Bytes(vec![i as u8; 20 + i as usize]), &s(cats[(i % 4) as usize]), &Arg::Undefined, &ret, T0 + (i as i64 / 2) * 1000).unwrap();
    }
    for i in [3u32, 11, 20] {
        let key = format!("k{:03}", (i * 37) % 101);
        m.write(&s(&key), Arg::Bytes(vec![0xee; 30]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0 + 60_000).unwrap();
    }
}

fn keys(entries: Vec<rotifer_memory_core::Entry>) -> Vec<String> {
    entries.into_iter().map(|e| e.key).collect()
}

#[test]
fn a_version_1_database_migrates_and_behaves_as_version_2() {
    let (v2, v1) = (Root::new("v2"), Root::new("v1"));
    // Room for what `fill` writes, not for much more: a large write evicts.
    create_agent_memory(&Layout::at(&v2.0), "a", 3000, DataPolicy::default()).unwrap();
    let source = v2.memory();
    fill(&source);
    let rows = dump(&v2.db());
    assert_eq!(rows.0.len(), 48, "48 writes, no key twice (37 is prime to 101)");
    build_v1(&v1, &rows);
    assert_eq!(version(&v1.db()), 1);

    let migrated = v1.memory();
    let now = T0 + 120_000;
    // Opening migrates; every row (all columns) and the agent row come over unchanged.
    assert!(migrated.read(&s("k000"), &Arg::Undefined, now).unwrap().is_some());
    assert_eq!(version(&v1.db()), 2);
    assert_eq!(dump(&v1.db()), rows, "every entry and the agent row (byte total, sequence), column for column");

    // Queries: the same entries in the same order, with and without filters.
    let all = obj(&[("limit", Arg::Number(1000.0))]);
    let filters = [
        Arg::Undefined,
        all.clone(),
        obj(&[("limit", Arg::Number(5.0))]),
        obj(&[("category", s("CACHE")), ("limit", Arg::Number(1000.0))]),
        obj(&[("keyPrefix", s("k0")), ("limit", Arg::Number(1000.0))]),
        obj(&[("since", s("2026-11-30T00:00:00.000Z")), ("limit", Arg::Number(7.0))]),
    ];
    for f in &filters {
        let (a, b) = (source.query(f, now).unwrap(), migrated.query(f, now).unwrap());
        assert_eq!(a, b, "query {f:?}");
    }
    assert_eq!(source.query(&all, now).unwrap().len(), 48);

    // Eviction: a write that needs room evicts the same entries, in the same order.
    for m in [&source, &migrated] {
        m.write(&s("big"), Arg::Bytes(vec![1; 900]), &s("CONTEXT"), &Arg::Undefined, &Arg::Undefined, now).unwrap();
    }
    let (a, b) = (keys(source.query(&all, now).unwrap()), keys(migrated.query(&all, now).unwrap()));
    assert!(a.len() < 49, "the write evicted something");
    assert_eq!(a, b, "the same entries evicted");
    assert_eq!(dump(&v1.db()).1, dump(&v2.db()).1, "the same byte total and sequence");

    // Expiry: two days on, the entries kept for one day are purged from both alike.
    let later = T0 + 2 * DAY;
    let (a, b) = (list_agent_memory(&Layout::at(&v2.0), "a", None, later).unwrap(), list_agent_memory(&Layout::at(&v1.0), "a", None, later).unwrap());
    assert!(a.len() < 40, "entries expired: {}", a.len());
    assert_eq!(a, b, "the same entries left after the purge");
    source.write(&s("after"), Arg::Bytes(vec![2; 10]), &s("PATTERN"), &Arg::Undefined, &Arg::Undefined, later).unwrap();
    migrated.write(&s("after"), Arg::Bytes(vec![2; 10]), &s("PATTERN"), &Arg::Undefined, &Arg::Undefined, later).unwrap();
    assert_eq!(dump(&v1.db()), dump(&v2.db()), "the same rows and agent row after purge and write");
}

#[test]
fn a_newer_schema_version_is_refused_and_left_byte_for_byte() {
    let root = Root::new("v3");
    create_agent_memory(&Layout::at(&root.0), "a", 1 << 20, DataPolicy::default()).unwrap();
    root.memory().write(&s("k"), Arg::Bytes(vec![1; 10]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0).unwrap();
    // The store above is closed once its handles are gone; the file then has no WAL.
    let conn = Connection::open(root.db()).unwrap();
    conn.execute_batch("PRAGMA user_version = 3;").unwrap();
    conn.close().unwrap();
    let bytes = std::fs::read(root.db()).unwrap();
    let err = root.memory().read(&s("k"), &Arg::Undefined, T0).unwrap_err();
    assert_eq!(err.code, rotifer_memory_core::ErrorCode::StorageError);
    let db = root.db().display().to_string();
    for part in [db.as_str(), "schema version 3", "reads schema version 2", "upgrade @rotifer/playground", "left as it is"] {
        assert!(err.message.contains(part), "{part:?} in {}", err.message);
    }
    assert_eq!(std::fs::read(root.db()).unwrap(), bytes, "the file was not changed");
}
