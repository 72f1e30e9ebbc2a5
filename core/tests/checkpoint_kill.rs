//! R-HOST-1b: a checkpoint of this package whose process was killed before it stamped its end is
//! not a restore, for the other processes that have the database open; a restore is still one.
//!
//! "Another process" is another SQLite connection to the file, and its checkpoints are
//! bracketed by the lineage stamp as the store brackets its own; its death is the lineage lock
//! dropped without `end_checkpoint`.

use rotifer_memory_core::lineage::Lineage;
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::{create_agent_memory, Arg, ErrorCode, GeneMemory};
use std::path::PathBuf;

mod common;
use common::{s, Project, T0};

fn put(m: &GeneMemory, key: &str, now: i64) -> rotifer_memory_core::Result<rotifer_memory_core::Entry> {
    m.write(&s(key), Arg::Bytes(vec![7; 200]), &s("PREFERENCE"), &Arg::Undefined, &Arg::Undefined, now)
}

/// An agent "a", a gene's memory of it (this process), and another connection (another process).
struct Two {
    project: Project,
    db: PathBuf,
    other: rusqlite::Connection,
}

impl Two {
    fn new() -> (Two, GeneMemory) {
        let project = Project::new("checkpoint-kill");
        create_agent_memory(&project.layout(), "a", 1 << 30, DataPolicy::default()).unwrap();
        let m = project.gene("a");
        for i in 0..20 {
            put(&m, &format!("k{i}"), T0 + i).unwrap();
        }
        let db = project.layout().real().unwrap().db_path("a");
        let other = rusqlite::Connection::open(&db).unwrap();
        other.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
        other.execute_batch("PRAGMA wal_autocheckpoint = 0").unwrap();
        (Two { project, db, other }, m)
    }

    /// A commit of the other process (which restarts the WAL if it was wholly checkpointed).
    fn commit(&self) {
        // Changed, then changed back: an UPDATE that leaves the row as it was writes no page.
        self.other.execute_batch("UPDATE agent SET last_seq = last_seq + 1; UPDATE agent SET last_seq = last_seq - 1").unwrap();
    }

    /// A checkpoint of the other process, as the store makes one; `killed`: its process dies
    /// after SQLite copied the pages, before the stamp records the end.
    fn checkpoint(&self, killed: bool) {
        let lineage = Lineage::lock(&self.db).unwrap();
        assert!(lineage.begin_checkpoint().unwrap());
        let (busy, _, _): (i64, i64, i64) = self.other.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap();
        assert_eq!(busy, 0);
        if !killed {
            lineage.end_checkpoint().unwrap();
        }
    }

    /// The salts in the WAL's header (new at each restart).
    fn salts(&self) -> Vec<u8> {
        std::fs::read(format!("{}-wal", self.db.display())).unwrap()[16..24].to_vec()
    }

    fn orphaned(&self) -> Vec<String> {
        let dir = self.db.parent().unwrap();
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|n| n.contains("orphaned")).collect()
    }
}

#[test]
fn a_checkpoint_killed_before_its_end_in_a_wal_restarted_since_the_last_look_is_not_a_restore() {
    let (two, m) = Two::new();
    // Everything checkpointed; this process looks (its mark: the WAL as it is now).
    two.checkpoint(false);
    put(&m, "seen", T0 + 100).unwrap();
    two.checkpoint(false);
    m.read(&s("seen"), &Arg::Undefined, T0 + 101).unwrap();
    // The other process starts a new WAL, then is killed in its checkpoint of it.
    let looked_at = two.salts();
    two.commit();
    assert_ne!(two.salts(), looked_at, "a new WAL since this process's last look");
    two.checkpoint(true);
    put(&m, "after", T0 + 102).expect("a checkpoint cut short is not a restore");
    assert!(m.read(&s("k3"), &Arg::Undefined, T0 + 103).unwrap().is_some());
    assert_eq!(two.orphaned(), Vec::<String>::new());
    assert!(two.project.keys("a", T0 + 104).contains(&"after".to_string()));
}

#[test]
fn a_checkpoint_killed_twice_at_the_same_frames_is_not_a_restore() {
    // A checkpoint killed while copying pages leaves the counters where the next one, killed at
    // the same point, leaves them too: the file was written, no counter moved.
    let (two, m) = Two::new();
    put(&m, "seen", T0 + 100).unwrap();
    let page = {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::open(&two.db).unwrap();
        let mut p = vec![0u8; 4096];
        f.read_exact_at(&mut p, 4096).unwrap();
        p
    };
    for round in 0..2 {
        let lineage = Lineage::lock(&two.db).unwrap();
        assert!(lineage.begin_checkpoint().unwrap());
        // The page it copied before the kill: as the file already held it (SQLite writes whole
        // pages; which ones were copied does not matter to the judgement).
        use std::os::unix::fs::FileExt;
        std::fs::OpenOptions::new().write(true).open(&two.db).unwrap().write_all_at(&page, 4096).unwrap();
        drop(lineage); // killed
        put(&m, &format!("after{round}"), T0 + 101 + round).unwrap_or_else(|e| panic!("round {round}: {}", e.message));
    }
    assert_eq!(two.orphaned(), Vec::<String>::new());
}

#[test]
fn a_backup_copied_over_the_file_after_a_killed_checkpoint_was_judged_is_still_a_restore() {
    let (two, m) = Two::new();
    two.checkpoint(false);
    put(&m, "seen", T0 + 100).unwrap();
    let backup = std::fs::read(&two.db).unwrap();
    two.commit();
    two.checkpoint(true);
    put(&m, "after", T0 + 101).unwrap(); // the killed checkpoint judged: not a restore
    put(&m, "more", T0 + 102).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&two.db, &backup).unwrap(); // in place: same inode
    let e = put(&m, "then", T0 + 103).expect_err("a restore in place is noticed");
    assert_eq!(e.code, ErrorCode::StorageError);
    assert!(e.message.contains("written over") || e.message.contains("not a checkpoint"), "{}", e.message);
}

#[test]
fn a_write_to_the_file_with_no_checkpoint_begun_since_the_last_look_is_still_a_restore() {
    // The stamp left "checkpointing" by a process killed before this one's last look vouches
    // for nothing written after that look.
    let (two, m) = Two::new();
    two.commit();
    two.checkpoint(true);
    put(&m, "judged", T0 + 100).unwrap();
    let mut bytes = std::fs::read(&two.db).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 0xff; // a byte of the last page changed in place
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&two.db, &bytes).unwrap();
    let e = put(&m, "then", T0 + 101).expect_err("a write no checkpoint made is noticed");
    assert_eq!(e.code, ErrorCode::StorageError, "{}", e.message);
}
