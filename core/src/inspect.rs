//! The deployer's read-only views of an agent's memory (R-HOST-1, R-HOST-2): where the quota
//! went (`inspect_agent_memory`) and one entry with its value (`get_agent_entry`).
//!
//! Both only read: they never create a database, never purge, never touch `lastAccessedBy` and
//! write no audit line (plain reads are not logged, R-AUD-1). Entries that have expired but not
//! been purged yet are left out, exactly as every other call would see them.

use crate::arg::Arg;
use crate::error::Result;
use crate::storage::files::Layout;
use crate::model::{parse_key, Category, DataPolicy, Entry};
use crate::storage::store::{load_entry, read_agent, AgentStore, IfMissing};
use rusqlite::Connection;

/// Usage of one category.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CategoryUsage {
    pub entries: u64,
    /// Sizes per R-ENT-2.
    pub bytes: u64,
    /// What eviction could free in this category (R-QUO-3): all of it, except `PREFERENCE`.
    pub evictable_bytes: u64,
    /// The earliest instant an entry of this category expires, in ms.
    pub next_expiry: Option<i64>,
}

/// The usage figures of an agent's memory, as the database enforces them.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    pub quota: u64,
    pub data_policy: DataPolicy,
    /// Sum of the live entries' sizes.
    pub used: u64,
    pub entries: u64,
    /// Per category, in the order of `CATEGORY_ORDER`.
    pub categories: Vec<(Category, CategoryUsage)>,
}

/// The order categories are shown in: what is kept longest first.
pub const CATEGORY_ORDER: [Category; 4] = [Category::Preference, Category::Pattern, Category::Context, Category::Cache];

impl Usage {
    pub fn evictable_bytes(&self) -> u64 {
        self.categories.iter().map(|(_, u)| u.evictable_bytes).sum()
    }
    pub fn next_expiry(&self) -> Option<i64> {
        self.categories.iter().filter_map(|(_, u)| u.next_expiry).min()
    }
}

/// The agent's quota, data policy and usage per category at `now`; `None` if its memory was
/// never created (and none is created).
pub fn inspect_agent_memory(layout: &Layout, agent_id: &str, now: i64) -> Result<Option<Usage>> {
    let Some(store) = AgentStore::open(layout, agent_id, IfMissing::Skip)? else { return Ok(None) };
    store.read_only(|conn| usage(conn, now).map(Some))
}

fn usage(conn: &Connection, now: i64) -> Result<Usage> {
    // One read transaction: the agent row and the totals come from the same snapshot.
    let tx = conn.unchecked_transaction()?;
    let agent = read_agent(&tx)?;
    let mut per: Vec<(Category, CategoryUsage)> = CATEGORY_ORDER.iter().map(|c| (*c, CategoryUsage::default())).collect();
    {
        let mut stmt = tx.prepare_cached(
            "SELECT category, COUNT(*), SUM(size), MIN(expires_at) FROM entries \
             WHERE expires_at IS NULL OR expires_at > ?1 GROUP BY category",
        )?;
        let mut rows = stmt.query([now])?;
        while let Some(row) = rows.next()? {
            let Some(category) = Category::from_i64(row.get(0)?) else { continue };
            let bytes = row.get::<_, i64>(2)? as u64;
            if let Some((_, u)) = per.iter_mut().find(|(c, _)| *c == category) {
                *u = CategoryUsage {
                    entries: row.get::<_, i64>(1)? as u64,
                    bytes,
                    evictable_bytes: if Category::EVICTABLE.contains(&category) { bytes } else { 0 },
                    next_expiry: row.get(3)?,
                };
            }
        }
    }
    tx.finish()?;
    Ok(Usage {
        quota: agent.quota,
        data_policy: agent.policy,
        used: per.iter().map(|(_, u)| u.bytes).sum(),
        entries: per.iter().map(|(_, u)| u.entries).sum(),
        categories: per,
    })
}

/// The live entry with this key, whatever its access policy, with its value; `None` if there
/// is none or the agent's memory was never created.
pub fn get_agent_entry(layout: &Layout, agent_id: &str, key: &Arg, now: i64) -> Result<Option<Entry>> {
    let key = parse_key(key)?;
    let Some(store) = AgentStore::open(layout, agent_id, IfMissing::Skip)? else { return Ok(None) };
    store.read_only(|conn| {
        let tx = conn.unchecked_transaction()?;
        let agent = read_agent(&tx)?;
        let found = load_entry(&tx, &key)?.filter(|e| {
            let expires = crate::storage::store::expires_at(e.entry.updated_at, e.entry.retention_policy.as_ref(), &agent.policy);
            !expires.is_some_and(|t| t <= now)
        });
        tx.finish()?;
        Ok(Some(found.map(|e| e.entry)))
    })
    .map(Option::flatten)
}
