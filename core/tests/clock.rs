//! R-ENT-4: a change takes its time under the write lock, and stored times never run backwards:
//! a clock stepped back is floored at the latest stored time, so "newest first", eviction order
//! (R-QUO-3), `since`, and the store's own export (R-MIG-3) all follow the order of commits.

use rotifer_memory_core::bundle::{export_agent_memory, import_agent_memory, OnConflict};
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::time::CallTime;
use rotifer_memory_core::{create_agent_memory, Arg, GeneMemory};

mod common;
use common::{obj, s, Project, T0};

const HOUR: i64 = 3_600_000;


fn write(m: &GeneMemory, key: &str, size: usize, category: &str, now: i64) -> rotifer_memory_core::Entry {
    m.write(&s(key), Arg::Bytes(vec![7; size]), &s(category), &Arg::Undefined, &Arg::Undefined, now).unwrap()
}

fn keys(m: &GeneMemory, filter: Arg, now: i64) -> Vec<String> {
    m.query(&filter, now).unwrap().into_iter().map(|e| e.key).collect()
}

#[test]
fn a_clock_stepped_back_never_makes_a_rewrite_older_than_what_it_follows() {
    let root = Project::new("back");
    create_agent_memory(&root.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let m = root.gene("a");
    write(&m, "k1", 10, "CACHE", T0);
    let k2 = write(&m, "k2", 10, "CACHE", T0 + 1000);
    // The clock steps back an hour; k1 is rewritten, then k3 created.
    let k1 = write(&m, "k1", 10, "CACHE", T0 - HOUR);
    assert!(k1.updated_at >= k1.created_at, "updatedAt {} before createdAt {}", k1.updated_at, k1.created_at);
    assert!(k1.updated_at >= k2.updated_at, "the rewrite follows k2's commit: {} < {}", k1.updated_at, k2.updated_at);
    assert_eq!(k1.updated_at, T0 + 1000, "floored at the latest stored time, not moved past it");
    let k3 = write(&m, "k3", 10, "CACHE", T0 - 2 * HOUR);
    assert_eq!((k3.created_at, k3.updated_at), (T0 + 1000, T0 + 1000));
    // Newest first is the order of commits: k3, k1, k2.
    assert_eq!(keys(&m, Arg::Undefined, T0 - 2 * HOUR), ["k3", "k1", "k2"]);
    // `since` the latest time still finds the rewritten entry.
    let since = obj(&[("since", s(&rotifer_memory_core::time::format_ms(T0 + 1000)))]);
    assert_eq!(keys(&m, since, T0 - 2 * HOUR), ["k3", "k1", "k2"]);
}

#[test]
fn eviction_takes_the_entry_written_longest_ago_even_after_the_clock_steps_back() {
    // R-QUO-3: a rewritten entry counts as new.
    let root = Project::new("evict");
    create_agent_memory(&root.layout(), "a", 40, DataPolicy::default()).unwrap();
    let m = root.gene("a");
    write(&m, "k1", 8, "CACHE", T0);
    write(&m, "k2", 8, "CACHE", T0 + 1000);
    write(&m, "k1", 8, "CACHE", T0 - HOUR); // k1 is now the newest
    // 20 + 21 bytes do not fit in 40: the oldest CACHE entry goes, which is k2.
    write(&m, "k3", 19, "CACHE", T0 - HOUR);
    let mut left = keys(&m, Arg::Undefined, T0);
    left.sort();
    assert_eq!(left, ["k1", "k3"]);
}

#[test]
fn the_store_imports_its_own_export_after_the_clock_steps_back() {
    // R-MIG-3: whatever the store writes, its own export imports.
    let root = Project::new("export");
    create_agent_memory(&root.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let m = root.gene("a");
    write(&m, "k1", 10, "CONTEXT", T0);
    write(&m, "k1", 10, "CONTEXT", T0 - HOUR);
    write(&m, "k2", 10, "CONTEXT", T0 - HOUR);
    let bundle = export_agent_memory(&root.layout(), "a", false, T0).unwrap();
    let imported = import_agent_memory(&root.layout(), "b", &bundle.bytes, OnConflict::Fail, T0).unwrap();
    assert_eq!(imported.created, 2);
}

#[test]
fn an_imported_entry_ahead_of_the_clock_is_rewritten_no_earlier_than_it_was_stored() {
    let root = Project::new("ahead");
    create_agent_memory(&root.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let m = root.gene("a");
    write(&m, "k1", 10, "CONTEXT", T0 + 10 * HOUR);
    let bundle = export_agent_memory(&root.layout(), "a", false, T0 + 10 * HOUR).unwrap();
    import_agent_memory(&root.layout(), "b", &bundle.bytes, OnConflict::Fail, T0).unwrap();
    let b = root.gene("b");
    let rewritten = write(&b, "k1", 10, "CONTEXT", T0);
    assert_eq!((rewritten.created_at, rewritten.updated_at), (T0 + 10 * HOUR, T0 + 10 * HOUR));
}

#[test]
fn the_system_clock_is_read_once_the_write_lock_is_held() {
    // A call handed the system clock (`CallTime::system()`) whose time was read before the lock
    // (here: by hand, long ago) stores the time read under the lock.
    let root = Project::new("system");
    create_agent_memory(&root.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let m = root.gene("a");
    let early = CallTime::system();
    let read_early = early.ms();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let e = m.write(&s("k"), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, &early).unwrap();
    assert!(e.updated_at >= read_early + 30, "stored {} but the clock read before the lock was {read_early}", e.updated_at);
}
