//! The deployer's read-only views of an agent's memory (R-HOST-1, R-HOST-2): where the quota
//! went (`inspect_agent_memory`), one entry with its value (`get_agent_entry`), and the listing
//! page by page (`list_agent_memory_page`).
//!
//! The first two only read: they never create a database, never purge, never touch `lastAccessedBy` and
//! write no audit line (plain reads are not logged, R-AUD-1). Entries that have expired but not
//! been purged yet are left out, exactly as every other call would see them.

use crate::arg::Arg;
use crate::binding::{Agent, Binding};
use crate::error::Result;
use crate::storage::files::Layout;
use crate::model::{key_range, parse_key, Category, DataPolicy, Entry};
use crate::storage::store::{load_entry, read_agent, AgentStore, Fast, IfMissing};
use crate::storage::watch::Look;
use crate::time::CallTime;
use rusqlite::types::Value;
use rusqlite::Connection;

/// A line of the deployer's list: never a value.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub key: String,
    pub category: Category,
    pub size: u64,
    pub created_by: String,
    pub updated_at: i64,
}

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

/// `inspect_agent_memory` on the agent's binding (R-BIND-2). On PostgreSQL, without a test
/// clock, "now" is the server's (R-BIND-5).
pub fn inspect(agent: &Agent, now: impl Into<CallTime>) -> Result<Option<Usage>> {
    let now = now.into();
    match &agent.binding {
        Binding::Sqlite => inspect_agent_memory(&agent.layout, &agent.agent_id, now.ms()),
        Binding::Postgres(pool) => {
            crate::model::check_agent_id(&agent.agent_id)?;
            pool.with(|c| {
                crate::postgres::moving::in_use(c, &agent.agent_id)?;
                crate::postgres::deployer::usage(c, &agent.agent_id, now.given())
            })
        }
    }
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

/// `get_agent_entry` on the agent's binding (R-BIND-2): the key checked by the same rules first.
pub fn get_entry(agent: &Agent, key: &Arg, now: impl Into<CallTime>) -> Result<Option<Entry>> {
    let now = now.into();
    match &agent.binding {
        Binding::Sqlite => get_agent_entry(&agent.layout, &agent.agent_id, key, now.ms()),
        Binding::Postgres(pool) => {
            let key = parse_key(key)?;
            crate::model::check_agent_id(&agent.agent_id)?;
            pool.with(|c| {
                crate::postgres::moving::in_use(c, &agent.agent_id)?;
                crate::postgres::deployer::get(c, &agent.agent_id, &key, now.given())
            })
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The listing, page by page (R-HOST-2)

/// What a whole listing holds, from the snapshot of its first page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListTotals {
    /// Matching entries, and the sum of their sizes (R-ENT-2).
    pub entries: u64,
    pub bytes: u64,
    /// The quota the database enforces.
    pub quota: u64,
}

/// One page of `list_agent_memory_page`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// At most `limit` entries, by key, all after the `after` key asked for.
    pub entries: Vec<Listing>,
    /// Whether more entries match after the last one (ask again with its key as `after`).
    pub more: bool,
    /// When asked for: the totals of the whole listing (not only of this page).
    pub totals: Option<ListTotals>,
}

/// The most entries one page holds.
pub const MAX_PAGE: u32 = 100_000;

impl ListPage {
    /// The page as JSON text, `{"entries":[{"key","category","size","createdBy","updatedAt"}…],
    /// "more":bool,"totals":{"entries","bytes","quota"}|null}`, the fields of the listing
    /// (`updatedAt` in RFC 3339): what a JavaScript caller turns into objects fastest.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(64 + self.entries.len() * 160);
        out.push_str("{\"entries\":[");
        for (i, l) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"key\":");
            out.push_str(&serde_json::to_string(&l.key).unwrap_or_else(|_| "\"\"".into()));
            out.push_str(",\"category\":\"");
            out.push_str(l.category.as_str());
            out.push_str("\",\"size\":");
            out.push_str(&l.size.to_string());
            out.push_str(",\"createdBy\":");
            out.push_str(&serde_json::to_string(&l.created_by).unwrap_or_else(|_| "\"\"".into()));
            out.push_str(",\"updatedAt\":\"");
            out.push_str(&crate::time::format_ms(l.updated_at));
            out.push_str("\"}");
        }
        out.push_str("],\"more\":");
        out.push_str(if self.more { "true" } else { "false" });
        out.push_str(",\"totals\":");
        match self.totals {
            Some(t) => out.push_str(&format!("{{\"entries\":{},\"bytes\":{},\"quota\":{}}}", t.entries, t.bytes, t.quota)),
            None => out.push_str("null"),
        }
        out.push('}');
        out
    }
}

/// `list_agent_memory_matching` one page at a time: the live entries of the agent whose key
/// starts with `key_prefix` (a plain byte prefix) and, if given, of `category`, by key, the first
/// `limit` (1 to `MAX_PAGE`) after the key `after` (the last key of the page before). With
/// `totals`, the count, bytes and quota of the whole listing, read in the same statement as the
/// page (one snapshot). Each page is its own read, as `list_agent_memory` is one (expired
/// entries are purged first, R-RET-4): a listing of a memory being written to shows every key at
/// most once, in order, each as one of its pages saw it. No page holds a transaction open for
/// the next. An agent whose memory was never created has no entries, and `totals` then has a
/// quota of 0.
#[allow(clippy::too_many_arguments)]
pub fn list_agent_memory_page(
    layout: &Layout,
    agent_id: &str,
    category: Option<Category>,
    key_prefix: Option<&str>,
    after: Option<&str>,
    limit: u32,
    totals: bool,
    now: impl Into<CallTime>,
) -> Result<ListPage> {
    check_page(agent_id, limit)?;
    let now = now.into();
    let Some(store) = AgentStore::open(layout, agent_id, IfMissing::Skip)? else {
        return Ok(ListPage { entries: Vec::new(), more: false, totals: totals.then_some(ListTotals { entries: 0, bytes: 0, quota: 0 }) });
    };
    let (from, to) = key_range(key_prefix);
    let list = |conn: &Connection| page(conn, category, from.as_deref(), to.as_deref(), after.map(str::as_bytes), limit, totals);
    match store.read(&now, Look::Now, |reader| list(reader.conn).map(Fast::Answer))? {
        Fast::Answer(p) => Ok(p),
        Fast::WritePath => store.write(&now, |tx| list(tx.conn)),
    }
}

fn check_page(agent_id: &str, limit: u32) -> Result<()> {
    crate::model::check_agent_id(agent_id)?;
    if limit == 0 || limit > MAX_PAGE {
        return Err(crate::error::MemoryError::invalid(format!("a page holds 1 to {MAX_PAGE} entries, not {limit}")));
    }
    Ok(())
}

/// `list_agent_memory_page` on the agent's binding (R-BIND-2): the same checks, the same pages.
#[allow(clippy::too_many_arguments)]
pub fn list_page(
    agent: &Agent,
    category: Option<Category>,
    key_prefix: Option<&str>,
    after: Option<&str>,
    limit: u32,
    totals: bool,
    now: impl Into<CallTime>,
) -> Result<ListPage> {
    match &agent.binding {
        Binding::Sqlite => list_agent_memory_page(&agent.layout, &agent.agent_id, category, key_prefix, after, limit, totals, now),
        Binding::Postgres(pool) => {
            check_page(&agent.agent_id, limit)?;
            let now = now.into();
            let prefix = key_prefix.filter(|p| !p.is_empty());
            pool.with(|c| {
                crate::postgres::moving::in_use(c, &agent.agent_id)?;
                crate::postgres::deployer::list_page(c, &agent.agent_id, category, prefix, after, limit, totals, now.given())
            })
        }
    }
}

/// `memory::list_agent_memory_matching` on the agent's binding: on PostgreSQL, the pages of
/// `list_page` one after the other.
pub fn list_all(agent: &Agent, category: Option<Category>, key_prefix: Option<&str>, now: impl Into<CallTime>) -> Result<Vec<Listing>> {
    if let Binding::Sqlite = agent.binding {
        return crate::memory::list_agent_memory_matching(&agent.layout, &agent.agent_id, category, key_prefix, now);
    }
    let now: CallTime = now.into();
    let mut all: Vec<Listing> = Vec::new();
    loop {
        let after = all.last().map(|l| l.key.clone());
        let page = list_page(agent, category, key_prefix, after.as_deref(), MAX_PAGE, false, &now)?;
        all.extend(page.entries);
        if !page.more {
            return Ok(all);
        }
    }
}

/// One statement: the totals row (tag 1, if asked for) and the page's rows (tag 2). Only the
/// bounds that apply are in the SQL, so that the key index serves the range.
fn page(conn: &Connection, category: Option<Category>, from: Option<&[u8]>, to: Option<&[u8]>, after: Option<&[u8]>, limit: u32, totals: bool) -> Result<ListPage> {
    let mut filter = String::from("1");
    let mut params: Vec<Value> = Vec::new();
    if let Some(c) = category {
        filter.push_str(" AND category = ?");
        params.push(Value::Integer(c as i64));
    }
    if let Some(f) = from {
        filter.push_str(" AND key >= ?");
        params.push(Value::Blob(f.to_vec()));
    }
    if let Some(t) = to {
        filter.push_str(" AND key < ?");
        params.push(Value::Blob(t.to_vec()));
    }
    let mut all = Vec::new();
    let mut sql = String::new();
    if totals {
        sql.push_str(&format!(
            "SELECT 1, NULL, NULL, COUNT(*), COALESCE(SUM(size), 0), (SELECT quota FROM agent WHERE id = 1), NULL FROM entries WHERE {filter} UNION ALL "
        ));
        all.extend(params.iter().cloned());
    }
    let mut page_filter = filter;
    all.extend(params);
    // Past the page before: only keys after its last one (and within the prefix's range).
    if let Some(a) = after.filter(|a| from.is_none_or(|f| *a >= f)) {
        page_filter.push_str(" AND key > ?");
        all.push(Value::Blob(a.to_vec()));
    }
    sql.push_str(&format!(
        "SELECT * FROM (SELECT 2, key, category, size, created_by, NULL, updated_at FROM entries WHERE {page_filter} ORDER BY key LIMIT ?)"
    ));
    all.push(Value::Integer(i64::from(limit) + 1));
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(all))?;
    let mut out = ListPage { entries: Vec::new(), more: false, totals: None };
    while let Some(r) = rows.next()? {
        if r.get::<_, i64>(0)? == 1 {
            out.totals = Some(ListTotals {
                entries: r.get::<_, i64>(3)? as u64,
                bytes: r.get::<_, i64>(4)? as u64,
                quota: r.get::<_, Option<i64>>(5)?.unwrap_or(0) as u64,
            });
        } else if out.entries.len() == limit as usize {
            out.more = true;
        } else {
            out.entries.push(Listing {
                key: String::from_utf8_lossy(&r.get::<_, Vec<u8>>(1)?).into_owned(),
                category: Category::from_i64(r.get(2)?).unwrap_or(Category::Cache),
                size: r.get::<_, i64>(3)? as u64,
                created_by: r.get(4)?,
                updated_at: r.get(6)?,
            });
        }
    }
    Ok(out)
}
