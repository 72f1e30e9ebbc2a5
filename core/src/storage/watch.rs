//! Change watching (inotify): the kernel reports changes to a database file, to the folders that
//! name it and its `-wal` and `-shm`, and to the folders above, so that the file checks of
//! `integrity` run only after one; and to the logs' paths (`PathWatch`). One inotify instance for
//! the process.
//!
//! Reading the kernel's queue is itself a system call, a fifth of a read miss: a read may rely on
//! a look that any call of this process made in the last `RECENT_LOOK` (see `Look`).

use std::collections::HashMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How fresh the look at the kernel's change reports must be for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Read the queue now: every call that writes or may write (a commit may checkpoint, which
    /// must never copy the WAL into a file restored in place), a handle's first read, the
    /// deployer's calls, a store's close.
    Now,
    /// A gene's read: a look that any call of this process made in the last `RECENT_LOOK` is
    /// enough. So a read sees every change made at least `RECENT_LOOK` before it starts; one made
    /// in the instant before may go unseen by it, which then answers as if it had started just
    /// before the change (what a read running while the change is made sees anyway).
    Recent,
}

/// How old a look at the queue a read may rely on: in a loop of reads (a few µs each), one in
/// about thirty reads the queue, a negligible cost; a person or another process making a change
/// and then calling is never that quick.
pub const RECENT_LOOK: Duration = Duration::from_micros(100);

/// A store's flag, and the events that set it.
type Subscriber = (Weak<AtomicBool>, u32);

/// One inotify instance for the process; each watch descriptor sets the flags of the stores
/// that watch it, each flag for the events it asked for.
struct Watcher {
    fd: libc::c_int,
    flags: Mutex<HashMap<libc::c_int, Vec<Subscriber>>>,
    /// Held from reading the queue to taking a store's flag, so that a thread never takes its
    /// flag while another thread still holds an event it has read but not yet marked.
    draining: Mutex<()>,
    /// When the queue was last read empty (ns since `epoch`): every event queued before then has
    /// set its flags.
    looked: AtomicU64,
    epoch: Instant,
}

fn watcher() -> Option<&'static Watcher> {
    static WATCHER: OnceLock<Option<Watcher>> = OnceLock::new();
    WATCHER
        .get_or_init(|| {
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            (fd >= 0).then(|| Watcher {
                fd,
                flags: Mutex::new(HashMap::new()),
                draining: Mutex::new(()),
                looked: AtomicU64::new(0),
                epoch: Instant::now(),
            })
        })
        .as_ref()
}

impl Watcher {
    /// Watches `path` for `mask`; `flag` is set by the events in `events`.
    fn add(&self, path: &Path, mask: u32, flag: &Arc<AtomicBool>, events: u32) -> Option<libc::c_int> {
        let c = CString::new(path.as_os_str().as_bytes()).ok()?;
        // IN_MASK_ADD: a path watched for several reasons (a database's folder, a log's folder)
        // keeps every event any of them asked for; each flag still takes only its own.
        let wd = unsafe { libc::inotify_add_watch(self.fd, c.as_ptr(), mask | libc::IN_DONT_FOLLOW | libc::IN_MASK_ADD) };
        if wd < 0 {
            return None;
        }
        let mut flags = lock(&self.flags);
        flags.entry(wd).or_default().push((Arc::downgrade(flag), events));
        Some(wd)
    }

    fn elapsed_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Whether the queue was read empty in the last `RECENT_LOOK`.
    fn looked_recently(&self) -> bool {
        let looked = self.looked.load(Ordering::Acquire);
        looked != 0 && self.elapsed_ns().saturating_sub(looked) < RECENT_LOOK.as_nanos() as u64
    }

    /// Reads every pending event and marks the stores they concern.
    fn drain(&self) {
        let mut buf = [0u64; 512]; // aligned for inotify_event
        loop {
            // Taken before the read: an event queued after it may be missed by this read.
            let before = self.elapsed_ns().max(1);
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), std::mem::size_of_val(&buf)) };
            if n <= 0 {
                self.looked.fetch_max(before, Ordering::AcqRel);
                return; // EAGAIN: nothing more
            }
            let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, n as usize) };
            let flags = lock(&self.flags);
            let mut at = 0;
            while at + std::mem::size_of::<libc::inotify_event>() <= bytes.len() {
                let ev: libc::inotify_event = unsafe { std::ptr::read_unaligned(bytes[at..].as_ptr().cast()) };
                let set = |(flag, _): &Subscriber| {
                    if let Some(f) = flag.upgrade() {
                        f.store(true, Ordering::Release)
                    }
                };
                if ev.mask & libc::IN_Q_OVERFLOW != 0 {
                    // Events were lost: every store checks again (a lost write goes unjudged).
                    flags.values().flatten().filter(|(_, events)| *events == ANY_EVENT).for_each(set);
                } else if let Some(list) = flags.get(&ev.wd) {
                    list.iter().filter(|(_, events)| ev.mask & events != 0).for_each(set);
                }
                at += std::mem::size_of::<libc::inotify_event>() + ev.len as usize;
            }
        }
    }

    fn remove(&self, wd: libc::c_int, flag: &Arc<AtomicBool>) {
        let mut flags = lock(&self.flags);
        if let Some(list) = flags.get_mut(&wd) {
            list.retain(|(w, _)| w.upgrade().is_some_and(|f| !Arc::ptr_eq(&f, flag)));
            if list.is_empty() {
                flags.remove(&wd);
                unsafe { libc::inotify_rm_watch(self.fd, wd) };
            }
        }
    }
}

const ANY_EVENT: u32 = u32::MAX;

/// The watches of one database: the file itself, and the two folders whose entries name it and
/// its `-wal` and `-shm` (`.rotifer/memory` and `.rotifer`).
pub(crate) struct Watch {
    /// Set by any event: the file checks run.
    changed: Arc<AtomicBool>,
    /// Set when the database file is written to: was it a checkpoint?
    written: Arc<AtomicBool>,
    wds: Subscriptions,
}

impl Watch {
    pub(crate) fn new(db: &Path, root: &Path) -> Option<Watch> {
        let w = watcher()?;
        let memory_dir = db.parent()?;
        let rotifer_dir = memory_dir.parent()?;
        let file_mask = libc::IN_MODIFY | libc::IN_ATTRIB | libc::IN_MOVE_SELF | libc::IN_DELETE_SELF;
        // IN_ATTRIB: an owner, mode or link count changed on the folder or a file in it (the
        // -wal and -shm are not watched themselves).
        let dir_mask = libc::IN_ATTRIB | libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO | libc::IN_MOVE_SELF | libc::IN_DELETE_SELF;
        // The root and every folder above it: only their own moves and deletions matter.
        let ancestor_mask = libc::IN_MOVE_SELF | libc::IN_DELETE_SELF;
        let mut watch = Watch { changed: Arc::new(AtomicBool::new(false)), written: Arc::new(AtomicBool::new(false)), wds: Subscriptions(Vec::new()) };
        let targets = [(db, file_mask), (memory_dir, dir_mask), (rotifer_dir, dir_mask)]
            .into_iter()
            .chain(root.ancestors().map(|a| (a, ancestor_mask)));
        for (path, mask) in targets {
            // One that cannot be watched (a watch limit, a file system without inotify): no
            // watch at all, and every call checks. Dropping `watch` removes the others.
            watch.wds.add(w, path, mask, &watch.changed, ANY_EVENT)?;
        }
        watch.wds.add(w, db, file_mask, &watch.written, libc::IN_MODIFY)?;
        Some(watch)
    }

    /// Whether anything changed, and whether the database file was written to, since the last
    /// time; both flags are cleared. With `Look::Recent`, the queue is read only if nobody read
    /// it in the last `RECENT_LOOK` (or a flag is set).
    pub(crate) fn take_changed(&self, look: Look) -> (bool, bool) {
        let Some(w) = watcher() else { return (true, false) };
        if look == Look::Recent
            && w.looked_recently()
            && !self.changed.load(Ordering::Acquire)
            && !self.written.load(Ordering::Acquire)
        {
            return (false, false);
        }
        let _draining = lock(&w.draining);
        w.drain();
        (self.changed.swap(false, Ordering::AcqRel), self.written.swap(false, Ordering::AcqRel))
    }

    /// Drains the queue and takes the written flag: whether the file was written to since.
    pub(crate) fn take_written(&self) -> bool {
        let Some(w) = watcher() else { return false };
        let _draining = lock(&w.draining);
        w.drain();
        self.written.swap(false, Ordering::AcqRel)
    }

    pub(crate) fn mark_changed(&self) {
        self.changed.store(true, Ordering::Release);
    }

    pub(crate) fn mark_written(&self) {
        self.written.store(true, Ordering::Release);
    }
}

/// Watch descriptors and the flags they set, removed on drop.
struct Subscriptions(Vec<(libc::c_int, Arc<AtomicBool>)>);

impl Subscriptions {
    fn add(&mut self, w: &Watcher, path: &Path, mask: u32, flag: &Arc<AtomicBool>, events: u32) -> Option<()> {
        let wd = w.add(path, mask, flag, events)?;
        self.0.push((wd, flag.clone()));
        Some(())
    }
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        if let Some(w) = watcher() {
            for (wd, flag) in &self.0 {
                w.remove(*wd, flag);
            }
        }
    }
}

/// Whether a path may no longer name the file opened through it: for the logs that
/// `layout::append_lines` keeps open. The kernel sets the flag when the file is moved, deleted
/// or has its owner, mode or links changed, when an entry of its folder is created, removed or
/// renamed or the folder's owner or mode changes, and when the folder or any folder above it
/// (by the path as given and by its real path) is moved or removed.
pub struct PathWatch {
    changed: Arc<AtomicBool>,
    wds: Subscriptions,
}

impl PathWatch {
    /// Watches the folders of `file` (before it is opened, so that nothing done meanwhile goes
    /// unreported); `None` where they cannot be watched.
    pub fn folders_of(file: &Path) -> Option<PathWatch> {
        let w = watcher()?;
        let dir = file.parent()?;
        let real = std::fs::canonicalize(dir).ok()?;
        let dir_mask = libc::IN_ATTRIB | libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO | libc::IN_MOVE_SELF | libc::IN_DELETE_SELF;
        let ancestor_mask = libc::IN_MOVE_SELF | libc::IN_DELETE_SELF;
        let mut watch = PathWatch { changed: Arc::new(AtomicBool::new(false)), wds: Subscriptions(Vec::new()) };
        let targets = [(dir, dir_mask), (real.as_path(), dir_mask)]
            .into_iter()
            .chain(dir.ancestors().skip(1).chain(real.ancestors().skip(1)).map(|a| (a, ancestor_mask)));
        for (path, mask) in targets {
            watch.wds.add(w, path, mask, &watch.changed, ANY_EVENT)?;
        }
        Some(watch)
    }

    /// Adds the file itself, once it is open.
    pub fn file(mut self, file: &Path) -> Option<PathWatch> {
        let w = watcher()?;
        let mask = libc::IN_ATTRIB | libc::IN_MOVE_SELF | libc::IN_DELETE_SELF;
        self.wds.add(w, file, mask, &self.changed.clone(), ANY_EVENT)?;
        Some(self)
    }

    /// Whether the kernel reported a change, after a look at its queue now. The flag stays set.
    pub fn changed(&self) -> bool {
        if let Some(w) = watcher() {
            let _draining = lock(&w.draining);
            w.drain();
        }
        self.changed.load(Ordering::Acquire)
    }

    /// Whether the kernel reported a change, after a look as fresh as `look` asks: `Recent`
    /// relies on a look that any call of the process made in the last `RECENT_LOOK`, and looks
    /// now if there was none. The flag stays set.
    pub fn changed_after(&self, look: Look) -> bool {
        match (look, watcher()) {
            (Look::Recent, Some(w)) if w.looked_recently() => self.seen_changed(),
            _ => self.changed(),
        }
    }

    /// The flag as the last look left it, with no look now.
    pub fn seen_changed(&self) -> bool {
        self.changed.load(Ordering::Acquire)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
