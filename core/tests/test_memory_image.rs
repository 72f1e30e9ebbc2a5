//! R-HOST-4: a test memory written from an image (`TestMemory::create`) is the database that
//! building one gives: the same schema objects, version, journal mode and agent row, with the
//! quota and data policy asked for; its log keeps no reserve; `dispose` deletes it.
//! (One test in this binary: it points TMPDIR at a folder of its own.)

use rotifer_memory_core::memory::{create_agent_memory, TestMemory, TEST_AGENT_ID};
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::{Arg, Layout};
use rusqlite::Connection;
use std::path::Path;

/// What a database holds apart from entries: schema objects, version, journal mode, agent row.
fn shape(db: &Path) -> (Vec<(String, String, String)>, i64, String, (i64, bool, Option<i64>, i64, i64)) {
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt = conn.prepare("SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY name").unwrap();
    let objects = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().collect::<rusqlite::Result<_>>().unwrap();
    let version = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    let mode = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    let agent = conn
        .query_row("SELECT quota, anonymization_supported, max_retention_days, used_bytes, last_seq FROM agent", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap();
    (objects, version, mode, agent)
}

#[test]
fn a_test_memory_is_the_database_building_gives_with_its_limits() {
    let tmp = std::env::temp_dir().join(format!("rotifer-core-tmi-{}", rotifer_memory_core::store::unique_suffix()));
    std::fs::create_dir(&tmp).unwrap();
    std::env::set_var("TMPDIR", &tmp);
    let built = tmp.join("built");
    std::fs::create_dir(&built).unwrap();
    let policy = DataPolicy { anonymization_supported: true, max_retention_days: Some(30) };
    create_agent_memory(&Layout::at(&built), TEST_AGENT_ID, 4096, policy).unwrap();
    let expected = shape(&Layout::at(&built).db_path(TEST_AGENT_ID));
    assert_eq!(expected.3, (4096, true, Some(30), 0, 0));

    for (quota, policy) in [(4096, policy), (4096, policy), (1 << 20, DataPolicy::default())] {
        let tm = TestMemory::create(quota, policy).unwrap();
        let root = tm.root().to_path_buf();
        let layout = Layout::at(&root);
        let got = shape(&layout.db_path(TEST_AGENT_ID));
        assert_eq!((&got.0, got.1, &got.2), (&expected.0, expected.1, &expected.2), "schema, version and journal mode");
        assert_eq!(got.3, (quota as i64, policy.anonymization_supported, policy.max_retention_days, 0, 0), "agent row");
        let m = tm.gene_memory(Some(format!("v2:{}", "a".repeat(64))), None).unwrap();
        m.write(&Arg::Str("k".into()), Arg::Bytes(vec![1, 2]), &Arg::Str("CACHE".into()), &Arg::Undefined, &Arg::Undefined, 0).unwrap();
        assert!(layout.audit_path().is_file(), "the write is audited");
        assert!(!layout.reserve_path().exists(), "a test memory keeps no audit reserve");
        tm.dispose();
        assert!(!root.exists(), "dispose deletes the folder");
    }
    // An agent's log still gets its reserve.
    let m = rotifer_memory_core::GeneMemory::open(rotifer_memory_core::GeneOptions {
        agent_id: Some(TEST_AGENT_ID.into()),
        gene_id: Some(format!("v2:{}", "a".repeat(64))),
        domain: None,
        root: Some(built.to_string_lossy().into_owned()),
        url: None,
    })
    .unwrap();
    m.write(&Arg::Str("k".into()), Arg::Bytes(vec![1]), &Arg::Str("CACHE".into()), &Arg::Undefined, &Arg::Undefined, 0).unwrap();
    assert!(Layout::at(&built).reserve_path().is_file(), "an agent's audit log keeps its reserve");
    drop(m);
    let _ = std::fs::remove_dir_all(&tmp);
}
