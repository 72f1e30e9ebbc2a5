//! What an update writes to the WAL (R-RET-1, R-RET-2 kept): an entry that does not expire
//! leaves the expiry index alone, and an update that ends or starts an expiry still records it.

use rotifer_memory_core::memory::TestMemory;
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::{Arg, GeneMemory};
use std::path::PathBuf;

const DAY: i64 = 86_400_000;
const T0: i64 = 1_796_000_000_000;
/// A WAL frame: a 4,096-byte page and its 24-byte header.
const FRAME: u64 = 4096 + 24;

fn s(v: &str) -> Arg {
    Arg::Str(v.to_string())
}

fn keep(days: Option<i64>) -> Arg {
    Arg::Object(
        [
            ("maxRetentionDays", days.map_or(Arg::Null, |d| Arg::Number(d as f64))),
            ("autoDeleteOnTermination", Arg::Bool(false)),
            ("anonymizationSupported", Arg::Bool(false)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
    )
}

fn write(m: &GeneMemory, key: &str, retention: &Arg, now: i64) {
    m.write(&s(key), Arg::Bytes(vec![7; 100]), &s("CONTEXT"), &Arg::Undefined, retention, now).unwrap();
}

fn wal_of(tm: &TestMemory) -> PathBuf {
    let dir = tm.root().join(".rotifer").join("memory");
    let db = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "db"))
        .expect("the test memory's database");
    PathBuf::from(format!("{}-wal", db.display()))
}

fn wal_len(wal: &PathBuf) -> u64 {
    std::fs::metadata(wal).unwrap().len()
}

#[test]
fn an_update_that_never_expires_leaves_the_expiry_index_alone() {
    let tm = TestMemory::create(1 << 20, DataPolicy::default()).unwrap();
    let m = tm.gene_memory(Some(format!("v2:{}", "a".repeat(64))), None).unwrap();
    write(&m, "k", &Arg::Undefined, T0);
    write(&m, "k", &Arg::Undefined, T0 + 1);
    let wal = wal_of(&tm);
    let before = wal_len(&wal);
    write(&m, "k", &Arg::Undefined, T0 + 2);
    let frames = (wal_len(&wal) - before) / FRAME;
    // One small agent: every table and index is a single page. An update changes the entry's
    // row, its place in the category index and the agent row (byte total, sequence): three
    // pages. Schema version 1 wrote four (a second, all-category recency index), and five when
    // it set `expires_at` to NULL again.
    assert_eq!(frames, 3, "pages written by one update");
    let before = wal_len(&wal);
    write(&m, "new", &Arg::Undefined, T0 + 3);
    // A create: the row, the key index, the category index, the agent row; the partial expiry
    // index holds no entry that never expires (version 1: five, with the recency index).
    assert_eq!((wal_len(&wal) - before) / FRAME, 4, "pages written by one create");
    tm.dispose();
}

/// Pages per write in an agent of 1,000 entries (tables and indexes of many pages), averaged
/// over 100 updates of older entries and 100 creates (R-QUO-3 order and R-RET-4 purge kept).
#[test]
fn writes_in_a_larger_agent_touch_about_four_pages() {
    let tm = TestMemory::create(1 << 30, DataPolicy::default()).unwrap();
    let m = tm.gene_memory(Some(format!("v2:{}", "a".repeat(64))), None).unwrap();
    // Keys out of write order, as a gene's keys are: key order and recency order differ.
    let key = |i: u64| format!("k/{:08}", i.wrapping_mul(2_654_435_761) % 100_000_000);
    let mut t = T0;
    for i in 0..1000 {
        t += 1;
        write(&m, &key(i), &Arg::Undefined, t);
    }
    let wal = wal_of(&tm);
    // A reader holding a snapshot: no checkpoint can copy past it, nor the WAL restart, so the
    // WAL grows by exactly what is written. (The same SQLite library as the store's, in this
    // process: it keeps the store's locks. It makes no checkpoint of its own: one not made by
    // the store is taken for a write by something else unless it can be verified, R-HOST-1b.)
    let reader = rusqlite::Connection::open(wal.with_extension("db")).unwrap();
    reader.execute_batch("BEGIN; SELECT COUNT(*) FROM agent;").unwrap();
    let before = wal_len(&wal);
    for i in 0..100 {
        t += 1;
        write(&m, &key(i * 7), &Arg::Undefined, t);
    }
    let update = (wal_len(&wal) - before) as f64 / FRAME as f64 / 100.0;
    let before = wal_len(&wal);
    for i in 1000..1100 {
        t += 1;
        write(&m, &key(i), &Arg::Undefined, t);
    }
    let create = (wal_len(&wal) - before) as f64 / FRAME as f64 / 100.0;
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);
    eprintln!("pages per update {update:.2}, per create {create:.2}");
    // An update: the entry's row, its old and new category-index leaf, the agent row, and a
    // split now and then: 4.21 (schema version 1: about 6). A create: the row at the table's
    // end, the key index, the category index's newest leaf, the agent row, a split now and
    // then: 4.44 (version 1: about 6.5).
    assert!(update <= 4.3, "pages per update: {update:.2}");
    assert!(create <= 4.6, "pages per create: {create:.2}");
    tm.dispose();
}

#[test]
fn an_update_ends_and_starts_an_expiry() {
    let tm = TestMemory::create(1 << 20, DataPolicy::default()).unwrap();
    let m = tm.gene_memory(Some(format!("v2:{}", "a".repeat(64))), None).unwrap();
    // Expires after a day, then rewritten to keep forever: still there after two days.
    write(&m, "ends", &keep(Some(1)), T0);
    write(&m, "ends", &keep(None), T0 + 1);
    // Kept forever, then rewritten to expire after a day: gone after two days.
    write(&m, "starts", &Arg::Undefined, T0);
    write(&m, "starts", &keep(Some(1)), T0 + 1);
    assert!(m.read(&s("ends"), &Arg::Undefined, T0 + 2 * DAY).unwrap().is_some(), "an expiry ended by an update");
    assert!(m.read(&s("starts"), &Arg::Undefined, T0 + 2 * DAY).unwrap().is_none(), "an expiry started by an update");
    tm.dispose();
}
