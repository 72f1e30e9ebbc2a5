//! Is the database file still the one the store opened? A file moved, replaced, truncated or
//! overwritten under a running store, or its `-wal`/`-shm` removed, must fail every call with
//! `MEMORY_STORAGE_ERROR` rather than read stale pages or checkpoint into a file that is no
//! longer the database.
//!
//! Checking takes a handful of file lookups, too many for every read; so the kernel is asked to
//! report changes (inotify) to the file and to the folders that name it, and the check runs only
//! after one. Where nothing can be watched, every call checks.
//!
//! A read may rely on a recent look (`watch::Look`); every call that writes, or may, looks itself.

pub use super::watch::{Look, RECENT_LOOK};
use super::lineage::{Lineage, Says};
use super::watch::Watch;
use crate::error::{storage, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The database file a store opened: if the path stops naming it (moved, replaced, deleted,
/// a file in place of the folder), or it is overwritten or truncated in place, every call fails
/// with `MEMORY_STORAGE_ERROR` instead of reading stale pages or checkpointing into a file that
/// is no longer a database.
pub struct DbFile {
    path: PathBuf,
    file: std::fs::File,
    dev: u64,
    ino: u64,
    /// The largest size seen: without VACUUM a database file never shrinks.
    max_len: std::sync::atomic::AtomicU64,
    /// The -wal and -shm files as SQLite opened them: while a connection is open, SQLite never
    /// deletes or recreates them, so a change means they were removed or replaced by hand.
    companions: Vec<(PathBuf, u64, u64)>,
    /// Set when the kernel reports a change to the file or its folders; `None` when they could
    /// not be watched, and every call checks.
    watch: Option<Watch>,
    /// Where checkpoints stood when the database file was last seen written to by one
    /// (`Seen`): a later write with no checkpoint since is someone else's.
    mark: Mutex<Option<Seen>>,
    /// Set once the file was found written over: no later checkpoint makes it the database again.
    overwritten: AtomicBool,
}

impl DbFile {
    /// The file at `path` now, before SQLite opens it: if the path names another file by the
    /// time SQLite has, `check` says so.
    pub fn open(path: &Path) -> Result<DbFile> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| storage(path, e))?;
        let meta = file.metadata().map_err(|e| storage(path, e))?;
        Ok(DbFile {
            path: path.to_path_buf(),
            file,
            dev: meta.dev(),
            ino: meta.ino(),
            max_len: meta.len().into(),
            companions: Vec::new(),
            watch: None,
            mark: Mutex::new(None),
            overwritten: AtomicBool::new(false),
        })
    }

    /// The path the database was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Refuses, through this descriptor, a file that is not a database: not a regular file,
    /// empty, or without the SQLite header. For a file that SQLite has not opened yet.
    pub fn check_database(&self) -> Result<()> {
        let meta = self.file.metadata().map_err(|e| storage(&self.path, e))?;
        if !meta.is_file() {
            return Err(storage(&self.path, "is not a regular file"));
        }
        if meta.len() == 0 {
            return Err(storage(&self.path, "is empty (truncated?); it was left as it is: restore it from a backup or move it away"));
        }
        self.check_header("is not a SQLite database (overwritten?); it was left as it is: restore it from a backup or move it away")
    }

    /// Once SQLite has the database open: records its `-wal` and `-shm`, checks that the path
    /// still names the file opened first, and starts watching. `root` is the project root, whose
    /// folders up to `/` are watched too: moving any of them moves the database away.
    pub fn opened(&mut self, root: &Path, conn: &rusqlite::Connection) -> Result<()> {
        use std::os::unix::fs::MetadataExt;
        self.companions = ["-wal", "-shm"]
            .iter()
            .map(|suffix| PathBuf::from(format!("{}{suffix}", self.path.display())))
            .filter_map(|p| match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_file() => Some((p, m.dev(), m.ino())),
                _ => None,
            })
            .collect();
        self.watch = Watch::new(&self.path, root);
        self.check()?;
        if let Some(watch) = &self.watch {
            // Where checkpoints stand now; writes reported before this are not judged.
            if let Some(wal) = WalIndex::of(conn) {
                let lineage = Lineage::lock(&self.path)?;
                if let Some((seen, _)) = wal.seen_quiet(watch, &lineage) {
                    *lock(&self.mark) = Some(seen);
                }
            }
        }
        Ok(())
    }

    pub fn check(&self) -> Result<()> {
        use std::os::unix::fs::MetadataExt;
        use std::sync::atomic::Ordering;
        let changed = |what: &str| storage(&self.path, format!("{what} while in use; nothing was changed, and this process will not write its changes back into it"));
        if self.overwritten.load(Ordering::Acquire) {
            return Err(changed("was written over (a backup copied over it?)"));
        }
        // Its folders (`.rotifer/memory`, `.rotifer`) given to another user or opened to group or
        // others while in use: refused from the next call on too. A folder that is gone or no
        // longer a folder is the path check's to report, below.
        for dir in self.path.ancestors().skip(1).take(2) {
            if let Ok(m) = std::fs::symlink_metadata(dir) {
                if m.is_dir() {
                    crate::storage::files::refuse_untrusted_dir(dir, &m)?;
                }
            }
        }
        match std::fs::symlink_metadata(&self.path) {
            // Given to another user, opened to group or others, or linked elsewhere while open:
            // refused from the next call on, as it is at open, until it is made ours again.
            Ok(m) if m.dev() == self.dev && m.ino() == self.ino => crate::storage::files::refuse_untrusted_file(&self.path, &m)?,
            _ => return Err(changed("was moved, replaced or deleted")),
        }
        for (p, dev, ino) in &self.companions {
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.dev() == *dev && m.ino() == *ino => crate::storage::files::refuse_untrusted_file(p, &m)?,
                _ => {
                    return Err(storage(
                        p,
                        "was removed or replaced while the database was in use; nothing was changed, and this process will not write its changes back. Restart the process",
                    ))
                }
            }
        }
        let len = self.file.metadata().map_err(|e| storage(&self.path, e))?.len();
        if len < self.max_len.fetch_max(len, Ordering::Relaxed) {
            return Err(changed("was truncated"));
        }
        self.check_header("was overwritten while in use; nothing was changed. Restore the database file, then restart the process")?;
        // A move's mark (R-MIG-4): made before the move commits, so a writer that waited for
        // the move's lock finds it here, under that lock.
        let agent_id = self
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        super::fence::check(&self.path, &agent_id)
    }

    /// `check`, when something may have changed since the last look `look` allows: the kernel
    /// tells (inotify), so a call on an untouched store costs at most one non-blocking read
    /// instead of five file lookups, and a read usually none.
    pub fn check_if_changed(&self, conn: &rusqlite::Connection, look: Look) -> Result<()> {
        let Some(w) = &self.watch else { return self.check() };
        let (changed, written) = w.take_changed(look);
        if !changed && !written {
            return Ok(());
        }
        let result = self.check().and_then(|()| if written { self.check_written_by_checkpoint(w, conn) } else { Ok(()) });
        if result.is_err() {
            // Judged again at the next call, with the flags as they were taken: a write that
            // was not reported must not be judged (it would look like one no checkpoint made).
            w.mark_changed();
            if written {
                w.mark_written();
            }
        }
        result
    }

    /// The database file was written to. The only writer of a WAL database's file is a
    /// checkpoint (of any process), which copies pages from the WAL; anything else — a backup
    /// copied over it in place, same inode and size, valid header — would be overwritten by the
    /// WAL at the next checkpoint, destroying the restore and mixing two states. So, under the
    /// lineage stamp's lock (no checkpoint of this package runs meanwhile) and the checkpoint
    /// lock (no checkpoint at all; every write a finished or killed one made has been reported
    /// by then), a checkpoint must have written the file since the last look: one of this
    /// package began since (the stamp counts them), or the WAL's checkpoint counters moved.
    /// A checkpoint still running is looked at again at the next call.
    fn check_written_by_checkpoint(&self, w: &Watch, conn: &rusqlite::Connection) -> Result<()> {
        let Some(wal) = WalIndex::of(conn) else { return Ok(()) };
        let lineage = Lineage::lock(&self.path)?;
        let Some((seen, _)) = wal.seen_quiet(w, &lineage) else {
            w.mark_written();
            return Ok(());
        };
        let stamp = lineage.look()?;
        let mut last = lock(&self.mark);
        let previous = *last;
        // The count the stamp had at the last look was read under its lock, with the mark: a
        // checkpoint of this package that wrote the file since then counted itself after it.
        // (No look yet, the open having met a checkpoint running: one may have begun since.)
        let ours_began = previous.map_or(true, |p| p.checkpoints != stamp.checkpoints);
        if self.overwritten.load(Ordering::Acquire) || (!ours_began && previous.is_some_and(|p| !seen.mark.explains_writes_since(&p.mark))) {
            self.overwritten.store(true, Ordering::Release);
            return Err(storage(
                &self.path,
                "was written over while in use (a backup copied over it?); nothing was changed, and this process will not write its changes back into it",
            ));
        }
        *last = Some(seen);
        drop(last);
        match stamp.says {
            Says::NamesTheFile => Ok(()),
            // Killed before it stamped its end: the file is part old, part new, and the WAL,
            // which still holds every page it was copying, is what completes it. The stamp
            // names the file as that checkpoint left it, as the next open would.
            Says::CutShort if ours_began => lineage.stamp_now(),
            _ => self.judge_another_programs_checkpoint(&lineage, previous.map(|p| p.mark), seen.mark),
        }
    }

    /// The counters moved, and no checkpoint of this package explains the write (the stamp does
    /// not name the file, and counts no checkpoint begun since the last look): it was written
    /// by a checkpoint of another program (sqlite3's `PRAGMA wal_checkpoint`) — or a backup was
    /// copied over the file after one, which the counters cannot tell: only when every page that
    /// checkpoint copied (the WAL's backfilled frames, same salts) is in the file as the WAL
    /// holds it is the stamp moved to the file as it is. Otherwise the file is taken for written
    /// over: a restore is never vouched for.
    fn judge_another_programs_checkpoint(&self, lineage: &Lineage, previous: Option<CheckpointMark>, mark: CheckpointMark) -> Result<()> {
        let same_wal = previous.is_some_and(|p| p.salts == mark.salts);
        if same_wal && self.backfilled_pages_are_in_the_file(mark) {
            return lineage.stamp_now();
        }
        self.overwritten.store(true, Ordering::Release);
        Err(storage(
            &self.path,
            "was written while in use by something that is not a checkpoint of this package (a backup copied over it, or another program's checkpoint); nothing was changed, and this process will not write its changes back into it",
        ))
    }

    /// Whether each page of the WAL's first `mark.backfilled` frames (of its current salts) is
    /// in the database file as the latest of those frames holds it: what a checkpoint of them
    /// leaves. Reads the `-wal` through a descriptor of its own (SQLite locks no byte of it) and
    /// the database through the one this store keeps.
    fn backfilled_pages_are_in_the_file(&self, mark: CheckpointMark) -> bool {
        use std::os::unix::fs::{FileExt, OpenOptionsExt};
        let wal_path = PathBuf::from(format!("{}-wal", self.path.display()));
        let Ok(wal) = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(&wal_path) else { return false };
        let mut header = [0u8; 32];
        if wal.read_exact_at(&mut header, 0).is_err() {
            return false;
        }
        let be = |b: &[u8], at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let page = be(&header, 8) as u64;
        // The WAL index keeps the salts as the header's bytes, unconverted.
        let salts: Vec<u8> = mark.salts.iter().flat_map(|s| s.to_ne_bytes()).collect();
        if !(512..=65536).contains(&page) || header[16..24] != salts[..] {
            return false;
        }
        let frame = 24 + page;
        let mut latest: std::collections::HashMap<u32, u64> = std::collections::HashMap::new();
        let mut head = [0u8; 24];
        for i in 0..mark.backfilled as u64 {
            let at = 32 + i * frame;
            if wal.read_exact_at(&mut head, at).is_err() || head[8..16] != header[16..24] {
                return false;
            }
            latest.insert(be(&head, 0), at + 24);
        }
        let (mut in_wal, mut in_file) = (vec![0u8; page as usize], vec![0u8; page as usize]);
        latest.iter().all(|(&pgno, &at)| {
            pgno > 0
                && wal.read_exact_at(&mut in_wal, at).is_ok()
                && self.file.read_exact_at(&mut in_file, (pgno as u64 - 1) * page).is_ok()
                && in_wal == in_file
        })
    }

    /// After a checkpoint of this process, before `lineage` (the stamp it holds) records its
    /// end: where checkpoints stand now, the writes it made taken as judged. A later write to
    /// the file is judged against this mark: a backup copied over the file after this
    /// checkpoint moves no counter, and begins no checkpoint.
    pub fn checkpointed(&self, conn: &rusqlite::Connection, lineage: &Lineage) {
        let Some(w) = &self.watch else { return };
        let Some(wal) = WalIndex::of(conn) else { return };
        if let Some((seen, _)) = wal.seen_quiet(w, lineage) {
            *lock(&self.mark) = Some(seen);
        }
    }

    /// After a commit of this process: if it started a new WAL (new salts), the mark moves
    /// with it, so that a write to the file after it is judged against a mark of the same WAL.
    ///
    /// A new WAL is also noted in the lineage stamp, which then knows it by its salts.
    pub fn committed(&self, conn: &rusqlite::Connection) {
        let Some(w) = &self.watch else { return };
        let Some(wal) = WalIndex::of(conn) else { return };
        if lock(&self.mark).is_some_and(|m| m.mark.salts == wal.salts()) {
            return;
        }
        let Ok(lineage) = Lineage::lock(&self.path) else { return };
        let _ = lineage.note_wal();
        let mut last = lock(&self.mark);
        match wal.seen_quiet(w, &lineage) {
            // Writes reported meanwhile (another process's checkpoint, say) wait for judgement
            // against the older mark.
            Some((_, true)) => w.mark_written(),
            Some((seen, false)) => *last = Some(seen),
            None => {}
        }
    }

    /// Whether the path now names a database file other than the one opened: another file moved
    /// there, or this one written over or cut short in place (a backup copied over it). Its WAL,
    /// written against what was replaced, must then never be replayed (R-HOST-1b). A path that
    /// names nothing is not "replaced": there is no file for a WAL to be replayed over.
    pub fn replaced(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        if self.overwritten.load(Ordering::Acquire) {
            return true;
        }
        match std::fs::symlink_metadata(&self.path) {
            Ok(m) if (m.dev(), m.ino()) != (self.dev, self.ino) => true,
            Ok(_) => {
                let shorter = self.file.metadata().is_ok_and(|m| m.len() < self.max_len.load(Ordering::Relaxed));
                shorter || self.check_header("").is_err()
            }
            Err(_) => false,
        }
    }

    /// From now on every call fails, as for a file written over: it is not the file its WAL
    /// belongs to (a checkpoint found it replaced).
    pub fn mark_replaced(&self) {
        self.overwritten.store(true, Ordering::Release);
        if let Some(w) = &self.watch {
            w.mark_changed();
        }
    }

    /// The `-wal` and `-shm` as SQLite opened them: path, device, inode.
    pub fn companions(&self) -> &[(PathBuf, u64, u64)] {
        &self.companions
    }

    /// The file starts as every SQLite database does.
    pub fn check_header(&self, otherwise: &str) -> Result<()> {
        check_header_of(&self.file, &self.path, otherwise)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Refuses a database, `-wal` or `-shm` at `path` that memory cannot trust or use, before SQLite
/// opens any of them: one that is not a regular file (a FIFO, a folder), another user's, writable
/// by group or others, with another name (a hard link), or that its owner cannot read and write.
/// A file that is not there is fine (SQLite creates `-wal` and `-shm` as it needs them).
/// Looks with `lstat` only: opening and closing a descriptor would drop this process's locks.
pub fn refuse_untrusted_database_files(path: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        let meta = match std::fs::symlink_metadata(&file) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(untrusted(&file, e)),
        };
        if meta.file_type().is_symlink() {
            return Err(untrusted(&file, "is a symlink; memory databases are never opened through links: move it away"));
        }
        if !meta.is_file() {
            return Err(untrusted(&file, "is not a regular file (a FIFO, a device or a folder?): move it away"));
        }
        crate::storage::files::refuse_untrusted_file(&file, &meta)?;
        refuse_owner_cannot_read_write(&file, &meta)?;
    }
    Ok(())
}

/// Refuses a database file its owner may not read and write: SQLite would fail later, at the
/// first write, with a message that names no file.
pub fn refuse_owner_cannot_read_write(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    if meta.mode() & 0o600 != 0o600 {
        return Err(untrusted(path, format!("is not readable and writable by its owner (mode {:04o}): run `chmod u+rw` on it", meta.mode() & 0o7777)));
    }
    Ok(())
}

fn untrusted(path: &Path, what: impl std::fmt::Display) -> crate::error::MemoryError {
    crate::error::MemoryError::storage(format!("{}: {what}; nothing was opened or changed", path.display()))
}

/// What a look at the database file's writers saw: where checkpoints stood, and how many
/// checkpoints of this package the lineage stamp counted, both under its lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    mark: CheckpointMark,
    checkpoints: u64,
}

/// Where the checkpoints of a WAL stand: the WAL's salts (new at each restart) and the frames
/// backfilled, and perhaps backfilled, into the database file. A checkpoint that writes to the
/// file sets `attempted` before its first page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CheckpointMark {
    salts: [u32; 2],
    backfilled: u32,
    attempted: u32,
}

impl CheckpointMark {
    /// Whether a checkpoint may have written to the database file between `last` and this
    /// mark. In one WAL, only if its counters moved. Across a restart (new salts) that cannot
    /// be told — frames added after `last` may have been copied before the restart — so yes:
    /// a sound store is never failed. (This process moves its mark when it restarts the WAL
    /// itself, see `DbFile::committed`.)
    fn explains_writes_since(&self, last: &CheckpointMark) -> bool {
        self.salts != last.salts || (self.backfilled, self.attempted) != (last.backfilled, last.attempted)
    }
}

/// The WAL index (`-shm`) as SQLite itself has it mapped, reached through the connection's
/// file: no descriptor of ours is opened (or closed) on it.
struct WalIndex {
    file: *mut rusqlite::ffi::sqlite3_file,
    base: *const u8,
}

impl WalIndex {
    /// Offsets in the first 32 KiB page of the WAL index (SQLite's `WalIndexHdr`, `WalCkptInfo`).
    const MX_FRAME: usize = 16;
    const SALT: usize = 32;
    const BACKFILLED: usize = 96;
    const ATTEMPTED: usize = 128;
    const CKPT_LOCK: i32 = 1;

    /// `None` where the connection has no mapped WAL index (not in WAL mode, or a VFS without
    /// shared memory): then writes to the file are not judged.
    fn of(conn: &rusqlite::Connection) -> Option<WalIndex> {
        use rusqlite::ffi;
        let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
        // SAFETY: the connection is open, and held (its store's lock) for the whole call.
        unsafe {
            let rc = ffi::sqlite3_file_control(conn.handle(), c"main".as_ptr(), ffi::SQLITE_FCNTL_FILE_POINTER, (&mut file as *mut *mut ffi::sqlite3_file).cast());
            if rc != ffi::SQLITE_OK || file.is_null() || (*file).pMethods.is_null() || (*(*file).pMethods).iVersion < 2 {
                return None;
            }
            let map = (*(*file).pMethods).xShmMap?;
            let mut base: *mut std::os::raw::c_void = std::ptr::null_mut();
            if map(file, 0, 32768, 0, &mut base as *mut _ as *mut _) != ffi::SQLITE_OK || base.is_null() {
                return None;
            }
            Some(WalIndex { file, base: base as *const u8 })
        }
    }

    fn read_u32(&self, at: usize) -> u32 {
        // SAFETY: within the mapped first page; other processes change it, hence volatile.
        unsafe { std::ptr::read_volatile(self.base.add(at) as *const u32) }
    }

    /// The frames in the WAL (`mxFrame`).
    fn frames(&self) -> u32 {
        self.read_u32(Self::MX_FRAME)
    }

    fn salts(&self) -> [u32; 2] {
        [self.read_u32(Self::SALT), self.read_u32(Self::SALT + 4)]
    }

    /// `mark_quiet`, with the count of checkpoints of this package that `lineage` (the stamp,
    /// locked: none begins meanwhile) holds.
    fn seen_quiet(&self, w: &Watch, lineage: &Lineage) -> Option<(Seen, bool)> {
        let checkpoints = lineage.look().ok()?.checkpoints;
        let (mark, written) = self.mark_quiet(w)?;
        Some((Seen { mark, checkpoints }, written))
    }

    /// The mark, taken under the checkpoint lock after the writes reported so far were drained
    /// (so none of them is judged against a later mark), and whether any was reported; `None`
    /// while a checkpoint runs.
    fn mark_quiet(&self, w: &Watch) -> Option<(CheckpointMark, bool)> {
        use rusqlite::ffi;
        // SAFETY: `of` checked that the methods have xShmLock (iVersion >= 2).
        let shm_lock = unsafe { (*(*self.file).pMethods).xShmLock }?;
        if unsafe { shm_lock(self.file, Self::CKPT_LOCK, 1, ffi::SQLITE_SHM_LOCK | ffi::SQLITE_SHM_EXCLUSIVE) } != ffi::SQLITE_OK {
            return None;
        }
        let written = w.take_written();
        let mark = CheckpointMark {
            salts: self.salts(),
            backfilled: self.read_u32(Self::BACKFILLED),
            attempted: self.read_u32(Self::ATTEMPTED),
        };
        unsafe { shm_lock(self.file, Self::CKPT_LOCK, 1, ffi::SQLITE_SHM_UNLOCK | ffi::SQLITE_SHM_EXCLUSIVE) };
        Some((mark, written))
    }
}

/// The frames in the connection's WAL, as its WAL index says; `None` where there is none.
pub fn wal_frames(conn: &rusqlite::Connection) -> Option<u32> {
    WalIndex::of(conn).map(|w| w.frames())
}

fn check_header_of(file: &std::fs::File, path: &Path, otherwise: &str) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let mut magic = [0u8; 16];
    if file.read_exact_at(&mut magic, 0).is_err() || &magic != b"SQLite format 3\0" {
        return Err(storage(path, otherwise));
    }
    Ok(())
}

