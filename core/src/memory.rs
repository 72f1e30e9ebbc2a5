//! The four calls a gene makes (R-API), the deployer's list and delete (R-HOST-2), agent
//! creation (R-POL-3) and test memory (R-HOST-4).
//!
//! Every call follows the order of §9: purge expired → validate → permission and data policy
//! → existence → quota. A call with no agent (R-ACC-5) or no valid v2 id (R-ACC-4) is denied
//! before anything else: its arguments are not even looked at.

use crate::refusals::{self, NO_AGENT, NO_GENE_ID};
use crate::access::{data_policy_violation, denial_reason, scope_admits, unsupported_scope, Gene};
use crate::arg::Arg;
use crate::binding::{Agent, Binding, PgPool};
use crate::memory_pg::PgMemory;
use crate::storage::audit::{Action, Actor, AuditBatch, Denial, DenialLog, QuotaFacts, Subject};
use crate::error::{ErrorCode, MemoryError, Result};
use crate::storage::watch::Look;
use crate::time::CallTime;
use crate::storage::files::Layout;
use crate::model::*;
pub use crate::inspect::Listing;
use crate::storage::store::{load_entry, AgentStore, Fast, IfMissing, StoredEntry, Tx, ENTRY_COLUMNS};
use rusqlite::Connection;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};


/// What a `GeneMemoryAccess` is opened with (§12), validated.
#[derive(Debug, Clone, Default)]
pub struct GeneOptions {
    pub agent_id: Option<String>,
    /// As given; checked against R-ACC-4 when the memory opens.
    pub gene_id: Option<String>,
    pub domain: Option<String>,
    pub root: Option<String>,
    /// Where the memory lives (R-BIND-1): a postgres:// URL or `sqlite`, first in that order.
    pub url: Option<String>,
}

impl GeneOptions {
    /// Parses the options object. `host_fields` are fields the front end handles itself
    /// (`now`, `deadline`), accepted and ignored here.
    pub fn parse(arg: &Arg, host_fields: &[&str]) -> Result<GeneOptions> {
        let fields = match arg {
            Arg::Object(f) => f,
            other => {
                return Err(MemoryError::invalid(format!(
                    "options must be an object {{ agentId, geneId, domain?, root?, now? }}, not {}",
                    other.kind()
                )))
            }
        };
        let mut o = GeneOptions::default();
        for (name, v) in fields {
            match name.as_str() {
                "agentId" => {
                    o.agent_id = match v {
                        Arg::Undefined | Arg::Null => None,
                        Arg::Str(s) => {
                            check_agent_id(s)?;
                            Some(s.clone())
                        }
                        other => return Err(MemoryError::invalid(format!("agentId must be a string or null, not {}", other.kind()))),
                    }
                }
                // Any other value is "no valid v2 id": every call is denied (R-ACC-4).
                "geneId" => o.gene_id = if let Arg::Str(s) = v { Some(s.clone()) } else { None },
                "domain" => {
                    o.domain = match v {
                        Arg::Undefined | Arg::Null => None,
                        Arg::Str(s) => {
                            check_domain(s)?;
                            Some(s.clone())
                        }
                        other => return Err(MemoryError::invalid(format!("domain must be a string or null, not {}", other.kind()))),
                    }
                }
                "root" => {
                    o.root = match v {
                        Arg::Undefined | Arg::Null => None,
                        Arg::Str(s) => Some(s.clone()),
                        other => return Err(MemoryError::invalid(format!("root must be a folder path string, not {}", other.kind()))),
                    }
                }
                "url" => {
                    o.url = match v {
                        Arg::Undefined | Arg::Null => None,
                        Arg::Str(s) => {
                            crate::binding::parse_url("url", s)?;
                            Some(s.clone())
                        }
                        other => return Err(MemoryError::invalid(format!("url must be a postgres:// URL or \"sqlite\", not {}", other.kind()))),
                    }
                }
                f if host_fields.contains(&f) => {}
                other => {
                    let known: Vec<&str> = ["agentId", "geneId", "domain", "root", "url"].iter().chain(host_fields).copied().collect();
                    return Err(MemoryError::invalid(format!(
                        "options has an unknown field {other:?}; it takes {}",
                        known.join(", ")
                    )))
                }
            }
        }
        Ok(o)
    }
}

struct Target {
    layout: Layout,
    agent_id: String,
    /// The `url` option, if given (R-BIND-1: first in the order).
    url: Option<String>,
    /// Chosen at the first call, so that a broken source of the choice fails calls, not
    /// construction.
    storage: OnceLock<Storage>,
    /// Whether this handle made a read: its first one looks for changes to the database itself
    /// (`Look::Now`), later ones may rely on a recent look (`Look::Recent`).
    read_before: AtomicBool,
}

/// Where a handle's agent keeps its entries (R-BIND-1).
enum Storage {
    /// The SQLite file, opened on first use, so that a broken store fails calls, not construction.
    Sqlite(OnceLock<Arc<AgentStore>>),
    Postgres(Arc<PgPool>),
}

impl Target {
    fn storage(&self) -> Result<&Storage> {
        if let Some(s) = self.storage.get() {
            return Ok(s);
        }
        let chosen = match crate::binding::choose(&self.layout, &self.agent_id, self.url.as_deref())? {
            None => Storage::Sqlite(OnceLock::new()),
            Some(url) => Storage::Postgres(crate::binding::pool(&url)?),
        };
        Ok(self.storage.get_or_init(|| chosen))
    }

    fn store(&self) -> Result<&Arc<AgentStore>> {
        let Storage::Sqlite(store) = self.storage()? else {
            return Err(MemoryError::storage("this memory is on PostgreSQL, not in a file"));
        };
        if let Some(s) = store.get() {
            return Ok(s);
        }
        let opened = AgentStore::open(&self.layout, &self.agent_id, IfMissing::Create)?
            .ok_or_else(|| MemoryError::storage("memory could not be opened"))?;
        Ok(store.get_or_init(|| opened))
    }

    /// How fresh the look for changes must be for a read of this handle.
    fn look(&self) -> Look {
        if self.read_before.load(Ordering::Relaxed) {
            return Look::Recent;
        }
        self.read_before.store(true, Ordering::Relaxed);
        Look::Now
    }
}

/// A gene's view of its agent's memory: what `ctx.memory` is.
pub struct GeneMemory {
    target: Option<Target>,
    gene: Option<Gene>,
    /// This handle's bound on refusal lines (R-AUD-1); `None` without an agent (no line).
    denials: Option<Arc<DenialLog>>,
}

impl GeneMemory {
    /// The memory of `o.agent_id`, on the binding R-BIND-1 chooses at the first call.
    pub fn open(o: GeneOptions) -> Result<GeneMemory> {
        let target = match o.agent_id {
            Some(agent_id) => Some(Target {
                layout: Layout::resolve(o.root.as_deref())?,
                agent_id,
                url: o.url,
                storage: OnceLock::new(),
                read_before: AtomicBool::new(false),
            }),
            None => None,
        };
        Ok(GeneMemory::with(target, Self::gene(o.gene_id, o.domain)))
    }

    fn with(target: Option<Target>, gene: Option<Gene>) -> GeneMemory {
        // Used on the file only: on PostgreSQL every refusal is a row of the server's audit,
        // bounded as the audit is (R-BIND-3).
        let denials = target.as_ref().map(|t| DenialLog::new(t.layout.clone(), &t.agent_id, gene.as_ref().map(|g| g.id.as_str())));
        GeneMemory { target, gene, denials }
    }

    /// The handle's view on PostgreSQL, if its agent's memory is there (R-ACC-5 first: no
    /// agent, no call).
    fn on_postgres(&self) -> Result<Option<PgMemory<'_>>> {
        let target = self.target.as_ref().ok_or_else(|| MemoryError::denied(NO_AGENT))?;
        Ok(match target.storage()? {
            Storage::Sqlite(_) => None,
            Storage::Postgres(pool) => Some(PgMemory { pool, layout: &target.layout, agent_id: &target.agent_id, gene: self.gene.as_ref() }),
        })
    }

    fn gene(id: Option<String>, domain: Option<String>) -> Option<Gene> {
        id.filter(|id| is_valid_gene_id(id)).map(|id| Gene { id, domain })
    }

    /// How fresh the look for changes to the database must be for this handle's next read.
    fn look(&self) -> Look {
        self.target.as_ref().map_or(Look::Now, Target::look)
    }

    /// The agent id, if this memory belongs to an agent.
    pub fn agent_id(&self) -> Option<&str> {
        self.target.as_ref().map(|t| t.agent_id.as_str())
    }

    /// R-ACC-5 and R-ACC-4: the checks that come before everything else.
    fn caller(&self, op: &str, key: Option<&Arg>, now: &CallTime) -> Result<(&Arc<AgentStore>, &Gene)> {
        let target = self.target.as_ref().ok_or_else(|| MemoryError::denied(NO_AGENT))?;
        let Some(gene) = &self.gene else {
            let key = match key {
                Some(Arg::Str(s)) if parse_key(&Arg::Str(s.clone())).is_ok() => Some(s.as_str()),
                _ => None,
            };
            let mut batch = AuditBatch::new(&target.agent_id, now.ms());
            batch.bound_by(self.denials.as_ref());
            let denial = Denial { op, code: ErrorCode::AccessDenied.as_str(), reason: "no valid v2 id" };
            batch.deny(Actor::System, Subject { key, ..Subject::default() }, denial);
            batch.flush_audit(&target.layout)?;
            batch.flush_telemetry(&target.layout);
            return Err(MemoryError::denied(NO_GENE_ID));
        };
        Ok((target.store()?, gene))
    }

    /// The error for a call whose request could not even be parsed (a WASM gene's malformed
    /// JSON): like any call, identity comes first and expired entries are purged (§9), so a
    /// gene with no agent or no v2 id is denied whatever it sends; then `malformed`.
    pub fn reject_malformed(&self, op: &str, malformed: MemoryError, now: impl Into<CallTime>) -> MemoryError {
        let now = now.into();
        if let Ok(Some(pg)) = self.on_postgres() {
            return pg.reject_malformed(op, malformed, &now);
        }
        let store = match self.caller(op, None, &now) {
            Ok((store, _)) => store,
            Err(e) => return e,
        };
        match store.write(&now, |_| Ok(())) {
            Err(e) => e,
            Ok(()) => malformed,
        }
    }

    /// R-API-1.
    ///
    /// `now`: an `i64`, or `CallTime::system()` for the system clock, read only if needed.
    pub fn read(&self, key: &Arg, category: &Arg, now: impl Into<CallTime>) -> Result<Option<Entry>> {
        let now = now.into();
        if let Some(pg) = self.on_postgres()? {
            return pg.read(key, category, &now);
        }
        let (store, gene) = self.caller("read", Some(key), &now)?;
        // Most reads change nothing: no expired entry to purge, and the reader is already the
        // last accessor. Those run without the write lock.
        let fast = store.read(&now, self.look(), |reader| {
            // Bad input is reported by the write path, after the purge that comes first (§9).
            let (Ok(key), Ok(category)) = (key_of(key), parse_optional_category(category)) else { return Ok(Fast::WritePath) };
            let Some(found) = reader.load_entry(key)? else { return Ok(Fast::Answer(None)) };
            if category.is_some_and(|c| c != found.entry.category) {
                return Ok(Fast::Answer(None));
            }
            if found.entry.last_accessed_by == gene.id && scope_admits(found.entry.access_policy.read_scope, found.owner(), gene) {
                return Ok(Fast::Answer(Some(found.entry)));
            }
            Ok(Fast::WritePath) // a denial to audit, or a new last accessor to record
        })?;
        if let Fast::Answer(result) = fast {
            return Ok(result);
        }
        store.write(&now, |tx| {
            tx.batch.bound_by(self.denials.as_ref());
            let key = parse_key(key)?;
            let category = parse_optional_category(category)?;
            let Some(mut found) = load_entry(tx.conn, &key)? else { return Ok(None) };
            if category.is_some_and(|c| c != found.entry.category) {
                return Ok(None);
            }
            let scope = found.entry.access_policy.read_scope;
            if !scope_admits(scope, found.owner(), gene) {
                return Err(deny(tx, gene, "read", subject_of(&found), denial_reason("read", "readScope", scope)));
            }
            if found.entry.last_accessed_by != gene.id {
                tx.touch(&key, gene)?;
                found.entry.last_accessed_by = gene.id.clone();
            }
            Ok(Some(found.entry))
        })
    }

    /// R-API-2, R-QUO-3/4: validate, authorise, make room, then store the entry.
    ///
    /// `now`: a test clock's reading, or `CallTime::system()`: the system clock, read once the
    /// write lock is held (R-ENT-4).
    pub fn write(&self, key: &Arg, value: Arg, category: &Arg, access: &Arg, retention: &Arg, now: impl Into<CallTime>) -> Result<Entry> {
        let now = now.into();
        if let Some(pg) = self.on_postgres()? {
            return pg.write(key, value, category, access, retention, &now);
        }
        let (store, gene) = self.caller("write", Some(key), &now)?;
        store.write(&now, move |tx| {
            tx.batch.bound_by(self.denials.as_ref());
            let request = WriteRequest::parse(key, value, category, access, retention)?;
            let existing = load_entry(tx.conn, &request.key)?;
            let (access, retention) = authorise_write(tx, gene, &request, existing.as_ref())?;
            let old_size = existing.as_ref().map_or(0, |e| e.size);
            let used = make_room(tx, gene, &request, old_size)?;
            let stored = build_entry(tx, gene, &store.agent_id, request, existing, access, retention);
            tx.put_entry(&stored.0, stored.1)?;
            tx.set_used(used);
            Ok(stored.0.entry)
        })
    }

    /// R-API-3, R-LIM-3/4.
    pub fn query(&self, filter: &Arg, now: impl Into<CallTime>) -> Result<Vec<Entry>> {
        let now = now.into();
        if let Some(pg) = self.on_postgres()? {
            return pg.query(filter, &now);
        }
        let (store, gene) = self.caller("query", None, &now)?;
        let fast = store.read(&now, self.look(), |reader| {
            // Bad input is reported by the write path, after the purge that comes first (§9).
            let Ok(filter) = parse_filter(filter) else { return Ok(Fast::WritePath) };
            match run_query(reader.conn, &filter, gene) {
                Ok(entries) => Ok(Fast::Answer(entries)),
                Err(e) if e.code == ErrorCode::StorageError => Err(e),
                Err(_) => Ok(Fast::WritePath),
            }
        })?;
        match fast {
            Fast::Answer(entries) => Ok(entries),
            Fast::WritePath => store.write(&now, |tx| run_query(tx.conn, &parse_filter(filter)?, gene)),
        }
    }

    /// R-API-4.
    pub fn delete(&self, key: &Arg, now: impl Into<CallTime>) -> Result<()> {
        let now = now.into();
        if let Some(pg) = self.on_postgres()? {
            return pg.delete(key, &now);
        }
        let (store, gene) = self.caller("delete", Some(key), &now)?;
        store.write(&now, |tx| {
            tx.batch.bound_by(self.denials.as_ref());
            let key = parse_key(key)?;
            let Some(found) = load_entry(tx.conn, &key)? else {
                return Err(refusals::no_entry(&key));
            };
            let scope = found.entry.access_policy.write_scope;
            if !scope_admits(scope, found.owner(), gene) {
                return Err(deny(tx, gene, "delete", subject_of(&found), denial_reason("delete", "writeScope", scope)));
            }
            tx.batch.record(Action::Delete, Actor::Gene(&gene.id), subject_of(&found), None);
            tx.delete_entry(&key)?;
            tx.set_used(tx.agent.used.saturating_sub(found.size));
            Ok(())
        })
    }
}

fn subject_of(e: &StoredEntry) -> Subject<'_> {
    Subject { key: Some(&e.entry.key), category: Some(e.entry.category), size: Some(e.size) }
}

/// Records a denial (R-ACC-3) and returns the error for it.
fn deny(tx: &mut Tx<'_, '_>, gene: &Gene, op: &str, subject: Subject<'_>, reason: String) -> MemoryError {
    let denial = Denial { op, code: ErrorCode::AccessDenied.as_str(), reason: &reason };
    tx.batch.deny(Actor::Gene(&gene.id), subject, denial);
    refusals::denied(op, subject.key.unwrap_or(""), &reason)
}

fn request_subject(r: &WriteRequest) -> Subject<'_> {
    Subject { key: Some(&r.key), category: Some(r.category), size: Some(r.size) }
}

/// R-ACC-2, R-POL-1/2: the policies the entry will have, or the denial (recorded). Only the
/// creator may change an existing entry's policies; omitted ones are kept.
fn authorise_write(
    tx: &mut Tx<'_, '_>,
    gene: &Gene,
    request: &WriteRequest,
    existing: Option<&StoredEntry>,
) -> Result<(AccessPolicy, Option<RetentionPolicy>)> {
    let subject = request_subject(request);
    let (access, retention) = match existing {
        Some(old) => {
            let scope = old.entry.access_policy.write_scope;
            if !scope_admits(scope, old.owner(), gene) {
                return Err(deny(tx, gene, "write", subject, denial_reason("write", "writeScope", scope)));
            }
            let is_creator = gene.id == old.entry.created_by;
            let access = request.access.unwrap_or(old.entry.access_policy);
            let retention = match request.retention {
                RetentionArg::Omitted => old.entry.retention_policy,
                RetentionArg::FollowAgent => None,
                RetentionArg::Policy(p) => Some(p),
            };
            if !is_creator && access != old.entry.access_policy {
                return Err(deny(tx, gene, "write", subject, "only the entry's creator may change its accessPolicy; omit accessPolicy to keep it".into()));
            }
            if !is_creator && retention != old.entry.retention_policy {
                return Err(deny(tx, gene, "write", subject, "only the entry's creator may change its retentionPolicy; omit retentionPolicy to keep it".into()));
            }
            (access, retention)
        }
        None => (
            request.access.unwrap_or_default(),
            match request.retention {
                RetentionArg::Policy(p) => Some(p),
                RetentionArg::Omitted | RetentionArg::FollowAgent => None,
            },
        ),
    };
    if let Some(reason) = unsupported_scope(&access) {
        return Err(deny(tx, gene, "write", subject, reason));
    }
    if let Some(reason) = data_policy_violation(&tx.agent.policy, &access, retention.as_ref()) {
        return Err(deny(tx, gene, "write", subject, reason));
    }
    Ok((access, retention))
}

/// R-QUO-3/4: evicts what the write needs, oldest first by category, and answers the byte
/// total after the write; or refuses the write (recording the refusal), evicting nothing.
///
/// Eviction happens only when the write grows the total past the quota, and frees only what
/// brings it back to the quota. A write that does not grow the total is never refused and
/// evicts nothing, even in a memory already over a lowered quota; one that grows it must end
/// within the quota.
fn make_room(tx: &mut Tx<'_, '_>, gene: &Gene, request: &WriteRequest, old_size: u64) -> Result<u64> {
    let after = tx.agent.used.saturating_sub(old_size) + request.size;
    if request.size <= old_size || after <= tx.agent.quota {
        return Ok(after);
    }
    let need = after - tx.agent.quota;
    let mut victims = Vec::new();
    let freed = evictable(tx.conn, &request.key, need, None)?;
    if freed < need {
        // Summed, not collected: a refusal costs no memory, however many entries there are.
        let subject = request_subject(request);
        let facts = QuotaFacts { quota: tx.agent.quota, used: tx.agent.used, evictable: freed, needed: need };
        tx.batch.record(Action::QuotaReject, Actor::Gene(&gene.id), subject, Some(facts));
        return Err(refusals::quota_exceeded(&request.key, request.size, tx.agent.quota));
    }
    evictable(tx.conn, &request.key, need, Some(&mut victims))?;
    for (key, category, size) in &victims {
        tx.batch.record(Action::Evict, Actor::System, Subject { key: Some(key), category: Some(*category), size: Some(*size) }, None);
        tx.delete_entry(key)?;
    }
    Ok(after - freed)
}

/// Walks the evictable entries but `key` in eviction order (R-QUO-3: CACHE, then PATTERN, then
/// CONTEXT, oldest first, ties by write sequence) until `need` bytes; answers the bytes they
/// hold (all of them, if fewer). `victims`, if given, receives the entries walked.
const EVICTION_SQL: &str = "SELECT key, size FROM entries WHERE category = ?1 AND key != ?2 ORDER BY updated_at, seq";

fn evictable(conn: &Connection, key: &str, need: u64, mut victims: Option<&mut Vec<(String, Category, u64)>>) -> Result<u64> {
    let mut freed = 0u64;
    let mut stmt = conn.prepare_cached(EVICTION_SQL)?;
    for category in Category::EVICTABLE {
        let mut rows = stmt.query(rusqlite::params![category as i64, key.as_bytes()])?;
        while let Some(row) = rows.next()? {
            let size = row.get::<_, i64>(1)? as u64;
            if let Some(v) = victims.as_deref_mut() {
                v.push((String::from_utf8_lossy(&row.get::<_, Vec<u8>>(0)?).into_owned(), category, size));
            }
            freed += size;
            if freed >= need {
                return Ok(freed);
            }
        }
    }
    Ok(freed)
}

/// The entry as stored after the write (R-API-2), its audit line recorded; and whether it
/// replaces an existing row.
fn build_entry(
    tx: &mut Tx<'_, '_>,
    gene: &Gene,
    agent_id: &str,
    request: WriteRequest,
    existing: Option<StoredEntry>,
    access: AccessPolicy,
    retention: Option<RetentionPolicy>,
) -> (StoredEntry, bool) {
    let subject = Subject { key: Some(&request.key), category: Some(request.category), size: Some(request.size) };
    let seq = tx.next_seq();
    match existing {
        Some(old) => {
            tx.batch.record(Action::Update, Actor::Gene(&gene.id), subject, None);
            let entry = Entry {
                category: request.category,
                value: request.value,
                last_accessed_by: gene.id.clone(),
                // Never before the time it replaces, nor before its creation (R-ENT-4): an
                // imported entry may carry times ahead of this clock.
                updated_at: tx.entry_time.max(old.entry.updated_at).max(old.entry.created_at),
                access_policy: access,
                retention_policy: retention,
                ..old.entry
            };
            (StoredEntry { entry, size: request.size, seq, creator_domain: old.creator_domain }, true)
        }
        None => {
            tx.batch.record(Action::Create, Actor::Gene(&gene.id), subject, None);
            let entry = Entry {
                entry_id: entry_id(agent_id, &request.key),
                category: request.category,
                key: request.key,
                value: request.value,
                created_by: gene.id.clone(),
                last_accessed_by: gene.id.clone(),
                created_at: tx.entry_time,
                updated_at: tx.entry_time,
                access_policy: access,
                retention_policy: retention,
            };
            (StoredEntry { entry, size: request.size, seq, creator_domain: gene.domain.clone() }, false)
        }
    }
}

/// The statement of a query and its arguments: the matching rows, most recently updated first.
fn query_sql(f: &Filter) -> (String, Vec<rusqlite::types::Value>) {
    let mut where_ = String::new();
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if let Some(c) = f.category {
        args.push((c as i64).into());
        where_ += &format!(" AND category = ?{}", args.len());
    }
    if let Some(prefix) = &f.key_prefix {
        // A plain byte prefix (R-API-3: no wildcards): key >= prefix AND key < successor.
        args.push(prefix.as_bytes().to_vec().into());
        where_ += &format!(" AND key >= ?{}", args.len());
        if let Some(end) = prefix_successor(prefix.as_bytes()) {
            args.push(end.into());
            where_ += &format!(" AND key < ?{}", args.len());
        }
    }
    if let Some(since) = f.since {
        args.push(since.into());
        where_ += &format!(" AND updated_at >= ?{}", args.len());
    }
    if let Some(until) = f.until {
        args.push(until.into());
        where_ += &format!(" AND updated_at < ?{}", args.len());
    }
    let sql = if f.category.is_none() && f.key_prefix.is_none() {
        // Recency order over every category without a recency index of its own (one index
        // fewer to rewrite per write): SQLite merges the per-category runs of
        // `entries_by_category`, each already in order, and stops when we stop reading.
        let per_category: Vec<String> =
            Category::ALL.iter().map(|c| format!("SELECT {ENTRY_COLUMNS} FROM entries WHERE category = {}{where_}", *c as i64)).collect();
        format!("{} ORDER BY updated_at DESC, seq DESC", per_category.join(" UNION ALL "))
    } else if f.key_prefix.is_some() {
        // A prefix is a key range, which no recency index orders: its rows are sorted. Only what
        // the order, the scope check and the size bound need is sorted, never values: the rows
        // returned are loaded by rowid (`run_query`).
        format!("SELECT {SORTED_COLUMNS} FROM entries WHERE 1{where_} ORDER BY updated_at DESC, seq DESC")
    } else {
        // A category is one run of `entries_by_category`, already in order.
        format!("SELECT {ENTRY_COLUMNS} FROM entries WHERE 1{where_} ORDER BY updated_at DESC, seq DESC")
    };
    (sql, args)
}

/// The columns a key-prefix query sorts (see `query_sql`), in this order.
const SORTED_COLUMNS: &str = "rowid, size, read_scope, created_by, creator_domain";

fn run_query(conn: &Connection, f: &Filter, gene: &Gene) -> Result<Vec<Entry>> {
    let (sql, args) = query_sql(f);
    let mut stmt = conn.prepare_cached(&sql)?;
    stmt.reset_status(rusqlite::StatementStatus::VmStep);
    let answer = collect_query(conn, &mut stmt, args, f, gene);
    // The statement's steps are work done whatever it answered: a prefix query sorts every row
    // of its range, however few it returns (R-RUN-5 charges a WASM gene by the work).
    crate::storage::rows::note_work(stmt.reset_status(rusqlite::StatementStatus::VmStep).max(0) as u64);
    answer
}

fn collect_query(conn: &Connection, stmt: &mut rusqlite::CachedStatement<'_>, args: Vec<rusqlite::types::Value>, f: &Filter, gene: &Gene) -> Result<Vec<Entry>> {
    let sorted_only = f.key_prefix.is_some(); // see query_sql: such rows are sorted narrow
    let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
    let mut out = Vec::new();
    let mut total = 0u64;
    while let Some(row) = rows.next()? {
        let (size, admitted, rowid) = if sorted_only {
            let scope = Scope::from_i64(row.get(2)?).ok_or_else(|| MemoryError::storage("corrupt entry: read_scope"))?;
            let created_by: String = row.get(3)?;
            let creator_domain: Option<String> = row.get(4)?;
            let owner = crate::access::Owner { created_by: &created_by, creator_domain: creator_domain.as_deref() };
            (row.get::<_, i64>(1)? as u64, scope_admits(scope, owner, gene), Some(row.get::<_, i64>(0)?))
        } else {
            let e = StoredEntry::from_row(row)?;
            let admitted = scope_admits(e.entry.access_policy.read_scope, e.owner(), gene);
            let size = e.size;
            if admitted {
                out.push(e.entry);
            }
            (size, admitted, None)
        };
        if !admitted {
            continue; // R-API-3: skipped silently
        }
        total += size;
        if total > MAX_QUERY_BYTES {
            return Err(refusals::query_too_big(f.limit));
        }
        if let Some(rowid) = rowid {
            let mut load = conn.prepare_cached(crate::storage::rows::LOAD_BY_ROWID_SQL)?;
            out.push(load.query_row([rowid], StoredEntry::from_row)?.entry);
        }
        if out.len() >= f.limit as usize {
            break;
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Deployer surface (R-HOST-2, R-POL-3)

/// Creates (or reconfigures) an agent's memory with a quota and a data policy.
pub fn create_agent_memory(layout: &Layout, agent_id: &str, quota: u64, policy: DataPolicy) -> Result<()> {
    let store = AgentStore::open(layout, agent_id, IfMissing::CreateWith(quota, policy))?
        .ok_or_else(|| MemoryError::storage("memory could not be created"))?;
    store.configure(quota, policy)
}

/// Creates an agent's memory with a quota and a data policy if it has none; an existing memory
/// keeps its own (R-HOST-1: a host that keeps agent records recreates a deleted database with
/// the record's limits, and never lifts them). Returns whether the database was missing: it
/// now exists with these limits, unless another caller created it at the same moment.
///
/// Whatever is at the database's path is not opened here: a damaged database is reported by
/// the calls that use it, as when this function is not called.
pub fn ensure_agent_memory(layout: &Layout, agent_id: &str, quota: u64, policy: DataPolicy) -> Result<bool> {
    check_agent_id(agent_id)?;
    match std::fs::symlink_metadata(layout.real()?.db_path(agent_id)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        _ => return Ok(false),
    }
    AgentStore::open(layout, agent_id, IfMissing::CreateWith(quota, policy))?
        .ok_or_else(|| MemoryError::storage("memory could not be created"))?;
    Ok(true)
}

/// `create_agent_memory` on the agent's binding (R-BIND-2): on PostgreSQL the agent's row, owned
/// by the role of the URL, with this quota and policy.
pub fn create_agent_memory_of(agent: &Agent, quota: u64, policy: DataPolicy) -> Result<()> {
    match &agent.binding {
        Binding::Sqlite => create_agent_memory(&agent.layout, &agent.agent_id, quota, policy),
        Binding::Postgres(pool) => {
            check_agent_id(&agent.agent_id)?;
            pool.with(|c| crate::postgres::deployer::configure(c, &agent.agent_id, quota, policy, true)).map(|_| ())
        }
    }
}

/// `ensure_agent_memory` on the agent's binding (R-HOST-1, R-BIND-2): whether it was missing.
pub fn ensure_agent_memory_of(agent: &Agent, quota: u64, policy: DataPolicy) -> Result<bool> {
    match &agent.binding {
        Binding::Sqlite => ensure_agent_memory(&agent.layout, &agent.agent_id, quota, policy),
        Binding::Postgres(pool) => {
            check_agent_id(&agent.agent_id)?;
            pool.with(|c| crate::postgres::deployer::configure(c, &agent.agent_id, quota, policy, false))
        }
    }
}

/// What `delete_agent_database` removed.
#[derive(Debug, Clone, Default)]
pub struct Dropped {
    /// Whether the agent had a database (else nothing was audited or removed, but companions).
    pub existed: bool,
    /// Live entries and their bytes when it was deleted (0 when it could not be read).
    pub entries: u64,
    pub used: u64,
    /// Every file removed, the database first (none on PostgreSQL).
    pub removed: Vec<PathBuf>,
}

/// `delete_agent_database` on the agent's binding (R-BIND-2). On PostgreSQL the agent's rows go
/// (entries, audit rows, attempt records: the server keeps nothing of it), so the `memory.drop`
/// line (actor deployer, the binding named without its password) is written first to this
/// host's audit file, as on the file; if it cannot be written, nothing is deleted.
pub fn delete_agent_database_of(agent: &Agent, now: impl Into<CallTime>) -> Result<Dropped> {
    let Binding::Postgres(pool) = &agent.binding else {
        return delete_agent_database(&agent.layout, &agent.agent_id, now.into().ms());
    };
    let agent_id = agent.agent_id.as_str();
    check_agent_id(agent_id)?;
    let now: CallTime = now.into();
    let Some(usage) = crate::inspect::inspect(agent, &now)? else { return Ok(Dropped::default()) };
    let reason = format!("the agent's memory was deleted: its rows on {} ({} entries, {} bytes)", agent.shown(), usage.entries, usage.used);
    let mut batch = AuditBatch::new(agent_id, now.ms());
    batch.record_drop(Actor::Deployer, &reason, Some(usage.used));
    batch.flush_audit(&agent.layout)?;
    let entries = pool.with(|c| crate::postgres::deployer::drop_agent(c, agent_id))?;
    Ok(Dropped { existed: entries.is_some(), entries: entries.unwrap_or(0), used: usage.used, removed: Vec::new() })
}

/// Deletes an agent's memory as a whole (the deployer's `rotifer agent delete`): its database
/// `<id>.db`, then `-wal`, `-shm`, `-lineage`, a move's mark `-migration` and every `-wal`/`-shm` moved aside as
/// `*.orphaned-*`. One `memory.drop` audit line (actor deployer) is written first; if it
/// cannot be written, nothing is removed. A process that has the agent open notices at its next
/// call that its database is gone (the store refuses a database deleted under it) and fails
/// with `MEMORY_STORAGE_ERROR`. A database that cannot be read (damaged) is still deleted.
pub fn delete_agent_database(layout: &Layout, agent_id: &str, now: i64) -> Result<Dropped> {
    check_agent_id(agent_id)?;
    let real = layout.real()?;
    let db = real.db_path(agent_id);
    let companion = |suffix: &str| PathBuf::from(format!("{}{suffix}", db.display()));
    let mut doomed = vec![db.clone(), companion("-wal"), companion("-shm"), companion("-lineage"), companion("-migration")];
    let name = format!("{agent_id}.db");
    if let Ok(dir) = std::fs::read_dir(real.memory_dir()) {
        let mut aside: Vec<PathBuf> = dir
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| [format!("{name}-wal.orphaned-"), format!("{name}-shm.orphaned-")].iter().any(|p| f.starts_with(p.as_str())))
            .map(|f| real.memory_dir().join(f))
            .collect();
        aside.sort();
        doomed.extend(aside);
    }
    let existed = std::fs::symlink_metadata(&db).is_ok();
    let mut out = Dropped { existed, ..Dropped::default() };
    if existed {
        let usage = crate::inspect::inspect_agent_memory(layout, agent_id, now).ok().flatten();
        if let Some(u) = &usage {
            out.entries = u.entries;
            out.used = u.used;
        }
        let reason = match &usage {
            Some(u) => format!("the agent's memory was deleted: its database and companion files ({} entries, {} bytes)", u.entries, u.used),
            None => "the agent's memory was deleted: its database (unreadable) and companion files".to_string(),
        };
        let mut batch = AuditBatch::new(agent_id, now);
        batch.record_drop(Actor::Deployer, &reason, usage.as_ref().map(|u| u.used));
        batch.flush_audit(layout)?;
    }
    for path in doomed {
        match std::fs::remove_file(&path) {
            Ok(()) => out.removed.push(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(MemoryError::storage(format!(
                    "cannot remove {} ({e}); removed so far: {}. Run the delete again to finish",
                    path.display(),
                    if out.removed.is_empty() { "nothing".to_string() } else { out.removed.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ") }
                )))
            }
        }
    }
    Ok(out)
}

/// Every live entry of the agent, by key, ignoring access policies. An agent whose memory was
/// never created has none (and none is created).
pub fn list_agent_memory(layout: &Layout, agent_id: &str, category: Option<Category>, now: impl Into<CallTime>) -> Result<Vec<Listing>> {
    list_agent_memory_matching(layout, agent_id, category, None, now)
}

/// `list_agent_memory` of the entries whose key starts with `key_prefix` (a plain byte prefix).
pub fn list_agent_memory_matching(
    layout: &Layout,
    agent_id: &str,
    category: Option<Category>,
    key_prefix: Option<&str>,
    now: impl Into<CallTime>,
) -> Result<Vec<Listing>> {
    let now = now.into();
    let Some(store) = AgentStore::open(layout, agent_id, IfMissing::Skip)? else { return Ok(Vec::new()) };
    let (from, to) = key_range(key_prefix);
    let list = |conn: &Connection| -> Result<Vec<Listing>> {
        let mut stmt = conn.prepare_cached(
            "SELECT key, category, size, created_by, updated_at FROM entries \
             WHERE (?1 IS NULL OR category = ?1) AND (?2 IS NULL OR key >= ?2) AND (?3 IS NULL OR key < ?3) ORDER BY key",
        )?;
        let rows = stmt.query_map(rusqlite::params![category.map(|c| c as i64), from, to], |r| {
            Ok(Listing {
                key: String::from_utf8_lossy(&r.get::<_, Vec<u8>>(0)?).into_owned(),
                category: Category::from_i64(r.get(1)?).unwrap_or(Category::Cache),
                size: r.get::<_, i64>(2)? as u64,
                created_by: r.get(3)?,
                updated_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    };
    match store.read(&now, Look::Now, |reader| list(reader.conn).map(Fast::Answer))? {
        Fast::Answer(l) => Ok(l),
        Fast::WritePath => store.write(&now, |tx| list(tx.conn)),
    }
}

/// Deletes one key or a whole category, ignoring access policies; returns how many.
pub fn delete_agent_memory(layout: &Layout, agent_id: &str, key: Option<&Arg>, category: Option<&Arg>, now: impl Into<CallTime>) -> Result<u64> {
    delete_agent_memory_matching(layout, agent_id, key, category, None, now)
}

/// What a deployer's delete removes: one key, or every entry of a category and/or key prefix.
enum Doomed {
    Key(String),
    Matching { category: Option<Category>, key_prefix: Option<String> },
}

/// Deletes one key, or every entry of a category, of a key prefix, or of both, ignoring access
/// policies; returns how many (a missing key is `MEMORY_NOT_FOUND`, no match otherwise is 0).
pub fn delete_agent_memory_matching(
    layout: &Layout,
    agent_id: &str,
    key: Option<&Arg>,
    category: Option<&Arg>,
    key_prefix: Option<&Arg>,
    now: impl Into<CallTime>,
) -> Result<u64> {
    let target = doomed(key, category, key_prefix)?;
    check_agent_id(agent_id)?;
    let Some(store) = AgentStore::open(layout, agent_id, IfMissing::Skip)? else {
        return match target {
            Doomed::Key(key) => Err(no_such_key(&key, agent_id)),
            Doomed::Matching { .. } => Ok(0),
        };
    };
    delete_in_store(&store, agent_id, target, now)
}

fn no_such_key(key: &str, agent_id: &str) -> MemoryError {
    MemoryError::not_found(format!("no entry with key {key:?} in agent {agent_id:?}"))
}

/// What the deployer's delete was told, checked (one implementation for every binding).
fn doomed(key: Option<&Arg>, category: Option<&Arg>, key_prefix: Option<&Arg>) -> Result<Doomed> {
    fn given(a: Option<&Arg>) -> Option<&Arg> {
        a.filter(|a| !matches!(a, Arg::Undefined))
    }
    Ok(match (given(key), given(category), given(key_prefix)) {
        (Some(k), None, None) => Doomed::Key(parse_key(k)?),
        (None, None, None) | (Some(_), _, _) => {
            return Err(MemoryError::invalid("give exactly one of: key (alone), or category and/or keyPrefix, to say what to delete"))
        }
        (None, c, p) => {
            let key_prefix = match p {
                Some(p) => Some(parse_key_prefix("keyPrefix", p)?.ok_or_else(|| {
                    MemoryError::invalid("keyPrefix must not be empty: to delete everything, delete each category")
                })?),
                None => None,
            };
            Doomed::Matching { category: c.map(parse_category).transpose()?, key_prefix }
        }
    })
}

/// `delete_agent_memory_matching` on the agent's binding (R-BIND-2): the same checks and
/// messages; on PostgreSQL one server function, its lines audited there with actor deployer.
pub fn delete_agent_memory_of(agent: &Agent, key: Option<&Arg>, category: Option<&Arg>, key_prefix: Option<&Arg>, now: impl Into<CallTime>) -> Result<u64> {
    let Binding::Postgres(pool) = &agent.binding else {
        return delete_agent_memory_matching(&agent.layout, &agent.agent_id, key, category, key_prefix, now);
    };
    let target = doomed(key, category, key_prefix)?;
    check_agent_id(&agent.agent_id)?;
    let now: CallTime = now.into();
    use crate::postgres::deployer::{delete, Selection};
    let selection = match &target {
        Doomed::Key(k) => Selection::Key(k),
        Doomed::Matching { category, key_prefix } => Selection::Matching { category: *category, key_prefix: key_prefix.as_deref() },
    };
    match pool.with(|c| delete(c, &agent.agent_id, &selection, now.given()))? {
        Some(n) => Ok(n),
        None => Err(no_such_key(if let Doomed::Key(k) = &target { k } else { "" }, &agent.agent_id)),
    }
}

fn delete_in_store(store: &AgentStore, agent_id: &str, target: Doomed, now: impl Into<CallTime>) -> Result<u64> {
    let now: CallTime = now.into();
    let delete = |tx: &mut crate::storage::store::Tx<'_, '_>| -> Result<u64> {
        // Key, category and size: all a deletion needs (values are never loaded).
        let doomed: Vec<(String, Category, u64)> = match &target {
            Doomed::Key(key) => match load_entry(tx.conn, key)? {
                Some(e) => vec![(e.entry.key, e.entry.category, e.size)],
                None => return Err(no_such_key(key, agent_id)),
            },
            Doomed::Matching { category, key_prefix } => {
                let (from, to) = key_range(key_prefix.as_deref());
                let mut stmt = tx.conn.prepare_cached(
                    "SELECT key, category, size FROM entries \
                     WHERE (?1 IS NULL OR category = ?1) AND (?2 IS NULL OR key >= ?2) AND (?3 IS NULL OR key < ?3) ORDER BY updated_at, seq",
                )?;
                let rows = stmt.query_map(rusqlite::params![category.map(|c| c as i64), from, to], |r| {
                    let c = Category::from_i64(r.get(1)?).unwrap_or(Category::Cache);
                    Ok((String::from_utf8_lossy(&r.get::<_, Vec<u8>>(0)?).into_owned(), c, r.get::<_, i64>(2)? as u64))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            }
        };
        let mut freed = 0;
        for (key, category, size) in &doomed {
            tx.batch.record(Action::Delete, Actor::Deployer, Subject { key: Some(key), category: Some(*category), size: Some(*size) }, None);
            tx.delete_entry(key)?;
            freed += size;
        }
        tx.set_used(tx.agent.used.saturating_sub(freed));
        Ok(doomed.len() as u64)
    };
    // A full disk must not keep the deployer from freeing memory, and the lines still go first
    // (R-AUD-2): on a full disk the audit reserve is given up for them and the commit's WAL
    // frames, and made again after (once there is room).
    match store.write(&now, delete) {
        Err(e) if crate::error::is_disk_full(&e) => {
            let _reserve = store.layout.use_reserve();
            store.write(&now, delete)
        }
        other => other,
    }
}

// ---------------------------------------------------------------------------------------------
// Test memory (R-HOST-4)

pub const TEST_AGENT_ID: &str = "test-memory";
/// Test memories live in `<tmp>/rotifer-test-memory-<pid>-<unique>`, each holding a lock file
/// that its process keeps locked (`flock`) while the memory lives. A folder is set up under a
/// staging name (`rotifer-test-staging-…`) and gets its final name only once its lock is held,
/// so a sweeping process never sees a folder under its final name without a live lock.
const TEST_DIR_PREFIX: &str = "rotifer-test-memory-";
const TEST_STAGING_PREFIX: &str = "rotifer-test-staging-";
const TEST_LOCK_FILE: &str = ".lock";
/// A staging folder is renamed microseconds after its creation; one this old belongs to a
/// process killed while setting it up.
const STALE_STAGING: std::time::Duration = std::time::Duration::from_secs(3600);

/// Locks `dir`'s lock file, creating it; `None` (without waiting) if another holds it.
fn lock_test_dir(dir: &std::path::Path, create: bool) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(create)
        .create(create)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir.join(TEST_LOCK_FILE))
        .ok()?;
    (unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0).then_some(file)
}

/// Removes the test memories whose process is gone: a process killed by a signal never ran its
/// exit hook. The kernel drops a dead process's locks, so a lock this sweep can take marks a
/// folder nobody uses (a pid could not tell: it may be alive in another PID namespace). Folders
/// that vanish meanwhile (disposed, or swept by another process) are skipped.
fn sweep_stale_test_memories(tmp: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(dir) = std::fs::read_dir(tmp) else { return };
    for entry in dir.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
        let (live, staging) = (name.starts_with(TEST_DIR_PREFIX), name.starts_with(TEST_STAGING_PREFIX));
        if !live && !staging {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
        if !meta.is_dir() || meta.uid() != unsafe { libc::geteuid() } {
            continue;
        }
        let abandoned = || meta.modified().ok().and_then(|m| m.elapsed().ok()).is_some_and(|age| age > STALE_STAGING);
        if staging && !abandoned() {
            continue;
        }
        if let Some(_unused) = lock_test_dir(&entry.path(), false) {
            let _ = std::fs::remove_dir_all(entry.path());
        } else if staging && std::fs::symlink_metadata(entry.path().join(TEST_LOCK_FILE)).is_err() {
            let _ = std::fs::remove_dir_all(entry.path()); // killed before it made its lock file
        }
    }
}

/// Makes a private folder for a test memory with its lock held, under its final name.
fn make_test_dir(tmp: &std::path::Path) -> Result<(PathBuf, std::fs::File)> {
    let unique = crate::storage::store::unique_suffix();
    let staging = tmp.join(format!("{TEST_STAGING_PREFIX}{unique}"));
    let root = tmp.join(format!("{TEST_DIR_PREFIX}{unique}"));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&staging)
        .map_err(|e| MemoryError::storage(format!("cannot create test memory folder {}: {e}", staging.display())))?;
    let made = lock_test_dir(&staging, true)
        .ok_or_else(|| MemoryError::storage(format!("cannot lock test memory folder {}", staging.display())))
        .and_then(|lock| {
            // The lock belongs to the open file, so it holds across the rename.
            std::fs::rename(&staging, &root)
                .map_err(|e| MemoryError::storage(format!("cannot rename test memory folder {} to {}: {e}", staging.display(), root.display())))?;
            Ok(lock)
        });
    match made {
        Ok(lock) => Ok((root, lock)),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(e)
        }
    }
}

/// Sweeps `tmp` (`sweep_stale_test_memories`) once per process and temporary folder: what a
/// killed process left is there before this one starts, and later creations need not look again.
fn sweep_once(tmp: &std::path::Path) {
    static SWEPT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
    if !swept.iter().any(|t| t == tmp) {
        sweep_stale_test_memories(tmp);
        swept.push(tmp.to_path_buf());
    }
}

/// The tmpfs a test memory of `quota` may live in: the user's runtime folder, else `/dev/shm`,
/// if it is a tmpfs this user may write with room for eight times the quota (what a full memory
/// takes on disk, WAL and logs included, with room to spare).
fn tmpfs_folder(quota: u64) -> Option<PathBuf> {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let candidates = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()).map(PathBuf::from).into_iter().chain([PathBuf::from("/dev/shm")]);
    candidates.into_iter().find(|dir| {
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else { return false };
        // SAFETY: `c` is a NUL-terminated path; `fs` and `vfs` are written by the calls.
        unsafe {
            let mut fs: libc::statfs = std::mem::zeroed();
            let mut vfs: libc::statvfs = std::mem::zeroed();
            libc::statfs(c.as_ptr(), &mut fs) == 0
                && fs.f_type as i64 == TMPFS_MAGIC
                && libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) == 0
                && libc::statvfs(c.as_ptr(), &mut vfs) == 0
                && (vfs.f_bavail as u64).saturating_mul(vfs.f_frsize as u64) >= quota.saturating_mul(8).saturating_add(64 << 20)
        }
    })
}

/// Where test memories live: `TMPDIR` when it is set (the user chose); else a tmpfs
/// (`tmpfs_folder`), where making and removing their files costs next to nothing and nothing
/// reaches a disk; else the system's temporary folder.
fn test_memory_folder(quota: u64) -> Result<PathBuf> {
    let chosen = match std::env::var_os("TMPDIR").filter(|v| !v.is_empty()) {
        Some(_) => std::env::temp_dir(),
        None => tmpfs_folder(quota).unwrap_or_else(std::env::temp_dir),
    };
    std::fs::canonicalize(&chosen).map_err(|e| MemoryError::storage(format!("the temporary folder {} is not usable: {e}", chosen.display())))
}

/// The bytes of a new test memory's database with `quota` and `policy`: built once per process
/// and limits exactly as `opening::build_new_database` builds one (the same schema, version and
/// agent row), in memory, and marked for WAL as a database built in WAL mode is. Opening it
/// checks it as any database.
fn test_image(quota: u64, policy: DataPolicy) -> Result<Arc<Vec<u8>>> {
    type Key = (u64, bool, Option<i64>);
    static IMAGES: std::sync::Mutex<Vec<(Key, Arc<Vec<u8>>)>> = std::sync::Mutex::new(Vec::new());
    let key: Key = (quota, policy.anonymization_supported, policy.max_retention_days);
    let mut images = IMAGES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, image)) = images.iter().find(|(k, _)| *k == key) {
        return Ok(image.clone());
    }
    let image = Arc::new(crate::storage::opening::database_image(TEST_AGENT_ID, (quota, policy))?);
    // A suite uses a few limits; a process that uses many keeps the latest few.
    if images.len() >= 8 {
        images.remove(0);
    }
    images.push((key, image.clone()));
    Ok(image)
}

/// An empty, dedicated memory in a private temporary folder, deleted by `dispose`.
pub struct TestMemory {
    root: PathBuf,
    agent_id: String,
    /// The file's store; `None` for a test memory on a server (`create_on`).
    store: Option<Arc<AgentStore>>,
    /// The server's agent, for a test memory made with a URL.
    server: Option<Agent>,
    /// Locked while this memory lives (see `sweep_stale_test_memories`).
    _lock: std::fs::File,
}

impl TestMemory {
    /// An empty test memory with `quota` and `policy`, in a folder of its own under the
    /// temporary folder. It is made for speed, as a suite makes one per case: the database is
    /// written from an image of a new one (`test_image`) instead of being built statement by
    /// statement, its connection never syncs, and its logs keep no reserve (`make_throwaway`);
    /// it is still a file, opened and checked as any agent's, so other threads and processes
    /// reach it by its root.
    pub fn create(quota: u64, policy: DataPolicy) -> Result<TestMemory> {
        let tmp = test_memory_folder(quota)?;
        sweep_once(&tmp);
        let image = test_image(quota, policy)?;
        let (root, lock) = make_test_dir(&tmp)?;
        let layout = Layout::at(&root);
        crate::storage::logs::set_without_reserve(&root, true);
        let made = (|| {
            layout.ensure_dirs(true)?;
            let path = layout.db_path(TEST_AGENT_ID);
            // The folder is new and private (0700): the file is written in place, whole, before
            // anyone can know its name.
            let mut file = crate::storage::files::create_private_file(&path).map_err(|e| crate::error::storage(&path, e))?;
            std::io::Write::write_all(&mut file, &image).map_err(|e| crate::error::storage(&path, e))?;
            drop(file);
            let store = AgentStore::open(&layout, TEST_AGENT_ID, IfMissing::CreateWith(quota, policy))?
                .ok_or_else(|| MemoryError::storage("test memory could not be created"))?;
            store.make_throwaway()?;
            write_binding_record(&layout, TEST_AGENT_ID, crate::binding::SQLITE)?;
            Ok(store)
        })();
        match made {
            Ok(store) => Ok(TestMemory { root, agent_id: TEST_AGENT_ID.to_string(), store: Some(store), server: None, _lock: lock }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&root);
                crate::storage::logs::set_without_reserve(&root, false);
                Err(e)
            }
        }
    }

    /// An empty test memory on the PostgreSQL server of `url` (R-BIND-1): an agent of its own
    /// there (`test-` and a unique suffix) with `quota` and `policy`, and a private temporary
    /// root whose agent record names the server, so that `agentId` and `root` reach it from
    /// anywhere, as for the file. `dispose` drops the agent's rows.
    pub fn create_on(url: &str, quota: u64, policy: DataPolicy) -> Result<TestMemory> {
        let url = crate::binding::parse_url("url", url)?.ok_or_else(|| MemoryError::invalid("url \"sqlite\" is the default test memory: leave url out"))?;
        let tmp = test_memory_folder(quota)?;
        sweep_once(&tmp);
        let (root, lock) = make_test_dir(&tmp)?;
        let agent_id = format!("test-{}", crate::storage::store::unique_suffix());
        let made = (|| {
            let layout = Layout::at(&root);
            layout.ensure_dirs(true)?;
            write_binding_record(&layout, &agent_id, &url)?;
            let agent = Agent::open(layout, &agent_id, Some(&url))?;
            create_agent_memory_of(&agent, quota, policy)?;
            Ok(agent)
        })();
        match made {
            Ok(agent) => Ok(TestMemory { root, agent_id, store: None, server: Some(agent), _lock: lock }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&root);
                Err(e)
            }
        }
    }

    /// The agent id of this test memory.
    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// A gene's view of this test memory.
    pub fn gene_memory(&self, gene_id: Option<String>, domain: Option<String>) -> Result<GeneMemory> {
        if let Some(d) = &domain {
            check_domain(d)?;
        }
        let Some(file) = &self.store else {
            let root = Some(self.root.to_string_lossy().into_owned());
            return GeneMemory::open(GeneOptions { agent_id: Some(self.agent_id.clone()), gene_id, domain, root, url: None });
        };
        let store = OnceLock::new();
        let _ = store.set(file.clone());
        Ok(GeneMemory::with(
            Some(Target {
                layout: file.layout.clone(),
                agent_id: TEST_AGENT_ID.to_string(),
                url: None,
                storage: OnceLock::from(Storage::Sqlite(store)),
                read_before: AtomicBool::new(false),
            }),
            GeneMemory::gene(gene_id, domain),
        ))
    }

    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    /// Closes the memory and deletes its folder; later calls fail with `MEMORY_STORAGE_ERROR`.
    pub fn dispose(&self) {
        if let Some(store) = &self.store {
            store.close();
        }
        if let Some(Agent { binding: Binding::Postgres(pool), agent_id, .. }) = &self.server {
            let _ = pool.with(|c| crate::postgres::deployer::drop_agent(c, agent_id));
        }
        let _ = std::fs::remove_dir_all(&self.root);
        crate::storage::logs::set_without_reserve(&self.root, false);
    }
}

/// The agent record of a test memory's root, naming its binding (`url`: a URL or `sqlite`), so
/// that a handle opened by agent id and root reaches it whatever the environment says
/// (R-BIND-1: the record comes before `ROTIFER_MEMORY_URL`). Private: it may hold a password.
fn write_binding_record(layout: &Layout, agent_id: &str, url: &str) -> Result<()> {
    let dir = layout.root.join(".rotifer").join("agents");
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(|e| crate::error::storage(&dir, e))?;
    let path = dir.join(format!("{agent_id}.json"));
    let mut file = crate::storage::files::create_private_file(&path).map_err(|e| crate::error::storage(&path, e))?;
    let record = serde_json::json!({ "id": agent_id, "memoryUrl": url });
    std::io::Write::write_all(&mut file, record.to_string().as_bytes()).map_err(|e| crate::error::storage(&path, e))
}

// ---------------------------------------------------------------------------------------------
// Option objects of the host functions (§12)

/// `{ agentId, root?, … }` of the deployer functions.
pub struct AgentOptions<'a> {
    pub layout: Layout,
    pub agent_id: String,
    fields: Vec<(&'a str, &'a Arg)>,
}

impl<'a> AgentOptions<'a> {
    pub fn parse(what: &str, arg: &'a Arg, allowed: &[&str]) -> Result<AgentOptions<'a>> {
        let fields = option_fields(what, arg, allowed)?;
        let agent_id = match fields.iter().find(|(n, _)| *n == "agentId").map(|f| f.1) {
            Some(Arg::Str(s)) => s.clone(),
            Some(other) => return Err(MemoryError::invalid(format!("{what}.agentId must be a string, not {}", other.kind()))),
            None => return Err(MemoryError::invalid(format!("{what}.agentId is required"))),
        };
        check_agent_id(&agent_id)?;
        let root = match fields.iter().find(|(n, _)| *n == "root").map(|f| f.1) {
            None | Some(Arg::Null) => None,
            Some(Arg::Str(s)) => Some(s.as_str()),
            Some(other) => return Err(MemoryError::invalid(format!("{what}.root must be a folder path string, not {}", other.kind()))),
        };
        Ok(AgentOptions { layout: Layout::resolve(root)?, agent_id, fields })
    }

    /// The agent on the binding R-BIND-1 chooses, with the `url` field (if `allowed` had it)
    /// first in that order.
    pub fn agent(&self) -> Result<crate::binding::Agent> {
        let url = match self.get("url") {
            None | Some(Arg::Undefined) | Some(Arg::Null) => None,
            Some(Arg::Str(s)) => Some(s.as_str()),
            Some(other) => return Err(MemoryError::invalid(format!("url must be a postgres:// URL or \"sqlite\", not {}", other.kind()))),
        };
        crate::binding::Agent::open(self.layout.clone(), &self.agent_id, url)
    }

    /// A field other than `agentId` and `root`, if given and not `undefined`.
    pub fn get(&self, name: &str) -> Option<&'a Arg> {
        self.fields.iter().find(|(n, _)| *n == name).map(|f| f.1)
    }
}

#[cfg(test)]
mod tests {
    //! Query plans of schema version 2 (R-API-3, R-QUO-3, R-RET-4): with one recency index per
    //! category instead of one more over all of them, no call reads and sorts the whole table.

    use super::*;

    /// SQLite's plan for `sql`, one line per step.
    fn plan(conn: &Connection, sql: &str) -> Vec<String> {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows = stmt.query_map(rusqlite::params_from_iter(std::iter::repeat_n(rusqlite::types::Value::Null, stmt.parameter_count())), |r| r.get::<_, String>(3));
        rows.unwrap().collect::<rusqlite::Result<_>>().unwrap()
    }

    fn schema() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::storage::schema::SCHEMA).unwrap();
        conn
    }

    #[test]
    fn recency_over_all_categories_merges_the_category_index_without_a_sort() {
        let conn = schema();
        for (since, until) in [(None, None), (Some(1), None), (Some(1), Some(2))] {
            let f = Filter { category: None, key_prefix: None, since, until, limit: 100 };
            let p = plan(&conn, &query_sql(&f).0);
            assert!(p.iter().any(|l| l.contains("MERGE")), "{p:?}");
            assert_eq!(p.iter().filter(|l| l.contains("USING INDEX entries_by_category (category=?")).count(), Category::ALL.len(), "{p:?}");
            assert!(!p.iter().any(|l| l.contains("TEMP B-TREE") || l.starts_with("SCAN")), "no sort, no scan: {p:?}");
        }
        let f = Filter { category: Some(Category::Cache), key_prefix: None, since: None, until: None, limit: 100 };
        let p = plan(&conn, &query_sql(&f).0);
        assert!(p.iter().any(|l| l.contains("entries_by_category")) && !p.iter().any(|l| l.contains("TEMP B-TREE")), "{p:?}");
        // A prefix reads its key range and sorts only what is in it.
        let f = Filter { category: None, key_prefix: Some("a/".into()), since: None, until: None, limit: 100 };
        let p = plan(&conn, &query_sql(&f).0);
        assert!(p.iter().any(|l| l.contains("USING INDEX sqlite_autoindex_entries_1 (key>? AND key<?)")), "{p:?}");
        // What it sorts holds no value: a limit of 1 over megabytes of matches sorts a few bytes a row.
        assert!(!query_sql(&f).0.contains("value"), "{}", query_sql(&f).0);
    }

    #[test]
    fn keyed_calls_eviction_and_expiry_use_their_index() {
        let conn = schema();
        let uses = |sql: &str, what: &str| {
            let p = plan(&conn, sql);
            assert!(p.iter().any(|l| l.contains(what)) && !p.iter().any(|l| l.starts_with("SCAN")), "{sql}: {p:?}");
        };
        use crate::storage::rows::{DELETE_EXPIRED_SQL, EXPIRED_SQL, LOAD_SQL, NEXT_EXPIRY_SQL};
        uses(LOAD_SQL, "USING INDEX sqlite_autoindex_entries_1 (key=?)");
        uses(EVICTION_SQL, "USING INDEX entries_by_category (category=?)");
        uses(NEXT_EXPIRY_SQL, "entries_by_expiry");
        uses(EXPIRED_SQL, "USING INDEX entries_by_expiry (expires_at<?)");
        uses(DELETE_EXPIRED_SQL, "USING INDEX entries_by_expiry (expires_at<?)");
    }
}
