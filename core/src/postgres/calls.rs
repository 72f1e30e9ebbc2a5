//! The server functions of the four calls (sql/functions/), as typed Rust calls: one round trip
//! each. What they answer is an entry, nothing, or a refusal whose audit row the server has
//! committed (R-BIND-3); the contract's messages are made from it above this module.
//!
//! A change carries an attempt id. If the connection breaks before its answer arrives, the call
//! reconnects and asks whether that attempt committed (R-BIND-6): a change is never applied
//! twice, and never reported failed when it committed.

use tokio_postgres::Row;

use super::client::Connection;
use crate::error::{ErrorCode, MemoryError, Result};
use crate::model::{AccessPolicy, Category, Entry, RetentionArg, RetentionPolicy, Scope, SharePolicy};

/// Who calls, on which agent, at what time (`None`: the server's clock).
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    pub agent: &'a str,
    pub gene: Option<&'a str>,
    pub domain: Option<&'a str>,
    pub now: Option<i64>,
}

/// Why the server refused a call; its audit row, if it has one, is committed.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub code: ErrorCode,
    pub reason: Option<String>,
    pub facts: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    Done(T),
    Refused(Refusal),
}

/// A read that changes nothing, as one plain statement the role may send (it reads its own rows):
/// the entry, if the agent exists unfenced (R-MIG-4), nothing of it has expired and a test clock is the role's to
/// give. Anything else (`go` false, a reader who is not yet the last accessor, a scope that does
/// not admit) goes through `memory_read`, which takes the agent's lock and judges again.
const READ_FAST: &str = "SELECT g.go, e.entry_id, e.category, e.key, e.value, e.created_by, e.creator_domain, e.last_accessed_by, \
     e.created_at, e.updated_at, e.read_scope, e.write_scope, e.share_policy, e.ret_set, e.ret_days, e.ret_auto_delete, e.ret_anonymization \
   FROM (SELECT EXISTS (SELECT 1 FROM rotifer.agents WHERE agent_id = $1 AND fence IS NULL) \
            AND ($2::bigint IS NULL OR EXISTS (SELECT 1 FROM rotifer.roles WHERE role_name = session_user AND test_clock)) \
            AND coalesce((SELECT min(expires_at) FROM rotifer.entries WHERE agent_id = $1) \
                         > coalesce($2::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), true) AS go) g \
   LEFT JOIN rotifer.entries e ON g.go AND e.agent_id = $1 AND e.key = $3";
/// A query that changes nothing (the agent exists unfenced, a test clock is allowed, nothing of it has
/// expired), as one plain statement over one snapshot: the role may read its own rows. The scope
/// test is `rotifer.admits`, written out (the role may not execute the schema's helpers); `$9`
/// is the end of the key prefix's range (`prefix_end`), `$11` the 4 MiB bound: over it no value is sent:
/// the server function answers that query (it refuses it).
const QUERY_FAST: &str = "SELECT g.go, q.entry_id, q.category, q.key, CASE WHEN q.total <= $11::bigint THEN q.value END AS value, \
     q.created_by, q.last_accessed_by, \
     q.created_at, q.updated_at, q.read_scope, q.write_scope, q.share_policy, q.ret_set, q.ret_days, q.ret_auto_delete, \
     q.ret_anonymization, q.total \
   FROM (SELECT EXISTS (SELECT 1 FROM rotifer.agents WHERE agent_id = $1 AND fence IS NULL) \
            AND ($10::bigint IS NULL OR EXISTS (SELECT 1 FROM rotifer.roles WHERE role_name = session_user AND test_clock)) \
            AND NOT EXISTS (SELECT 1 FROM rotifer.entries WHERE agent_id = $1 \
                            AND expires_at <= coalesce($10::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)) AS go) g \
   LEFT JOIN LATERAL (SELECT w.*, (sum(w.size) OVER ())::bigint AS total FROM ( \
       SELECT * FROM rotifer.entries e \
       WHERE e.agent_id = $1 AND ($4::text IS NULL OR e.category = $4) \
         AND ($5::text IS NULL OR (e.key >= $5 AND ($9::text IS NULL OR e.key < $9))) \
         AND ($6::bigint IS NULL OR e.updated_at >= $6) AND ($7::bigint IS NULL OR e.updated_at < $7) \
         AND coalesce(CASE e.read_scope WHEN 'CREATOR_GENE_ONLY' THEN $2::text = e.created_by \
               WHEN 'SAME_DOMAIN' THEN $2::text = e.created_by OR ($3::text IS NOT NULL AND e.creator_domain IS NOT NULL AND $3::text = e.creator_domain) \
               WHEN 'ALL_GENES' THEN true ELSE false END, false) \
       ORDER BY e.updated_at DESC, e.seq DESC LIMIT $8::integer) w) q ON g.go \
   ORDER BY q.updated_at DESC, q.seq DESC";
const READ: &str = "SELECT * FROM rotifer.memory_read($1, $2, $3, $4, $5, $6)";
const WRITE: &str = "SELECT * FROM rotifer.memory_write($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
const QUERY: &str = "SELECT * FROM rotifer.memory_query($1, $2, $3, $4, $5, $6, $7, $8, $9)";
const DELETE: &str = "SELECT * FROM rotifer.memory_delete($1, $2, $3, $4, $5, $6)";
const PROBE_READ: &str = "SELECT outcome, code, reason, facts FROM rotifer.memory_read($1, $2, $3, $4, NULL, $5)";
const PROBE_WRITE: &str = "SELECT outcome, code, reason, facts FROM rotifer.memory_write($1, $2, $3, $4, NULL, NULL, NULL, false, NULL, $5, NULL)";
const PROBE_QUERY: &str = "SELECT outcome, code, reason, facts FROM rotifer.memory_query($1, $2, $3, NULL, NULL, NULL, NULL, NULL, $4)";
const PROBE_DELETE: &str = "SELECT outcome, code, reason, facts FROM rotifer.memory_delete($1, $2, $3, $4, $5, NULL)";
const SETTLE: &str = "SELECT rotifer.attempt_settle($1, $2)";

/// A write's arguments, validated by the contract's code (`model::parse_*`).
pub struct WriteArgs<'a> {
    pub key: &'a str,
    pub value: &'a [u8],
    pub category: Category,
    pub access: Option<AccessPolicy>,
    pub retention: RetentionArg,
}

/// The query filter, validated: times in ms, `limit` 1–1000.
pub struct QueryArgs<'a> {
    pub category: Option<Category>,
    pub key_prefix: Option<&'a str>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub limit: i32,
}

pub fn read(c: &mut Connection, who: Caller<'_>, key: &str, category: Option<Category>) -> Result<Outcome<Option<Entry>>> {
    if let Some(answer) = read_fast(c, who, key, category)? {
        return Ok(Outcome::Done(answer));
    }
    let rows = c.query(READ, &[&who.agent, &who.gene, &who.domain, &key, &category.map(Category::as_str), &who.now])?;
    let row = one(&rows)?;
    Ok(match outcome_of(row)? {
        Some(refusal) => Outcome::Refused(refusal),
        None if row.get::<_, String>("outcome") == "none" => Outcome::Done(None),
        None => Outcome::Done(Some(entry_of(row)?)),
    })
}

/// `read` when it changes nothing: `Some(answer)`, or `None` for the server function to judge.
fn read_fast(c: &mut Connection, who: Caller<'_>, key: &str, category: Option<Category>) -> Result<Option<Option<Entry>>> {
    let Some(gene) = who.gene else { return Ok(None) };
    let rows = c.query(READ_FAST, &[&who.agent, &who.now, &key])?;
    let row = one(&rows)?;
    if !row.get::<_, bool>("go") {
        return Ok(None);
    }
    if row.get::<_, Option<String>>("entry_id").is_none() {
        return Ok(Some(None));
    }
    let entry = entry_of(row)?;
    if category.is_some_and(|c| c != entry.category) {
        return Ok(Some(None));
    }
    let creator_domain: Option<String> = row.get("creator_domain");
    let caller = crate::access::Gene { id: gene.to_string(), domain: who.domain.map(str::to_string) };
    let owner = crate::access::Owner { created_by: &entry.created_by, creator_domain: creator_domain.as_deref() };
    if entry.last_accessed_by == gene && crate::access::scope_admits(entry.access_policy.read_scope, owner, &caller) {
        return Ok(Some(Some(entry)));
    }
    Ok(None)
}

pub fn write(c: &mut Connection, who: Caller<'_>, w: &WriteArgs<'_>) -> Result<Outcome<Entry>> {
    let access = w.access.map(|a| {
        serde_json::json!({ "readScope": a.read_scope.as_str(), "writeScope": a.write_scope.as_str(), "sharePolicy": a.share_policy.as_str() })
    });
    let (retention_given, retention) = match w.retention {
        RetentionArg::Omitted => (false, None),
        RetentionArg::FollowAgent => (true, None),
        RetentionArg::Policy(p) => (
            true,
            Some(serde_json::json!({
                "maxRetentionDays": p.max_retention_days,
                "autoDeleteOnTermination": p.auto_delete_on_termination,
                "anonymizationSupported": p.anonymization_supported,
            })),
        ),
    };
    let attempt = attempt_id();
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 11] =
        [&who.agent, &who.gene, &who.domain, &w.key, &w.value, &w.category.as_str(), &access, &retention_given, &retention, &who.now, &attempt];
    let rows = match c.query(WRITE, &params) {
        Ok(rows) => rows,
        Err(e) => {
            // It committed, but its answer was lost: the attempt's record holds the entry as stored.
            let stored = resolve_lost_answer(c, who.agent, &attempt, e)?;
            let mut entry = entry_of_json(&stored)?;
            entry.value = w.value.to_vec();
            return Ok(Outcome::Done(entry));
        }
    };
    let row = one(&rows)?;
    Ok(match outcome_of(row)? {
        Some(refusal) => Outcome::Refused(refusal),
        None => {
            let mut entry = entry_of(row)?;
            entry.value = w.value.to_vec(); // the server does not send back what it was sent
            Outcome::Done(entry)
        }
    })
}

pub fn query(c: &mut Connection, who: Caller<'_>, q: &QueryArgs<'_>) -> Result<Outcome<Vec<Entry>>> {
    if let Some(entries) = query_fast(c, who, q)? {
        return Ok(Outcome::Done(entries));
    }
    let rows = c.query(QUERY, &[&who.agent, &who.gene, &who.domain, &q.category.map(Category::as_str), &q.key_prefix, &q.since, &q.until, &q.limit, &who.now])?;
    if let Some(first) = rows.first() {
        if let Some(refusal) = outcome_of(first)? {
            return Ok(Outcome::Refused(refusal));
        }
    }
    Ok(Outcome::Done(rows.iter().map(entry_of).collect::<Result<_>>()?))
}

/// The query as a plain statement, if it changes nothing and stays within the 4 MiB bound; `None`:
/// the server function must answer it (it purges, or refuses).
fn query_fast(c: &mut Connection, who: Caller<'_>, q: &QueryArgs<'_>) -> Result<Option<Vec<Entry>>> {
    let Some(gene) = who.gene else { return Ok(None) };
    let prefix = q.key_prefix.filter(|p| !p.is_empty());
    let end = prefix.and_then(prefix_end);
    let bound = crate::model::MAX_QUERY_BYTES as i64;
    let rows = c.query(QUERY_FAST, &[&who.agent, &gene, &who.domain, &q.category.map(Category::as_str), &prefix, &q.since, &q.until, &q.limit, &end, &who.now, &bound])?;
    if !one(&rows)?.get::<_, bool>("go") {
        return Ok(None);
    }
    let mut entries = Vec::with_capacity(rows.len());
    for row in &rows {
        let Some(total) = row.get::<_, Option<i64>>("total") else { continue }; // no entry matched
        if total > bound {
            return Ok(None);
        }
        entries.push(entry_of(row)?);
    }
    Ok(Some(entries))
}

/// The smallest text after every text that starts with `prefix` (code point order, which is the
/// key column's `"C"` order); `None` if there is none. As `rotifer.prefix_end`.
pub fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match last as u32 + 1 {
            0xD800 => Some('\u{E000}'), // no surrogates in text
            n => char::from_u32(n),
        };
        if let Some(c) = next {
            chars.push(c);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

pub fn delete(c: &mut Connection, who: Caller<'_>, key: &str) -> Result<Outcome<()>> {
    let attempt = attempt_id();
    let rows = match c.query(DELETE, &[&who.agent, &who.gene, &who.domain, &key, &who.now, &attempt]) {
        Ok(rows) => rows,
        Err(e) => return resolve_lost_answer(c, who.agent, &attempt, e).map(|_| Outcome::Done(())),
    };
    Ok(match outcome_of(one(&rows)?)? {
        Some(refusal) => Outcome::Refused(refusal),
        None => Outcome::Done(()),
    })
}

/// A call of `op`'s function (`read`, `write`, `query`, `delete`) that carries who calls and at
/// most a key: what a call the client refused still does on the server first (§9). Without a
/// valid gene id it is denied and the denial recorded, with `key` (R-ACC-4); with one, expired
/// entries are purged and the call refused as invalid, changing nothing else (give no `key`).
pub fn probe(c: &mut Connection, who: Caller<'_>, op: &str, key: Option<&str>) -> Result<Outcome<()>> {
    let keyed = |sql| (sql, [&who.agent as &(dyn tokio_postgres::types::ToSql + Sync), &who.gene, &who.domain, &key, &who.now]);
    let rows = match op {
        "read" | "write" | "delete" => {
            let (sql, params) = keyed(match op { "read" => PROBE_READ, "write" => PROBE_WRITE, _ => PROBE_DELETE });
            c.query(sql, &params)?
        }
        "query" => c.query(PROBE_QUERY, &[&who.agent, &who.gene, &who.domain, &who.now])?,
        other => return Err(MemoryError::storage(format!("no call named {other:?}"))),
    };
    Ok(match outcome_of(one(&rows)?)? {
        Some(refusal) => Outcome::Refused(refusal),
        None => Outcome::Done(()),
    })
}

/// After a failed change call: did attempt `id` commit? Its record (what it stored) if it did;
/// the original error if it did not, and then it never will (`attempt_settle` fences it off,
/// however late the call reaches the server); a storage error saying the outcome is unknown if
/// the server cannot be asked.
fn resolve_lost_answer(c: &mut Connection, agent: &str, id: &str, failure: MemoryError) -> Result<serde_json::Value> {
    if failure.code != ErrorCode::StorageError || !c.last_call_sent() {
        return Err(failure);
    }
    c.reset();
    match c.query(SETTLE, &[&agent, &id]) {
        Ok(rows) => {
            let settled: serde_json::Value = rows.first().map(|r| r.get(0)).unwrap_or(serde_json::Value::Null);
            if settled.get("committed") == Some(&serde_json::Value::Bool(true)) {
                Ok(settled.get("result").cloned().unwrap_or(serde_json::Value::Null))
            } else {
                Err(failure)
            }
        }
        Err(e) => Err(MemoryError::storage(format!(
            "{}; whether the change committed could not be found out either ({}): read the entry back before trying again",
            failure.message, e.message
        ))),
    }
}

fn attempt_id() -> String {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = Sha256::new();
    h.update(std::process::id().to_le_bytes());
    h.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    h.update(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos().to_le_bytes());
    h.update(format!("{:p}", &h).as_bytes());
    crate::model::hex(&h.finalize())[..32].to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn r_api_3_a_prefix_range_ends_after_every_key_that_starts_with_it() {
        use super::prefix_end;
        assert_eq!(prefix_end("ab").as_deref(), Some("ac"));
        assert_eq!(prefix_end("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
        assert_eq!(prefix_end("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_end("\u{10FFFF}\u{10FFFF}"), None);
        assert_eq!(prefix_end("%_'").as_deref(), Some("%_("));
    }
}

fn one(rows: &[Row]) -> Result<&Row> {
    rows.first().ok_or_else(|| MemoryError::storage("the PostgreSQL binding answered no row: is its schema set up (rotifer binding setup)?"))
}

fn outcome_of(row: &Row) -> Result<Option<Refusal>> {
    if row.get::<_, String>("outcome") != "refused" {
        return Ok(None);
    }
    let code: String = row.get("code");
    let code = ErrorCode::ALL.into_iter().find(|c| c.as_str() == code).ok_or_else(|| MemoryError::storage(format!("the PostgreSQL binding answered an unknown code {code:?}")))?;
    Ok(Some(Refusal { code, reason: row.get("reason"), facts: row.get("facts") }))
}

/// An entry from the attempt record the write function keeps (`to_jsonb` of the row, no value).
fn entry_of_json(v: &serde_json::Value) -> Result<Entry> {
    let bad = |what: &str| MemoryError::storage(format!("the PostgreSQL binding recorded an attempt with a bad {what}"));
    let text = |name: &str| v.get(name).and_then(|x| x.as_str()).map(str::to_string).ok_or_else(|| bad(name));
    let int = |name: &str| v.get(name).and_then(|x| x.as_i64()).ok_or_else(|| bad(name));
    let flag = |name: &str| v.get(name).and_then(|x| x.as_bool()).ok_or_else(|| bad(name));
    let scope = |name: &str| -> Result<Scope> { let s = text(name)?; Scope::ALL.into_iter().find(|x| x.as_str() == s).ok_or_else(|| bad(name)) };
    let share = text("share_policy")?;
    Ok(Entry {
        entry_id: text("entry_id")?,
        category: Category::from_str(&text("category")?).ok_or_else(|| bad("category"))?,
        key: text("key")?,
        value: Vec::new(),
        created_by: text("created_by")?,
        last_accessed_by: text("last_accessed_by")?,
        created_at: int("created_at")?,
        updated_at: int("updated_at")?,
        access_policy: AccessPolicy {
            read_scope: scope("read_scope")?,
            write_scope: scope("write_scope")?,
            share_policy: SharePolicy::ALL.into_iter().find(|x| x.as_str() == share).ok_or_else(|| bad("share_policy"))?,
        },
        retention_policy: if flag("ret_set")? {
            Some(RetentionPolicy {
                max_retention_days: v.get("ret_days").and_then(|x| x.as_i64()),
                auto_delete_on_termination: flag("ret_auto_delete")?,
                anonymization_supported: flag("ret_anonymization")?,
            })
        } else {
            None
        },
    })
}

pub(crate) fn entry_of(row: &Row) -> Result<Entry> {
    let bad = |what: &str| MemoryError::storage(format!("the PostgreSQL binding answered an entry with a bad {what}"));
    let scope = |name: &str| -> Result<Scope> {
        let s: String = row.get(name);
        Scope::ALL.into_iter().find(|x| x.as_str() == s).ok_or_else(|| bad(name))
    };
    let share: String = row.get("share_policy");
    let retention = if row.get::<_, bool>("ret_set") {
        Some(RetentionPolicy {
            max_retention_days: row.get::<_, Option<i32>>("ret_days").map(i64::from),
            auto_delete_on_termination: row.get("ret_auto_delete"),
            anonymization_supported: row.get("ret_anonymization"),
        })
    } else {
        None
    };
    Ok(Entry {
        entry_id: row.get("entry_id"),
        category: Category::from_str(&row.get::<_, String>("category")).ok_or_else(|| bad("category"))?,
        key: row.get("key"),
        value: row.get::<_, Option<Vec<u8>>>("value").unwrap_or_default(),
        created_by: row.get("created_by"),
        last_accessed_by: row.get("last_accessed_by"),
        created_at: row.get("created_at"),
        updated_at: row.get("updated_at"),
        access_policy: AccessPolicy {
            read_scope: scope("read_scope")?,
            write_scope: scope("write_scope")?,
            share_policy: SharePolicy::ALL.into_iter().find(|x| x.as_str() == share).ok_or_else(|| bad("share_policy"))?,
        },
        retention_policy: retention,
    })
}
