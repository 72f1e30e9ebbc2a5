//! R-HOST-1b: the deployer's backup (a consistent copy while in use) and restore (one change,
//! all or nothing, the agent's quota and data policy kept, audited with actor "deployer").

use rotifer_memory_core::backup::{backup_agent_memory, restore_agent_memory};
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::store::{read_agent, AgentStore, IfMissing};
use rotifer_memory_core::{create_agent_memory, Arg, ErrorCode, GeneMemory};

mod common;
use common::{obj, s, Project, DAY, T0};


fn put(m: &GeneMemory, key: &str, size: usize, now: i64) {
    m.write(&s(key), Arg::Bytes(vec![3; size]), &s("CONTEXT"), &Arg::Undefined, &Arg::Undefined, now).unwrap();
}

#[test]
fn a_restore_puts_back_exactly_the_backup_keeping_the_quota_and_data_policy() {
    let r = Project::new("exact");
    create_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let m = r.gene("a");
    put(&m, "k1", 10, T0);
    put(&m, "k2", 10, T0 + 1);
    let file = r.0.join("a.backup.db");
    let b = backup_agent_memory(&r.layout(), "a", &file).unwrap();
    assert_eq!((b.entries, b.used), (2, 24));
    assert_eq!(std::fs::metadata(&file).unwrap().len(), b.bytes);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(!std::path::Path::new(&format!("{}-wal", file.display())).exists(), "a standalone file");
    // Later: k1 changed, k2 deleted, k3 added, the limits changed.
    put(&m, "k1", 50, T0 + 2);
    m.delete(&s("k2"), T0 + 3).unwrap();
    put(&m, "k3", 10, T0 + 4);
    let limits = DataPolicy { anonymization_supported: true, max_retention_days: Some(365) };
    create_agent_memory(&r.layout(), "a", 2 << 20, limits).unwrap();
    let tx_before = r.audit().iter().filter_map(|l| l["tx"].as_i64()).max().unwrap();

    let restored = restore_agent_memory(&r.layout(), "a", &file, T0 + 5).unwrap();
    assert_eq!((restored.entries, restored.replaced, restored.expired, restored.used), (2, 2, 0, 24));
    assert_eq!(r.keys("a", T0 + 6), ["k1", "k2"]);
    let k1 = m.read(&s("k1"), &Arg::Undefined, T0 + 6).unwrap().unwrap();
    assert_eq!((k1.value.len(), k1.updated_at), (10, T0), "the entry as it was backed up");
    let store = AgentStore::open(&r.layout(), "a", IfMissing::Skip).unwrap().unwrap();
    let row = store.read_only(|c| read_agent(c)).unwrap();
    assert_eq!((row.quota, row.policy, row.used), (2 << 20, limits, 24), "the agent's quota and data policy are kept");
    let line = r.audit().into_iter().last().unwrap();
    assert_eq!(line["action"], "memory.restore");
    assert_eq!(line["actor"], "deployer");
    assert_eq!(line["size"], 24);
    assert!(line["tx"].as_i64().unwrap() > tx_before, "numbered past every transaction before it");
    assert!(line["reason"].as_str().unwrap().contains("2 entries"), "{line}");
    // A later write continues the sequence.
    put(&m, "k4", 1, T0 + 7);
    assert!(r.audit().last().unwrap()["tx"].as_i64().unwrap() > line["tx"].as_i64().unwrap());
}

#[test]
fn a_backup_never_replaces_a_file_and_needs_a_memory() {
    let r = Project::new("dest");
    create_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let file = r.0.join("there");
    std::fs::write(&file, b"mine").unwrap();
    let e = backup_agent_memory(&r.layout(), "a", &file).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(e.message.contains("exists already"), "{}", e.message);
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    assert_eq!(backup_agent_memory(&r.layout(), "nobody", &r.0.join("x.db")).unwrap_err().code, ErrorCode::NotFound);
    assert!(!r.0.join("x.db").exists());
}

#[test]
fn a_refused_restore_changes_nothing() {
    let r = Project::new("refused");
    create_agent_memory(&r.layout(), "a", 100, DataPolicy::default()).unwrap();
    create_agent_memory(&r.layout(), "b", 1 << 20, DataPolicy::default()).unwrap();
    let m = r.gene("a");
    put(&m, "keep", 5, T0);
    let mb = r.gene("b");
    put(&mb, "big", 200, T0);
    let of_b = r.0.join("b.db.bak");
    backup_agent_memory(&r.layout(), "b", &of_b).unwrap();
    let lines = r.audit().len();
    let refused = |file: &std::path::Path, code: ErrorCode, what: &str| {
        let e = restore_agent_memory(&r.layout(), "a", file, T0 + 1).unwrap_err();
        assert_eq!(e.code, code, "{}", e.message);
        assert!(e.message.contains(what) && e.message.contains("nothing was restored"), "{}", e.message);
        assert_eq!(r.keys("a", T0 + 1), ["keep"]);
        assert_eq!(r.audit().len(), lines, "nothing audited");
    };
    refused(&of_b, ErrorCode::InvalidInput, "is of agent \"b\"");
    let junk = r.0.join("junk");
    std::fs::write(&junk, b"not a database at all, not at all").unwrap();
    refused(&junk, ErrorCode::InvalidInput, "is not a SQLite database");
    refused(&r.0.join("missing"), ErrorCode::InvalidInput, "cannot be read");
    // A backup of "a" over its quota of 100 bytes.
    put(&m, "keep", 5, T0);
    create_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    put(&m, "large", 150, T0);
    let of_a = r.0.join("a.db.bak");
    backup_agent_memory(&r.layout(), "a", &of_a).unwrap();
    m.delete(&s("large"), T0).unwrap();
    create_agent_memory(&r.layout(), "a", 100, DataPolicy::default()).unwrap();
    let lines = r.audit().len();
    let e = restore_agent_memory(&r.layout(), "a", &of_a, T0 + 1).unwrap_err();
    assert_eq!(e.code, ErrorCode::QuotaExceeded, "{}", e.message);
    assert_eq!(r.keys("a", T0 + 1), ["keep"]);
    assert_eq!(r.audit().len(), lines);
    // A planted trigger: refused before anything runs.
    let planted = r.0.join("planted.db");
    std::fs::copy(&of_a, &planted).unwrap();
    rusqlite::Connection::open(&planted).unwrap().execute_batch("CREATE TRIGGER t AFTER INSERT ON entries BEGIN SELECT 1; END;").unwrap();
    let e = restore_agent_memory(&r.layout(), "a", &planted, T0 + 1).unwrap_err();
    assert!(e.message.contains("trigger"), "{}", e.message);
    assert_eq!(r.keys("a", T0 + 1), ["keep"]);
}

#[test]
fn a_restore_leaves_out_what_expired_and_is_seen_by_every_handle_at_its_next_call() {
    let r = Project::new("expired");
    create_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let m = r.gene("a");
    let one_day = obj(&[("maxRetentionDays", Arg::Number(1.0)), ("autoDeleteOnTermination", Arg::Bool(false)), ("anonymizationSupported", Arg::Bool(false))]);
    m.write(&s("short"), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &one_day, T0).unwrap();
    put(&m, "long", 1, T0);
    let file = r.0.join("a.bak");
    backup_agent_memory(&r.layout(), "a", &file).unwrap();
    let other = r.gene("a"); // another handle, opened before the restore
    put(&other, "new", 1, T0 + 1);
    let restored = restore_agent_memory(&r.layout(), "a", &file, T0 + 2 * DAY).unwrap();
    assert_eq!((restored.entries, restored.expired), (1, 1));
    let keys: Vec<String> = other.query(&Arg::Undefined, T0 + 2 * DAY).unwrap().into_iter().map(|e| e.key).collect();
    assert_eq!(keys, ["long"]);
}

#[test]
fn a_copy_of_a_database_in_use_with_its_wal_is_not_taken_for_a_backup() {
    let r = Project::new("walcopy");
    create_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let m = r.gene("a");
    for i in 0..30 {
        put(&m, &format!("k{i}"), 10, T0 + i);
    }
    // A copy of the files while in use: the entries are in the WAL, not yet in the file.
    let db = r.0.join(".rotifer/memory/a.db");
    let copy = r.0.join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    std::fs::copy(format!("{}-wal", db.display()), format!("{}-wal", copy.display())).unwrap();
    let e = restore_agent_memory(&r.layout(), "a", &copy, T0 + 100).unwrap_err();
    assert!(e.message.contains("has a WAL beside it") && e.message.contains("nothing was restored"), "{}", e.message);
    assert_eq!(r.keys("a", T0 + 100).len(), 30, "nothing changed");
    // Nor is the agent's own database.
    let e = restore_agent_memory(&r.layout(), "a", &db, T0 + 100).unwrap_err();
    assert!(e.message.contains("is the agent's own database"), "{}", e.message);
    assert_eq!(r.keys("a", T0 + 100).len(), 30);
}

#[test]
fn a_database_made_again_keeps_the_old_lines_verdicts() {
    // R-AUD-6 across R-HOST-1's recreate: the new database numbers past the log's transactions.
    let r = Project::new("again");
    create_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let m = r.gene("a");
    for i in 0..4 {
        put(&m, &format!("old{i}"), 5, T0 + i);
    }
    drop(m);
    let dir = r.0.join(".rotifer/memory");
    for f in std::fs::read_dir(&dir).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    rotifer_memory_core::ensure_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    put(&r.gene("a"), "new", 5, T0 + 10);
    let log = rotifer_memory_core::audit_log::read_agent_log(&r.layout(), "a").unwrap();
    let verdicts: Vec<(String, bool)> = log
        .lines
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["action"] == "memory.create")
        .map(|l| (l["key"].as_str().unwrap().to_string(), l["committed"].as_bool().unwrap()))
        .collect();
    assert_eq!(verdicts, [("old0", true), ("old1", true), ("old2", true), ("old3", true), ("new", true)].map(|(k, c)| (k.to_string(), c)));
}

/// A backup of agent "a" with two entries, one with a retention policy, one with a domain.
fn good_backup(r: &Project) -> std::path::PathBuf {
    create_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let m = r.gene("a");
    put(&m, "plain", 4, T0);
    let retention = obj(&[
        ("maxRetentionDays", Arg::Number(30.0)),
        ("autoDeleteOnTermination", Arg::Bool(true)),
        ("anonymizationSupported", Arg::Bool(false)),
    ]);
    m.write(&s("kept"), Arg::Bytes(vec![1; 3]), &s("PREFERENCE"), &Arg::Undefined, &retention, T0 + 1).unwrap();
    let file = r.0.join("a.good.db");
    backup_agent_memory(&r.layout(), "a", &file).unwrap();
    file
}

#[test]
fn r_host_1b_a_backup_holding_what_no_write_stores_is_refused_and_changes_nothing() {
    let r = Project::new("columns");
    let good = good_backup(&r);
    let m = r.gene("a");
    put(&m, "now", 2, T0 + 2);
    let lines = r.audit().len();
    let row = || AgentStore::open(&r.layout(), "a", IfMissing::Skip).unwrap().unwrap().read_only(read_agent).unwrap();
    let before = row();
    for (n, (sql, what)) in [
        // The agent row.
        ("UPDATE agent SET last_seq = 9223372036854775000", "last_seq"),
        ("UPDATE agent SET last_seq = 9007199254740000", "last_seq"),
        ("UPDATE agent SET last_seq = -1", "last_seq"),
        ("UPDATE agent SET last_seq = 1", "last_seq"), // below the entries' own numbers
        ("UPDATE agent SET used_bytes = 5", "used_bytes"),
        ("UPDATE agent SET quota = -1", "quota"),
        ("UPDATE agent SET anonymization_supported = 7", "anonymization_supported"),
        ("UPDATE agent SET max_retention_days = 0", "max_retention_days"),
        // Times no clock reading gives a write (0 to year 9999).
        ("UPDATE entries SET updated_at = 9000000000000000000 WHERE key = x'706c61696e'", "updated_at"),
        ("UPDATE entries SET created_at = -5, updated_at = -5 WHERE key = x'706c61696e'", "created_at"),
        // Retention: days, the booleans, and a policy that is not set but says something.
        ("UPDATE entries SET ret_days = -1 WHERE key = x'6b657074'", "ret_days"),
        ("UPDATE entries SET ret_days = 0 WHERE key = x'6b657074'", "ret_days"),
        ("UPDATE entries SET ret_auto_delete = 7 WHERE key = x'6b657074'", "ret_auto_delete"),
        ("UPDATE entries SET ret_anonymization = 9 WHERE key = x'6b657074'", "ret_anonymization"),
        ("UPDATE entries SET ret_set = 7 WHERE key = x'6b657074'", "ret_set"),
        ("UPDATE entries SET ret_days = 3 WHERE key = x'706c61696e'", "ret_days"),
        ("UPDATE entries SET ret_auto_delete = 1 WHERE key = x'706c61696e'", "ret_auto_delete"),
        // Domains, sequence numbers, types.
        ("UPDATE entries SET creator_domain = '../../etc'", "creator_domain"),
        ("UPDATE entries SET creator_domain = x'64'", "creator_domain"),
        ("UPDATE entries SET seq = 0 WHERE key = x'706c61696e'", "seq"),
        ("UPDATE entries SET seq = 1000 WHERE key = x'706c61696e'", "seq"),
        ("UPDATE entries SET seq = (SELECT seq FROM entries WHERE key = x'6b657074') WHERE key = x'706c61696e'", "seq"),
        ("UPDATE entries SET value = 'text'", "value"),
    ]
    .into_iter()
    .enumerate()
    {
        let file = r.0.join(format!("bad-{n}.db"));
        std::fs::copy(&good, &file).unwrap();
        rusqlite::Connection::open(&file).unwrap().execute_batch(sql).unwrap();
        let e = restore_agent_memory(&r.layout(), "a", &file, T0 + 3).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput, "{sql}: {}", e.message);
        assert!(e.message.contains(what) && e.message.contains("nothing was restored"), "{sql}: {}", e.message);
        assert_eq!(r.keys("a", T0 + 3), ["kept", "now", "plain"], "{sql}");
        assert_eq!(r.audit().len(), lines, "{sql}: nothing audited");
        let after = row();
        assert_eq!((after.last_seq, after.used), (before.last_seq, before.used), "{sql}");
    }
    // The untouched backup restores, and the sequence goes on from where it was.
    restore_agent_memory(&r.layout(), "a", &good, T0 + 3).unwrap();
    assert_eq!(r.keys("a", T0 + 3), ["kept", "plain"]);
    assert!(row().last_seq > before.last_seq);
}

#[test]
fn r_aud_6_a_backup_whose_sequence_is_far_ahead_but_plausible_restores_and_numbers_stay_exact() {
    // 2^40 changes is far more than any agent makes, yet well inside what JS reads exactly.
    let r = Project::new("far-seq");
    let good = good_backup(&r);
    let file = r.0.join("far.db");
    std::fs::copy(&good, &file).unwrap();
    rusqlite::Connection::open(&file).unwrap().execute_batch("UPDATE agent SET last_seq = 1099511627776").unwrap();
    restore_agent_memory(&r.layout(), "a", &file, T0 + 3).unwrap();
    put(&r.gene("a"), "next", 1, T0 + 4);
    let tx = r.audit().last().unwrap()["tx"].as_i64().unwrap();
    assert_eq!(tx, (1 << 40) + 2, "the restore took 2^40 + 1, the write after it the next number");
}
