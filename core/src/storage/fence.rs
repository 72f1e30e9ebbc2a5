//! The mark a move (R-MIG-4, `rotifer agent migrate`) leaves on an agent's SQLite file: the file
//! `<id>.db-migration`, beside the database. While it is there, every call on the database is
//! refused (`integrity::DbFile::check` reads it at open, and whenever the kernel reports a
//! change in the folder, which making the mark is): its memory has moved elsewhere (`moved`),
//! or it is a copy a move into this file made and the agent's record does not name yet
//! (`arriving`).
//!
//! A file and not a row: a process that has the database open notices a new file in the folder
//! at its next call (inotify) without a query, and a process waiting for the write lock that
//! the move holds sees the mark the moment it gets the lock, since the mark is made before the
//! move's transaction commits.

use super::files::{remove_durably, replace_file_durably};
use crate::error::{MemoryError, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FenceState {
    /// The agent's memory moved to `binding`; this copy is kept, never used again.
    Moved,
    /// A copy brought from `binding` by a move that has not named this file in the agent's
    /// record yet; the memory is still where it came from.
    Arriving,
}

/// A move's mark on one side of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fence {
    pub state: FenceState,
    /// The other side: where the memory went (`moved`) or came from (`arriving`), as messages
    /// show it (no password).
    pub binding: String,
    /// When the move began, RFC 3339.
    pub at: String,
    /// The move's id: both sides and the agent record name it.
    #[serde(rename = "move")]
    pub move_id: String,
}

impl Fence {
    /// The refusal of a call on a fenced memory.
    pub fn refusal(&self, agent_id: &str) -> MemoryError {
        MemoryError::storage(match self.state {
            FenceState::Moved => format!(
                "the memory of agent \"{agent_id}\" moved to {} (rotifer agent migrate, {}); this copy is kept but no longer used: open the memory again, without naming this binding",
                self.binding, self.at
            ),
            FenceState::Arriving => format!(
                "this is a copy of agent \"{agent_id}\"'s memory that a move from {} (rotifer agent migrate, {}) brought and did not finish; the memory is still there: open it without naming this binding, or run the migrate again",
                self.binding, self.at
            ),
        })
    }
}

/// Where the mark of the database `db` is.
pub fn fence_path(db: &Path) -> PathBuf {
    PathBuf::from(format!("{}-migration", db.display()))
}

/// The mark on `db`, if any. A mark that cannot be read is an error: a memory is never taken
/// for unfenced by guess.
pub fn read(db: &Path) -> Result<Option<Fence>> {
    let path = fence_path(db);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(MemoryError::storage(format!(
                "cannot read {} ({e}), which says whether this memory moved",
                path.display()
            )))
        }
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        MemoryError::storage(format!(
            "{} is not a move's mark ({e}); it says whether this memory moved, so nothing is done until it is fixed or removed",
            path.display()
        ))
    })
}

/// Makes (or replaces) the mark on `db`, durably: once this returns, a crash keeps it.
pub fn write(db: &Path, fence: &Fence) -> Result<()> {
    let path = fence_path(db);
    let bytes = serde_json::to_vec(fence)
        .map_err(|e| MemoryError::storage(format!("cannot encode a move's mark: {e}")))?;
    replace_file_durably(&path, &bytes)
        .map_err(|e| MemoryError::storage(format!("cannot write {} ({e})", path.display())))
}

/// Removes the mark on `db` if it is the one of move `move_id` in `state`; answers whether it did.
pub fn remove_if(db: &Path, state: FenceState, move_id: &str) -> Result<bool> {
    match read(db)? {
        Some(f) if f.state == state && f.move_id == move_id => {
            remove_durably(&fence_path(db)).map_err(|e| {
                MemoryError::storage(format!("cannot remove {} ({e})", fence_path(db).display()))
            })?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

fn passes() -> &'static Mutex<HashSet<PathBuf>> {
    static PASSES: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    PASSES.get_or_init(Default::default)
}

/// While held, this process's calls on `db` pass its mark: the move that writes a copy into a
/// fenced file (a leftover of an earlier move) works on it. Other processes stay refused.
pub struct Pass(PathBuf);

impl Pass {
    pub fn new(db: &Path) -> Pass {
        passes()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(db.to_path_buf());
        Pass(db.to_path_buf())
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        passes()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.0);
    }
}

/// `Err` (the refusal) if `db` is fenced and this process holds no pass for it.
pub fn check(db: &Path, agent_id: &str) -> Result<()> {
    match read(db)? {
        Some(f)
            if !passes()
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(db) =>
        {
            Err(f.refusal(agent_id))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_mig_4_a_mark_refuses_until_removed_and_a_pass_lets_only_this_process_through() {
        let dir = std::env::temp_dir().join(format!("rotifer-fence-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("a1.db");
        assert!(check(&db, "a1").is_ok());
        let f = Fence {
            state: FenceState::Moved,
            binding: "postgresql://u:***@h/db".into(),
            at: "2026-12-05T00:00:00.000Z".into(),
            move_id: "m1".into(),
        };
        write(&db, &f).unwrap();
        assert_eq!(read(&db).unwrap().as_ref(), Some(&f));
        let e = check(&db, "a1").unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::StorageError);
        assert!(
            e.message.contains("moved to postgresql://u:***@h/db")
                && e.message.contains("open the memory again"),
            "{}",
            e.message
        );
        {
            let _pass = Pass::new(&db);
            assert!(check(&db, "a1").is_ok());
        }
        assert!(check(&db, "a1").is_err(), "the pass ends with its holder");
        assert!(
            !remove_if(&db, FenceState::Arriving, "m1").unwrap(),
            "another state is not removed"
        );
        assert!(
            !remove_if(&db, FenceState::Moved, "m2").unwrap(),
            "another move's mark is not removed"
        );
        assert!(remove_if(&db, FenceState::Moved, "m1").unwrap());
        assert!(check(&db, "a1").is_ok());
        std::fs::write(fence_path(&db), b"{not json").unwrap();
        assert!(check(&db, "a1")
            .unwrap_err()
            .message
            .contains("not a move's mark"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
