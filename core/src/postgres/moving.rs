//! A move (R-MIG-4, `rotifer agent migrate`) on the PostgreSQL side: the typed calls of
//! `sql/functions/agent_migrate.sql`, and the transaction they run in. The move itself (its order,
//! its crash analysis) is `agent_move`'s.

use super::client::Connection;
use crate::error::{MemoryError, Result};
use crate::model::DataPolicy;
use crate::storage::fence::Fence;
use std::time::Duration;

const HOLD: &str = "SELECT now_ms, quota, anonymization_supported, max_retention_days, used_bytes FROM rotifer.migrate_hold($1, $2)";
const ARRIVE: &str = "SELECT rotifer.migrate_arrive($1, $2, $3, $4)";
const MARK: &str = "SELECT rotifer.migrate_mark($1, $2::text::jsonb, $3, $4)";
const ARRIVED: &str = "SELECT rotifer.migrate_arrived($1, $2)";
/// The role reads its own agents' rows (R-BIND-4): the mark, with no lock.
const FENCE: &str = "SELECT fence::text FROM rotifer.agents WHERE agent_id = $1";

/// The agent as the source's hold found it.
pub struct Held {
    /// The time the bundle is read at.
    pub now: i64,
    pub quota: u64,
    pub policy: DataPolicy,
    pub used: u64,
}

/// How long one statement of a move may take, on the server and for the client: a move carries
/// a whole agent (a 10 MiB agent of 1 KB entries is imported in some seconds), far more than a
/// gene's call, whose deadlines (the role's `statement_timeout`, the client's call deadline)
/// would cut it.
pub const MOVE_DEADLINE: Duration = Duration::from_secs(600);

/// Runs `f` in one transaction on `c`: committed if it succeeds, rolled back otherwise. A
/// move's transaction may wait on the other side for a while, and carries a whole agent: the
/// role's `idle_in_transaction_session_timeout` is lifted and its `statement_timeout` raised
/// to [`MOVE_DEADLINE`] for it alone (a role may set both for itself), and so is the client's
/// call deadline.
pub fn in_transaction<T>(c: &mut Connection, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
    c.with_call_deadline(MOVE_DEADLINE, |c| {
        c.batch(&format!(
            "BEGIN; SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL statement_timeout = {}",
            MOVE_DEADLINE.as_millis()
        ))?;
        match f(c) {
            Ok(v) => {
                c.batch("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                let _ = c.batch("ROLLBACK");
                Err(e)
            }
        }
    })
}

/// Takes the source agent's lock for the rest of the transaction (a fenced agent is refused).
pub fn hold(c: &mut Connection, agent: &str, now: Option<i64>) -> Result<Held> {
    let rows = c.query(HOLD, &[&agent, &now])?;
    let r = rows.first().ok_or_else(|| {
        MemoryError::storage("the PostgreSQL binding answered nothing to a move's hold")
    })?;
    Ok(Held {
        now: r.get(0),
        quota: r.get::<_, i64>(1) as u64,
        policy: DataPolicy {
            anonymization_supported: r.get(2),
            max_retention_days: r.get::<_, Option<i32>>(3).map(i64::from),
        },
        used: r.get::<_, i64>(4) as u64,
    })
}

/// The target's lock, the agent made with `quota` and `policy` if it has no memory here, a
/// copy an earlier move left replaced whole; how many entries that copy had.
pub fn arrive(c: &mut Connection, agent: &str, quota: u64, policy: DataPolicy) -> Result<u64> {
    let days = policy
        .max_retention_days
        .map(|d| i32::try_from(d).unwrap_or(i32::MAX));
    let rows = c.query(
        ARRIVE,
        &[
            &agent,
            &(quota as i64),
            &policy.anonymization_supported,
            &days,
        ],
    )?;
    Ok(rows.first().map_or(0, |r| r.get::<_, i64>(0)) as u64)
}

/// Sets the agent's mark, with its `memory.migrate` audit row.
pub fn mark(
    c: &mut Connection,
    agent: &str,
    fence: &Fence,
    reason: &str,
    now: Option<i64>,
) -> Result<()> {
    let fence = serde_json::to_string(fence)
        .map_err(|e| MemoryError::storage(format!("cannot encode a move's mark: {e}")))?;
    c.query(MARK, &[&agent, &fence, &reason, &now])?;
    Ok(())
}

/// Lifts the `arriving` mark of move `move_id`; whether there was one.
pub fn arrived(c: &mut Connection, agent: &str, move_id: &str) -> Result<bool> {
    let rows = c.query(ARRIVED, &[&agent, &move_id])?;
    Ok(rows.first().is_some_and(|r| r.get::<_, bool>(0)))
}

/// Refuses an agent whose copy here a move marked (R-MIG-4): what the deployer's views check
/// first, as the file's views do at open. (The four calls and every change find the mark on
/// the server.)
pub fn in_use(c: &mut Connection, agent: &str) -> Result<()> {
    match fence_of(c, agent)? {
        Some(fence) => Err(fence.refusal(agent)),
        None => Ok(()),
    }
}

/// The agent's mark, if any (none either if it has no memory here).
pub fn fence_of(c: &mut Connection, agent: &str) -> Result<Option<Fence>> {
    let rows = c.query(FENCE, &[&agent])?;
    match rows.first().and_then(|r| r.get::<_, Option<String>>(0)) {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            MemoryError::storage(format!(
                "agent {agent:?} has a mark this release cannot read ({e})"
            ))
        }),
    }
}
