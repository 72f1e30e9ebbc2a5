//! Where things live under a project root (R-HOST-1, R-AUD-1/4/5), and how they are created:
//! folders 0700, files 0600, never through a symlink.

use crate::error::{MemoryError, Result};
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
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
            None => cwd.ancestors().find(|d| d.join("rotifer.json").is_file()).unwrap_or(&cwd).to_path_buf(),
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

fn ensure_private_dir(dir: &Path) -> Result<()> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_dir() => Ok(()),
            Ok(m) if m.file_type().is_symlink() => Err(MemoryError::storage(format!(
                "{} is a symlink; memory folders are never followed through links: replace it with a folder",
                dir.display()
            ))),
            _ => Err(MemoryError::storage(format!("{} exists and is not a folder: move it away", dir.display()))),
        },
        Err(e) => Err(MemoryError::storage(format!("cannot create {}: {e}", dir.display()))),
    }
}

/// Appends `bytes` (whole JSON lines) to a log file in one `write`, creating it 0600.
/// The file is never reached through a symlink, and must be a regular file. If an earlier,
/// failed append left a partial line, a newline is put first so that every line stays whole.
pub fn append_lines(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file: File = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut needs_newline = false;
    if meta.len() > 0 {
        let mut last = [0u8; 1];
        file.read_exact_at(&mut last, meta.len() - 1)?;
        needs_newline = last[0] != b'\n';
    }
    if needs_newline {
        let mut buf = Vec::with_capacity(bytes.len() + 1);
        buf.push(b'\n');
        buf.extend_from_slice(bytes);
        file.write_all(&buf)
    } else {
        file.write_all(bytes)
    }
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
