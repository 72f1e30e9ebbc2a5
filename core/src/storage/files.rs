//! Where things live under a project root (R-HOST-1, R-AUD-1/4/5), and how they are created:
//! folders 0700, files 0600, never through a symlink. What is found there is trusted only if
//! it is ours: owned by this process's user, writable by nobody else, and (files) with no other
//! name, as OpenSSH's StrictModes does. One `refuse_…` function per check.

use crate::error::{MemoryError, Result};
use std::fs::{self, DirBuilder, File, Metadata, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The files of one project root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    pub root: PathBuf,
}

impl Layout {
    /// `root` if given (relative to the working directory), else the nearest ancestor of the
    /// working directory holding `rotifer.json`, else the working directory (R-HOST §12).
    pub fn resolve(root: Option<&str>) -> Result<Layout> {
        let cwd = std::env::current_dir()
            .map_err(|e| MemoryError::storage(format!("cannot read the working directory: {e}")))?;
        let root = match root {
            Some(r) if r.is_empty() => return Err(MemoryError::invalid("root must not be an empty string; omit it to use the project root")),
            Some(r) => cwd.join(r),
            None => {
                let found = cwd.ancestors().find(|d| d.join("rotifer.json").is_file());
                if let Some(found) = found {
                    // A `rotifer.json` planted in a shared folder above must not capture the
                    // memory of whoever runs genes below it.
                    refuse_untrusted_rotifer_dir(&found.join(".rotifer")).map_err(|e| {
                        MemoryError::storage(format!("the project root {} (found upwards from {}) is not usable: {}", found.display(), cwd.display(), e.message))
                    })?;
                }
                found.unwrap_or(&cwd).to_path_buf()
            }
        };
        Ok(Layout { root })
    }

    /// The same layout with the root resolved to its real path. SQLite refuses a database path
    /// with a symlink anywhere in it, and a real path names one database whatever link led there.
    pub fn real(&self) -> Result<Layout> {
        let root = fs::canonicalize(&self.root)
            .map_err(|e| MemoryError::storage(format!("project root {} is not usable: {e}", self.root.display())))?;
        Ok(Layout { root })
    }

    pub fn at(root: impl Into<PathBuf>) -> Layout {
        Layout { root: root.into() }
    }
    pub fn rotifer_dir(&self) -> PathBuf {
        self.root.join(".rotifer")
    }
    pub fn memory_dir(&self) -> PathBuf {
        self.root.join(".rotifer").join("memory")
    }
    pub fn db_path(&self, agent_id: &str) -> PathBuf {
        self.memory_dir().join(format!("{agent_id}.db"))
    }
    pub fn audit_path(&self) -> PathBuf {
        self.root.join(".rotifer").join("audit.jsonl")
    }
    pub fn telemetry_path(&self) -> PathBuf {
        self.root.join(".rotifer").join("telemetry.jsonl")
    }

    /// `.rotifer` as the logs need it: a real folder we trust (O_NOFOLLOW guards only the log
    /// itself). It almost always is: one lookup, and the full check (which creates it) only
    /// when it is not.
    pub fn ensure_log_dir(&self) -> Result<()> {
        match fs::symlink_metadata(self.rotifer_dir()) {
            Ok(m) if m.file_type().is_dir() => refuse_untrusted_dir(&self.rotifer_dir(), &m),
            _ => self.ensure_dirs(false),
        }
    }

    /// Makes `.rotifer/` and, with `memory`, `.rotifer/memory/` (0700). An existing one must be
    /// a real folder: a symlink or a file in its place is a storage error, never followed.
    pub fn ensure_dirs(&self, memory: bool) -> Result<()> {
        // The root itself may be reached through a link (the store resolves it); what lies
        // under it may not.
        match fs::metadata(&self.root) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(MemoryError::storage(format!("project root {} is not a folder", self.root.display()))),
            Err(e) => return Err(MemoryError::storage(format!("project root {} is not usable: {e}", self.root.display()))),
        }
        ensure_private_dir(&self.rotifer_dir())?;
        if memory {
            ensure_private_dir(&self.memory_dir())?;
        }
        Ok(())
    }
}

/// A `.rotifer/` folder that exists must be a folder we can trust; one that does not is fine.
fn refuse_untrusted_rotifer_dir(dir: &Path) -> Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_dir() => refuse_untrusted_dir(dir, &m),
        Ok(m) if m.file_type().is_symlink() => Err(MemoryError::storage(format!(
            "{} is a symlink; memory folders are never followed through links: replace it with a folder",
            dir.display()
        ))),
        Ok(_) => Err(MemoryError::storage(format!("{} exists and is not a folder: move it away", dir.display()))),
        Err(_) => Ok(()),
    }
}

fn ensure_private_dir(dir: &Path) -> Result<()> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_dir() => refuse_untrusted_dir(dir, &m),
            Ok(m) if m.file_type().is_symlink() => Err(MemoryError::storage(format!(
                "{} is a symlink; memory folders are never followed through links: replace it with a folder",
                dir.display()
            ))),
            _ => Err(MemoryError::storage(format!("{} exists and is not a folder: move it away", dir.display()))),
        },
        Err(e) => Err(MemoryError::storage(format!("cannot create {}: {e}", dir.display()))),
    }
}

// ---------------------------------------------------------------------------------------------
// Trust checks: on metadata already taken (lstat or fstat), never by opening a file.

/// A folder under `.rotifer/` (or `.rotifer/` itself) we may use.
pub fn refuse_untrusted_dir(path: &Path, meta: &Metadata) -> Result<()> {
    refuse_foreign_owner(path, meta)?;
    refuse_group_or_other_writable(path, meta)
}

/// A file under `.rotifer/` (database, `-wal`, `-shm`, log) we may read and write.
pub fn refuse_untrusted_file(path: &Path, meta: &Metadata) -> Result<()> {
    refuse_foreign_owner(path, meta)?;
    refuse_group_or_other_writable(path, meta)?;
    refuse_hard_linked(path, meta)
}

/// Refuses what another user owns: its owner could read it, rewrite it, or swap it.
pub fn refuse_foreign_owner(path: &Path, meta: &Metadata) -> Result<()> {
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(MemoryError::storage(format!(
            "{} is owned by user id {}, not by this process's user (id {me}): memory trusts only its own files. If it is yours, `chown` it to you; if not, move it away and find out who put it there",
            path.display(),
            meta.uid()
        )));
    }
    Ok(())
}

/// Refuses what its group or others may write: they could empty, forge or replace it.
pub fn refuse_group_or_other_writable(path: &Path, meta: &Metadata) -> Result<()> {
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(MemoryError::storage(format!(
            "{} can be written by its group or by others (mode {mode:04o}): they could read, forge or replace memory. Run `chmod go-w {}` (memory makes folders 0700 and files 0600)",
            path.display(),
            path.display()
        )));
    }
    Ok(())
}

/// Refuses a file with another name (a hard link): whoever holds that name reads what is
/// written here, or has it written into a file of theirs.
pub fn refuse_hard_linked(path: &Path, meta: &Metadata) -> Result<()> {
    if meta.nlink() > 1 {
        return Err(MemoryError::storage(format!(
            "{} has {} names (hard links): another name could read what memory writes to it, or be a file memory must not write. Remove the other names (`find / -xdev -samefile {}`), or copy the file and use the copy",
            path.display(),
            meta.nlink(),
            path.display()
        )));
    }
    Ok(())
}

/// Creates a new, empty file 0600 that must not exist yet (no symlink is followed).
pub fn create_private_file(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// A name part no other process or call of this one uses at the same time.
pub fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{:x}-{:x}", std::process::id(), nanos, COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Writes `bytes` to `path` so that a crash leaves either the old file or the new one, whole: a
/// temporary 0600 file in the same folder, flushed, renamed over `path`, then the folder
/// flushed (the rename itself is durable once this returns).
pub fn replace_file_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", unique_suffix()));
    let written = (|| {
        let mut file = create_private_file(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    sync_dir(dir)
}

/// Renames `from` to `to` and flushes their folder, so that the new name survives a crash.
pub fn rename_durably(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::rename(from, to)?;
    sync_dir(
        to.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
}

/// Removes `path` and flushes its folder; a file already gone is no error.
pub fn remove_durably(path: &Path) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    sync_dir(
        path.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}
