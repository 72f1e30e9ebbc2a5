//! The rules the core implements, tested without Node.js: eviction thresholds and order, the
//! write-sequence tiebreak, writes into a memory over a lowered quota (R-QUO-3), policy changes
//! by non-creators (R-ACC-2), the file checks before opening, one open per database path
//! (R-HOST-5), and a database written over in place while open (R-HOST-1).

use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::{create_agent_memory, list_agent_memory, Arg, ErrorCode, GeneMemory, GeneOptions, Layout};
use std::path::{Path, PathBuf};

mod common;
use common::{gene, obj, s, DAY, T0};

/// A project root with agent "a" at `quota`, removed on drop.
struct Root {
    path: PathBuf,
    layout: Layout,
}

impl Root {
    fn new(quota: u64, policy: DataPolicy) -> Root {
        let path = std::env::temp_dir().join(format!("rotifer-core-rules-{}", rotifer_memory_core::store::unique_suffix()));
        std::fs::create_dir(&path).unwrap();
        let path = std::fs::canonicalize(path).unwrap();
        let layout = Layout::at(&path);
        create_agent_memory(&layout, "a", quota, policy).unwrap();
        Root { path, layout }
    }
    fn gene(&self, c: char, domain: &str) -> GeneMemory {
        GeneMemory::open(GeneOptions {
            agent_id: Some("a".into()),
            gene_id: Some(gene(c)),
            domain: Some(domain.into()),
            root: Some(self.path.to_str().unwrap().into()),
            url: None,
        })
        .unwrap()
    }
    fn keys(&self, now: i64) -> Vec<String> {
        list_agent_memory(&self.layout, "a", None, now).unwrap().into_iter().map(|l| l.key).collect()
    }
    fn actions(&self) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(self.path.join(".rotifer/audit.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|l| (l["action"].as_str().unwrap().to_string(), l["key"].as_str().unwrap_or("").to_string()))
            .collect()
    }
    fn db(&self) -> PathBuf {
        self.layout.real().unwrap().db_path("a")
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Writes `key` so that the entry is exactly `size` bytes (key bytes + value bytes).
fn put(m: &GeneMemory, key: &str, size: usize, category: &str, now: i64) -> rotifer_memory_core::Result<rotifer_memory_core::Entry> {
    m.write(&s(key), Arg::Bytes(vec![7; size - key.len()]), &s(category), &Arg::Undefined, &Arg::Undefined, now)
}

fn evicted(r: &Root) -> Vec<String> {
    r.actions().into_iter().filter(|(a, _)| a == "memory.evict").map(|(_, k)| k).collect()
}

#[test]
fn a_write_that_lands_exactly_on_the_quota_evicts_nothing_and_one_byte_more_evicts_only_what_is_needed() {
    let r = Root::new(1000, DataPolicy::default());
    let m = r.gene('a', "text");
    put(&m, "c1", 300, "CACHE", T0).unwrap();
    put(&m, "c2", 300, "CACHE", T0 + 1).unwrap();
    put(&m, "c3", 300, "CACHE", T0 + 2).unwrap();
    put(&m, "p", 100, "PREFERENCE", T0 + 3).unwrap(); // 1000 of 1000
    assert!(evicted(&r).is_empty());
    put(&m, "q", 1 + 1, "PREFERENCE", T0 + 4).unwrap(); // 2 bytes over: the oldest CACHE entry alone
    assert_eq!(evicted(&r), ["c1"]);
    assert_eq!(r.keys(T0 + 5), ["c2", "c3", "p", "q"]);
}

#[test]
fn eviction_takes_cache_then_pattern_then_context_and_never_preference() {
    let r = Root::new(1000, DataPolicy::default());
    let m = r.gene('a', "text");
    put(&m, "x", 200, "CONTEXT", T0).unwrap(); // oldest, but evicted last
    put(&m, "pa", 200, "PATTERN", T0 + 1).unwrap();
    put(&m, "pref", 200, "PREFERENCE", T0 + 2).unwrap();
    put(&m, "c", 200, "CACHE", T0 + 3).unwrap();
    put(&m, "new", 200, "PREFERENCE", T0 + 4).unwrap(); // 1000 exactly
    put(&m, "n2", 500, "PREFERENCE", T0 + 5).unwrap(); // needs 500: c, pa, then x (900 left)
    assert_eq!(evicted(&r), ["c", "pa", "x"]);
    // Only PREFERENCE entries are left: nothing evictable, so the next growing write is refused.
    let err = put(&m, "n3", 101, "CACHE", T0 + 6).unwrap_err();
    assert_eq!(err.code, ErrorCode::QuotaExceeded);
    assert_eq!(r.keys(T0 + 7), ["n2", "new", "pref"]);
}

#[test]
fn entries_written_in_the_same_millisecond_are_ordered_by_write_sequence() {
    let r = Root::new(1000, DataPolicy::default());
    let m = r.gene('a', "text");
    for k in ["b", "a", "d", "c"] {
        put(&m, k, 250, "CACHE", T0).unwrap(); // all at T0: only the sequence tells them apart
    }
    put(&m, "b", 250, "CACHE", T0).unwrap(); // rewritten: now the newest, though stored first
    let newest_first: Vec<String> = m.query(&Arg::Undefined, T0).unwrap().into_iter().map(|e| e.key).collect();
    assert_eq!(newest_first, ["b", "c", "d", "a"]);
    put(&m, "e", 300, "PREFERENCE", T0).unwrap(); // 300 over: the two oldest writes
    assert_eq!(evicted(&r), ["a", "d"]);
}

#[test]
fn a_rewrite_into_a_memory_over_a_lowered_quota_evicts_nothing_unless_it_grows_the_total() {
    let r = Root::new(10_000, DataPolicy::default());
    let m = r.gene('a', "text");
    for i in 0..7 {
        put(&m, &format!("c{i}"), 100, "CACHE", T0 + i).unwrap();
    }
    put(&m, "p", 1000, "PREFERENCE", T0 + 10).unwrap();
    create_agent_memory(&r.layout, "a", 1024, DataPolicy::default()).unwrap(); // 1700 stored
    put(&m, "p", 1000, "PREFERENCE", T0 + 11).unwrap();
    put(&m, "p", 990, "PREFERENCE", T0 + 12).unwrap();
    assert!(evicted(&r).is_empty(), "a write that does not grow the total evicts nothing");
    put(&m, "p", 991, "PREFERENCE", T0 + 13).unwrap(); // 1691 → total must end ≤ 1024: 667 to free
    assert_eq!(evicted(&r), ["c0", "c1", "c2", "c3", "c4", "c5", "c6"]);
    assert_eq!(r.keys(T0 + 14), ["p"]);
}

#[test]
fn a_refusal_changes_nothing_and_reports_what_could_be_evicted() {
    let r = Root::new(1000, DataPolicy::default());
    let m = r.gene('a', "text");
    for i in 0..9 {
        put(&m, &format!("c{i}"), 100, "CACHE", T0 + i).unwrap();
    }
    let err = put(&m, "big", 1001, "PREFERENCE", T0 + 20).unwrap_err();
    assert_eq!(err.code, ErrorCode::QuotaExceeded);
    // The gene is told only its write's size and the quota; the audit line has the figures.
    assert!(err.message.contains("(1001 bytes)") && !err.message.contains("900"), "{}", err.message);
    let audit = std::fs::read_to_string(r.path.join(".rotifer/audit.jsonl")).unwrap();
    let reject: serde_json::Value =
        serde_json::from_str(audit.lines().find(|l| l.contains("memory.quota_reject")).unwrap()).unwrap();
    assert_eq!(reject["evictable"], 900);
    assert_eq!(reject["needed"], 901);
    assert!(evicted(&r).is_empty());
    assert_eq!(r.keys(T0 + 21).len(), 9);
}

#[test]
fn only_the_creator_changes_an_entrys_policies() {
    let r = Root::new(1 << 20, DataPolicy { anonymization_supported: false, max_retention_days: Some(30) });
    let creator = r.gene('a', "text");
    let other = r.gene('b', "text"); // same domain: SAME_DOMAIN lets it write
    let retention = |days: f64| {
        obj(&[("maxRetentionDays", Arg::Number(days)), ("autoDeleteOnTermination", Arg::Bool(false)), ("anonymizationSupported", Arg::Bool(false))])
    };
    let all = obj(&[("readScope", s("ALL_GENES")), ("writeScope", s("SAME_DOMAIN")), ("sharePolicy", s("PRIVATE"))]);
    creator.write(&s("k"), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &retention(5.0), T0).unwrap();
    let write = |m: &GeneMemory, access: &Arg, ret: &Arg| m.write(&s("k"), Arg::Bytes(vec![2]), &s("CACHE"), access, ret, T0 + 1);
    // The same policies, given or omitted: allowed.
    write(&other, &Arg::Undefined, &Arg::Undefined).unwrap();
    let same_access = obj(&[("readScope", s("SAME_DOMAIN")), ("writeScope", s("SAME_DOMAIN")), ("sharePolicy", s("PRIVATE"))]);
    write(&other, &same_access, &retention(5.0)).unwrap();
    // Any change by another gene: denied, with the reason.
    let err = write(&other, &all, &Arg::Undefined).unwrap_err();
    assert_eq!(err.code, ErrorCode::AccessDenied);
    assert!(err.message.contains("accessPolicy"), "{}", err.message);
    let err = write(&other, &Arg::Undefined, &retention(6.0)).unwrap_err();
    assert!(err.message.contains("retentionPolicy"), "{}", err.message);
    let err = write(&other, &Arg::Undefined, &Arg::Null).unwrap_err(); // back to following the agent
    assert_eq!(err.code, ErrorCode::AccessDenied);
    // The creator may.
    write(&creator, &all, &Arg::Null).unwrap();
    let e = creator.read(&s("k"), &Arg::Undefined, T0 + 2).unwrap().unwrap();
    assert_eq!(e.access_policy.read_scope.as_str(), "ALL_GENES");
    assert_eq!(e.retention_policy, None);
    // Repeated denials of one handle are counted into a summary line, written when it goes.
    drop(other);
    let audit = std::fs::read_to_string(r.path.join(".rotifer/audit.jsonl")).unwrap();
    let denials: u64 = audit
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["action"] == "memory.access_denied")
        .map(|l| l["count"].as_u64().unwrap_or(1))
        .sum();
    assert_eq!(denials, 3);
}

fn open_write(root: &Path, agent: &str) -> rotifer_memory_core::Result<rotifer_memory_core::Entry> {
    let m = GeneMemory::open(GeneOptions { agent_id: Some(agent.into()), gene_id: Some(gene('a')), domain: None, root: Some(root.to_str().unwrap().into()), url: None })
        .unwrap();
    put(&m, "k", 10, "CACHE", T0)
}

#[test]
fn files_that_are_not_databases_are_refused_before_sqlite_opens_them_and_left_as_they_are() {
    let r = Root::new(1 << 20, DataPolicy::default());
    let dir = r.db().parent().unwrap().to_path_buf();
    // A symlink to a real database: never followed.
    std::os::unix::fs::symlink(r.db(), dir.join("link.db")).unwrap();
    let err = open_write(&r.path, "link").unwrap_err();
    assert_eq!(err.code, ErrorCode::StorageError);
    assert!(err.message.contains("symlink"), "{}", err.message);
    assert!(std::fs::symlink_metadata(dir.join("link.db")).unwrap().file_type().is_symlink());
    // A folder in place of a database.
    std::fs::create_dir(dir.join("folder.db")).unwrap();
    assert!(open_write(&r.path, "folder").unwrap_err().message.contains("not a regular file"));
    // A valid SQLite header over garbage is SQLite's to judge; no header at all is ours.
    std::fs::write(dir.join("junk.db"), vec![b'x'; 4096]).unwrap();
    let err = open_write(&r.path, "junk").unwrap_err();
    assert!(err.message.contains("not a SQLite database"), "{}", err.message);
    assert_eq!(std::fs::read(dir.join("junk.db")).unwrap(), vec![b'x'; 4096]);
    assert!(!dir.join("junk.db-wal").exists(), "SQLite never opened it");
    std::fs::write(dir.join("empty.db"), b"").unwrap();
    assert!(open_write(&r.path, "empty").unwrap_err().message.contains("is empty"));
}

/// The POSIX locks this process holds on `file` (/proc/locks). The kernel lists the locks of the
/// whole machine in chunks: one read can skip lines while other processes lock and unlock, so
/// the most seen in five reads counts. A lock this process lost stays lost: no read shows it.
fn locks_held(file: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(file).unwrap().ino();
    let pid = std::process::id().to_string();
    let read = || {
        std::fs::read_to_string("/proc/locks")
            .unwrap()
            .lines()
            .filter(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.iter().position(|x| *x == "POSIX").is_some_and(|i| f.get(i + 3) == Some(&pid.as_str()) && f.get(i + 4).is_some_and(|d| d.ends_with(&format!(":{ino}"))))
            })
            .count()
    };
    (0..5).map(|_| read()).max().unwrap()
}

#[test]
fn threads_opening_one_agent_at_once_share_one_store_and_keep_the_process_locks() {
    // Closing any descriptor of a file drops every POSIX lock the process holds on it: a thread
    // that opened and closed the database file while another's connection was open left the
    // process without SQLite's locks (R-HOST-5).
    for round in 0..20 {
        let r = Root::new(1 << 20, DataPolicy::default());
        let barrier = std::sync::Barrier::new(4);
        let handles: Vec<GeneMemory> = ['a', 'b', 'c', 'd'].into_iter().map(|c| r.gene(c, "text")).collect();
        std::thread::scope(|scope| {
            for (i, m) in handles.iter().enumerate() {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    put(m, &format!("k{i}"), 10, "CACHE", T0).unwrap();
                });
            }
        });
        assert!(locks_held(&r.db()) > 0, "round {round}: the process still holds its lock on the database");
        drop(handles);
    }
}

/// The agent's database after a clean close (WAL checkpointed and removed), as a backup.
fn backup_of(r: &Root) -> Vec<u8> {
    let db = r.db();
    assert!(!PathBuf::from(format!("{}-wal", db.display())).exists(), "a clean close leaves no WAL");
    std::fs::read(db).unwrap()
}

#[test]
fn a_backup_copied_over_the_open_database_fails_every_call_and_is_never_written_over() {
    let r = Root::new(1 << 20, DataPolicy::default());
    put(&r.gene('a', "text"), "before", 10, "CACHE", T0).unwrap(); // the handle drops: a clean close
    let backup = backup_of(&r);
    let m = r.gene('a', "text");
    put(&m, "after", 10, "CACHE", T0 + 1).unwrap(); // in the WAL only
    std::fs::write(r.db(), &backup).unwrap(); // in place: same inode, same bytes even
    for _ in 0..2 {
        let err = m.read(&s("after"), &Arg::Undefined, T0 + 2).unwrap_err();
        assert_eq!(err.code, ErrorCode::StorageError);
        assert!(err.message.contains("written over"), "{}", err.message);
    }
    assert_eq!(list_agent_memory(&r.layout, "a", None, T0 + 2).unwrap_err().code, ErrorCode::StorageError);
    drop(m);
    assert_eq!(std::fs::read(r.db()).unwrap(), backup, "the restored file is exactly what was copied");
}

/// A restore in place that no call noticed before the store closed: the close must not
/// checkpoint the WAL into the restored file either.
#[test]
fn a_backup_copied_over_the_open_database_is_not_written_over_by_the_close() {
    let r = Root::new(1 << 20, DataPolicy::default());
    put(&r.gene('a', "text"), "before", 10, "CACHE", T0).unwrap();
    let backup = backup_of(&r);
    let m = r.gene('a', "text");
    put(&m, "after", 10, "CACHE", T0 + 1).unwrap(); // in the WAL only
    std::fs::write(r.db(), &backup).unwrap();
    drop(m); // no call in between: the close is the first to look
    assert_eq!(std::fs::read(r.db()).unwrap(), backup, "the restored file is exactly what was copied");
}

#[test]
fn checkpoints_of_other_connections_and_of_this_one_are_not_taken_for_an_overwrite() {
    let r = Root::new(64 << 20, DataPolicy::default());
    let m = r.gene('a', "text");
    put(&m, "k", 10, "CACHE", T0).unwrap();
    // Another connection (as another process would) copies the WAL into the database file.
    let other = rusqlite::Connection::open(r.db()).unwrap();
    let (busy, log, done): (i64, i64, i64) = other.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?))).unwrap();
    assert_eq!((busy, log > 0, done), (0, true, log), "the checkpoint wrote into the file");
    drop(other);
    put(&m, "k2", 10, "CACHE", T0 + 1).unwrap();
    assert!(m.read(&s("k"), &Arg::Undefined, T0 + 2).unwrap().is_some());
    // This connection's own automatic checkpoints (every 1000 pages of WAL) and WAL restarts.
    for i in 0..3000 {
        put(&m, &format!("big{}", i % 500), 4000, "CACHE", T0 + 3 + i).unwrap();
        if i % 100 == 0 {
            m.query(&obj(&[("limit", Arg::Number(1.0))]), T0 + 3 + i).unwrap();
        }
    }
    assert_eq!(r.keys(T0 + 4000).len(), 502);
    let _ = DAY;
}

/// R-HOST-1, what a read right after a change may see: a gene's read relies on a look at the
/// kernel's change reports that any call of the process made in the last `RECENT_LOOK`. So a
/// write, and a handle's first read, always notice a change made before them; a later read may
/// answer from the state the process had open (or fail) if the change is younger than
/// `RECENT_LOOK`, and always fails once it is older.
#[test]
fn reads_notice_a_change_older_than_the_recent_look_and_writes_and_first_reads_always_do() {
    use rotifer_memory_core::integrity::RECENT_LOOK;
    let overwrite = |r: &Root| {
        let len = std::fs::metadata(r.db()).unwrap().len() as usize;
        std::fs::write(r.db(), vec![b'x'; len]).unwrap(); // in place: same inode
    };
    let storage = |e: rotifer_memory_core::MemoryError| assert_eq!(e.code, ErrorCode::StorageError, "{}", e.message);

    // A read of a handle that has read before: the old answer or a failure at once, a failure
    // once the change is older than RECENT_LOOK.
    let r = Root::new(1 << 20, DataPolicy::default());
    let m = r.gene('a', "text");
    put(&m, "k", 10, "CACHE", T0).unwrap();
    assert!(m.read(&s("k"), &Arg::Undefined, T0).unwrap().is_some());
    overwrite(&r);
    match m.read(&s("k"), &Arg::Undefined, T0) {
        Ok(found) => assert!(found.is_some(), "the state the process had open"),
        Err(e) => storage(e),
    }
    std::thread::sleep(RECENT_LOOK * 2);
    for _ in 0..2 {
        storage(m.read(&s("k"), &Arg::Undefined, T0).unwrap_err());
        storage(m.query(&Arg::Undefined, T0).unwrap_err());
    }
    drop(m);

    // A write right after the change: always noticed, nothing written.
    let r = Root::new(1 << 20, DataPolicy::default());
    let m = r.gene('a', "text");
    put(&m, "k", 10, "CACHE", T0).unwrap();
    assert!(m.read(&s("k"), &Arg::Undefined, T0).unwrap().is_some());
    overwrite(&r);
    storage(put(&m, "k2", 10, "CACHE", T0).unwrap_err());
    storage(m.read(&s("k"), &Arg::Undefined, T0).unwrap_err()); // and every call after it
    drop(m);
    assert!(std::fs::read(r.db()).unwrap().iter().all(|&b| b == b'x'), "the overwritten file was left as it is");

    // The first read of a new handle right after the change: always noticed.
    let r = Root::new(1 << 20, DataPolicy::default());
    let m = r.gene('a', "text");
    put(&m, "k", 10, "CACHE", T0).unwrap();
    assert!(m.read(&s("k"), &Arg::Undefined, T0).unwrap().is_some());
    overwrite(&r);
    storage(r.gene('a', "text").read(&s("k"), &Arg::Undefined, T0).unwrap_err());
}

// The audit log kept open (R-AUD-1/2, R-HOST-1): one descriptor per log path for the process,
// revalidated so that a log moved, replaced or deleted by hand gets a new file at its path, and
// a log made untrusted is refused from the next append on. (A descriptor kept without the
// kernel's reports fails the first; the second is caught by the link count too.)

fn audit_of(r: &Root) -> PathBuf {
    r.path.join(".rotifer/audit.jsonl")
}

fn lines_of(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn an_audit_log_replaced_or_moved_while_open_gets_the_next_lines_at_its_path() {
    use std::os::unix::fs::OpenOptionsExt;
    let r = Root::new(1 << 20, DataPolicy::default());
    let m = r.gene('a', "text");
    put(&m, "k1", 10, "CACHE", T0).unwrap();
    let audit = audit_of(&r);
    // Replaced: a new file renamed over it.
    let fresh = r.path.join(".rotifer/fresh.jsonl");
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&fresh).unwrap();
    std::fs::write(&fresh, "{\"mark\":1}\n").unwrap();
    let old = r.path.join(".rotifer/old.jsonl");
    std::fs::hard_link(&audit, &old).unwrap();
    std::fs::rename(&fresh, &audit).unwrap();
    put(&m, "k2", 10, "CACHE", T0).unwrap();
    assert_eq!(lines_of(&old).len(), 1, "nothing more in the replaced file");
    let now = lines_of(&audit);
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(now[1].contains("\"k2\""));
    // Moved away, nothing in its place: a new file.
    let moved = r.path.join(".rotifer/moved.jsonl");
    std::fs::rename(&audit, &moved).unwrap();
    put(&m, "k3", 10, "CACHE", T0).unwrap();
    assert_eq!(lines_of(&moved).len(), 2, "nothing more in the moved file");
    let now = lines_of(&audit);
    assert_eq!(now.len(), 1);
    assert!(now[0].contains("\"k3\""));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&audit).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn an_audit_log_deleted_while_open_is_made_again() {
    let r = Root::new(1 << 20, DataPolicy::default());
    let m = r.gene('a', "text");
    put(&m, "k1", 10, "CACHE", T0).unwrap();
    std::fs::remove_file(audit_of(&r)).unwrap();
    put(&m, "k2", 10, "CACHE", T0).unwrap();
    let now = lines_of(&audit_of(&r));
    assert_eq!(now.len(), 1);
    assert!(now[0].contains("\"k2\""));
}

#[test]
fn an_audit_log_made_untrusted_while_open_is_refused_at_the_next_write_and_nothing_changes() {
    use std::os::unix::fs::PermissionsExt;
    let r = Root::new(1 << 20, DataPolicy::default());
    let m = r.gene('a', "text");
    put(&m, "k1", 10, "CACHE", T0).unwrap();
    let audit = audit_of(&r);
    let refused = |what: &str| {
        let e = put(&m, "k2", 10, "CACHE", T0).unwrap_err();
        assert_eq!(e.code, ErrorCode::StorageError, "{what}: {}", e.message);
        assert!(e.message.contains("audit log"), "{what}: {}", e.message);
        assert!(m.read(&s("k2"), &Arg::Undefined, T0).unwrap().is_none(), "{what}: nothing was written");
        assert_eq!(lines_of(&audit).len(), 1, "{what}: no line");
    };
    std::fs::set_permissions(&audit, std::fs::Permissions::from_mode(0o666)).unwrap();
    refused("chmod 0666");
    std::fs::set_permissions(&audit, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(&audit, Some(4242), None).unwrap(); // the tests run as root
    refused("another user's");
    std::os::unix::fs::chown(&audit, Some(unsafe { libc::geteuid() }), None).unwrap();
    let link = r.path.join("elsewhere.jsonl");
    std::fs::hard_link(&audit, &link).unwrap();
    refused("a second name");
    std::fs::remove_file(&link).unwrap();
    put(&m, "k2", 10, "CACHE", T0).unwrap();
    assert_eq!(lines_of(&audit).len(), 2, "trusted again: appended");
}

#[test]
fn stores_of_one_root_in_several_threads_append_whole_lines_to_one_log() {
    let r = Root::new(1 << 20, DataPolicy::default());
    create_agent_memory(&r.layout, "b", 1 << 20, DataPolicy::default()).unwrap();
    let root = r.path.to_str().unwrap().to_string();
    std::thread::scope(|scope| {
        for (t, agent) in ["a", "b", "a", "b"].into_iter().enumerate() {
            let root = root.clone();
            scope.spawn(move || {
                let m = GeneMemory::open(GeneOptions { agent_id: Some(agent.into()), gene_id: Some(gene('a')), domain: None, root: Some(root), url: None }).unwrap();
                for i in 0..100 {
                    put(&m, &format!("t{t}-{i}"), 10, "CACHE", T0).unwrap();
                }
            });
        }
    });
    let lines = lines_of(&audit_of(&r));
    for l in &lines {
        serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{e}: {l:?}"));
    }
    assert_eq!(lines.len(), 400);
}

#[test]
fn a_telemetry_log_moved_while_open_gets_the_next_events_at_its_path() {
    if !rotifer_memory_core::audit::telemetry_enabled() {
        return; // the environment opted out: no events to follow
    }
    let r = Root::new(1 << 20, DataPolicy::default());
    let locked = obj(&[("readScope", s("CREATOR_GENE_ONLY")), ("writeScope", s("CREATOR_GENE_ONLY")), ("sharePolicy", s("PRIVATE"))]);
    r.gene('a', "text").write(&s("k"), Arg::Bytes(vec![1]), &s("CACHE"), &locked, &Arg::Undefined, T0).unwrap();
    let deny = || assert_eq!(r.gene('b', "text").read(&s("k"), &Arg::Undefined, T0).unwrap_err().code, ErrorCode::AccessDenied);
    let telemetry = r.path.join(".rotifer/telemetry.jsonl");
    deny();
    assert_eq!(lines_of(&telemetry).len(), 1);
    let moved = r.path.join(".rotifer/telemetry.old");
    std::fs::rename(&telemetry, &moved).unwrap();
    deny();
    assert_eq!(lines_of(&moved).len(), 1, "nothing more in the moved file");
    assert_eq!(lines_of(&telemetry).len(), 1, "a new file at the path");
}

#[test]
fn a_denial_made_before_any_store_call_also_finds_the_audit_log_moved() {
    // A caller with no v2 id is denied before the store is used: its line is appended without
    // the look a store call makes as it starts, so the append looks itself.
    let r = Root::new(1 << 20, DataPolicy::default());
    put(&r.gene('a', "text"), "k1", 10, "CACHE", T0).unwrap();
    let audit = audit_of(&r);
    let moved = r.path.join(".rotifer/moved.jsonl");
    std::fs::rename(&audit, &moved).unwrap();
    let anonymous = GeneMemory::open(GeneOptions { agent_id: Some("a".into()), gene_id: None, domain: None, root: Some(r.path.to_str().unwrap().into()), url: None }).unwrap();
    assert_eq!(anonymous.read(&s("k1"), &Arg::Undefined, T0).unwrap_err().code, ErrorCode::AccessDenied);
    assert_eq!(lines_of(&moved).len(), 1, "nothing more in the moved file");
    let now = lines_of(&audit);
    assert_eq!(now.len(), 1);
    assert!(now[0].contains("access_denied"), "{now:?}");
}
