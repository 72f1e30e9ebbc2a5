//! The four calls of a gene's memory on PostgreSQL (R-BIND-2): the arguments are checked here
//! by the contract's own code and refused with its own messages (`refusals`), and everything
//! that needs the agent's state (the lock, the clock, the purge, scopes, the data policy, room,
//! the audit rows) runs in the server's functions, one round trip per call (`postgres::calls`).
//!
//! The order of §9 holds as on the file: a call without a valid gene id is denied first (the
//! server records it); a call whose arguments are bad still purges what expired before it is
//! refused. Telemetry of a denial stays in this host's local file (R-BIND-3, R-AUD-4).

use crate::access::Gene;
use crate::arg::Arg;
use crate::binding::PgPool;
use crate::error::{ErrorCode, MemoryError, Result};
use crate::model::{key_of, parse_filter, parse_key, parse_optional_category, Entry, Filter, WriteRequest};
use crate::postgres::calls::{self, Caller, Outcome, QueryArgs, Refusal, WriteArgs};
use crate::refusals::{self, NO_GENE_ID};
use crate::storage::audit::{Actor, AuditBatch, Denial, Subject};
use crate::storage::files::Layout;
use crate::time::CallTime;

/// One handle's view of an agent whose memory is on PostgreSQL.
pub struct PgMemory<'a> {
    pub pool: &'a PgPool,
    /// This host's project root: where telemetry goes.
    pub layout: &'a Layout,
    pub agent_id: &'a str,
    /// `None`: the handle has no valid v2 id (R-ACC-4).
    pub gene: Option<&'a Gene>,
}

impl PgMemory<'_> {
    fn who(&self, now: &CallTime) -> Caller<'_> {
        Caller {
            agent: self.agent_id,
            gene: self.gene.map(|g| g.id.as_str()),
            domain: self.gene.and_then(|g| g.domain.as_deref()),
            now: now.given(),
        }
    }

    /// R-API-1.
    pub fn read(&self, key: &Arg, category: &Arg, now: &CallTime) -> Result<Option<Entry>> {
        let gene = self.identified("read", key, now)?;
        let (key, category) = match (parse_key(key), parse_optional_category(category)) {
            (Ok(k), Ok(c)) => (k, c),
            (Err(e), _) | (_, Err(e)) => return Err(self.purge_then("read", e, now)),
        };
        match self.pool.with(|c| calls::read(c, self.who(now), &key, category))? {
            Outcome::Done(found) => Ok(found),
            Outcome::Refused(r) => Err(self.refused(gene, "read", &key, r, now)),
        }
    }

    /// R-API-2, R-QUO-3/4.
    pub fn write(&self, key: &Arg, value: Arg, category: &Arg, access: &Arg, retention: &Arg, now: &CallTime) -> Result<Entry> {
        let gene = self.identified("write", key, now)?;
        let request = match WriteRequest::parse(key, value, category, access, retention) {
            Ok(r) => r,
            Err(e) => return Err(self.purge_then("write", e, now)),
        };
        let args = WriteArgs { key: &request.key, value: &request.value, category: request.category, access: request.access, retention: request.retention };
        match self.pool.with(|c| calls::write(c, self.who(now), &args))? {
            Outcome::Done(entry) => Ok(entry),
            Outcome::Refused(r) if r.code == ErrorCode::QuotaExceeded => {
                let quota = r.facts.as_ref().and_then(|f| f.get("quota")).and_then(|q| q.as_u64());
                let quota = quota.ok_or_else(|| MemoryError::storage("the PostgreSQL binding refused a write for its quota without saying the quota"))?;
                Err(refusals::quota_exceeded(&request.key, request.size, quota))
            }
            Outcome::Refused(r) => Err(self.refused(gene, "write", &request.key, r, now)),
        }
    }

    /// R-API-3, R-LIM-3/4: entries the gene may not read are skipped silently, by the server.
    pub fn query(&self, filter: &Arg, now: &CallTime) -> Result<Vec<Entry>> {
        let gene = self.identified("query", &Arg::Undefined, now)?;
        let f: Filter = match parse_filter(filter) {
            Ok(f) => f,
            Err(e) => return Err(self.purge_then("query", e, now)),
        };
        let args = QueryArgs { category: f.category, key_prefix: f.key_prefix.as_deref(), since: f.since, until: f.until, limit: f.limit as i32 };
        match self.pool.with(|c| calls::query(c, self.who(now), &args))? {
            Outcome::Done(entries) => Ok(entries),
            // The only refusal of valid arguments: more than 4 MiB matched (R-LIM-4).
            Outcome::Refused(r) if r.code == ErrorCode::InvalidInput && r.facts.is_some() => Err(refusals::query_too_big(f.limit)),
            Outcome::Refused(r) => Err(self.refused(gene, "query", "", r, now)),
        }
    }

    /// R-API-4.
    pub fn delete(&self, key: &Arg, now: &CallTime) -> Result<()> {
        let gene = self.identified("delete", key, now)?;
        let key = match parse_key(key) {
            Ok(k) => k,
            Err(e) => return Err(self.purge_then("delete", e, now)),
        };
        match self.pool.with(|c| calls::delete(c, self.who(now), &key))? {
            Outcome::Done(()) => Ok(()),
            Outcome::Refused(r) if r.code == ErrorCode::NotFound => Err(refusals::no_entry(&key)),
            Outcome::Refused(r) => Err(self.refused(gene, "delete", &key, r, now)),
        }
    }

    /// A call whose request could not be parsed at all (a WASM gene's malformed JSON): identity
    /// first, then the purge, then `malformed`.
    pub fn reject_malformed(&self, op: &str, malformed: MemoryError, now: &CallTime) -> MemoryError {
        match self.identified(op, &Arg::Undefined, now) {
            Err(e) => e,
            Ok(_) => self.purge_then(op, malformed, now),
        }
    }

    /// R-ACC-4: the handle's gene, or the denial of a call without one (recorded by the server
    /// with the key, if the key is valid).
    fn identified(&self, op: &str, key: &Arg, now: &CallTime) -> Result<&Gene> {
        if let Some(gene) = self.gene {
            return Ok(gene);
        }
        let key = key_of(key).ok();
        self.pool.with(|c| calls::probe(c, self.who(now), op, key))?;
        self.telemetry(Actor::System, op, "no valid v2 id", now);
        Err(MemoryError::denied(NO_GENE_ID))
    }

    /// §9: bad input is reported after the purge that comes first; `invalid` unless the purge
    /// itself failed.
    fn purge_then(&self, op: &str, invalid: MemoryError, now: &CallTime) -> MemoryError {
        match self.pool.with(|c| calls::probe(c, self.who(now), op, None)) {
            Err(e) => e,
            Ok(_) => invalid,
        }
    }

    /// The error for a refusal whose audit row the server has committed.
    fn refused(&self, gene: &Gene, op: &str, key: &str, r: Refusal, now: &CallTime) -> MemoryError {
        let reason = r.reason.unwrap_or_default();
        if r.code == ErrorCode::AccessDenied {
            self.telemetry(Actor::Gene(&gene.id), op, &reason, now);
            return refusals::denied(op, key, &reason);
        }
        let message = if reason.is_empty() { format!("the PostgreSQL binding refused the {op} ({})", r.code.as_str()) } else { reason };
        MemoryError::new(r.code, message)
    }

    /// The denial's telemetry event, in this host's local file (best effort, as on the file).
    fn telemetry(&self, actor: Actor<'_>, op: &str, reason: &str, now: &CallTime) {
        let mut batch = AuditBatch::new(self.agent_id, now.ms());
        batch.deny(actor, Subject::default(), Denial { op, code: ErrorCode::AccessDenied.as_str(), reason });
        batch.flush_telemetry(self.layout);
    }
}
