//! Backup and restore on the PostgreSQL binding (R-HOST-1b, R-BIND-2). A backup is the file the
//! SQLite binding makes (`backup::write_backup`), from the agent's rows as one `SELECT` reads them
//! (one snapshot); a restore reads and checks a backup file with the file's own code
//! (`backup::read_backup`, `backup::plan_restore`) and hands the entries to
//! `rotifer.memory_restore`, one transaction and one audit row. Either way a backup made on one
//! binding restores into the other.

use std::path::Path;

use super::client::Connection;
use crate::backup::{plan_restore, restore_reason, write_backup, BackedUp, CheckedBackup, Restored};
use crate::error::{MemoryError, Result};
use crate::model::DataPolicy;
use crate::quota::DEFAULT_QUOTA;
use crate::storage::rows::StoredEntry;

/// The agent's limits and numbers, and every row of its entries (expired ones too, as a copy of
/// its file would hold them), in write order.
const ROWS: &str = "SELECT a.quota, a.anonymization_supported, a.max_retention_days, a.last_seq, \
       e.entry_id, e.category, e.key, e.value, e.size, e.seq, e.created_by, e.creator_domain, e.last_accessed_by, \
       e.created_at, e.updated_at, e.read_scope, e.write_scope, e.share_policy, e.ret_set, e.ret_days, \
       e.ret_auto_delete, e.ret_anonymization \
     FROM rotifer.agents a LEFT JOIN rotifer.entries e ON e.agent_id = a.agent_id \
     WHERE a.agent_id = $1 ORDER BY e.seq";

/// What a restore is decided against: the agent's limits and how many live entries it holds.
const TARGET: &str = "WITH t AS (SELECT coalesce($2::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS now) \
     SELECT t.now, a.quota, a.anonymization_supported, a.max_retention_days, \
       (SELECT count(*) FROM rotifer.entries e WHERE e.agent_id = a.agent_id AND (e.expires_at IS NULL OR e.expires_at > t.now)) AS live \
     FROM t CROSS JOIN rotifer.agents a WHERE a.agent_id = $1";

const RESTORE: &str = "SELECT rotifer.memory_restore($1, $2, $3, $4, $5, $6, $7)";

/// How many times a restore is decided again when the agent keeps changing under it.
const TRIES: usize = 8;

/// Writes the agent's backup to `dest`; `None` if the agent has no memory.
pub fn backup(c: &mut Connection, agent: &str, dest: &Path) -> Result<Option<BackedUp>> {
    let rows = c.query(ROWS, &[&agent])?;
    let Some(first) = rows.first() else { return Ok(None) };
    let policy = DataPolicy { anonymization_supported: first.get(1), max_retention_days: first.get::<_, Option<i32>>(2).map(i64::from) };
    let mut entries = Vec::with_capacity(rows.len());
    for row in &rows {
        if row.get::<_, Option<String>>("key").is_none() {
            continue; // the agent's row alone: it has no entry
        }
        entries.push(StoredEntry {
            entry: super::calls::entry_of(row)?,
            size: row.get::<_, i64>("size") as u64,
            seq: row.get("seq"),
            creator_domain: row.get("creator_domain"),
        });
    }
    write_backup(dest, agent, first.get::<_, i64>(0) as u64, policy, first.get(3), &entries).map(Some)
}

/// Replaces every entry of the agent with those of the checked backup `file` (the agent made,
/// with the default limits, if it has no memory).
pub fn restore(c: &mut Connection, agent: &str, backup: &CheckedBackup, file: &Path, now: Option<i64>) -> Result<Restored> {
    for _ in 0..TRIES {
        super::deployer::configure(c, agent, DEFAULT_QUOTA, DataPolicy::default(), false)?;
        let rows = c.query(TARGET, &[&agent, &now])?;
        let Some(t) = rows.first() else { continue }; // dropped meanwhile: made again above
        let policy = DataPolicy { anonymization_supported: t.get("anonymization_supported"), max_retention_days: t.get::<_, Option<i32>>("max_retention_days").map(i64::from) };
        let (mut plan, entries) = plan_restore(backup, file, agent, &policy, t.get::<_, i64>("quota") as u64, t.get("now"))?;
        plan.replaced = t.get::<_, i64>("live") as u64;
        let mut rows_json = Vec::with_capacity(entries.len());
        let mut values: Vec<&[u8]> = Vec::with_capacity(entries.len());
        for e in &entries {
            let mut row = super::bundle::entry_columns(&e.entry, e.creator_domain.as_deref());
            row.insert("last_accessed_by".into(), e.entry.last_accessed_by.clone().into());
            row.insert("seq".into(), e.seq.into());
            rows_json.push(serde_json::Value::Object(row));
            values.push(&e.entry.value);
        }
        let reason = restore_reason(file, &plan);
        let (rows_json, replaced) = (serde_json::Value::Array(rows_json), plan.replaced as i64);
        let answer = c.query(RESTORE, &[&agent, &rows_json, &values, &backup.last_seq, &replaced, &reason, &now])?;
        if answer.first().and_then(|r| r.get::<_, Option<i64>>(0)).is_some() {
            return Ok(plan);
        }
    }
    Err(MemoryError::storage(format!(
        "agent {agent:?} changed each of the {TRIES} times its restore was decided (other hosts are writing it); nothing was restored: try again"
    )))
}
