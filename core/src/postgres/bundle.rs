//! Export and import on the PostgreSQL binding (R-MIG-2/3, R-BIND-2). The bundle is made and
//! read by `bundle`, as for the file: an export is one `SELECT` (one snapshot) whose rows go
//! through the same encoder; an import is planned by the same `bundle::plan_import` against the
//! agent as one statement reads it, then written by `rotifer.memory_import` in one transaction,
//! which writes nothing if the agent changed since (it answers `changed`, and the plan is made
//! again).

use super::client::Connection;
use crate::bundle::{plan_import, Bundle, Encoder, Exported, Imported, OnConflict, Target};
use crate::error::{MemoryError, Result};
use crate::model::DataPolicy;
use crate::quota::DEFAULT_QUOTA;

/// The agent's limits and its live entries, oldest first, at one instant: the caller's test clock
/// or the server's. (A role may read every row of its agents, expired ones too: the time given
/// here decides only what the bundle holds.)
const EXPORT: &str = "WITH t AS (SELECT coalesce($2::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS now) \
     SELECT t.now, a.anonymization_supported, a.max_retention_days, e.entry_id, e.category, e.key, e.value, e.created_by, \
       e.creator_domain, e.last_accessed_by, e.created_at, e.updated_at, e.read_scope, e.write_scope, e.share_policy, \
       e.ret_set, e.ret_days, e.ret_auto_delete, e.ret_anonymization \
     FROM t CROSS JOIN rotifer.agents a \
     LEFT JOIN rotifer.entries e ON e.agent_id = a.agent_id AND (e.expires_at IS NULL OR e.expires_at > t.now) AND ($3 OR e.category <> 'CACHE') \
     WHERE a.agent_id = $1 ORDER BY e.updated_at, e.seq";

/// What an import is planned against: the agent's limits, its version (`last_seq`), the bytes
/// of its live entries, and the live entries among the bundle's keys.
const TARGET: &str = "WITH t AS (SELECT coalesce($2::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS now) \
     SELECT t.now, a.quota, a.anonymization_supported, a.max_retention_days, a.last_seq, \
       (SELECT coalesce(sum(size), 0)::bigint FROM rotifer.entries l WHERE l.agent_id = a.agent_id AND (l.expires_at IS NULL OR l.expires_at > t.now)) AS used, \
       k.key, k.size \
     FROM t CROSS JOIN rotifer.agents a \
     LEFT JOIN rotifer.entries k ON k.agent_id = a.agent_id AND k.key = ANY($3::text[]) AND (k.expires_at IS NULL OR k.expires_at > t.now) \
     WHERE a.agent_id = $1";

const IMPORT: &str = "SELECT rotifer.memory_import($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// How many times an import is planned again when the agent keeps changing under it.
const PLANS: usize = 8;

/// The bundle of the agent's memory; `None` if it has none.
pub fn export(c: &mut Connection, agent: &str, include_cache: bool, now: Option<i64>) -> Result<Option<Exported>> {
    let rows = c.query(EXPORT, &[&agent, &now, &include_cache])?;
    let Some(first) = rows.first() else { return Ok(None) };
    let policy = DataPolicy { anonymization_supported: first.get(1), max_retention_days: first.get::<_, Option<i32>>(2).map(i64::from) };
    let at: i64 = first.get(0);
    let mut encoder = Encoder::default();
    for row in &rows {
        if row.get::<_, Option<String>>("key").is_none() {
            continue; // the agent's row alone: it has no entry
        }
        let entry = super::calls::entry_of(row)?;
        encoder.push(&entry, row.get::<_, Option<String>>("creator_domain").as_deref())?;
    }
    encoder.finish(agent, &policy, at).map(Some)
}

/// Imports a checked bundle (R-MIG-3): the agent created with the default limits if it has no
/// memory, the import planned against it, then written whole or not at all.
pub fn import(c: &mut Connection, agent: &str, bundle: &Bundle, on_conflict: OnConflict, now: Option<i64>) -> Result<Imported> {
    let keys: Vec<&str> = bundle.entries.iter().map(|b| b.entry.key.as_str()).collect();
    for _ in 0..PLANS {
        super::deployer::configure(c, agent, DEFAULT_QUOTA, DataPolicy::default(), false)?;
        let rows = c.query(TARGET, &[&agent, &now, &keys])?;
        let Some(first) = rows.first() else { continue }; // dropped meanwhile: made again above
        let held: std::collections::HashMap<String, u64> =
            rows.iter().filter_map(|r| r.get::<_, Option<String>>("key").map(|k| (k, r.get::<_, i64>("size") as u64))).collect();
        let existing = |key: &str| Ok(held.get(key).copied());
        let policy = DataPolicy { anonymization_supported: first.get("anonymization_supported"), max_retention_days: first.get::<_, Option<i32>>("max_retention_days").map(i64::from) };
        let target = Target { policy, quota: first.get::<_, i64>("quota") as u64, used: first.get::<_, i64>("used") as u64, now: first.get("now"), existing: &existing };
        let (plan, _, report) = plan_import(bundle, &target, on_conflict)?;
        let mut entries = Vec::with_capacity(plan.len());
        let mut values: Vec<&[u8]> = Vec::with_capacity(plan.len());
        for p in &plan {
            let mut row = entry_columns(&p.from.entry, p.from.creator_domain.as_deref());
            row.insert("replaces".into(), p.replaces.into());
            entries.push(serde_json::Value::Object(row));
            values.push(&p.from.entry.value);
        }
        let entries = serde_json::Value::Array(entries);
        let (seq, used, quota): (i64, i64, i64) = (first.get("last_seq"), first.get("used"), first.get("quota"));
        let days: Option<i32> = first.get("max_retention_days");
        let rows = c.query(IMPORT, &[&agent, &seq, &used, &quota, &policy.anonymization_supported, &days, &entries, &values, &now])?;
        match rows.first().map(|r| r.get::<_, String>(0)).as_deref() {
            Some("ok") => return Ok(report),
            Some("changed") => continue,
            other => return Err(MemoryError::storage(format!("the PostgreSQL binding answered {other:?} to an import"))),
        }
    }
    Err(MemoryError::storage(format!(
        "agent {agent:?} changed each of the {PLANS} times its import was planned (other hosts are writing it); nothing was imported: try again"
    )))
}

/// An entry as the JSON object of the entries table's columns that `rotifer.put_brought_entry`
/// reads (no value: values go beside, as `bytea[]`).
pub(super) fn entry_columns(e: &crate::model::Entry, creator_domain: Option<&str>) -> serde_json::Map<String, serde_json::Value> {
    let r = e.retention_policy.as_ref();
    let serde_json::Value::Object(map) = serde_json::json!({
        "key": e.key,
        "category": e.category.as_str(),
        "created_by": e.created_by,
        "creator_domain": creator_domain,
        "created_at": e.created_at,
        "updated_at": e.updated_at,
        "read_scope": e.access_policy.read_scope.as_str(),
        "write_scope": e.access_policy.write_scope.as_str(),
        "share_policy": e.access_policy.share_policy.as_str(),
        "ret_set": r.is_some(),
        "ret_days": r.and_then(|r| r.max_retention_days),
        "ret_auto_delete": r.is_some_and(|r| r.auto_delete_on_termination),
        "ret_anonymization": r.is_some_and(|r| r.anonymization_supported),
    }) else {
        unreachable!("a JSON object literal")
    };
    map
}
