//! Moving an agent's memory to another binding (R-MIG-4, `rotifer agent migrate`): SQLite to
//! PostgreSQL, back, or between two servers.
//!
//! The order, and what a crash at each point leaves (exactly one binding in use, holding every
//! acknowledged write):
//!
//! 1. **Hold** the source: its write transaction (SQLite `BEGIN IMMEDIATE`; PostgreSQL the agent's
//!    row lock) is open from here to step 5. Writers wait, as for a busy database; the bundle
//!    (R-MIG-2) is read in that transaction, so no write can come after it.
//! 2. **Import** into the target in one transaction of its own (R-MIG-3), which also marks the
//!    target `arriving` (a copy of a move not finished: every call on it is refused) and writes
//!    its `memory.migrate` line. A copy an earlier move left there is replaced whole.
//! 3. **Verify**: the target read back, each entry compared with the bundle's, the checksums
//!    (`entriesSha256`) equal.
//! 4. **Intent**: the agent record as it will be, naming the target, written beside the record
//!    (`<id>.json.next`, 0600, flushed).
//! 5. **Fence** the source `moved` — the commit point — with its `memory.migrate` line, then
//!    commit its transaction. On SQLite the fence is the file `<id>.db-migration`, made before
//!    the commit: a writer that waited for the lock finds it once it holds the lock. On
//!    PostgreSQL it is a column of the agent's row, set in the held transaction.
//! 6. **Name** the target: the intent renamed over the record (one atomic step).
//! 7. **Settle**: the target's `arriving` mark lifted, the record's `memoryMove` removed.
//!
//! Cut before 5, the source is in use and the record names it; the target holds at most a
//! fenced copy (refused; the next move replaces it). Cut after 5, the source refuses every
//! call; the next choice of the agent's binding (`binding::finish_pending_move`) finishes 6 and
//! 7, so the record names the target, which holds everything the source acknowledged.

use crate::binding::{self, Agent, Binding, PgPool};
use crate::bundle::{self, parse_bundle, Bundle, Encoder, Exported, Imported, OnConflict};
use crate::error::{MemoryError, Result};
use crate::model::{check_agent_id, Category, DataPolicy, Entry};
use crate::postgres::moving;
use crate::storage::fence::{self, Fence, FenceState};
use crate::storage::files::Layout;
use crate::storage::store::{AgentStore, IfMissing};
use crate::time::{format_ms, CallTime};
use std::collections::HashMap;

/// What the caller of a move chose.
#[derive(Debug, Clone, Copy)]
pub struct MoveOptions {
    /// Whether `CACHE` entries go too (R-MIG-1: by default they stay behind).
    pub include_cache: bool,
    /// What a key the target holds already does (R-MIG-3).
    pub on_conflict: OnConflict,
}

/// The steps of a move, as the progress callback is told them, each once it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Held,
    Imported,
    Verified,
    Intent,
    Fenced,
    Named,
    Settled,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Held => "held",
            Step::Imported => "imported",
            Step::Verified => "verified",
            Step::Intent => "intent",
            Step::Fenced => "fenced",
            Step::Named => "named",
            Step::Settled => "settled",
        }
    }
}

/// What a move did.
#[derive(Debug, Clone)]
pub struct Moved {
    /// The source and the target, as messages show them (no password).
    pub from: String,
    pub to: String,
    pub move_id: String,
    /// Entries moved, per category.
    pub counts: [(Category, u64); 4],
    /// The target's `entriesSha256` after the move (of its `PREFERENCE`, `PATTERN`, `CONTEXT`
    /// entries, and `CACHE` ones when they went).
    pub entries_sha256: String,
    pub imported: Imported,
    /// Entries of a copy an earlier move had left on the target, replaced.
    pub replaced: u64,
    /// `CACHE` entries left behind on the source.
    pub cache_left: u64,
}

/// Moves the memory of `agent_id` (whose record under `layout` must exist) from the binding
/// R-BIND-1 chooses for it to `to` (a PostgreSQL URL or `sqlite`). `on_step` is told each step
/// once it is done; an error it returns stops the move there (before `Fenced`, nothing is moved).
pub fn migrate_agent_memory(
    layout: &Layout,
    agent_id: &str,
    to: &str,
    options: MoveOptions,
    now: CallTime,
    on_step: &mut dyn FnMut(Step) -> Result<()>,
) -> Result<Moved> {
    check_agent_id(agent_id)?;
    let record = binding::record_path(layout, agent_id);
    let Some(mut intent) = binding::read_json(&record)? else {
        return Err(MemoryError::not_found(format!("agent {agent_id:?} has no record {}: only an agent made by rotifer agent create can move", record.display())));
    };
    let source = Agent::open(layout.clone(), agent_id, None)?;
    let target = Agent::open(layout.clone(), agent_id, Some(to))?;
    if source.shown() == target.shown() {
        return Err(MemoryError::invalid(format!(
            "agent {agent_id:?} keeps its memory on {} already: there is nothing to move",
            source.shown()
        )));
    }
    let move_id = format!("{:x}-{}", now.ms(), crate::storage::store::unique_suffix());
    let plan = Plan {
        layout,
        agent_id,
        from: source.shown(),
        to: target.shown(),
        to_word: to,
        move_id: move_id.clone(),
        at: format_ms(now.ms()),
        given: now.given(),
        options,
    };
    let fields = intent.as_object_mut().ok_or_else(|| {
        MemoryError::storage(format!(
            "{} is not a JSON object; fix the file",
            record.display()
        ))
    })?;
    fields.insert("memoryUrl".into(), to.into());
    fields.insert(
        "memoryMove".into(),
        serde_json::json!({ "move": move_id, "from": plan.from }),
    );
    let carried = match &source.binding {
        Binding::Sqlite => plan.from_sqlite(&target, &intent, now, on_step)?,
        Binding::Postgres(pool) => plan.from_postgres(pool, &target, &intent, on_step)?,
    };
    on_step(Step::Fenced)?;
    plan.name_target()?;
    on_step(Step::Named)?;
    binding::settle_arrival(layout, agent_id, &move_id)?;
    on_step(Step::Settled)?;
    Ok(carried)
}

struct Plan<'a> {
    layout: &'a Layout,
    agent_id: &'a str,
    from: String,
    to: String,
    to_word: &'a str,
    move_id: String,
    at: String,
    /// The test clock's reading, if the caller gave one (R-BIND-5).
    given: Option<i64>,
    options: MoveOptions,
}

impl Plan<'_> {
    fn fence(&self, state: FenceState) -> Fence {
        let binding = match state {
            FenceState::Moved => self.to.clone(),
            FenceState::Arriving => self.from.clone(),
        };
        Fence {
            state,
            binding,
            at: self.at.clone(),
            move_id: self.move_id.clone(),
        }
    }

    /// Steps 1 to 5 from the SQLite file: all within the store's write transaction.
    fn from_sqlite(
        &self,
        target: &Agent,
        intent: &serde_json::Value,
        now: CallTime,
        on_step: &mut dyn FnMut(Step) -> Result<()>,
    ) -> Result<Moved> {
        let db = self.layout.real()?.db_path(self.agent_id);
        let store =
            AgentStore::open(self.layout, self.agent_id, IfMissing::Skip)?.ok_or_else(|| {
                MemoryError::not_found(format!(
                    "agent {:?} has no memory in {}: there is nothing to move",
                    self.agent_id,
                    db.display()
                ))
            })?;
        let mut carried = None;
        let written = store.write(now, |tx| {
            let exported =
                bundle::export_from(tx.conn, self.agent_id, self.options.include_cache, tx.now)?;
            let cache_left = if self.options.include_cache {
                0
            } else {
                count_cache(tx.conn, tx.now)?
            };
            on_step(Step::Held)?;
            let moved = self.carry(
                target,
                &exported,
                (tx.agent.quota, tx.agent.policy),
                tx.now,
                cache_left,
                intent,
                on_step,
            )?;
            fence::write(&db, &self.fence(FenceState::Moved))?;
            tx.batch
                .record_migrate(&self.leaving_reason(&moved), Some(tx.agent.used));
            carried = Some(moved);
            Ok(())
        });
        self.past_commit_point(written, carried, || Ok(fence::read(&db)?))
    }

    /// Steps 1 to 5 from a PostgreSQL server: all within one transaction holding the agent's lock.
    fn from_postgres(
        &self,
        pool: &PgPool,
        target: &Agent,
        intent: &serde_json::Value,
        on_step: &mut dyn FnMut(Step) -> Result<()>,
    ) -> Result<Moved> {
        let mut carried = None;
        let written = pool.with(|c| {
            moving::in_transaction(c, |c| {
                let held = moving::hold(c, self.agent_id, self.given)?;
                let exported = crate::postgres::bundle::export(
                    c,
                    self.agent_id,
                    self.options.include_cache,
                    Some(held.now),
                )?
                .ok_or_else(|| {
                    MemoryError::not_found(format!(
                        "agent {:?} has no memory on {}",
                        self.agent_id, self.from
                    ))
                })?;
                let cache_left = match self.options.include_cache {
                    true => 0,
                    false => {
                        crate::postgres::bundle::export(c, self.agent_id, true, Some(held.now))?
                            .map_or(0, |all| count_of(&all, Category::Cache))
                    }
                };
                on_step(Step::Held)?;
                let moved = self.carry(
                    target,
                    &exported,
                    (held.quota, held.policy),
                    held.now,
                    cache_left,
                    intent,
                    on_step,
                )?;
                moving::mark(
                    c,
                    self.agent_id,
                    &self.fence(FenceState::Moved),
                    &self.leaving_reason(&moved),
                    self.given,
                )?;
                carried = Some(moved);
                Ok(())
            })
        });
        // A COMMIT whose answer was lost: the fence, read again, tells.
        self.past_commit_point(written, carried, || {
            pool.with(|c| moving::fence_of(c, self.agent_id))
        })
    }

    /// The source's transaction ended with `written`: the move is past its commit point if it
    /// committed, or if the fence that `fence_now` reads is this move's (the mark was made, but
    /// the answer of the commit was lost, or a SQLite commit failed after the fence file).
    fn past_commit_point(
        &self,
        written: Result<()>,
        carried: Option<Moved>,
        fence_now: impl FnOnce() -> Result<Option<Fence>>,
    ) -> Result<Moved> {
        match (written, carried) {
            (Ok(()), Some(moved)) => Ok(moved),
            (Err(e), Some(moved)) => match fence_now() {
                Ok(Some(f)) if f.state == FenceState::Moved && f.move_id == self.move_id => {
                    Ok(moved)
                }
                _ => Err(e),
            },
            (Err(e), None) => Err(e),
            (Ok(()), None) => Err(MemoryError::storage(
                "the move's transaction ended without moving anything",
            )),
        }
    }

    /// Steps 2 to 4, while the source is held.
    #[allow(clippy::too_many_arguments)]
    fn carry(
        &self,
        target: &Agent,
        exported: &Exported,
        limits: (u64, DataPolicy),
        at: i64,
        cache_left: u64,
        intent: &serde_json::Value,
        on_step: &mut dyn FnMut(Step) -> Result<()>,
    ) -> Result<Moved> {
        let bundle = parse_bundle(&exported.bytes)?;
        let reason = self.arriving_reason(exported);
        let (imported, replaced) = match &target.binding {
            Binding::Sqlite => self.into_sqlite(&bundle, limits, &reason)?,
            Binding::Postgres(pool) => pool.with(|c| {
                moving::in_transaction(c, |c| {
                    let replaced = moving::arrive(c, self.agent_id, limits.0, limits.1)?;
                    let imported = crate::postgres::bundle::import(
                        c,
                        self.agent_id,
                        &bundle,
                        self.options.on_conflict,
                        self.given,
                    )?;
                    moving::mark(
                        c,
                        self.agent_id,
                        &self.fence(FenceState::Arriving),
                        &reason,
                        self.given,
                    )?;
                    Ok((imported, replaced))
                })
            })?,
        };
        on_step(Step::Imported)?;
        let entries_sha256 = self.verify(target, &bundle, &imported, at)?;
        on_step(Step::Verified)?;
        binding::write_record(&binding::intent_path(self.layout, self.agent_id), intent)?;
        on_step(Step::Intent)?;
        Ok(Moved {
            from: self.from.clone(),
            to: self.to.clone(),
            move_id: self.move_id.clone(),
            counts: exported.counts,
            entries_sha256,
            imported,
            replaced,
            cache_left,
        })
    }

    /// Step 2 into the SQLite file: one write transaction, the `arriving` mark made before it
    /// commits. A copy an earlier move left (fenced) is opened past its fence, and replaced.
    fn into_sqlite(
        &self,
        bundle: &Bundle,
        limits: (u64, DataPolicy),
        reason: &str,
    ) -> Result<(Imported, u64)> {
        let db = self.layout.real()?.db_path(self.agent_id);
        let _pass = fence::Pass::new(&db);
        let left = fence::read(&db)?;
        let store = AgentStore::open(
            self.layout,
            self.agent_id,
            IfMissing::CreateWith(limits.0, limits.1),
        )?
        .ok_or_else(|| MemoryError::storage("memory could not be opened"))?;
        if left.is_some() {
            store.configure(limits.0, limits.1)?;
        }
        let now = self.given.map_or_else(CallTime::system, CallTime::from);
        store.write(now, |tx| {
            let replaced = match left {
                Some(_) => {
                    let n = tx.delete_all_entries()?;
                    tx.set_used(0);
                    n
                }
                None => 0,
            };
            let imported =
                bundle::import_into(tx, self.agent_id, bundle, self.options.on_conflict)?;
            tx.batch.record_migrate(reason, Some(tx.agent.used));
            fence::write(&db, &self.fence(FenceState::Arriving))?;
            Ok((imported, replaced))
        })
    }

    /// Step 3: every entry of the bundle is on the target as the import makes it (`entryId` for
    /// this agent, `lastAccessedBy` its creator); with `onConflict` `skip`, a key the target
    /// kept counts if it is there. Answers the target's `entriesSha256`.
    fn verify(
        &self,
        target: &Agent,
        bundle: &Bundle,
        imported: &Imported,
        at: i64,
    ) -> Result<String> {
        let include_cache = self.options.include_cache;
        let exported = match &target.binding {
            Binding::Sqlite => {
                let db = self.layout.real()?.db_path(self.agent_id);
                let _pass = fence::Pass::new(&db);
                let store = AgentStore::open(self.layout, self.agent_id, IfMissing::Skip)?
                    .ok_or_else(|| {
                        MemoryError::storage(format!("{} is gone after the import", db.display()))
                    })?;
                store.read_only(|conn| {
                    let tx = conn.unchecked_transaction()?;
                    let all = bundle::export_from(&tx, self.agent_id, true, at)?;
                    let shown = bundle::export_from(&tx, self.agent_id, include_cache, at)?;
                    tx.finish()?;
                    Ok((all, shown))
                })?
            }
            Binding::Postgres(pool) => pool
                .with(|c| {
                    // One snapshot, with a move's deadlines: the whole agent is read twice.
                    moving::in_transaction(c, |c| {
                        let all = crate::postgres::bundle::export(c, self.agent_id, true, Some(at))?;
                        let shown = crate::postgres::bundle::export(c, self.agent_id, include_cache, Some(at))?;
                        Ok(all.zip(shown))
                    })
                })?
                .ok_or_else(|| {
                    MemoryError::storage(format!(
                        "agent {:?} is gone from {} after the import",
                        self.agent_id, self.to
                    ))
                })?,
        };
        let (all, shown) = exported;
        let held: HashMap<String, Entry> = parse_bundle(&all.bytes)?
            .entries
            .into_iter()
            .map(|b| (b.entry.key.clone(), b.entry))
            .collect();
        let (mut expected, mut found) = (Encoder::default(), Encoder::default());
        let mut missing = 0u64;
        let mut differs: Option<String> = None;
        for b in &bundle.entries {
            let Some(t) = held.get(&b.entry.key) else {
                missing += 1;
                continue;
            };
            // A bundle carries no entryId and the import resets lastAccessedBy to the creator.
            let e = Entry {
                last_accessed_by: b.entry.created_by.clone(),
                ..b.entry.clone()
            };
            if self.options.on_conflict == OnConflict::Skip && imported.skipped > 0 && t != &e {
                continue; // a key the target kept
            }
            if differs.is_none() && t != &e {
                differs = Some(b.entry.key.clone());
            }
            expected.push(&e, b.creator_domain.as_deref())?;
            found.push(t, b.creator_domain.as_deref())?;
        }
        if missing > 0 || differs.is_some() || expected.entries_sha256() != found.entries_sha256() {
            let what = match &differs {
                Some(key) => format!("{missing} entries missing; key {key:?} differs"),
                None => format!("{missing} entries missing"),
            };
            return Err(MemoryError::storage(format!(
                "the target {} does not hold the bundle as it was sent ({what}); the memory stays on {}, the copy on {} is marked unfinished: run the migrate again",
                self.to, self.from, self.to
            )));
        }
        Ok(header_sha(&shown.bytes))
    }

    /// Step 6: the intent renamed over the record. Already done (by a call that finished the
    /// move) counts.
    fn name_target(&self) -> Result<()> {
        let record = binding::record_path(self.layout, self.agent_id);
        let intent = binding::intent_path(self.layout, self.agent_id);
        match crate::storage::files::rename_durably(&intent, &record) {
            Ok(()) => Ok(()),
            Err(e) => {
                let named = binding::read_json(&record)?.is_some_and(|r| {
                    r.get("memoryUrl").and_then(|u| u.as_str()) == Some(self.to_word)
                        || r.get("memoryMove").is_none()
                });
                if e.kind() == std::io::ErrorKind::NotFound && named {
                    return Ok(());
                }
                Err(MemoryError::storage(format!(
                    "the memory of agent {:?} moved to {}, but its record could not be renamed ({e}): the next call or command on the agent finishes it",
                    self.agent_id, self.to
                )))
            }
        }
    }

    fn leaving_reason(&self, moved: &Moved) -> String {
        let n: u64 = moved.counts.iter().map(|c| c.1).sum();
        format!(
            "the agent's memory moved to {} (move {}): {n} entries, entriesSha256 {}{}",
            self.to,
            self.move_id,
            moved.entries_sha256,
            cache_note(moved.cache_left)
        )
    }

    fn arriving_reason(&self, exported: &Exported) -> String {
        let n: u64 = exported.counts.iter().map(|c| c.1).sum();
        format!(
            "the agent's memory arrived from {} (move {}): {n} entries",
            self.from, self.move_id
        )
    }
}

fn cache_note(left: u64) -> String {
    match left {
        0 => String::new(),
        n => format!("; {n} CACHE entries stayed here"),
    }
}

fn count_of(e: &Exported, category: Category) -> u64 {
    e.counts.iter().find(|c| c.0 == category).map_or(0, |c| c.1)
}

fn count_cache(conn: &rusqlite::Connection, now: i64) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT count(*) FROM entries WHERE category = ?1 AND (expires_at IS NULL OR expires_at > ?2)",
        rusqlite::params![Category::Cache as i64, now],
        |r| r.get::<_, i64>(0),
    )? as u64)
}

/// The `entriesSha256` of a bundle's header line.
fn header_sha(bytes: &[u8]) -> String {
    let header = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<serde_json::Value>(header)
        .ok()
        .and_then(|h| {
            h.get("entriesSha256")
                .and_then(|s| s.as_str())
                .map(str::to_string)
        })
        .unwrap_or_default()
}
