//! Does a WAL belong to the database file beside it? (R-HOST-1b)
//!
//! SQLite replays whatever `-wal` lies beside a database when it opens it, and a WAL carries
//! nothing that ties it to one file. A backup copied over the database (`cp`, `mv`) while a WAL
//! was left (by a process that had the agent open, or was killed) would be undone, or mixed into
//! a corrupt database, by the next open. So beside each database lies a stamp, `<db>-lineage`,
//! that names the file the WAL was last made consistent with: the database's device, inode,
//! change time (which nobody can set back), modification time and size, as they stood after the
//! last checkpoint. Only checkpoints write a WAL database's file, and every checkpoint this
//! package makes is bracketed by the stamp (SQLite's own automatic ones are off), so:
//!
//! - an open whose database matches the stamp replays the WAL as SQLite always does;
//! - one whose database does not was handed a file that no checkpoint made: the WAL (and
//!   `-shm`) beside it is moved aside under a name saying `orphaned`, never replayed, never
//!   deleted;
//! - a stamp copied or moved with the database (its own inode changed: a whole project
//!   copied) says nothing about the copy, which is trusted as it is; so is a database with no
//!   stamp yet (made by an earlier version) and one whose checkpoint was cut short (a process
//!   killed while checkpointing: replaying the WAL is exactly how SQLite finishes it).
//!
//! The stamp also counts the checkpoints this package began on the file. A running process that
//! sees the file written compares the count with the one it saw at its last look: a checkpoint
//! that began since and was cut short (its process killed before it stamped its end) explains
//! the writes, whatever the WAL's counters say; a stamp left "checkpointing" before that look
//! explains nothing written after it.
//!
//! The stamp is read and written under `flock` on the stamp file itself, so an open never judges
//! a file while a checkpoint of another process is writing it. It is never a descriptor of the
//! database (whose closing would drop this process's POSIX locks).

use crate::error::{MemoryError, Result};
use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The WAL header's size: a WAL no longer than this holds no frame to replay.
const WAL_HEADER_BYTES: u64 = 32;
/// The stamp is one line padded to this size, written with one `pwrite`: never seen half-written.
const RECORD_BYTES: usize = 192;
const MAGIC: &str = "rotifer-lineage";

/// What identifies the database file's contents as a checkpoint left them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
    size: u64,
}

impl FileId {
    fn of(meta: &Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            size: meta.len(),
        }
    }

    /// Whether only the attributes changed (owner, mode, links): same file, same contents' times.
    fn same_contents(&self, other: &FileId) -> bool {
        (self.dev, self.ino, self.mtime, self.size) == (other.dev, other.ino, other.mtime, other.size)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The database is as the last checkpoint left it.
    Clean,
    /// A checkpoint was writing it (and may have been cut short).
    Checkpointing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    state: State,
    db: FileId,
    /// The stamp file's own device and inode: a stamp copied elsewhere vouches for nothing
    /// about the file beside it, only for a WAL with these salts.
    own: (u64, u64),
    /// The salts of the WAL when it was stamped (new at each WAL restart), if there was one: a
    /// stamp copied along with its database and WAL knows that WAL by them.
    wal: Option<[u32; 2]>,
    /// How many checkpoints of this package began on the file (0 in a stamp of version 1 or 2).
    checkpoints: u64,
}

impl Record {
    fn encode(&self) -> [u8; RECORD_BYTES] {
        let state = match self.state {
            State::Clean => "clean",
            State::Checkpointing => "checkpointing",
        };
        let d = &self.db;
        let wal = match self.wal {
            Some([a, b]) => format!("{a} {b}"),
            None => "- -".to_string(),
        };
        let text = format!(
            "{MAGIC} 3 {state} {} {} {}.{} {}.{} {} {} {} {wal} {}",
            d.dev, d.ino, d.ctime.0, d.ctime.1, d.mtime.0, d.mtime.1, d.size, self.own.0, self.own.1, self.checkpoints
        );
        let mut out = [b' '; RECORD_BYTES];
        out[..text.len()].copy_from_slice(text.as_bytes());
        out[RECORD_BYTES - 1] = b'\n';
        out
    }

    fn decode(bytes: &[u8]) -> Option<Record> {
        let text = std::str::from_utf8(bytes).ok()?;
        let f: Vec<&str> = text.split_ascii_whitespace().collect();
        let wal = match (f.first(), f.get(1), f.len()) {
            (Some(&MAGIC), Some(&"1"), 10) => None,
            (Some(&MAGIC), Some(&"2"), 12) | (Some(&MAGIC), Some(&"3"), 13) => match (f[10], f[11]) {
                ("-", "-") => None,
                (a, b) => Some([a.parse().ok()?, b.parse().ok()?]),
            },
            _ => return None,
        };
        let checkpoints = match f.get(12) {
            Some(n) => n.parse().ok()?,
            None => 0,
        };
        let state = match f[2] {
            "clean" => State::Clean,
            "checkpointing" => State::Checkpointing,
            _ => return None,
        };
        let time = |s: &str| -> Option<(i64, i64)> {
            let (a, b) = s.split_once('.')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        };
        Some(Record {
            state,
            db: FileId { dev: f[3].parse().ok()?, ino: f[4].parse().ok()?, ctime: time(f[5])?, mtime: time(f[6])?, size: f[7].parse().ok()? },
            own: (f[8].parse().ok()?, f[9].parse().ok()?),
            wal,
            checkpoints,
        })
    }
}

/// The stamp of one database, locked (`flock`) while this value lives.
pub struct Lineage {
    db: PathBuf,
    stamp: PathBuf,
    file: File,
    own: (u64, u64),
    /// The record as last read or written through this lock: an unchanged one is not rewritten.
    known: std::cell::Cell<Option<Record>>,
}

/// What the stamp says of the database file, for a running process that saw it written
/// (`Lineage::look`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// How many checkpoints of this package began on the file: one began since a look that saw
    /// another count.
    pub checkpoints: u64,
    pub says: Says,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Says {
    /// The file is as the last checkpoint of this package left it.
    NamesTheFile,
    /// A checkpoint of this package was writing the file and never stamped its end: its
    /// process was killed (no checkpoint of this package runs while the stamp is locked).
    CutShort,
    /// Neither: another program wrote the file since the last checkpoint (its own checkpoint,
    /// or a backup copied over it), or there is no stamp of this file.
    Nothing,
}

/// What an open found (`Lineage::judge_at_open`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The WAL, if any, belongs to the database: SQLite may replay it.
    Consistent,
    /// The database is not the file the last checkpoint left (a backup copied or moved over it):
    /// the WAL and `-shm` written against the replaced file were moved to these paths.
    Replaced { orphaned: Vec<PathBuf> },
}

impl Lineage {
    /// The stamp path of the database at `db`.
    pub fn path_of(db: &Path) -> PathBuf {
        PathBuf::from(format!("{}-lineage", db.display()))
    }

    /// Opens (creating it 0600) and locks the stamp of `db`. Waits for another process's
    /// checkpoint or open to finish.
    pub fn lock(db: &Path) -> Result<Lineage> {
        let stamp = Self::path_of(db);
        let failed = |e: &dyn std::fmt::Display| MemoryError::storage(format!("{}: {e}; nothing was opened or changed", stamp.display()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&stamp)
            .map_err(|e| failed(&e))?;
        let meta = file.metadata().map_err(|e| failed(&e))?;
        if !meta.is_file() {
            return Err(failed(&"is not a regular file: move it away"));
        }
        crate::storage::files::refuse_untrusted_file(&stamp, &meta)?;
        loop {
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(failed(&e));
            }
        }
        Ok(Lineage { db: db.to_path_buf(), stamp, file, own: (meta.dev(), meta.ino()), known: std::cell::Cell::new(None) })
    }

    fn read(&self) -> Option<Record> {
        let mut buf = [0u8; RECORD_BYTES];
        self.file.read_exact_at(&mut buf, 0).ok()?;
        let record = Record::decode(&buf);
        self.known.set(record);
        record
    }

    /// How many checkpoints of this package the stamp counts (0 for none, or a stamp of another
    /// file: copied here with its database).
    fn checkpoints(&self) -> u64 {
        match self.known.get().or_else(|| self.read()) {
            Some(r) if r.own == self.own => r.checkpoints,
            _ => 0,
        }
    }

    fn write(&self, state: State, db: FileId) -> Result<()> {
        self.write_counted(state, db, self.checkpoints())
    }

    fn write_counted(&self, state: State, db: FileId, checkpoints: u64) -> Result<()> {
        let record = Record { state, db, own: self.own, wal: wal_salts(&self.db), checkpoints };
        if self.known.get() == Some(record) {
            return Ok(());
        }
        self.file
            .write_all_at(&record.encode(), 0)
            .map_err(|e| MemoryError::storage(format!("cannot write {} ({e}); nothing was changed", self.stamp.display())))?;
        self.known.set(Some(record));
        Ok(())
    }

    fn db_now(&self) -> Result<FileId> {
        std::fs::symlink_metadata(&self.db)
            .map(|m| FileId::of(&m))
            .map_err(|e| MemoryError::storage(format!("memory database {}: {e}", self.db.display())))
    }

    /// Records the database as it is now: it was just built, or its WAL judged.
    pub fn stamp_now(&self) -> Result<()> {
        self.write(State::Clean, self.db_now()?)
    }

    /// Judges, before SQLite opens `db`, whether the WAL beside it was written against it; moves
    /// it (and the `-shm`) aside if not, and stamps the database as it is.
    pub fn judge_at_open(&self) -> Result<Found> {
        let db = self.db_now()?;
        let record = self.read();
        let has_frames = std::fs::symlink_metadata(companion(&self.db, "-wal")).is_ok_and(|m| m.len() > WAL_HEADER_BYTES);
        let consistent = match record {
            // No stamp (an earlier version's database), or a checkpoint cut short: as it is.
            None => true,
            Some(r) if r.state == State::Checkpointing => true,
            // Copied or moved along with its database: it vouches only for the WAL it saw.
            Some(r) if r.own != self.own => !has_frames || (r.wal.is_some() && r.wal == wal_salts(&self.db)),
            // Same inode, modification time and size: only checkpoints write the file, and each
            // moves its modification time; a new change time alone is an owner, mode or link
            // changed (`chmod`, `chown -R`, a copy put back with `cp -a`).
            Some(r) => r.db.same_contents(&db),
        };
        let found = if consistent {
            Found::Consistent
        } else if has_frames {
            Found::Replaced { orphaned: self.move_aside(None)? }
        } else {
            Found::Replaced { orphaned: Vec::new() }
        };
        self.write(State::Clean, db)?;
        Ok(found)
    }

    /// After a commit that started a new WAL (new salts): the stamp knows the WAL by them.
    pub fn note_wal(&self) -> Result<()> {
        match self.read() {
            Some(r) if r.own == self.own && r.state == State::Clean => self.write(State::Clean, r.db),
            _ => Ok(()),
        }
    }

    /// Whether the database is the file the stamp names (as a checkpoint of this package left it).
    pub fn names_the_database(&self) -> Result<bool> {
        Ok(self.look()?.says == Says::NamesTheFile)
    }

    /// What the stamp says of the database file as it is now, and how many checkpoints of this
    /// package it counts.
    pub fn look(&self) -> Result<Stamp> {
        let db = self.db_now()?;
        Ok(match self.read().filter(|r| r.own == self.own) {
            Some(r) if r.state == State::Clean && r.db == db => Stamp { checkpoints: r.checkpoints, says: Says::NamesTheFile },
            Some(r) if r.state == State::Checkpointing => Stamp { checkpoints: r.checkpoints, says: Says::CutShort },
            Some(r) => Stamp { checkpoints: r.checkpoints, says: Says::Nothing },
            None => Stamp { checkpoints: 0, says: Says::Nothing },
        })
    }

    /// Before anything that may write the database file from its WAL (a checkpoint, a close):
    /// whether the database is still the file the stamp names; if so it is recorded as being
    /// checkpointed, and counted as one more checkpoint begun, until `end_checkpoint`. `false`:
    /// it is not that file (replaced since), and nothing may be written into it. A stamp that
    /// cannot be written is an error: the caller then leaves the WAL unchecked, which is safe.
    pub fn begin_checkpoint(&self) -> Result<bool> {
        let db = self.db_now()?;
        // A checkpoint cut short (its process killed) left the file as no stamp names it; the
        // WAL still holds every page it was copying, and finishing it is what comes next.
        if let Some(r) = self.read().filter(|r| r.own == self.own && r.state == State::Clean) {
            if r.db != db && !r.db.same_contents(&db) {
                return Ok(false);
            }
        }
        self.write_counted(State::Checkpointing, db, self.checkpoints().wrapping_add(1))?;
        Ok(true)
    }

    /// After a checkpoint that `begin_checkpoint` allowed: the database as it is now.
    pub fn end_checkpoint(&self) -> Result<()> {
        self.write(State::Clean, self.db_now()?)
    }

    /// Moves the `-wal` and `-shm` of the database aside, under names saying `orphaned`; with
    /// `ours`, only those that are still these files (device, inode). Answers the new paths.
    pub fn move_aside(&self, ours: Option<&[(PathBuf, u64, u64)]>) -> Result<Vec<PathBuf>> {
        let when = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
        let mut moved = Vec::new();
        for suffix in ["-wal", "-shm"] {
            let from = companion(&self.db, suffix);
            let Ok(meta) = std::fs::symlink_metadata(&from) else { continue };
            if let Some(ours) = ours {
                if !ours.iter().any(|(p, dev, ino)| *p == from && *dev == meta.dev() && *ino == meta.ino()) {
                    continue; // another process's, made since: not ours to move
                }
            }
            let to = PathBuf::from(format!("{}.orphaned-{when}-{}", from.display(), std::process::id()));
            std::fs::rename(&from, &to)
                .map_err(|e| MemoryError::storage(format!("cannot move {} aside to {} ({e}); nothing was opened: move it away by hand", from.display(), to.display())))?;
            moved.push(to);
        }
        Ok(moved)
    }
}

/// The salts in the header of the database's WAL, if it has one. Read through a descriptor of
/// the `-wal`, on which SQLite holds no lock (its locks are on the database and the `-shm`).
fn wal_salts(db: &Path) -> Option<[u32; 2]> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK).open(companion(db, "-wal")).ok()?;
    let mut header = [0u8; WAL_HEADER_BYTES as usize];
    file.read_exact_at(&mut header, 0).ok()?;
    let be = |at: usize| u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
    // 0x377f0682 or 0x377f0683: a WAL header (the low bit is the checksum byte order).
    (be(0) & !1 == 0x377f_0682).then(|| [be(16), be(20)])
}

fn companion(db: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", db.display()))
}

/// What the error or warning about a replaced database says of the WAL moved aside.
pub fn describe_orphaned(db: &Path, orphaned: &[PathBuf]) -> String {
    let names: Vec<String> = orphaned.iter().map(|p| p.display().to_string()).collect();
    match names.as_slice() {
        [] => format!("{} is not the file its last checkpoint left (a backup copied or moved over it?); it is used as it is now", db.display()),
        _ => format!(
            "{} is not the file its WAL was written against (a backup copied or moved over it?): the WAL, which would have undone or corrupted it, was moved aside to {} and is never replayed. The database is used exactly as it is now. If that is the state you want, delete the moved files when you no longer need them; if not, stop every process using the agent and put the old database back together with them",
            db.display(),
            names.join(" and ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A folder with a "database" (plain bytes: the stamp judges files, not SQL) and its stamp.
    struct Dir(PathBuf);
    impl Dir {
        fn new() -> Dir {
            let d = std::env::temp_dir().join(format!("rotifer-lineage-{}", super::super::files::unique_suffix()));
            std::fs::create_dir(&d).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
            let dir = Dir(d);
            std::fs::write(dir.db(), b"the database as a checkpoint left it").unwrap();
            Lineage::lock(&dir.db()).unwrap().stamp_now().unwrap();
            dir
        }
        fn db(&self) -> PathBuf {
            self.0.join("a.db")
        }
        /// A WAL with salts `salts` and some frames, and its `-shm`.
        fn with_wal_of(&self, salts: [u32; 2]) -> &Dir {
            let mut wal = vec![7u8; 100];
            wal[..4].copy_from_slice(&0x377f_0682u32.to_be_bytes());
            wal[16..20].copy_from_slice(&salts[0].to_be_bytes());
            wal[20..24].copy_from_slice(&salts[1].to_be_bytes());
            std::fs::write(companion(&self.db(), "-wal"), wal).unwrap();
            std::fs::write(companion(&self.db(), "-shm"), vec![9u8; 10]).unwrap();
            self
        }
        fn with_wal(&self) -> &Dir {
            self.with_wal_of([1, 2])
        }
        fn judge(&self) -> Found {
            Lineage::lock(&self.db()).unwrap().judge_at_open().unwrap()
        }
        fn names(&self) -> Vec<String> {
            let mut n: Vec<String> = std::fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
            n.sort();
            n
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Rewrites the file in place with other bytes of the same size (as `cp` of a backup does),
    /// making sure its times move.
    fn written_over(db: &Path) {
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(db, b"a backup, copied over it by hand!!!").unwrap();
    }

    #[test]
    fn a_database_as_stamped_keeps_its_wal() {
        let d = Dir::new();
        d.with_wal();
        assert_eq!(d.judge(), Found::Consistent);
        assert_eq!(d.names(), ["a.db", "a.db-lineage", "a.db-shm", "a.db-wal"]);
    }

    #[test]
    fn a_database_written_over_gets_its_wal_moved_aside_whole() {
        let d = Dir::new();
        d.with_wal();
        written_over(&d.db());
        let Found::Replaced { orphaned } = d.judge() else { panic!("not judged replaced") };
        assert_eq!(orphaned.len(), 2);
        let names = d.names();
        assert!(!names.contains(&"a.db-wal".to_string()) && !names.contains(&"a.db-shm".to_string()), "{names:?}");
        let wal = orphaned.iter().find(|p| p.to_string_lossy().contains("a.db-wal.orphaned-")).expect("the WAL is kept aside");
        let kept = std::fs::read(wal).unwrap();
        assert_eq!((kept.len(), &kept[24..]), (100, &[7u8; 76][..]), "whole");
        // Judged once: the next open finds the file as the last one left it.
        assert_eq!(d.judge(), Found::Consistent);
    }

    #[test]
    fn a_database_moved_over_is_replaced_even_with_the_same_bytes() {
        let d = Dir::new();
        d.with_wal();
        let copy = d.0.join("copy");
        std::fs::copy(d.db(), &copy).unwrap();
        std::fs::rename(&copy, d.db()).unwrap();
        assert!(matches!(d.judge(), Found::Replaced { .. }));
    }

    #[test]
    fn without_a_wal_a_change_of_contents_is_reported_and_one_of_attributes_is_not() {
        let d = Dir::new();
        std::fs::set_permissions(d.db(), std::fs::Permissions::from_mode(0o600)).unwrap(); // ctime only
        assert_eq!(d.judge(), Found::Consistent);
        written_over(&d.db());
        assert_eq!(d.judge(), Found::Replaced { orphaned: vec![] });
        assert_eq!(d.judge(), Found::Consistent, "the stamp names the new file");
    }

    #[test]
    fn with_a_wal_a_change_of_attributes_alone_keeps_it() {
        // `chmod`, `chown -R`, a copy put back with `cp -a`: same inode, modification time, size.
        let d = Dir::new();
        d.with_wal();
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::set_permissions(d.db(), std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(d.judge(), Found::Consistent);
        assert!(d.names().contains(&"a.db-wal".to_string()));
    }

    #[test]
    fn a_stamp_moved_along_with_its_database_vouches_only_for_the_wal_it_saw() {
        // The database and its stamp saved while a WAL of salts [5, 6] was there.
        let d = Dir::new();
        d.with_wal_of([5, 6]);
        Lineage::lock(&d.db()).unwrap().stamp_now().unwrap();
        let saved = Dir::new();
        for name in ["a.db", "a.db-lineage"] {
            std::fs::remove_file(saved.0.join(name)).ok();
            std::fs::copy(d.0.join(name), saved.0.join(name)).unwrap();
        }
        // Put back (`mv`) beside another WAL: a stale one, written since, is never replayed.
        d.with_wal_of([9, 9]);
        for name in ["a.db", "a.db-lineage"] {
            std::fs::rename(saved.0.join(name), d.0.join(name)).unwrap();
        }
        assert!(matches!(d.judge(), Found::Replaced { .. }));
        // Beside the WAL it was saved with, it is trusted.
        let e = Dir::new();
        e.with_wal_of([5, 6]);
        Lineage::lock(&e.db()).unwrap().stamp_now().unwrap();
        let f = Dir::new();
        for name in ["a.db", "a.db-lineage", "a.db-wal", "a.db-shm"] {
            std::fs::remove_file(f.0.join(name)).ok();
            std::fs::copy(e.0.join(name), f.0.join(name)).unwrap();
        }
        assert_eq!(f.judge(), Found::Consistent);
    }

    #[test]
    fn a_stamp_copied_with_its_database_or_left_checkpointing_trusts_the_wal() {
        let d = Dir::new();
        d.with_wal();
        Lineage::lock(&d.db()).unwrap().note_wal().unwrap(); // as a commit starting a WAL does
        // The whole folder copied: every inode new, the stamp's own included.
        let e = Dir::new();
        for name in ["a.db", "a.db-wal", "a.db-shm", "a.db-lineage"] {
            std::fs::remove_file(e.0.join(name)).ok();
            std::fs::copy(d.0.join(name), e.0.join(name)).unwrap();
        }
        assert_eq!(e.judge(), Found::Consistent);
        assert!(e.names().contains(&"a.db-wal".to_string()));
        // A checkpoint cut short: the file changed under a stamp saying so.
        let l = Lineage::lock(&d.db()).unwrap();
        assert!(l.begin_checkpoint().unwrap());
        drop(l); // killed here
        written_over(&d.db());
        assert_eq!(d.judge(), Found::Consistent);
    }

    #[test]
    fn a_checkpoint_runs_only_into_the_file_the_stamp_names() {
        let d = Dir::new();
        let l = Lineage::lock(&d.db()).unwrap();
        assert!(l.begin_checkpoint().unwrap());
        l.end_checkpoint().unwrap();
        drop(l);
        std::fs::set_permissions(d.db(), std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(Lineage::lock(&d.db()).unwrap().begin_checkpoint().unwrap(), "attributes alone: still the file");
        let d = Dir::new();
        written_over(&d.db());
        assert!(!Lineage::lock(&d.db()).unwrap().begin_checkpoint().unwrap(), "written over since: never checkpointed into");
    }

    #[test]
    fn only_the_wal_a_process_opened_is_moved_aside_by_it() {
        let d = Dir::new();
        d.with_wal();
        let wal = companion(&d.db(), "-wal");
        let m = std::fs::metadata(&wal).unwrap();
        let ours = vec![(wal.clone(), m.dev(), m.ino() + 1)]; // not the file there now
        assert_eq!(Lineage::lock(&d.db()).unwrap().move_aside(Some(&ours)).unwrap(), Vec::<PathBuf>::new());
        assert!(wal.exists());
        let ours = vec![(wal.clone(), m.dev(), m.ino())];
        let moved = Lineage::lock(&d.db()).unwrap().move_aside(Some(&ours)).unwrap();
        assert_eq!(moved.len(), 1, "the -shm is not in the list, so it stays");
        assert!(!wal.exists());
    }

    #[test]
    fn a_checkpoint_ends_with_the_stamp_naming_the_file_it_left() {
        let d = Dir::new();
        let l = Lineage::lock(&d.db()).unwrap();
        assert!(l.begin_checkpoint().unwrap());
        assert!(!l.names_the_database().unwrap(), "checkpointing: the stamp names no file");
        written_over(&d.db()); // the checkpoint's own writes
        l.end_checkpoint().unwrap();
        assert!(l.names_the_database().unwrap());
        drop(l);
        assert_eq!(d.judge(), Found::Consistent);
    }

    #[test]
    fn the_stamp_counts_the_checkpoints_begun_and_tells_one_cut_short() {
        let d = Dir::new();
        let look = || Lineage::lock(&d.db()).unwrap().look().unwrap();
        assert_eq!(look(), Stamp { checkpoints: 0, says: Says::NamesTheFile });
        let l = Lineage::lock(&d.db()).unwrap();
        assert!(l.begin_checkpoint().unwrap());
        written_over(&d.db());
        l.end_checkpoint().unwrap();
        drop(l);
        assert_eq!(look(), Stamp { checkpoints: 1, says: Says::NamesTheFile });
        let l = Lineage::lock(&d.db()).unwrap();
        assert!(l.begin_checkpoint().unwrap());
        drop(l); // killed before its end
        assert_eq!(look(), Stamp { checkpoints: 2, says: Says::CutShort });
        // An open, a WAL noted, a file judged: the stamp rewritten, the count kept.
        d.with_wal();
        assert_eq!(d.judge(), Found::Consistent);
        Lineage::lock(&d.db()).unwrap().note_wal().unwrap();
        Lineage::lock(&d.db()).unwrap().stamp_now().unwrap();
        assert_eq!(look(), Stamp { checkpoints: 2, says: Says::NamesTheFile });
        written_over(&d.db());
        assert_eq!(look(), Stamp { checkpoints: 2, says: Says::Nothing });
        // A stamp copied from elsewhere counts nothing here.
        let e = Dir::new();
        std::fs::remove_file(Lineage::path_of(&e.db())).unwrap();
        std::fs::copy(Lineage::path_of(&d.db()), Lineage::path_of(&e.db())).unwrap();
        assert_eq!(Lineage::lock(&e.db()).unwrap().look().unwrap(), Stamp { checkpoints: 0, says: Says::Nothing });
    }

    #[test]
    fn a_wal_of_a_header_alone_has_nothing_to_replay() {
        let d = Dir::new();
        std::fs::write(companion(&d.db(), "-wal"), [0u8; WAL_HEADER_BYTES as usize]).unwrap();
        written_over(&d.db());
        assert_eq!(d.judge(), Found::Replaced { orphaned: vec![] }, "reported, nothing moved");
        assert!(d.names().contains(&"a.db-wal".to_string()));
    }

    #[test]
    fn a_symlink_at_the_stamp_is_never_followed() {
        let d = Dir::new();
        let elsewhere = d.0.join("elsewhere");
        std::fs::write(&elsewhere, b"not a stamp").unwrap();
        std::fs::remove_file(Lineage::path_of(&d.db())).unwrap();
        std::os::unix::fs::symlink(&elsewhere, Lineage::path_of(&d.db())).unwrap();
        assert!(Lineage::lock(&d.db()).is_err());
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"not a stamp");
    }

    #[test]
    fn the_warning_names_the_files_moved_aside_and_what_to_do() {
        let db = Path::new("/p/.rotifer/memory/a.db");
        let moved = [PathBuf::from("/p/.rotifer/memory/a.db-wal.orphaned-x"), PathBuf::from("/p/.rotifer/memory/a.db-shm.orphaned-x")];
        let text = describe_orphaned(db, &moved);
        assert!(text.contains("a.db-wal.orphaned-x") && text.contains("a.db-shm.orphaned-x") && text.contains("never replayed"), "{text}");
        assert!(text.contains("delete the moved files"), "{text}");
        let text = describe_orphaned(db, &[]);
        assert!(text.contains("/p/.rotifer/memory/a.db") && text.contains("used as it is"), "{text}");
    }

    #[test]
    fn a_stamp_that_is_not_ours_is_refused() {
        let d = Dir::new();
        std::fs::set_permissions(Lineage::path_of(&d.db()), std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = Lineage::lock(&d.db()).err().expect("refused");
        assert!(e.message.contains("a.db-lineage"), "{}", e.message);
    }

    #[test]
    fn records_round_trip_and_damaged_ones_are_unknown() {
        let r = Record {
            state: State::Checkpointing,
            db: FileId { dev: 2049, ino: 77, ctime: (1_700_000_000, 123), mtime: (1_700_000_000, 0), size: 4096 },
            own: (2049, 78),
            wal: Some([7, 4_000_000_000]),
            checkpoints: 18_446_744_073_709_551_615,
        };
        let bytes = r.encode();
        assert_eq!(bytes.len(), RECORD_BYTES);
        assert_eq!(Record::decode(&bytes), Some(r));
        assert_eq!(Record::decode(&bytes[..40]), None, "cut short");
        assert_eq!(Record::decode(b"rotifer-lineage 4 clean 1 2 3.4 5.6 7 8 9 - - 1"), None, "another version");
        assert_eq!(Record::decode(b"rotifer-lineage 3 clean 1 2 3.4 5.6 7 8 9 - -"), None, "version 3 without its count");
        let v1 = Record::decode(b"rotifer-lineage 1 clean 1 2 3.4 5.6 7 8 9").expect("version 1 reads");
        assert_eq!((v1.wal, v1.checkpoints), (None, 0));
        let v2 = Record::decode(b"rotifer-lineage 2 checkpointing 1 2 3.4 5.6 7 8 9 10 11").expect("version 2 reads");
        assert_eq!((v2.state, v2.wal, v2.checkpoints), (State::Checkpointing, Some([10, 11]), 0));
        assert_eq!(Record::decode(&Record { wal: None, ..r }.encode()).unwrap().wal, None);
        assert_eq!(Record::decode(&[0u8; RECORD_BYTES]), None);
    }
}
