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

#[test]
fn an_update_that_never_expires_leaves_the_expiry_index_alone() {
    let tm = TestMemory::create(1 << 20, DataPolicy::default()).unwrap();
    let m = tm.gene_memory(Some(format!("v2:{}", "a".repeat(64))), None).unwrap();
    write(&m, "k", &Arg::Undefined, T0);
    write(&m, "k", &Arg::Undefined, T0 + 1);
    let wal = wal_of(&tm);
    let before = std::fs::metadata(&wal).unwrap().len();
    write(&m, "k", &Arg::Undefined, T0 + 2);
    let frames = (std::fs::metadata(&wal).unwrap().len() - before) / FRAME;
    // One small agent: every table and index is a single page. An update changes the entry's
    // row, its places in the recency and category indexes and the agent row (byte total,
    // sequence): four pages. Setting `expires_at` again made it five.
    assert_eq!(frames, 4, "pages written by one update");
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
