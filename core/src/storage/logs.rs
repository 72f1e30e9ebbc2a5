//! The log files under `.rotifer/` (R-AUD-1/2/4/7): appended whole, one descriptor per path kept
//! open and revalidated, rotated by size under a lock, read back oldest first; and the reserve
//! that lets a deployer's delete be audited on a full disk.

use super::files::{create_private_file, refuse_untrusted_file, Layout};
use super::watch::{Look, PathWatch};
use crate::error::{MemoryError, Result, DISK_FULL};
use std::collections::HashMap;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Appends `bytes` (whole JSON lines) to a log file in one `write`, creating it 0600.
/// The file is never reached through a symlink, and must be a regular file we can trust
/// (`refuse_untrusted_file`): nothing is written to one that is not. If an earlier,
/// failed append left a partial line, a newline is put first so that every line stays whole.
/// `prepare` runs before the file is (re)opened: the checks of its folder. `look`: how fresh the
/// look at the kernel's change reports must be (`Look::Recent` for a changing call's lines, which
/// follow its own look closely: a change made in the last `RECENT_LOOK` may go unseen by them).
///
/// The descriptor stays open, one per path for the whole process (`OpenLog`), as long as the
/// kernel reports no change to the path (`PathWatch`): a log moved, replaced or deleted by hand
/// gets a new file at its path, never lines in the old one. The owner, mode and link checks run
/// on every append, through the open descriptor (`fstat`): a log made writable by others is
/// refused from the next append on. Where nothing can be watched, the file is opened for each
/// append.
///
/// Rotation (R-AUD-7, `rotation`): an append that leaves the file at `max_size` bytes or more
/// renames it to `<name>.1.jsonl` (and `.1` to `.2` …, the one past `keep` dropped), holding the
/// log's lock file (`<name>.lock`) exclusively, as readers of every file hold it shared. An
/// append takes no lock of its own: a rotation is a rename in the log's folder, which the kernel
/// reports like any move (`PathWatch`), and every changing call reads those reports once it
/// holds its agent's write lock. So a writer notices a rotation made before its call and opens
/// the new file; one made while it writes (microseconds) puts its line at the end of the file
/// just renamed, where it is kept and read in order: lines of attempts at one transaction,
/// which the commit judgement compares, are made under the agent's write lock one after the
/// other and so never change order. A line could only be lost if `keep` rotations ran within
/// one append.
pub fn append_lines(path: &Path, bytes: &[u8], look: Look, prepare: &dyn Fn() -> Result<()>, rotation: Option<Rotation>) -> Result<()> {
    let mut log = open_logs().get_or_open(path, look, prepare)?;
    for reopened in [false, true] {
        // One append at a time in this process: none sees another's half-done write, also not
        // one through an older descriptor of the same log (replaced while its writer still
        // held it). An append is one `write`; logs of other roots wait that long at most.
        let appending = APPENDING.lock().unwrap_or_else(|e| e.into_inner());
        let meta = log.file.metadata().map_err(|e| append_failed(path, e))?;
        if meta.nlink() == 0 {
            if reopened {
                break; // deleted again as it was opened: no line goes into a file with no name
            }
            // Deleted with no report from its folder (it has no name left): a new one.
            drop(appending);
            open_logs().forget(path, &log);
            log = open_logs().get_or_open(path, Look::Now, prepare)?;
            continue;
        }
        refuse_untrusted_file(path, &meta)?;
        let end = log.append(path, &meta, bytes)?;
        if let Some(r) = rotation.filter(|r| end >= r.max_size) {
            // Best effort: the lines are written, and an append past the size a second or more
            // after a failed rotation tries again (a rotation reads the files that go). Other
            // appends of the process need not wait for it: the rotation's lock orders it.
            drop(appending);
            if log.may_rotate() && log.rotate(path, r).is_err() {
                log.rotation_failed();
            }
        }
        return Ok(());
    }
    Err(append_failed(path, "it was moved or deleted as it was opened"))
}

fn append_failed(path: &Path, e: impl std::fmt::Display) -> MemoryError {
    MemoryError::storage(format!("cannot append to {} ({e}); make it a writable regular file", path.display()))
}

/// `append_failed` for an I/O error: a full disk says so, and what to do.
fn write_failed(path: &Path, e: std::io::Error) -> MemoryError {
    if matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT)) {
        return MemoryError::storage(format!(
            "cannot append to {}: {DISK_FULL} ({e}); free space on its file system. A deployer's delete (`rotifer agent memory delete`) can still run: it uses the audit reserve ({})",
            path.display(),
            path.with_file_name(RESERVE_NAME).display()
        ));
    }
    append_failed(path, e)
}

// ---------------------------------------------------------------------------------------------
// Rotation (R-AUD-7)

/// How a log rotates: past `max_size` bytes it is renamed, and `keep` renamed files are kept.
/// The files that go leave, of every agent's lines in them, the latest `per_agent` bytes in the
/// log's kept file (`kept_path`): one agent's activity never removes another's last lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotation {
    pub max_size: u64,
    pub keep: u32,
    /// Bytes of each agent's latest lines that survive the files that go (0: none).
    pub per_agent: u64,
}

/// `audit.jsonl` → `audit.<n>.jsonl` (`n` ≥ 1; `n` = 0 is the log itself).
pub fn rotated_path(path: &Path, n: u32) -> PathBuf {
    if n == 0 {
        return path.to_path_buf();
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!("{stem}.{n}.jsonl"))
}

/// The file of the lines kept from rotated files that went: `audit.jsonl` → `audit.kept.jsonl`.
pub fn kept_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!("{stem}.kept.jsonl"))
}

/// The lock file that serialises rotation with appends: `audit.jsonl` → `audit.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    path.with_extension("lock")
}

/// A log's lock file, kept open with its log.
pub(crate) struct LogLock(File);

/// A `flock` held on a `LogLock`, released on drop.
pub(crate) struct Held<'a>(&'a File);

impl LogLock {
    /// Opens (creating it 0600) the lock file of the log at `path`; refuses one not ours.
    pub(crate) fn open(path: &Path) -> Result<LogLock> {
        let lock = lock_path(path);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&lock)
            .map_err(|e| append_failed(&lock, e))?;
        let meta = file.metadata().map_err(|e| append_failed(&lock, e))?;
        if !meta.is_file() {
            return Err(append_failed(&lock, "not a regular file"));
        }
        refuse_untrusted_file(&lock, &meta)?;
        Ok(LogLock(file))
    }

    /// Waits for the lock, shared (`LOCK_SH`) or exclusive (`LOCK_EX`).
    pub(crate) fn hold(&self, how: libc::c_int) -> std::io::Result<Held<'_>> {
        use std::os::fd::AsRawFd;
        loop {
            if unsafe { libc::flock(self.0.as_raw_fd(), how) } == 0 {
                return Ok(Held(&self.0));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

// ---------------------------------------------------------------------------------------------
// The audit reserve (R-AUD-2 on a full disk)

/// The reserve's file name, beside the audit log.
pub const RESERVE_NAME: &str = "audit.reserve";
/// How much the reserve holds: room for a deployer's delete's audit lines and the WAL frames of
/// its commit (a key delete needs some 40 KB; a category delete of a few hundred entries, 1 MB).
pub const RESERVE_BYTES: u64 = 1024 * 1024;

impl Layout {
    pub fn reserve_path(&self) -> PathBuf {
        self.rotifer_dir().join(RESERVE_NAME)
    }

    /// Makes the reserve if it is not there: `RESERVE_BYTES` allocated (`posix_fallocate`), so
    /// that freeing it gives that much room back. Best effort: on a full disk it is made later.
    pub fn ensure_reserve(&self) {
        use std::os::fd::AsRawFd;
        let path = self.reserve_path();
        if RESERVE_IN_USE.with(|r| r.get()) || fs::symlink_metadata(&path).is_ok() || without_reserve(&self.root) {
            return;
        }
        let tmp = self.rotifer_dir().join(format!("{RESERVE_NAME}.{}", super::files::unique_suffix()));
        let Ok(file) = create_private_file(&tmp) else { return };
        let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, RESERVE_BYTES as libc::off_t) };
        drop(file);
        // Linked into place only whole: a reserve that exists always holds all its bytes.
        if rc != 0 || fs::hard_link(&tmp, &path).is_err() {
            let _ = fs::remove_file(&tmp);
            return;
        }
        let _ = fs::remove_file(&tmp);
    }

    /// Gives the reserve up for a deployer's delete, until the returned guard is dropped: then
    /// it is made again (if there is room). Meanwhile this thread does not make it again when
    /// it (re)opens the log.
    pub fn use_reserve(&self) -> ReserveInUse<'_> {
        RESERVE_IN_USE.with(|r| r.set(true));
        let _ = fs::remove_file(self.reserve_path());
        ReserveInUse(self)
    }
}

/// Roots whose logs keep no reserve: the test memories of this process, deleted whole when
/// disposed, which no deployer's delete on a full disk relies on (R-HOST-4).
static WITHOUT_RESERVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn without_reserve(root: &std::path::Path) -> bool {
    WITHOUT_RESERVE.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|r| r == root)
}

/// `root`'s logs keep no reserve (`add`), or do again.
pub fn set_without_reserve(root: &std::path::Path, add: bool) {
    let mut roots = WITHOUT_RESERVE.lock().unwrap_or_else(|e| e.into_inner());
    roots.retain(|r| r != root);
    if add {
        roots.push(root.to_path_buf());
    }
}

thread_local! {
    /// This thread runs a deployer's delete on the reserve's room (`Layout::use_reserve`).
    static RESERVE_IN_USE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The reserve given up for a call; made again on drop.
pub struct ReserveInUse<'a>(&'a Layout);

impl Drop for ReserveInUse<'_> {
    fn drop(&mut self) {
        RESERVE_IN_USE.with(|r| r.set(false));
        self.0.ensure_reserve();
    }
}

/// A log file opened for appending, and what tells whether its path still names it.
struct OpenLog {
    file: File,
    /// The lock file of the log (`append_lines`: rotation).
    lock: LogLock,
    /// `None` where the path cannot be watched: the log is then not kept.
    watch: Option<PathWatch>,
    /// The file's size after this process's last whole append, `u64::MAX` if unknown: at that
    /// size, the file ends with a line of ours and needs no look at its last byte.
    end: AtomicU64,
    /// When a rotation failed last, if one did: the next is tried `ROTATION_RETRY` later.
    rotation_failed_at: Mutex<Option<std::time::Instant>>,
}

/// How long after a failed rotation the next is tried.
const ROTATION_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// Held for one append to any log of the process.
static APPENDING: Mutex<()> = Mutex::new(());

impl OpenLog {
    /// Opens the log at `path` (creating it 0600), watched from before the open; refuses what is
    /// not a regular file.
    fn open(path: &Path) -> Result<Arc<OpenLog>> {
        let watch = PathWatch::folders_of(path);
        let file: File = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| append_failed(path, e))?;
        if !file.metadata().map_err(|e| append_failed(path, e))?.is_file() {
            return Err(append_failed(path, "not a regular file"));
        }
        let watch = watch.and_then(|w| w.file(path));
        let lock = LogLock::open(path)?;
        Ok(Arc::new(OpenLog { file, lock, watch, end: AtomicU64::new(u64::MAX), rotation_failed_at: Mutex::new(None) }))
    }

    /// Whether the file ends with a partial line (an earlier append that failed part-way), to
    /// be ended before the next line. Another process's write in progress can show as one for
    /// a moment (a line across a page boundary grows the file twice): the end is looked at
    /// again while the size moves.
    fn ends_mid_line(&self, mut len: u64) -> std::io::Result<bool> {
        for _ in 0..3 {
            if len == 0 || len == self.end.load(Ordering::Acquire) {
                return Ok(false);
            }
            let mut last = [0u8; 1];
            self.file.read_exact_at(&mut last, len - 1)?;
            if last[0] == b'\n' {
                return Ok(false);
            }
            let now = self.file.metadata()?.len();
            if now == len {
                return Ok(true);
            }
            len = now;
        }
        Ok(true)
    }

    /// One `write` of the lines (O_APPEND: never interleaved with another writer's), after a
    /// newline if the file ends with a partial line.
    /// Returns the file's size after it, as far as this process knows.
    fn append(&self, path: &Path, meta: &Metadata, bytes: &[u8]) -> Result<u64> {
        let failed = |e: std::io::Error| write_failed(path, e);
        let written = if self.ends_mid_line(meta.len()).map_err(failed)? {
            let mut buf = Vec::with_capacity(bytes.len() + 1);
            buf.push(b'\n');
            buf.extend_from_slice(bytes);
            (&self.file).write_all(&buf).map(|()| buf.len())
        } else {
            (&self.file).write_all(bytes).map(|()| bytes.len())
        };
        match written {
            // Another writer appending meanwhile makes this wrong, and the next look reads the byte.
            Ok(n) => {
                let end = meta.len() + n as u64;
                self.end.store(end, Ordering::Release);
                Ok(end)
            }
            Err(e) => {
                self.end.store(u64::MAX, Ordering::Release);
                Err(failed(e))
            }
        }
    }

    /// Whether a rotation may be tried now: none failed in the last `ROTATION_RETRY`.
    fn may_rotate(&self) -> bool {
        self.rotation_failed_at.lock().unwrap_or_else(|e| e.into_inner()).is_none_or(|t| t.elapsed() >= ROTATION_RETRY)
    }

    fn rotation_failed(&self) {
        *self.rotation_failed_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
    }

    /// Renames the log (which this append left at `r.max_size` or more) to `.1`, `.1` to `.2`
    /// …, and drops the one past `r.keep`, under the exclusive lock: no append runs meanwhile.
    /// Another process may have rotated first: then the path names another file, and nothing
    /// is done.
    fn rotate(&self, path: &Path, r: Rotation) -> std::io::Result<()> {
        let _exclusive = self.lock.hold(libc::LOCK_EX)?;
        let mine = self.file.metadata()?;
        match fs::symlink_metadata(path) {
            Ok(m) if m.ino() == mine.ino() && m.dev() == mine.dev() && m.len() >= r.max_size => {}
            _ => return Ok(()),
        }
        let keep = r.keep.max(1);
        // The files that go: `keep`, and any numbered past it (`keep` was lowered), oldest
        // first. Each agent's latest lines in them are kept first; then they are removed.
        let mut going = rotated_numbers(path);
        going.retain(|n| *n >= keep);
        going.sort_unstable_by(|a, b| b.cmp(a));
        let going: Vec<PathBuf> = going.into_iter().map(|n| rotated_path(path, n)).collect();
        if !going.is_empty() {
            keep_agents_lines(path, &going, r.per_agent)?;
        }
        for p in &going {
            match fs::remove_file(p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        for n in (1..keep).rev() {
            match fs::rename(rotated_path(path, n), rotated_path(path, n + 1)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        fs::rename(path, rotated_path(path, 1))
    }
}

/// The logs kept open, by path: few per process (an audit and a telemetry log per project root).
struct OpenLogs(Mutex<HashMap<PathBuf, Arc<OpenLog>>>);

/// How many logs stay open at most (test memories each have a root of their own).
const MAX_OPEN_LOGS: usize = 16;

fn open_logs() -> &'static OpenLogs {
    static LOGS: OnceLock<OpenLogs> = OnceLock::new();
    LOGS.get_or_init(|| OpenLogs(Mutex::new(HashMap::new())))
}

impl OpenLogs {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<OpenLog>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The open log of `path` if its path still names it as far as the kernel reported (after
    /// a look as fresh as `look` asks); else
    /// `prepare`, and the log opened anew, kept if it can be watched. Under the lock, so that
    /// one process has one descriptor per log. A writer holds its own reference: a log replaced
    /// meanwhile is closed after its last write.
    fn get_or_open(&self, path: &Path, look: Look, prepare: &dyn Fn() -> Result<()>) -> Result<Arc<OpenLog>> {
        let mut logs = self.lock();
        if let Some(log) = logs.get(path) {
            let changed = match &log.watch {
                Some(w) => w.changed_after(look),
                None => true,
            };
            if !changed {
                return Ok(log.clone());
            }
            logs.remove(path);
        }
        prepare()?;
        let log = OpenLog::open(path)?;
        if log.watch.is_some() {
            // Logs whose path changed (a removed test memory's root) are closed.
            logs.retain(|_, l| !l.watch.as_ref().is_none_or(PathWatch::seen_changed));
            if logs.len() >= MAX_OPEN_LOGS {
                logs.clear();
            }
            logs.insert(path.to_path_buf(), log.clone());
        }
        Ok(log)
    }

    fn forget(&self, path: &Path, log: &Arc<OpenLog>) {
        let mut logs = self.lock();
        if logs.get(path).is_some_and(|l| Arc::ptr_eq(l, log)) {
            logs.remove(path);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rotation settings (R-AUD-7)

/// R-AUD-7 defaults: `audit.jsonl` rotates at 64 MB, and 8 rotated files are kept (at most
/// 9 × 64 MB on disk).
pub const DEFAULT_MAX_SIZE: u64 = 64 * 1024 * 1024;
pub const DEFAULT_KEEP: u32 = 8;
/// Bounds of the settings: a smaller log rotates at every append, more files are not a bound.
pub const MIN_MAX_SIZE: u64 = 1024;
pub const MAX_KEEP: u32 = 1000;

/// Of every agent's lines in the rotated files that go, the latest 1 MiB (some 3,000 lines)
/// are kept (`audit.kept.jsonl`), whatever other agents do.
pub const DEFAULT_PER_AGENT: u64 = 1024 * 1024;

pub const DEFAULT_ROTATION: Rotation = Rotation { max_size: DEFAULT_MAX_SIZE, keep: DEFAULT_KEEP, per_agent: DEFAULT_PER_AGENT };

// ---------------------------------------------------------------------------------------------
// Settings

/// The rotation of the logs of `layout`'s root: `"audit": { "maxSize": "64MB", "keep": 8 }` in
/// its `rotifer.json`, each field optional. No `rotifer.json`, or one that is not JSON (which the
/// CLI reports itself), gives the defaults; a bad `audit` field is an error naming it.
///
/// Looked at again (one `stat`) at most once a second, and read again only when it changed: a
/// change to the settings applies within a second.
pub fn rotation(layout: &Layout) -> Result<Rotation> {
    type Stamp = (u64, u64, i64, i64, u64);
    type Cache = Mutex<HashMap<PathBuf, (Stamp, Rotation, std::time::Instant)>>;
    const LOOK_AGAIN: std::time::Duration = std::time::Duration::from_secs(1);
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let file = layout.root.join("rotifer.json");
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let lock = || cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r, looked)) = lock().get(&file) {
        if looked.elapsed() < LOOK_AGAIN {
            return Ok(*r);
        }
    }
    let meta = fs::metadata(&file).ok();
    let stamp = meta.map(|m| (m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.len()));
    if let Some(entry) = lock().get_mut(&file) {
        if Some(entry.0) == stamp {
            entry.2 = std::time::Instant::now();
            return Ok(entry.1);
        }
    }
    let r = match stamp {
        Some(_) => parse_rotation(&file, &fs::read(&file).unwrap_or_default())?,
        None => DEFAULT_ROTATION,
    };
    let mut cache = lock();
    if cache.len() > 64 {
        cache.clear(); // test memories each have a root of their own
    }
    cache.insert(file, (stamp.unwrap_or_default(), r, std::time::Instant::now()));
    Ok(r)
}

/// The `audit` field of the `rotifer.json` at `file`, whose bytes are `text`.
pub fn parse_rotation(file: &Path, text: &[u8]) -> Result<Rotation> {
    let Ok(serde_json::Value::Object(project)) = serde_json::from_slice::<serde_json::Value>(text) else {
        return Ok(DEFAULT_ROTATION);
    };
    let bad = |field: &str, why: String| {
        MemoryError::storage(format!("{} field \"audit{field}\" {why}; the audit log cannot be written until it is fixed", file.display()))
    };
    let audit = match project.get("audit") {
        None | Some(serde_json::Value::Null) => return Ok(DEFAULT_ROTATION),
        Some(serde_json::Value::Object(a)) => a,
        Some(_) => return Err(bad("", "must be an object such as { \"maxSize\": \"64MB\", \"keep\": 8 }".into())),
    };
    let mut r = DEFAULT_ROTATION;
    for (name, value) in audit {
        match (name.as_str(), value) {
            ("maxSize", serde_json::Value::String(t)) => {
                r.max_size = crate::quota::parse_size(t).map_err(|why| bad(".maxSize", why))?;
            }
            ("maxSize", serde_json::Value::Number(n)) if n.as_u64().is_some() => r.max_size = n.as_u64().unwrap_or(0),
            ("maxSize", v) => return Err(bad(".maxSize", format!("is {v}: give a size such as \"64MB\" or \"512KB\" (1 KB = 1024 bytes), or a number of bytes"))),
            ("keepPerAgent", serde_json::Value::String(t)) => {
                r.per_agent = crate::quota::parse_size(t).map_err(|why| bad(".keepPerAgent", why))?;
            }
            ("keepPerAgent", serde_json::Value::Number(n)) if n.as_u64().is_some() => r.per_agent = n.as_u64().unwrap_or(0),
            ("keepPerAgent", v) => {
                return Err(bad(".keepPerAgent", format!("is {v}: give how much of each agent's latest lines to keep when rotated files go, a size such as \"1MB\", or 0 for none")))
            }
            ("keep", v) => match v.as_u64() {
                Some(k) if (1..=MAX_KEEP as u64).contains(&k) => r.keep = k as u32,
                _ => return Err(bad(".keep", format!("is {v}: give how many rotated files to keep, a whole number from 1 to {MAX_KEEP} (default {DEFAULT_KEEP})"))),
            },
            (other, _) => return Err(bad(&format!(".{other}"), "is not a setting: the audit settings are \"maxSize\", \"keep\" and \"keepPerAgent\"".into())),
        }
    }
    if r.max_size < MIN_MAX_SIZE {
        return Err(bad(".maxSize", format!("is {} bytes, below the least, 1KB", r.max_size)));
    }
    Ok(r)
}

// ---------------------------------------------------------------------------------------------
// Reading every file

/// The log files of `path` (`audit.jsonl`) open, oldest first, each with the size it had: taken
/// under the log's lock shared, so no rotation runs meanwhile, and no line is lost to one that
/// runs while they are read (a renamed or dropped file stays readable through its descriptor).
/// Rotated files are never written again; the log itself is read only up to its size then.
///
/// The kept file (`kept_path`) comes first: its lines are older than any numbered file's. A
/// numbered file it names as taken in (a rotation cut short between writing it and removing
/// the file) is left out, so that no line is read twice.
pub(crate) fn open_files(path: &Path) -> Result<Vec<(PathBuf, File, u64)>> {
    let lock = if fs::symlink_metadata(lock_path(path)).is_ok() { LogLock::open(path).ok() } else { None };
    let _shared = lock.as_ref().and_then(|l| l.hold(libc::LOCK_SH).ok());
    let mut numbers = rotated_numbers(path);
    numbers.sort_unstable_by(|a, b| b.cmp(a));
    numbers.push(0);
    let mut files = Vec::new();
    let mut taken_in: Vec<FileStamp> = Vec::new();
    let kept = kept_path(path);
    if let Some(f) = open_log_for_reading(&kept)? {
        let len = f.metadata().map_err(|e| unreadable(&kept, e))?.len();
        taken_in = read_kept_header(&f).map_err(|e| unreadable(&kept, e))?;
        files.push((kept, f, len));
    }
    for n in numbers {
        let p = rotated_path(path, n);
        if let Some(f) = open_log_for_reading(&p)? {
            let meta = f.metadata().map_err(|e| unreadable(&p, e))?;
            if n > 0 && taken_in.contains(&FileStamp::of(&meta)) {
                continue;
            }
            files.push((p, f, meta.len()));
        }
    }
    Ok(files)
}

/// The log file at `p` opened for reading (never through a link), `None` if there is none.
fn open_log_for_reading(p: &Path) -> Result<Option<File>> {
    match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC).open(p) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unreadable(p, e)),
    }
}

/// The numbers `n` ≥ 1 of the rotated files (`<name>.<n>.jsonl`) beside the log at `path`.
fn rotated_numbers(path: &Path) -> Vec<u32> {
    let mut numbers: Vec<u32> = Vec::new();
    let dir = path.parent().unwrap_or(Path::new("."));
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_prefix(&format!("{stem}.")).and_then(|r| r.strip_suffix(".jsonl")).and_then(|n| n.parse::<u32>().ok());
            if let Some(n) = n.filter(|n| *n >= 1 && rotated_path(path, *n).file_name() == Some(e.file_name().as_os_str())) {
                numbers.push(n);
            }
        }
    }
    numbers
}

// ---------------------------------------------------------------------------------------------
// Each agent's latest lines, kept when their files go (R-AUD-7)

/// What tells a rotated file apart: device, inode, size and modification time. Rotated files
/// are never written again, so a file that matches is the one that was taken in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct FileStamp {
    dev: u64,
    ino: u64,
    size: u64,
    #[serde(rename = "mtimeNs")]
    mtime_ns: i128,
}

impl FileStamp {
    fn of(m: &Metadata) -> FileStamp {
        FileStamp { dev: m.dev(), ino: m.ino(), size: m.len(), mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()) }
    }
}

/// The kept file's first line: the rotated files whose lines it took in.
#[derive(serde::Serialize, serde::Deserialize)]
struct KeptHeader {
    #[serde(rename = "keptFrom")]
    kept_from: Vec<FileStamp>,
}

/// Whether `line` is the kept file's first line, which readers skip (no audit line begins so).
pub(crate) fn is_kept_header(line: &[u8]) -> bool {
    line.starts_with(b"{\"keptFrom\":")
}

/// The files the kept file `f` names as taken in (none if it has no header).
fn read_kept_header(f: &File) -> std::io::Result<Vec<FileStamp>> {
    let mut first = Vec::new();
    BufReader::new(f.take(1 << 20)).read_until(b'\n', &mut first)?;
    if !is_kept_header(&first) {
        return Ok(Vec::new());
    }
    Ok(serde_json::from_slice::<KeptHeader>(first.trim_ascii_end()).map(|h| h.kept_from).unwrap_or_default())
}

/// The agent a line is of, if it is a JSON object with an `agentId` string. Lines of ours start
/// `{"ts":"<24 bytes>","agentId":"<id>"`, with an id of plain characters: read there without
/// parsing the line (a rotation reads every line of the files that go, twice); any other line
/// is parsed.
fn agent_of(line: &[u8]) -> Option<String> {
    const HEAD: &[u8] = b"{\"ts\":\"";
    const AGENT: &[u8] = b"\",\"agentId\":\"";
    let at = HEAD.len() + 24;
    if line.starts_with(HEAD) && line.get(at..at + AGENT.len()) == Some(AGENT) {
        let rest = &line[at + AGENT.len()..];
        if let Some(end) = rest.iter().position(|b| *b == b'"') {
            let id = &rest[..end];
            if !id.is_empty() && id.iter().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b)) {
                return Some(String::from_utf8_lossy(id).into_owned());
            }
        }
    }
    agent_of_parsed(line)
}

fn agent_of_parsed(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Of<'a> {
        #[serde(rename = "agentId", borrow)]
        agent_id: std::borrow::Cow<'a, str>,
    }
    serde_json::from_slice::<Of<'_>>(line).ok().map(|o| o.agent_id.into_owned())
}

/// Rewrites the kept file of the log at `path` with, for every agent, its latest lines (at
/// most `per_agent` bytes of them, whole lines) among the kept file's lines and those of
/// `going` (oldest first), in their order; the file names `going` as taken in. Written under
/// a temporary name and renamed over the old one: a reader sees the old file or the new one.
/// A file of `going` the old kept file already took in (a rotation cut short after writing it)
/// is not read again. Lines that are not of an agent are not kept.
///
/// Two passes over the same bytes: the first counts each agent's bytes, the second keeps a
/// line when the agent's bytes from it to its last line fit in `per_agent`. Memory: one count
/// per agent.
fn keep_agents_lines(path: &Path, going: &[PathBuf], per_agent: u64) -> std::io::Result<()> {
    let kept = kept_path(path);
    let old = match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(&kept) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let taken_in = match &old {
        Some(f) => read_kept_header(f)?,
        None => Vec::new(),
    };
    let mut sources: Vec<(File, u64)> = Vec::new();
    if let Some(f) = old {
        let len = f.metadata()?.len();
        sources.push((f, len));
    }
    let mut stamps = Vec::new();
    let mut new_lines = false;
    for p in going {
        let f = match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(p) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let meta = f.metadata()?;
        let stamp = FileStamp::of(&meta);
        stamps.push(stamp);
        if !taken_in.contains(&stamp) {
            sources.push((f, meta.len()));
            new_lines = true;
        }
    }
    if !new_lines {
        return Ok(()); // nothing new to keep: the old kept file (if any) stays as it is
    }
    let each_line = |sources: &mut Vec<(File, u64)>, f: &mut dyn FnMut(&[u8]) -> std::io::Result<()>| -> std::io::Result<()> {
        for (file, len) in sources.iter_mut() {
            file.seek(SeekFrom::Start(0))?;
            let mut reader = BufReader::with_capacity(1 << 16, (&*file).take(*len));
            let mut line = Vec::new();
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line)? == 0 {
                    break;
                }
                if line.last() != Some(&b'\n') {
                    line.push(b'\n'); // a cut-short last line stays one line
                }
                f(&line)?;
            }
        }
        Ok(())
    };
    let mut totals: HashMap<String, u64> = HashMap::new();
    each_line(&mut sources, &mut |line| {
        if let Some(a) = agent_of(line.trim_ascii_end()) {
            *totals.entry(a).or_default() += line.len() as u64;
        }
        Ok(())
    })?;
    let tmp = kept.with_file_name(format!("{}.tmp-{}", kept.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), super::files::unique_suffix()));
    let written = (|| -> std::io::Result<()> {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, create_private_file(&tmp)?);
        serde_json::to_writer(&mut out, &KeptHeader { kept_from: stamps }).map_err(std::io::Error::other)?;
        out.write_all(b"\n")?;
        let mut before: HashMap<String, u64> = HashMap::new();
        each_line(&mut sources, &mut |line| {
            let Some(a) = agent_of(line.trim_ascii_end()) else { return Ok(()) };
            let total = totals.get(&a).copied().unwrap_or(0);
            let seen = before.entry(a).or_default();
            let from_here = total - *seen;
            *seen += line.len() as u64;
            if from_here <= per_agent {
                out.write_all(line)?;
            }
            Ok(())
        })?;
        out.into_inner().map_err(|e| e.into_error())?;
        fs::rename(&tmp, &kept)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

fn unreadable(path: &Path, e: impl std::fmt::Display) -> MemoryError {
    MemoryError::storage(format!("cannot read the audit log {} ({e}); make it a readable regular file", path.display()))
}

/// Calls `each` with every line (without its newline) of `files`, in order.
pub(crate) fn for_each_line(files: Vec<(PathBuf, File, u64)>, mut each: impl FnMut(&[u8])) -> Result<()> {
    for (path, file, len) in files {
        let mut reader = BufReader::with_capacity(1 << 16, file.take(len));
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).map_err(|e| unreadable(&path, e))? == 0 {
                break;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            each(&line);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_aud_2_a_full_disk_says_so_with_the_path() {
        let p = Path::new("/p/.rotifer/audit.jsonl");
        let e = write_failed(p, std::io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(e.message.contains("/p/.rotifer/audit.jsonl") && e.message.contains(DISK_FULL), "{}", e.message);
        assert!(!e.message.contains("make it a writable regular file"), "{}", e.message);
        assert!(crate::error::is_disk_full(&e));
        assert!(!crate::error::is_disk_full(&write_failed(p, std::io::Error::from_raw_os_error(libc::EIO))));
    }

    #[test]
    fn r_aud_7_a_lines_agent_is_read_as_a_parser_reads_it() {
        let gene = format!("v2:{}", "a".repeat(64));
        let mut b = crate::storage::audit::AuditBatch::new("agent-1.x_y", 1_796_000_000_000);
        b.deny(crate::storage::audit::Actor::Gene(&gene), Default::default(), crate::storage::audit::Denial { op: "read", code: "C", reason: "r" });
        for line in [
            b.lines_for_test().trim_ascii_end().to_vec(),
            br#"{"agentId":"late","ts":"2026-12-01T00:00:00.000Z"}"#.to_vec(),
            br#"{"ts":"2026-12-01T00:00:00.000Z","agentId":"a\u0062"}"#.to_vec(),
            br#"{"ts":"2026-12-01T00:00:00.000Z","agentId":"quo\"te"}"#.to_vec(),
            br#"{"ts":"2026-12-01T00:00:00.000Z","agentId":"cut"#.to_vec(),
            b"not json".to_vec(),
        ] {
            assert_eq!(agent_of(&line), agent_of_parsed(&line), "{}", String::from_utf8_lossy(&line));
        }
        assert_eq!(agent_of(br#"{"ts":"2026-12-01T00:00:00.000Z","agentId":"a\u0062"}"#).as_deref(), Some("ab"));
        assert_eq!(agent_of(b"{\"ts\":\"2026-12-01T00:00:00.000Z\",\"agentId\":\"agent-1.x_y\",\"action\":1}").as_deref(), Some("agent-1.x_y"));
    }

    #[test]
    fn r_aud_7_rotated_names() {
        let p = Path::new("/p/.rotifer/audit.jsonl");
        assert_eq!(rotated_path(p, 0), p);
        assert_eq!(rotated_path(p, 3), Path::new("/p/.rotifer/audit.3.jsonl"));
        assert_eq!(lock_path(p), Path::new("/p/.rotifer/audit.lock"));
    }

    #[test]
    fn r_aud_7_settings_are_checked_and_name_the_file_and_field() {
        let f = Path::new("/p/rotifer.json");
        assert_eq!(parse_rotation(f, b"{}").unwrap(), DEFAULT_ROTATION);
        assert_eq!(parse_rotation(f, b"not json").unwrap(), DEFAULT_ROTATION);
        assert_eq!(parse_rotation(f, br#"{"audit":{"maxSize":"2KB","keep":3}}"#).unwrap(), Rotation { max_size: 2048, keep: 3, per_agent: DEFAULT_PER_AGENT });
        assert_eq!(parse_rotation(f, br#"{"audit":{"keepPerAgent":"4KB"}}"#).unwrap().per_agent, 4096);
        assert_eq!(parse_rotation(f, br#"{"audit":{"keepPerAgent":0}}"#).unwrap().per_agent, 0);
        assert_eq!(parse_rotation(f, br#"{"audit":{"maxSize":4096}}"#).unwrap(), Rotation { max_size: 4096, ..DEFAULT_ROTATION });
        for (text, field) in [
            (r#"{"audit":{"maxSize":"64 parsecs"}}"#, "audit.maxSize"),
            (r#"{"audit":{"maxSize":"12"}}"#, "audit.maxSize"),
            (r#"{"audit":{"maxSize":100}}"#, "audit.maxSize"),
            (r#"{"audit":{"keep":0}}"#, "audit.keep"),
            (r#"{"audit":{"keep":2.5}}"#, "audit.keep"),
            (r#"{"audit":{"max_size":"1MB"}}"#, "audit.max_size"),
            (r#"{"audit":"64MB"}"#, "audit"),
            (r#"{"audit":{"keepPerAgent":-1}}"#, "audit.keepPerAgent"),
            (r#"{"audit":{"keepPerAgent":"lots"}}"#, "audit.keepPerAgent"),
        ] {
            let e = parse_rotation(f, text.as_bytes()).unwrap_err();
            assert!(e.message.contains("/p/rotifer.json") && e.message.contains(&format!("\"{field}\"")), "{text}: {}", e.message);
        }
    }
}
