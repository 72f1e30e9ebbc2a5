//! The deployer's surface on the PostgreSQL binding (R-HOST-1/2, R-BIND-2/3): the views of an
//! agent's memory, its deletes, its quota and policy, and its audit rows read in order. Each is
//! one server function (sql/functions/) or one `SELECT` under row-level security, one round
//! trip; the arguments come validated by the contract's own code, and the answers go back in
//! the shapes the SQLite binding's functions answer (`inspect`, `audit_log`, `memory`).

use std::sync::Arc;

use super::client::Connection;
use crate::binding::PgPool;
use crate::error::{MemoryError, Result};
use crate::inspect::{CategoryUsage, ListPage, ListTotals, Listing, Usage, CATEGORY_ORDER};
use crate::model::{Category, DataPolicy, Entry};
use crate::storage::audit::{stored_row_line, StoredRow};

const USAGE: &str = "SELECT * FROM rotifer.agent_usage($1, $2)";
const GET: &str = "SELECT * FROM rotifer.agent_get($1, $2, $3)";
const LIST: &str = "SELECT * FROM rotifer.memory_list($1, $2, $3, $4, $5, $6, $7)";
const DELETE: &str = "SELECT * FROM rotifer.memory_deployer_delete($1, $2, $3, $4, $5)";
const CONFIGURE: &str = "SELECT rotifer.agent_configure($1, $2, $3, $4, $5)";
const DROP: &str = "SELECT rotifer.memory_drop_agent($1)";

/// The agent's usage at `now` (`None`: the server's clock); `None` if it has no memory.
pub fn usage(c: &mut Connection, agent: &str, now: Option<i64>) -> Result<Option<Usage>> {
    let rows = c.query(USAGE, &[&agent, &now])?;
    let Some(first) = rows.first() else { return Ok(None) };
    let mut per: Vec<(Category, CategoryUsage)> = CATEGORY_ORDER.iter().map(|c| (*c, CategoryUsage::default())).collect();
    for row in &rows {
        let Some(category) = Category::from_str(&row.get::<_, String>("category")) else { continue };
        let bytes = row.get::<_, i64>("bytes") as u64;
        if let Some((_, u)) = per.iter_mut().find(|(c, _)| *c == category) {
            *u = CategoryUsage {
                entries: row.get::<_, i64>("entries") as u64,
                bytes,
                evictable_bytes: if Category::EVICTABLE.contains(&category) { bytes } else { 0 },
                next_expiry: row.get("next_expiry"),
            };
        }
    }
    Ok(Some(Usage {
        quota: first.get::<_, i64>("quota") as u64,
        data_policy: DataPolicy {
            anonymization_supported: first.get("anonymization_supported"),
            max_retention_days: first.get::<_, Option<i32>>("max_retention_days").map(i64::from),
        },
        used: per.iter().map(|(_, u)| u.bytes).sum(),
        entries: per.iter().map(|(_, u)| u.entries).sum(),
        categories: per,
    }))
}

/// The live entry with this key (validated), value included, whatever its access policy.
pub fn get(c: &mut Connection, agent: &str, key: &str, now: Option<i64>) -> Result<Option<Entry>> {
    let rows = c.query(GET, &[&agent, &key, &now])?;
    rows.first().map(super::calls::entry_of).transpose()
}

/// One page of the listing (arguments validated by `inspect::list_agent_memory_page`).
#[allow(clippy::too_many_arguments)]
pub fn list_page(
    c: &mut Connection,
    agent: &str,
    category: Option<Category>,
    key_prefix: Option<&str>,
    after: Option<&str>,
    limit: u32,
    totals: bool,
    now: Option<i64>,
) -> Result<ListPage> {
    // One more than the page holds: whether there are more.
    let asked = limit as i32 + 1;
    let rows = c.query(LIST, &[&agent, &category.map(Category::as_str), &key_prefix, &after, &asked, &totals, &now])?;
    let mut out = ListPage { entries: Vec::new(), more: false, totals: None };
    for r in &rows {
        if r.get::<_, i32>("tag") == 1 {
            out.totals = Some(ListTotals {
                entries: r.get::<_, i64>("total_entries") as u64,
                bytes: r.get::<_, i64>("total_bytes") as u64,
                quota: r.get::<_, Option<i64>>("quota").unwrap_or(0) as u64,
            });
        } else if out.entries.len() == limit as usize {
            out.more = true;
        } else {
            let category: String = r.get("category");
            out.entries.push(Listing {
                key: r.get("key"),
                category: Category::from_str(&category).ok_or_else(|| MemoryError::storage(format!("the PostgreSQL binding answered an unknown category {category:?}")))?,
                size: r.get::<_, i64>("size") as u64,
                created_by: r.get("created_by"),
                updated_at: r.get("updated_at"),
            });
        }
    }
    Ok(out)
}

/// What the deployer deletes (validated by `memory::delete_agent_memory_matching`).
pub enum Selection<'a> {
    Key(&'a str),
    Matching { category: Option<Category>, key_prefix: Option<&'a str> },
}

/// Deletes as the deployer; how many, or `None` for a key that is not there.
pub fn delete(c: &mut Connection, agent: &str, what: &Selection<'_>, now: Option<i64>) -> Result<Option<u64>> {
    let (key, category, prefix) = match what {
        Selection::Key(k) => (Some(*k), None, None),
        Selection::Matching { category, key_prefix } => (None, category.map(Category::as_str), *key_prefix),
    };
    let rows = c.query(DELETE, &[&agent, &key, &category, &prefix, &now])?;
    let row = rows.first().ok_or_else(|| MemoryError::storage("the PostgreSQL binding answered no row: is its schema set up (rotifer binding setup)?"))?;
    Ok(match row.get::<_, String>("outcome").as_str() {
        "not_found" => None,
        _ => Some(row.get::<_, i64>("deleted") as u64),
    })
}

/// Creates the agent with this quota and policy if it has no memory, or (`replace`) sets them
/// on the one it has; whether it was created.
pub fn configure(c: &mut Connection, agent: &str, quota: u64, policy: DataPolicy, replace: bool) -> Result<bool> {
    let days = policy
        .max_retention_days
        .map(|d| i32::try_from(d).map_err(|_| MemoryError::invalid(format!("dataPolicy.maxRetentionDays {d} is more than the PostgreSQL binding stores (2147483647)"))))
        .transpose()?;
    let rows = c.query(CONFIGURE, &[&agent, &(quota as i64), &policy.anonymization_supported, &days, &replace])?;
    Ok(rows.first().is_some_and(|r| r.get::<_, bool>(0)))
}

/// Drops the agent with its entries and audit rows; how many entries it had, `None` if it had
/// no memory.
pub fn drop_agent(c: &mut Connection, agent: &str) -> Result<Option<u64>> {
    let rows = c.query(DROP, &[&agent])?;
    Ok(rows.first().and_then(|r| r.get::<_, Option<i64>>(0)).map(|n| n as u64))
}

// ---------------------------------------------------------------------------------------------
// The audit rows (R-BIND-3, R-AUD-7)

/// Where new rows of the agent are, and how many there are by action: one statement.
const LOOK: &str = "SELECT a.last_tx, s.action, s.n, s.top FROM rotifer.agents a \
     LEFT JOIN LATERAL (SELECT action, count(*)::bigint AS n, max(id) AS top, min(id) AS first \
       FROM rotifer.audit WHERE agent_id = a.agent_id AND id > $2 GROUP BY action) s ON true \
     WHERE a.agent_id = $1 ORDER BY s.first";
const ROWS: &str = "SELECT id, ts, tx, tx_line, action, actor, key, category, size, facts FROM rotifer.audit \
     WHERE agent_id = $1 AND id > $2 AND id <= $3 ORDER BY id OFFSET $4 LIMIT $5";

/// The rows one read fetches at most: what a page holds in memory at once is bounded.
const BATCH: i64 = 1000;

/// An agent's audit rows in order, a page at a time, and (following) those added since: the
/// server's `id` order, which is the order of commit within an agent (its lock). Nothing but
/// the position and the counts is held, however long one follows.
pub struct AuditRows {
    pool: Arc<PgPool>,
    agent: String,
    /// The last row handed out or skipped, and the last row counted.
    after: i64,
    upto: i64,
    /// Rows counted and not handed out yet; of them, how many to skip first.
    remaining: u64,
    skip: u64,
    /// Rows counted in all.
    pub seen: u64,
}

impl AuditRows {
    pub fn open(pool: Arc<PgPool>, agent: &str) -> AuditRows {
        AuditRows { pool, agent: agent.to_string(), after: 0, upto: 0, remaining: 0, skip: 0, seen: 0 }
    }

    pub fn remaining(&self) -> u64 {
        self.remaining - self.skip
    }

    pub fn skip(&mut self, n: u64) {
        self.skip += n.min(self.remaining());
    }

    /// Counts the rows added since the last look; answers their number, the agent's
    /// transaction counter (`None`: no such agent) and the counts by action.
    pub fn look(&mut self, actions: &mut Vec<(String, u64)>) -> Result<(u64, Option<i64>)> {
        let (agent, upto) = (self.agent.clone(), self.upto);
        let rows = self.pool.with(|c| c.query(LOOK, &[&agent, &upto]))?;
        let mut new = 0;
        let mut last_tx = None;
        for r in &rows {
            last_tx = Some(r.get::<_, i64>("last_tx"));
            let Some(action) = r.get::<_, Option<String>>("action") else { continue };
            let n = r.get::<_, i64>("n") as u64;
            new += n;
            self.upto = self.upto.max(r.get::<_, i64>("top"));
            match actions.iter_mut().find(|(a, _)| *a == action) {
                Some((_, c)) => *c += n,
                None => actions.push((action, n)),
            }
        }
        self.remaining += new;
        self.seen += new;
        Ok((new, last_tx))
    }

    /// Hands out up to `max` rows counted and not handed out, each as the line of the file's
    /// shape with `"committed":true` (R-BIND-3: every row committed); returns how many. Rows
    /// trimmed since they were counted (R-BIND-3's bound) are not there to hand out.
    pub fn next_lines(&mut self, max: usize, each: &mut dyn FnMut(&[u8])) -> Result<usize> {
        let mut handed = 0usize;
        while handed < max && self.remaining() > 0 {
            let want = (max - handed).min(BATCH as usize) as i64;
            let (agent, after, upto, skip) = (self.agent.clone(), self.after, self.upto, self.skip as i64);
            let rows = self.pool.with(|c| c.query(ROWS, &[&agent, &after, &upto, &skip, &want]))?;
            self.remaining -= self.skip;
            self.skip = 0;
            for r in &rows {
                let facts: Option<serde_json::Value> = r.get("facts");
                let row = StoredRow {
                    ts: r.get("ts"),
                    tx: r.get("tx"),
                    tx_line: r.get::<_, Option<i32>>("tx_line").map(|n| n as u32),
                    action: r.get("action"),
                    actor: r.get("actor"),
                    key: r.get("key"),
                    category: r.get("category"),
                    size: r.get::<_, Option<i64>>("size").map(|n| n as u64),
                    facts: facts.as_ref(),
                };
                let mut line = stored_row_line(&self.agent, &row);
                line.pop();
                line.extend_from_slice(b",\"committed\":true}");
                each(&line);
                self.after = r.get("id");
            }
            handed += rows.len();
            self.remaining -= (rows.len() as u64).min(self.remaining);
            if (rows.len() as i64) < want {
                // The rest of what was counted was trimmed meanwhile.
                self.remaining = 0;
                self.after = self.upto;
            }
        }
        Ok(handed)
    }
}
