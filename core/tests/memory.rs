//! The core without Node.js: the four calls, eviction, expiry, deployer calls and storage
//! failures, on temporary stores.

use rotifer_memory_core::memory::{AgentOptions, TestMemory};
use rotifer_memory_core::model::{DataPolicy, MAX_VALUE_BYTES};
use rotifer_memory_core::{create_agent_memory, delete_agent_memory, list_agent_memory, Arg, ErrorCode, GeneMemory, GeneOptions, Layout};
use std::path::PathBuf;

mod common;
use common::{gene, obj, s, DAY, T0};

fn keep(days: Option<i64>) -> Arg {
    obj(&[
        ("maxRetentionDays", days.map_or(Arg::Null, |d| Arg::Number(d as f64))),
        ("autoDeleteOnTermination", Arg::Bool(false)),
        ("anonymizationSupported", Arg::Bool(false)),
    ])
}

struct Fixture {
    tm: TestMemory,
}

impl Fixture {
    fn new(quota: u64, policy: DataPolicy) -> Fixture {
        Fixture { tm: TestMemory::create(quota, policy).unwrap() }
    }
    fn gene(&self, c: char, domain: Option<&str>) -> GeneMemory {
        self.tm.gene_memory(Some(gene(c)), domain.map(String::from)).unwrap()
    }
    fn audit(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.tm.root().join(".rotifer/audit.jsonl")).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
    fn actions(&self) -> Vec<String> {
        self.audit().iter().map(|l| l["action"].as_str().unwrap().to_string()).collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.tm.dispose();
    }
}

fn write(m: &GeneMemory, key: &str, len: usize, category: &str, now: i64) -> rotifer_memory_core::Result<rotifer_memory_core::Entry> {
    m.write(&s(key), Arg::Bytes(vec![7; len]), &s(category), &Arg::Undefined, &Arg::Undefined, now)
}

#[test]
fn round_trip_and_rewrite() {
    let f = Fixture::new(1 << 20, DataPolicy::default());
    let a = f.gene('a', Some("text"));
    let b = f.gene('b', Some("text"));
    let e = write(&a, "k", 3, "CACHE", T0).unwrap();
    assert_eq!(e.created_at, T0);
    assert_eq!(e.last_accessed_by, gene('a'));
    let e2 = write(&b, "k", 5, "PATTERN", T0 + 1).unwrap();
    assert_eq!((e2.entry_id.as_str(), e2.created_at, e2.created_by.as_str()), (e.entry_id.as_str(), T0, gene('a').as_str()));
    assert_eq!(e2.category.as_str(), "PATTERN");
    let read = a.read(&s("k"), &Arg::Undefined, T0 + 2).unwrap().unwrap();
    assert_eq!(read.value, vec![7; 5]);
    assert_eq!(read.last_accessed_by, gene('a'));
    assert!(a.read(&s("k"), &s("CACHE"), T0 + 2).unwrap().is_none());
    a.delete(&s("k"), T0 + 3).unwrap();
    assert_eq!(a.delete(&s("k"), T0 + 3).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(f.actions(), ["memory.create", "memory.update", "memory.delete"]);
}

#[test]
fn eviction_is_ordered_and_all_or_nothing() {
    let f = Fixture::new(1000, DataPolicy::default());
    let m = f.gene('a', Some("text"));
    write(&m, "p", 299, "PREFERENCE", T0).unwrap();
    write(&m, "x", 299, "CONTEXT", T0 + 1).unwrap();
    write(&m, "c", 299, "CACHE", T0 + 2).unwrap();
    // 900 used. 400 more needs 300 freed: CACHE first.
    write(&m, "n", 399, "PATTERN", T0 + 3).unwrap();
    assert!(m.read(&s("c"), &Arg::Undefined, T0 + 4).unwrap().is_none());
    // Too big even after evicting everything evictable (x and n: 700): nothing changes.
    let before = f.audit().len();
    let err = write(&m, "big", 799, "CACHE", T0 + 5).unwrap_err();
    assert_eq!(err.code, ErrorCode::QuotaExceeded);
    assert!(m.read(&s("x"), &Arg::Undefined, T0 + 6).unwrap().is_some());
    assert!(m.read(&s("n"), &Arg::Undefined, T0 + 6).unwrap().is_some());
    let after = f.audit();
    assert_eq!(after.len(), before + 1);
    assert_eq!(after[before]["action"], "memory.quota_reject");
    assert_eq!(after[before]["evictable"], 700);
}

#[test]
fn expiry_is_exact_and_audited() {
    let f = Fixture::new(1 << 20, DataPolicy::default());
    let m = f.gene('a', None);
    m.write(&s("k"), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &keep(Some(1)), T0).unwrap();
    assert!(m.read(&s("k"), &Arg::Undefined, T0 + DAY - 1).unwrap().is_some());
    assert!(m.read(&s("k"), &Arg::Undefined, T0 + DAY).unwrap().is_none());
    assert_eq!(f.actions(), ["memory.create", "memory.expire"]);
}

#[test]
fn data_policy_and_access() {
    let f = Fixture::new(1 << 20, DataPolicy { anonymization_supported: false, max_retention_days: Some(10) });
    let a = f.gene('a', Some("text"));
    let other = f.gene('b', Some("image"));
    let err = a.write(&s("k"), Arg::Bytes(vec![]), &s("CACHE"), &Arg::Undefined, &keep(Some(11)), T0).unwrap_err();
    assert_eq!(err.code, ErrorCode::AccessDenied);
    write(&a, "k", 1, "CACHE", T0).unwrap();
    assert_eq!(other.read(&s("k"), &Arg::Undefined, T0).unwrap_err().code, ErrorCode::AccessDenied);
    assert_eq!(other.delete(&s("k"), T0).unwrap_err().code, ErrorCode::AccessDenied);
    // Entries following the agent's 10-day maximum expire after it.
    assert!(a.read(&s("k"), &Arg::Undefined, T0 + 10 * DAY).unwrap().is_none());
    let denials = f.audit().into_iter().filter(|l| l["action"] == "memory.access_denied").count();
    assert_eq!(denials, 3);
}

#[test]
fn no_identity_is_denied_before_anything() {
    let f = Fixture::new(1 << 20, DataPolicy::default());
    let anonymous = f.tm.gene_memory(Some("v2:nope".into()), None).unwrap();
    assert_eq!(anonymous.query(&Arg::Undefined, T0).unwrap_err().code, ErrorCode::AccessDenied);
    let standalone = GeneMemory::open(GeneOptions { gene_id: Some(gene('a')), ..Default::default() }).unwrap();
    assert_eq!(standalone.read(&s("k"), &Arg::Undefined, T0).unwrap_err().code, ErrorCode::AccessDenied);
    assert_eq!(standalone.agent_id(), None);
}

#[test]
fn query_limits_and_size_cap() {
    let f = Fixture::new(64 << 20, DataPolicy::default());
    let m = f.gene('a', None);
    for i in 0..5 {
        write(&m, &format!("k{i}"), MAX_VALUE_BYTES - 2, "CACHE", T0 + i).unwrap();
    }
    let err = m.query(&Arg::Undefined, T0 + 10).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    let four = m.query(&obj(&[("limit", Arg::Number(4.0))]), T0 + 10).unwrap();
    assert_eq!(four.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["k4", "k3", "k2", "k1"]);
}

fn temp_root() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rotifer-core-test-{}", rotifer_memory_core::store::unique_suffix()));
    std::fs::create_dir(&dir).unwrap();
    dir
}

#[test]
fn deployer_list_and_delete() {
    let root = temp_root();
    let layout = Layout::at(&root);
    create_agent_memory(&layout, "agent", 4096, DataPolicy::default()).unwrap();
    let opts = Arg::Object(vec![("agentId".into(), s("agent")), ("root".into(), s(root.to_str().unwrap()))]);
    let parsed = AgentOptions::parse("options", &opts, &["agentId", "root"]).unwrap();
    assert_eq!(parsed.agent_id, "agent");
    let m = GeneMemory::open(GeneOptions { agent_id: Some("agent".into()), gene_id: Some(gene('a')), domain: None, root: Some(root.to_str().unwrap().into()), url: None }).unwrap();
    write(&m, "b", 1, "CACHE", T0).unwrap();
    write(&m, "a", 1, "PREFERENCE", T0).unwrap();
    let list = list_agent_memory(&layout, "agent", None, T0).unwrap();
    assert_eq!(list.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(delete_agent_memory(&layout, "agent", None, Some(&s("CACHE")), T0).unwrap(), 1);
    assert_eq!(delete_agent_memory(&layout, "agent", Some(&s("zz")), None, T0).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(delete_agent_memory(&layout, "agent", Some(&s("a")), Some(&s("CACHE")), T0).unwrap_err().code, ErrorCode::InvalidInput);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn damaged_databases_are_reported_and_kept() {
    let root = temp_root();
    let layout = Layout::at(&root);
    layout.ensure_dirs(true).unwrap();
    std::fs::write(layout.db_path("junk"), b"garbage garbage garbage").unwrap();
    std::fs::write(layout.db_path("empty"), b"").unwrap();
    for agent in ["junk", "empty"] {
        let m = GeneMemory::open(GeneOptions { agent_id: Some(agent.into()), gene_id: Some(gene('a')), domain: None, root: Some(root.to_str().unwrap().into()), url: None }).unwrap();
        assert_eq!(write(&m, "k", 1, "CACHE", T0).unwrap_err().code, ErrorCode::StorageError, "{agent}");
    }
    assert_eq!(std::fs::read(layout.db_path("junk")).unwrap(), b"garbage garbage garbage");
    assert_eq!(std::fs::read(layout.db_path("empty")).unwrap(), b"");
    // A -wal left without its database is never replayed into a new one.
    std::fs::write(format!("{}-wal", layout.db_path("orphan").display()), b"stale").unwrap();
    let m = GeneMemory::open(GeneOptions { agent_id: Some("orphan".into()), gene_id: Some(gene('a')), domain: None, root: Some(root.to_str().unwrap().into()), url: None }).unwrap();
    assert_eq!(write(&m, "k", 1, "CACHE", T0).unwrap_err().code, ErrorCode::StorageError);
    assert!(!layout.db_path("orphan").exists());
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn many_threads_share_one_agent() {
    let f = Fixture::new(50_000, DataPolicy::default());
    std::thread::scope(|scope| {
        for t in ['a', 'b', 'c', 'd'] {
            let m = f.gene(t, Some("text"));
            scope.spawn(move || {
                for i in 0..200 {
                    write(&m, &format!("{t}{}", i % 40), 1000, "CACHE", T0 + i).unwrap();
                }
            });
        }
    });
    let actions = f.actions();
    let count = |a: &str| actions.iter().filter(|x| *x == a).count() as i64;
    let live = f.gene('a', Some("text")).query(&obj(&[("limit", Arg::Number(1000.0))]), T0 + 1000).unwrap();
    assert_eq!(count("memory.create") - count("memory.evict"), live.len() as i64);
    let total: u64 = live.iter().map(|e| e.size()).sum();
    assert!(total <= 50_000);
}

#[test]
fn ensure_recreates_a_missing_memory_with_its_limits_and_keeps_an_existing_one() {
    // R-HOST-1: a deleted database never lifts the agent's limits; an existing one is not reconfigured.
    use rotifer_memory_core::ensure_agent_memory;
    use rotifer_memory_core::store::{AgentStore, IfMissing};
    let root = temp_root();
    let layout = Layout::at(&root);
    let limits = DataPolicy { anonymization_supported: true, max_retention_days: Some(7) };
    let row = || AgentStore::open(&layout, "agent", IfMissing::Skip).unwrap().unwrap().agent_row().unwrap();
    let open = || GeneMemory::open(GeneOptions { agent_id: Some("agent".into()), gene_id: Some(gene('a')), domain: None, root: Some(root.to_str().unwrap().into()), url: None }).unwrap();
    for round in 0..2 {
        assert!(ensure_agent_memory(&layout, "agent", 1024, limits).unwrap(), "round {round}: the memory was missing");
        assert_eq!((row().quota, row().policy), (1024, limits), "round {round}");
        {
            let m = open();
            assert_eq!(write(&m, "big", 2048, "CACHE", T0).unwrap_err().code, ErrorCode::QuotaExceeded, "round {round}");
            write(&m, "small", 10, "CACHE", T0).unwrap();
        }
        // Present: left exactly as it is, whatever limits are asked for.
        assert!(!ensure_agent_memory(&layout, "agent", 1 << 30, DataPolicy::default()).unwrap());
        assert_eq!((row().quota, row().policy, row().used), (1024, limits, 15));
        // Deleted by hand (every handle of this process is gone): the next ensure recreates it.
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", layout.db_path("agent").display()));
        }
    }
    std::fs::remove_dir_all(root).unwrap();
}
