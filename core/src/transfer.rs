//! Moving memory on the agent's binding (R-MIG-2/3, R-HOST-1b, R-BIND-2): bundles and backups.
//! Their formats and decisions are `bundle`'s and `backup`'s, the same on both bindings; this
//! module only picks the storage.

use crate::binding::{Agent, Binding};
use crate::backup::{self, BackedUp, Restored};
use crate::bundle::{self, Exported, Imported, OnConflict};
use crate::error::{MemoryError, Result};
use crate::model::check_agent_id;
use crate::time::CallTime;
use std::path::Path;

/// The bundle of the agent's live `PREFERENCE`, `PATTERN` and `CONTEXT` entries, and `CACHE`
/// ones when `include_cache`, oldest first, on the agent's binding. Read from one snapshot;
/// changes nothing (no purge, no audit line). An agent whose memory was never created is
/// `MEMORY_NOT_FOUND`.
pub fn export_agent_memory_of(agent: &Agent, include_cache: bool, now: CallTime) -> Result<Exported> {
    match &agent.binding {
        Binding::Sqlite => bundle::export_agent_memory(&agent.layout, &agent.agent_id, include_cache, now.ms()),
        Binding::Postgres(pool) => pool
            .with(|c| {
                crate::postgres::moving::in_use(c, &agent.agent_id)?;
                crate::postgres::bundle::export(c, &agent.agent_id, include_cache, now.given())
            })?
            .ok_or_else(|| MemoryError::not_found(format!("agent {:?} has no memory on {}: there is nothing to export", agent.agent_id, agent.shown()))),
    }
}

/// Imports `bytes` into the agent, on its binding: every check first, then one transaction. The
/// agent's memory is created (default quota and data policy) if it never was.
pub fn import_agent_memory_of(agent: &Agent, bytes: &[u8], on_conflict: OnConflict, now: CallTime) -> Result<Imported> {
    match &agent.binding {
        Binding::Sqlite => bundle::import_agent_memory(&agent.layout, &agent.agent_id, bytes, on_conflict, now),
        Binding::Postgres(pool) => {
            check_agent_id(&agent.agent_id)?;
            let parsed = bundle::parse_bundle(bytes)?;
            pool.with(|c| crate::postgres::bundle::import(c, &agent.agent_id, &parsed, on_conflict, now.given()))
        }
    }
}

/// Writes a backup of the agent's memory to `dest` (a new file), from its binding: on either,
/// the standalone SQLite file `backup::backup_agent_memory` makes.
pub fn backup_agent_memory_of(agent: &Agent, dest: &Path) -> Result<BackedUp> {
    match &agent.binding {
        Binding::Sqlite => backup::backup_agent_memory(&agent.layout, &agent.agent_id, dest),
        Binding::Postgres(pool) => {
            check_agent_id(&agent.agent_id)?;
            pool.with(|c| {
                crate::postgres::moving::in_use(c, &agent.agent_id)?;
                crate::postgres::backup::backup(c, &agent.agent_id, dest)
            })?
            .ok_or_else(|| MemoryError::not_found(format!("agent {:?} has no memory to back up", agent.agent_id)))
        }
    }
}

/// Replaces every entry of the agent, on its binding, with those of the backup `file`, made on
/// either binding: checked whole first, then one change.
pub fn restore_agent_memory_of(agent: &Agent, file: &Path, now: CallTime) -> Result<Restored> {
    match &agent.binding {
        Binding::Sqlite => backup::restore_agent_memory(&agent.layout, &agent.agent_id, file, now),
        Binding::Postgres(pool) => {
            let checked = backup::read_backup(file, &agent.layout.real()?.db_path(&agent.agent_id), &agent.agent_id)?;
            pool.with(|c| crate::postgres::backup::restore(c, &agent.agent_id, &checked, file, now.given()))
        }
    }
}
