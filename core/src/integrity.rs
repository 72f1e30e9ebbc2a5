//! Is the database file still the one the store opened? A file moved, replaced, truncated or
//! overwritten under a running store, or its `-wal`/`-shm` removed, must fail every call with
//! `MEMORY_STORAGE_ERROR` rather than read stale pages or checkpoint into a file that is no
//! longer the database.
//!
//! Checking takes a handful of file lookups, too many for every read; so the kernel is asked to
//! report changes (inotify) to the file and to the folders that name it, and the check runs only
//! after one. Where nothing can be watched, every call checks.

use crate::error::Result;
use crate::store::storage;
use std::collections::HashMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

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
        })
    }

    /// Once SQLite has the database open: records its `-wal` and `-shm`, checks that the path
    /// still names the file opened first, and starts watching. `root` is the project root, whose
    /// folders up to `/` are watched too: moving any of them moves the database away.
    pub fn opened(&mut self, root: &Path) -> Result<()> {
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
        self.check()
    }

    pub fn check(&self) -> Result<()> {
        use std::os::unix::fs::MetadataExt;
        use std::sync::atomic::Ordering;
        let changed = |what: &str| {
            storage(&self.path, format!("{what} while in use; nothing was changed. Restore the database file, then restart the process"))
        };
        match std::fs::symlink_metadata(&self.path) {
            Ok(m) if m.dev() == self.dev && m.ino() == self.ino => {}
            _ => return Err(changed("was moved, replaced or deleted")),
        }
        for (p, dev, ino) in &self.companions {
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.dev() == *dev && m.ino() == *ino => {}
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
        self.check_header("was overwritten while in use; nothing was changed. Restore the database file, then restart the process")
    }

    /// `check`, when something may have changed since the last one: the kernel tells (inotify),
    /// so a call on an untouched store costs one non-blocking read instead of five file lookups.
    pub fn check_if_changed(&self) -> Result<()> {
        if let Some(w) = &self.watch {
            if !w.take_changed() {
                return Ok(());
            }
        }
        let result = self.check();
        if result.is_err() {
            if let Some(w) = &self.watch {
                w.mark_changed();
            }
        }
        result
    }

    /// The file starts as every SQLite database does.
    pub fn check_header(&self, otherwise: &str) -> Result<()> {
        check_header_of(&self.file, &self.path, otherwise)
    }
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
        crate::layout::refuse_untrusted_file(&file, &meta)?;
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

/// Fails with `otherwise` unless the file at `path` starts as every SQLite database does.
/// Opens no watch: for a file that SQLite has not opened yet.
pub fn check_header_at(path: &Path, otherwise: &str) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| storage(path, e))?;
    check_header_of(&file, path, otherwise)
}

fn check_header_of(file: &std::fs::File, path: &Path, otherwise: &str) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let mut magic = [0u8; 16];
    if file.read_exact_at(&mut magic, 0).is_err() || &magic != b"SQLite format 3\0" {
        return Err(storage(path, otherwise));
    }
    Ok(())
}

/// One inotify instance for the process; each watch descriptor sets the flags of the stores
/// that watch it.
struct Watcher {
    fd: libc::c_int,
    flags: Mutex<HashMap<libc::c_int, Vec<Weak<AtomicBool>>>>,
    /// Held from reading the queue to taking a store's flag, so that a thread never takes its
    /// flag while another thread still holds an event it has read but not yet marked.
    draining: Mutex<()>,
}

fn watcher() -> Option<&'static Watcher> {
    static WATCHER: OnceLock<Option<Watcher>> = OnceLock::new();
    WATCHER
        .get_or_init(|| {
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            (fd >= 0).then(|| Watcher { fd, flags: Mutex::new(HashMap::new()), draining: Mutex::new(()) })
        })
        .as_ref()
}

impl Watcher {
    fn add(&self, path: &Path, mask: u32, flag: &Arc<AtomicBool>) -> Option<libc::c_int> {
        let c = CString::new(path.as_os_str().as_bytes()).ok()?;
        let wd = unsafe { libc::inotify_add_watch(self.fd, c.as_ptr(), mask | libc::IN_DONT_FOLLOW) };
        if wd < 0 {
            return None;
        }
        let mut flags = self.flags.lock().unwrap_or_else(|e| e.into_inner());
        flags.entry(wd).or_default().push(Arc::downgrade(flag));
        Some(wd)
    }

    /// Reads every pending event and marks the stores they concern.
    fn drain(&self) {
        let mut buf = [0u64; 512]; // aligned for inotify_event
        loop {
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), std::mem::size_of_val(&buf)) };
            if n <= 0 {
                return; // EAGAIN: nothing more
            }
            let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, n as usize) };
            let flags = self.flags.lock().unwrap_or_else(|e| e.into_inner());
            let mut at = 0;
            while at + std::mem::size_of::<libc::inotify_event>() <= bytes.len() {
                let ev: libc::inotify_event = unsafe { std::ptr::read_unaligned(bytes[at..].as_ptr().cast()) };
                if ev.mask & libc::IN_Q_OVERFLOW != 0 {
                    flags.values().flatten().filter_map(Weak::upgrade).for_each(|f| f.store(true, Ordering::Release));
                } else if let Some(list) = flags.get(&ev.wd) {
                    list.iter().filter_map(Weak::upgrade).for_each(|f| f.store(true, Ordering::Release));
                }
                at += std::mem::size_of::<libc::inotify_event>() + ev.len as usize;
            }
        }
    }

    fn remove(&self, wd: libc::c_int, flag: &Arc<AtomicBool>) {
        let mut flags = self.flags.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = flags.get_mut(&wd) {
            list.retain(|w| w.upgrade().is_some_and(|f| !Arc::ptr_eq(&f, flag)));
            if list.is_empty() {
                flags.remove(&wd);
                unsafe { libc::inotify_rm_watch(self.fd, wd) };
            }
        }
    }
}

/// The watches of one database: the file itself, and the two folders whose entries name it and
/// its `-wal` and `-shm` (`.rotifer/memory` and `.rotifer`).
struct Watch {
    changed: Arc<AtomicBool>,
    wds: Vec<libc::c_int>,
}

impl Watch {
    fn new(db: &Path, root: &Path) -> Option<Watch> {
        let w = watcher()?;
        let changed = Arc::new(AtomicBool::new(false));
        let memory_dir = db.parent()?;
        let rotifer_dir = memory_dir.parent()?;
        let file_mask = libc::IN_MODIFY | libc::IN_ATTRIB | libc::IN_MOVE_SELF | libc::IN_DELETE_SELF;
        let dir_mask = libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO | libc::IN_MOVE_SELF | libc::IN_DELETE_SELF;
        // The root and every folder above it: only their own moves and deletions matter.
        let ancestor_mask = libc::IN_MOVE_SELF | libc::IN_DELETE_SELF;
        let mut watch = Watch { changed, wds: Vec::new() };
        let targets = [(db, file_mask), (memory_dir, dir_mask), (rotifer_dir, dir_mask)]
            .into_iter()
            .chain(root.ancestors().map(|a| (a, ancestor_mask)));
        for (path, mask) in targets {
            // One that cannot be watched (a watch limit, a file system without inotify): no
            // watch at all, and every call checks. Dropping `watch` removes the others.
            watch.wds.push(w.add(path, mask, &watch.changed)?);
        }
        Some(watch)
    }

    fn take_changed(&self) -> bool {
        let Some(w) = watcher() else { return true };
        let _draining = w.draining.lock().unwrap_or_else(|e| e.into_inner());
        w.drain();
        self.changed.swap(false, Ordering::AcqRel)
    }

    fn mark_changed(&self) {
        self.changed.store(true, Ordering::Release);
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(w) = watcher() {
            for wd in &self.wds {
                w.remove(*wd, &self.changed);
            }
        }
    }
}
