//! The store of one agent (R-HOST-1, R-HOST-5): the process-wide registry of connections, the
//! reads, and the transaction that every changing call runs in, with its checkpoint.
//!
//! - `BEGIN IMMEDIATE` for every call that may change anything, so that two processes wait for
//!   each other instead of failing; its time is taken once the lock is held (R-ENT-4).
//! - The running byte total lives in the `agent` row, so the quota check never scans.

pub use super::files::unique_suffix;
pub use super::rows::{expires_at, load_entry, read_agent, AgentRow, StoredEntry, ENTRY_COLUMNS};
pub use super::schema::SCHEMA_VERSION;
use super::integrity::{DbFile, Look};
use super::lineage::{describe_orphaned, Found, Lineage};
use super::opening::{configure_sqlite, open_connection, open_database_file};
use super::rows::{data_version, next_expiry, MAX_SEQ, EXPIRED_SQL, DELETE_EXPIRED_SQL, LATEST_UPDATE_SQL, LOAD_SQL};
use crate::access::Gene;
use crate::storage::audit::{Action, Actor, AuditBatch, Subject};
use crate::error::{storage, ErrorCode, MemoryError, Result};
use crate::storage::files::Layout;
use crate::model::{Category, DataPolicy};
use crate::quota::DEFAULT_QUOTA;
use crate::time::{CallTime, MS_PER_DAY};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};

/// A commit that leaves the WAL with this many frames checkpoints it, as SQLite's automatic
/// checkpoint (off here: every checkpoint is bracketed by the lineage stamp) would.
const CHECKPOINT_FRAMES: u32 = 1000;


/// One agent's database, shared by every handle of this process (R-HOST-5).
pub struct AgentStore {
    pub agent_id: String,
    pub layout: Layout,
    /// The connection and the descriptor of the file it was checked through; `None` once closed.
    open: Mutex<Option<Open>>,
    /// This database path's place in the registry: closing happens under its lock.
    slot: Arc<Slot>,
}

/// What an open store holds of its database: SQLite's connection, the key lookup prepared on
/// it, and the one plain descriptor of the file that this process keeps (the file checks read
/// through it).
struct Open {
    /// `load_entry`'s statement, prepared once: looking it up in rusqlite's statement cache (by
    /// its SQL text) cost a tenth of a read miss. It borrows `*conn`, which therefore lives on the
    /// heap (it never moves) and is freed only after it (`Drop`).
    load: Option<rusqlite::Statement<'static>>,
    conn: NonNull<Connection>,
    file: DbFile,
    /// The earliest expiry, with the data version it was read at.
    expiry: ExpiryCache,
    /// The latest stored time, with the data version it was read at (`TimeFloor`).
    floor: TimeFloor,
    /// A test memory's (`make_throwaway`): closed without a checkpoint, its files about to go.
    throwaway: bool,
}

// SAFETY: the connection and its statement are used only under the store's lock, by one thread
// at a time, as SQLite's multi-thread mode (SQLITE_OPEN_NO_MUTEX) allows; `Connection` itself
// is `Send`, and the statement is the only thing that keeps a reference to it.
unsafe impl Send for Open {}

/// One database path in the registry. POSIX locks belong to the process, not to a descriptor:
/// closing *any* descriptor of a file drops every lock this process holds on it, SQLite's
/// included. Another process would then take this process for gone, checkpoint, and delete the
/// `-wal` under it: acknowledged writes lost. So, per path, one thread at a time opens (from the
/// first look at the file to registration), at most one connection and one descriptor exist,
/// and none is closed while another is open: an opener that finds a store being dropped waits
/// for its descriptors to close first.
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
    closed: Condvar,
}

#[derive(Default)]
struct SlotState {
    store: Weak<AgentStore>,
    /// A connection and descriptor of this path exist (perhaps of a store being dropped).
    open: bool,
}

type Registry = Mutex<HashMap<PathBuf, Arc<Slot>>>;

/// The slot of `path`, made if there is none. Slots nobody holds (no store, no opener) go.
fn slot_of(path: &Path) -> Arc<Slot> {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    let mut reg = lock(REGISTRY.get_or_init(|| Mutex::new(HashMap::new())));
    // A slot is held by its store and by openers, who take it only under this lock: a slot
    // with no other holder now can have none later, so dropping it loses nothing.
    reg.retain(|_, slot| Arc::strong_count(slot) > 1);
    reg.entry(path.to_path_buf()).or_default().clone()
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock unwound through a rusqlite Transaction, which rolled back:
    // the connection is consistent, so poisoning carries no information here.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How `open` treats an agent whose database does not exist yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfMissing {
    /// Create it with the default quota and data policy (R-QUO-1).
    Create,
    /// Create it with this quota and data policy: it never exists with other limits, not even
    /// for a moment (R-HOST-1). An existing database keeps its own.
    CreateWith(u64, DataPolicy),
    /// Answer `None`: the deployer's list and delete never create memory.
    Skip,
}

impl AgentStore {
    /// The store of `agent_id` under `layout`, shared with other handles of this process.
    ///
    /// The order is what keeps this process's locks (see `Slot`): take the path's slot; reuse
    /// its store if open, or wait until a store being dropped has closed its descriptors; only
    /// then look at the file, open the one descriptor that the store keeps (the header check
    /// reads through it), open SQLite, and register, all under the slot's lock. A failed open
    /// closes its connection before its descriptor, and no other connection can exist then.
    pub fn open(layout: &Layout, agent_id: &str, if_missing: IfMissing) -> Result<Option<Arc<AgentStore>>> {
        crate::model::check_agent_id(agent_id)?;
        configure_sqlite();
        let layout = layout.real()?;
        let path = layout.db_path(agent_id);
        let slot = slot_of(&path);
        let mut state = lock(&slot.state);
        loop {
            if let Some(store) = state.store.upgrade().filter(|s| s.is_open()) {
                return Ok(Some(store));
            }
            if !state.open {
                break;
            }
            // The last handle of the previous store is dropping it: its descriptors close first.
            state = slot.closed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if if_missing == IfMissing::Skip {
            // Only a database that is not there is "never created": a file in place of the
            // memory folder is a storage error, reported by `ensure_dirs`.
            if let Err(e) = std::fs::symlink_metadata(&path) {
                if e.kind() == std::io::ErrorKind::NotFound {
                    return Ok(None);
                }
            }
        }
        layout.ensure_dirs(true)?;
        let limits = match if_missing {
            IfMissing::CreateWith(quota, policy) => Some((quota, policy)),
            IfMissing::Create => Some((DEFAULT_QUOTA, DataPolicy::default())),
            IfMissing::Skip => None,
        };
        crate::storage::integrity::refuse_untrusted_database_files(&path)?;
        // The file first, then SQLite: `opened` checks that both are the same file.
        let Some(mut file) = open_database_file(&path, agent_id, limits)? else {
            return Ok(None); // deleted since the look above: Skip never creates one
        };
        // Before SQLite reads the WAL: is it this file's? (R-HOST-1b) SQLite may write the file
        // as it opens it (a database in another journal mode switched to WAL, which may wait
        // for other processes): then the stamp is made to name the file as the open left it,
        // without holding it meanwhile.
        let found = Lineage::lock(&path)?.judge_at_open()?;
        let before = std::fs::symlink_metadata(&path).ok().map(|m| (m.ino(), m.mtime(), m.mtime_nsec(), m.len()));
        let conn = open_connection(&path)?;
        let after = std::fs::symlink_metadata(&path).ok().map(|m| (m.ino(), m.mtime(), m.mtime_nsec(), m.len()));
        if after != before {
            if let Err(e) = Lineage::lock(&path).and_then(|l| l.stamp_now()) {
                let _ = conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
                drop(conn); // before the descriptor
                return Err(e);
            }
        }
        if let Err(e) = file.opened(&layout.root, &conn) {
            // Closing would checkpoint the WAL into whatever is at the path now: keep the WAL.
            let _ = conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
            drop(conn); // before the descriptor
            return Err(e);
        }
        let store = Arc::new(AgentStore {
            agent_id: agent_id.to_string(),
            layout,
            open: Mutex::new(Some(Open::new(conn, file))),
            slot: slot.clone(),
        });
        state.store = Arc::downgrade(&store);
        state.open = true;
        drop(state);
        if let Found::Replaced { orphaned } = found {
            store.record_replaced(&orphaned)?;
        }
        Ok(Some(store))
    }

    /// A database found at open not to be the file its last checkpoint left (R-HOST-1b): said
    /// on stderr and in the audit log (`memory.restore`, actor null), and the sequence number
    /// moved past every transaction the log names for the agent, so that the changes made
    /// before the restore keep telling committed from not (R-AUD-6).
    fn record_replaced(&self, orphaned: &[PathBuf]) -> Result<()> {
        let path = self.layout.db_path(&self.agent_id);
        let what = describe_orphaned(&path, orphaned);
        eprintln!("rotifer-memory: warning: {what}");
        let logged = crate::storage::audit::latest_tx(&self.layout, &self.agent_id);
        self.write(CallTime::system(), |tx| {
            tx.raise_seq(logged.unwrap_or(0));
            let seq = tx.next_seq();
            let used = tx.agent.used;
            tx.batch.record_restore(Actor::System, &what, Some(used), Some(seq));
            Ok(())
        })
    }

    fn is_open(&self) -> bool {
        lock(&self.open).is_some()
    }

    /// Closes the connection, then the descriptor; later calls on this store fail with
    /// `MEMORY_STORAGE_ERROR`. Under the slot's lock, so that no opener of the path runs meanwhile.
    pub fn close(&self) {
        let mut state = lock(&self.slot.state);
        if let Some(open) = lock(&self.open).take() {
            drop(open); // `Open::drop`: the connection, then the descriptor
            state.open = false;
            self.slot.closed.notify_all();
        }
    }

    /// Makes this store a test memory's (R-HOST-4): its connection never syncs (`synchronous =
    /// OFF`: a crash loses a memory that is deleted anyway, and nothing waits for the disk) and
    /// its close writes nothing back (the folder is deleted next). Other processes that open the
    /// same file keep their own settings.
    pub fn make_throwaway(&self) -> Result<()> {
        let mut open = lock(&self.open);
        let open = open.as_mut().ok_or_else(|| MemoryError::storage("this memory was closed"))?;
        open.conn().execute_batch("PRAGMA synchronous = OFF")?;
        open.throwaway = true;
        Ok(())
    }

    /// The open connection, after the file checks (`DbFile::check_if_changed`).
    fn conn(&self, look: Look) -> Result<OpenGuard<'_>> {
        let guard = self.open_guard()?;
        guard.look(look)?;
        Ok(guard)
    }

    /// The open connection, before any file check: for a changing call, which looks once it
    /// holds the write lock (`OpenGuard::look`).
    fn open_guard(&self) -> Result<OpenGuard<'_>> {
        let guard = lock(&self.open);
        if guard.is_none() {
            return Err(MemoryError::storage("this memory was closed (a disposed test memory?); open a new one"));
        }
        Ok(OpenGuard(guard))
    }

    /// Runs `f` without a write lock, for calls that may turn out to change nothing: `f` reads
    /// in ONE statement, and answers, or asks for the write path. Its answer stands only if
    /// nothing had expired in the snapshot that statement read (R-RET-4); otherwise (or if that
    /// cannot be told) the caller takes the write path, which purges first.
    ///
    /// `look`: how fresh the look for changes to the database file must be (`Look`); a read never
    /// writes, so it may rely on a recent one.
    pub fn read<T>(&self, now: &CallTime, look: Look, f: impl FnOnce(&mut Reader<'_>) -> Result<Fast<T>>) -> Result<Fast<T>> {
        let mut guard = self.conn(look)?;
        let result = (|| {
            let mut reader = guard.open().reader();
            let answer = f(&mut reader)?;
            let (conn, expiry) = (reader.conn, reader.expiry);
            #[cfg(test)]
            tests::between_statements();
            match answer {
                Fast::Answer(answer) => match expiry.after_last_statement(conn, now)? {
                    Expiry::NoneDue => Ok(Fast::Answer(answer)),
                    Expiry::Due | Expiry::Changed => Ok(Fast::WritePath),
                },
                Fast::WritePath => Ok(Fast::WritePath),
            }
        })();
        guard.finish(result)
    }

    /// Runs `f` on the connection as it is: no write lock, no purge, no expiry judged. For the
    /// deployer's reads, which leave expired entries out themselves and change nothing.
    pub fn read_only<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let guard = self.conn(Look::Now)?;
        let result = f(guard.conn());
        guard.finish(result)
    }

    /// Runs one changing call: `BEGIN IMMEDIATE`, purge of expired entries (R-RET-4), `f`,
    /// then the audit lines (write-ahead, R-AUD-2), then `COMMIT`.
    ///
    /// A business error from `f` (denied, not found, quota, invalid) still commits the purge and
    /// writes its own audit lines, since `f` changes nothing before it has decided. A storage
    /// error, or an audit log that cannot be written, rolls everything back.
    ///
    /// The call's time is taken once the write lock is held (R-ENT-4): the system clock is read
    /// then. The time an entry is stored with is also floored at the latest time stored when the
    /// call began, so that a clock stepped back never makes a write older than one it follows
    /// (`TimeFloor`, `Tx::entry_time`).
    pub fn write<T>(&self, now: impl Into<CallTime>, f: impl FnOnce(&mut Tx<'_, '_>) -> Result<T>) -> Result<T> {
        let guard = self.open_guard()?;
        let result = self.write_in(&guard, &now.into(), f);
        guard.finish(result)
    }

    fn write_in<T>(&self, guard: &OpenGuard<'_>, now: &CallTime, f: impl FnOnce(&mut Tx<'_, '_>) -> Result<T>) -> Result<T> {
        let tx = Transaction::new_unchecked(guard.conn(), TransactionBehavior::Immediate)?;
        // The look comes once the write lock is held: `BEGIN IMMEDIATE` may wait (another
        // process writing) while the file is restored in place, and the commit may checkpoint.
        guard.look(Look::Now)?;
        let now = now.under_lock();
        let floor = guard.floor().latest(&tx)?;
        let agent = read_agent(&tx)?;
        if !(0..MAX_SEQ).contains(&agent.last_seq) {
            // Never reached by writes (2^53 of them); a database edited by hand can hold it.
            return Err(storage(
                &self.layout.db_path(&self.agent_id),
                format!("numbers its changes up to {}, outside 0 to {MAX_SEQ}: it was edited or damaged, and no more change can be numbered. Nothing was changed: restore it from a backup", agent.last_seq),
            ));
        }
        // The changes' lines name the sequence number this transaction commits (R-AUD-6).
        let tx_seq = agent.last_seq + 1;
        let mut batch = AuditBatch::new(&self.agent_id, now).after_a_look().in_transaction(tx_seq);
        let entry_time = now.max(floor.unwrap_or(i64::MIN));
        let mut t = Tx { conn: &tx, batch: &mut batch, agent, now, entry_time, agent_changed: false, expiry: guard.expiry(), latest_written: None, deleted: false };
        t.purge_expired()?;
        let result = f(&mut t);
        if let Err(e) = &result {
            if e.code == ErrorCode::StorageError {
                return result; // the transaction rolls back on drop
            }
        }
        if t.batch.has_changes() && t.agent.last_seq < tx_seq {
            t.next_seq(); // an expiry purge or a deletion alone: still a transaction to tell apart
        }
        if t.agent_changed {
            let a = t.agent;
            tx.prepare_cached("UPDATE agent SET used_bytes = ?1, last_seq = ?2 WHERE id = 1")?
                .execute(params![a.used as i64, a.last_seq])?;
        }
        let (latest_written, deleted) = (t.latest_written, t.deleted);
        batch.flush_audit(&self.layout)?;
        tx.commit()?;
        guard.committed();
        guard.floor().committed(guard.conn(), floor, latest_written, deleted);
        batch.flush_telemetry(&self.layout);
        result
    }

    /// Sets quota and data policy (R-POL-3), recomputing when entries that follow the agent's
    /// retention expire.
    pub fn configure(&self, quota: u64, policy: DataPolicy) -> Result<()> {
        let guard = self.open_guard()?;
        let result = Self::configure_in(&guard, quota, policy);
        guard.finish(result)
    }

    fn configure_in(guard: &OpenGuard<'_>, quota: u64, policy: DataPolicy) -> Result<()> {
        let tx = Transaction::new_unchecked(guard.conn(), TransactionBehavior::Immediate)?;
        guard.look(Look::Now)?; // under the write lock, as in `write`
        tx.execute(
            "UPDATE agent SET quota = ?1, anonymization_supported = ?2, max_retention_days = ?3 WHERE id = 1",
            params![quota as i64, policy.anonymization_supported, policy.max_retention_days],
        )?;
        tx.execute(
            "UPDATE entries SET expires_at = CASE WHEN ?1 IS NULL THEN NULL ELSE updated_at + ?1 * ?2 END WHERE ret_set = 0",
            params![policy.max_retention_days, MS_PER_DAY],
        )?;
        tx.commit()?;
        guard.committed();
        Ok(())
    }

    pub fn agent_row(&self) -> Result<AgentRow> {
        let guard = self.conn(Look::Now)?;
        let result = read_agent(guard.conn());
        guard.finish(result)
    }
}

impl Drop for AgentStore {
    fn drop(&mut self) {
        // A closed store holds no descriptor: nothing to do, and no lock to take (an opener may
        // hold the slot's lock while it lets go of a closed store).
        if self.open.get_mut().unwrap_or_else(|e| e.into_inner()).is_some() {
            self.close();
        }
    }
}

impl Open {
    fn new(conn: Connection, file: DbFile) -> Open {
        let conn = NonNull::from(Box::leak(Box::new(conn)));
        // SAFETY: the connection is freed only in `drop`, after the statement.
        let load = unsafe { conn.as_ref() }.prepare(LOAD_SQL).ok();
        Open { load, conn, file, expiry: ExpiryCache::default(), floor: TimeFloor::default(), throwaway: false }
    }

    fn conn(&self) -> &Connection {
        // SAFETY: allocated in `new`, freed only in `drop`.
        unsafe { self.conn.as_ref() }
    }

    fn reader(&mut self) -> Reader<'_> {
        // SAFETY: as in `conn`; the reference is not derived from `self`, so the statement can be
        // lent mutably beside it.
        let conn: &Connection = unsafe { &*self.conn.as_ptr() };
        Reader { conn, load: self.load.as_mut(), expiry: &self.expiry }
    }
}

impl Drop for Open {
    /// The statement, then the connection, then the descriptor: closing the descriptor while the
    /// connection is open would drop its locks. A database changed under the process since its
    /// last call (restored in place, say) must not get the WAL checkpointed into it by the close.
    fn drop(&mut self) {
        self.load = None;
        // SAFETY: allocated in `new`; the statement that borrowed it is gone, and `self.conn` is
        // not used again.
        let conn = unsafe { Box::from_raw(self.conn.as_ptr()) };
        let keep_wal = || {
            let _ = conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
        };
        if self.throwaway {
            // Its folder is deleted next: nothing to make durable or consistent.
            keep_wal();
            let _ = conn.close();
            return;
        }
        if self.file.check_if_changed(&conn, Look::Now).is_err() {
            keep_wal();
            if self.file.replaced() {
                let _ = orphan_wal(&self.file);
            }
            let _ = conn.close();
            return;
        }
        // The last connection's close checkpoints the WAL into the file: only into the file the
        // lineage stamp names, and bracketed by it (R-HOST-1b).
        let lineage = Lineage::lock(self.file.path()).ok();
        match lineage.as_ref().map(Lineage::begin_checkpoint) {
            Some(Ok(true)) => {
                let _ = conn.close();
                let _ = lineage.as_ref().map(Lineage::end_checkpoint);
            }
            _ => {
                keep_wal();
                let _ = conn.close();
            }
        }
        // `file` is dropped after this.
    }
}

/// What a read's closure gets (`AgentStore::read`): the connection, and the key lookup.
pub struct Reader<'a> {
    pub conn: &'a Connection,
    load: Option<&'a mut rusqlite::Statement<'static>>,
    expiry: &'a ExpiryCache,
}

impl Reader<'_> {
    /// `load_entry`, through the statement prepared once per connection.
    pub fn load_entry(&mut self, key: &str) -> Result<Option<StoredEntry>> {
        match self.load.as_deref_mut() {
            Some(stmt) => Ok(stmt.query_row([key.as_bytes()], StoredEntry::from_row).optional()?),
            None => load_entry(self.conn, key),
        }
    }
}

/// The lock on an open store's connection, held for one call.
struct OpenGuard<'a>(MutexGuard<'a, Option<Open>>);

impl OpenGuard<'_> {
    fn conn(&self) -> &Connection {
        self.0.as_ref().expect("checked by AgentStore::conn").conn()
    }
    fn expiry(&self) -> &ExpiryCache {
        &self.0.as_ref().expect("checked by AgentStore::conn").expiry
    }
    fn floor(&self) -> &TimeFloor {
        &self.0.as_ref().expect("checked by AgentStore::conn").floor
    }
    fn open(&mut self) -> &mut Open {
        self.0.as_mut().expect("checked by AgentStore::conn")
    }
    fn committed(&self) {
        let open = self.0.as_ref().expect("checked by AgentStore::conn");
        open.file.committed(open.conn());
        if crate::storage::integrity::wal_frames(open.conn()).is_some_and(|n| n >= CHECKPOINT_FRAMES) {
            checkpoint(&open.file, open.conn());
        }
    }
    /// The end of a call on the connection. A SQLite failure names the database file. A
    /// database SQLite found damaged is left as it is: closing must not checkpoint the WAL into
    /// it (the WAL may hold the only good copy of pages the file lacks).
    ///
    /// A database found replaced (a backup copied or moved over it) gets its WAL, written against
    /// the file that was replaced, moved aside here, once the call's transaction is over, and
    /// the error says where (R-HOST-1b).
    fn finish<T>(&self, result: Result<T>) -> Result<T> {
        result.map_err(|e| {
            if e.damaged {
                let _ = self.conn().set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
            }
            let open = self.open_ref();
            let e = match e.code == ErrorCode::StorageError && open.file.replaced() {
                true => match orphan_wal(&open.file) {
                    Ok(moved) if !moved.is_empty() => {
                        MemoryError { message: format!("{}. {}", e.message, describe_orphaned(open.file.path(), &moved)), ..e }
                    }
                    _ => e,
                },
                false => e,
            };
            match e.message.strip_prefix(crate::error::SQLITE_FAILED) {
                Some(what) => MemoryError { damaged: e.damaged, ..storage(self.open_ref().file.path(), what) },
                None => e,
            }
        })
    }
    /// The file checks (`DbFile::check_if_changed`). A database found changed is left as it
    /// is: closing would checkpoint the WAL into whatever is at the path now.
    fn look(&self, look: Look) -> Result<()> {
        let open = self.open_ref();
        open.file.check_if_changed(open.conn(), look).inspect_err(|_| {
            let _ = open.conn().set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
        })
    }
    fn open_ref(&self) -> &Open {
        self.0.as_ref().expect("checked by AgentStore::conn")
    }
}

/// The answer of a read-only fast path, or the need to take the write path after all.
#[derive(Debug)]
pub enum Fast<T> {
    Answer(T),
    WritePath,
}

/// What the earliest expiry says about one snapshot of the database (R-RET-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// No entry had expired by the call's time.
    NoneDue,
    /// Some entry had: purge before answering.
    Due,
    /// Another connection committed between the statement and this look: no answer.
    Changed,
}

/// The earliest expiry, with the data version of the database it was read at: calls that find
/// the database unchanged skip the `MIN(expires_at)` lookup. The one place that decides whether
/// something has expired, for the fast paths and the purge alike. Kept with the connection, and
/// so under the store's lock: it needs no lock of its own.
#[derive(Default)]
pub struct ExpiryCache(std::cell::Cell<Option<(u32, Option<i64>)>>);

impl ExpiryCache {
    /// Whether an entry had expired by `now` in the snapshot that the last statement on `conn`
    /// read. Call it right after that statement, or inside the transaction it ran in: SQLite's
    /// data version, which counts every commit of any connection or process, tells whether the
    /// cached value, or the lookup made now, belongs to that snapshot.
    pub fn after_last_statement(&self, conn: &Connection, now: &CallTime) -> Result<Expiry> {
        let version = data_version(conn)?;
        let next = match self.0.get() {
            Some((v, next)) if v == version => next,
            _ => {
                let next = next_expiry(conn)?;
                if data_version(conn)? != version {
                    return Ok(Expiry::Changed);
                }
                self.0.set(Some((version, next)));
                next
            }
        };
        Ok(if next.is_some_and(|t| t <= now.ms()) { Expiry::Due } else { Expiry::NoneDue })
    }
}

/// Moves this store's WAL and `-shm` aside (only if they are still the ones it opened): the
/// database was replaced, and no later open may replay them over the file now in place.
fn orphan_wal(file: &DbFile) -> Result<Vec<PathBuf>> {
    let moved = Lineage::lock(file.path())?.move_aside(Some(file.companions()))?;
    file.mark_replaced();
    Ok(moved)
}

/// A checkpoint after a commit, as SQLite's automatic one would make, but only into the file
/// the lineage stamp names (R-HOST-1b). Best effort: the commit stands whatever happens here,
/// and a WAL left unchecked is safe. A database found replaced fails every later call.
fn checkpoint(file: &DbFile, conn: &Connection) {
    let Ok(lineage) = Lineage::lock(file.path()) else { return };
    match lineage.begin_checkpoint() {
        Ok(true) => {
            let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            file.checkpointed(conn, &lineage);
            let _ = lineage.end_checkpoint();
        }
        Ok(false) => file.mark_replaced(),
        Err(_) => {}
    }
}

/// The latest `updated_at` of the live entries (R-ENT-4), with the data version it was read at:
/// a write stores at least this time, so that stored times follow the order of commits even
/// when the clock steps back, and "newest first", eviction order (a rewrite counts as new) and
/// `since` agree with that order. A process that writes in a row reads it once: its own
/// commits keep it current, except a deletion, after which it is read again.
#[derive(Default)]
pub struct TimeFloor(std::cell::Cell<Option<(u32, Option<i64>)>>);

impl TimeFloor {
    /// The latest time stored, inside the write transaction (no commit can come between).
    fn latest(&self, conn: &Connection) -> Result<Option<i64>> {
        let version = data_version(conn)?;
        if let Some((v, latest)) = self.0.get() {
            if v == version {
                return Ok(latest);
            }
        }
        let latest: Option<i64> = conn.prepare_cached(LATEST_UPDATE_SQL)?.query_row([], |r| r.get(0))?;
        self.0.set(Some((version, latest)));
        Ok(latest)
    }

    /// After this connection's commit: the latest time is the one before it or the latest this
    /// commit wrote, unless it deleted an entry (which may have held the latest time).
    fn committed(&self, conn: &Connection, before: Option<i64>, written: Option<i64>, deleted: bool) {
        let known = if deleted { None } else { data_version(conn).ok().map(|v| (v, before.max(written))) };
        self.0.set(known);
    }
}

/// A changing call in progress: the transaction, the audit lines it will write, and the agent
/// row it will store.
pub struct Tx<'c, 'b> {
    pub conn: &'c Connection,
    pub batch: &'c mut AuditBatch<'b>,
    pub agent: AgentRow,
    /// The call's time, taken under the write lock (R-ENT-4): expiry, audit lines.
    pub now: i64,
    /// The time a write stores: `now`, floored at the latest `updated_at` of the entries when
    /// the call began (R-ENT-4, `TimeFloor`).
    pub entry_time: i64,
    agent_changed: bool,
    expiry: &'c ExpiryCache,
    /// The latest `updated_at` this transaction stored.
    latest_written: Option<i64>,
    /// Whether this transaction deleted an entry.
    deleted: bool,
}

impl Tx<'_, '_> {
    /// R-RET-4: deletes every expired entry, with an audit line each.
    fn purge_expired(&mut self) -> Result<()> {
        // Inside the write transaction: no other commit can come between.
        if self.expiry.after_last_statement(self.conn, &CallTime::from(self.now))? != Expiry::Due {
            return Ok(());
        }
        let mut stmt = self
            .conn
            .prepare_cached(EXPIRED_SQL)?;
        let expired: Vec<(Vec<u8>, i64, i64)> =
            stmt.query_map([self.now], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<rusqlite::Result<_>>()?;
        for (key, category, size) in &expired {
            let key = String::from_utf8_lossy(key);
            self.batch.record(
                Action::Expire,
                Actor::System,
                Subject { key: Some(&key), category: Category::from_i64(*category), size: Some(*size as u64) },
                None,
            );
        }
        self.conn.prepare_cached(DELETE_EXPIRED_SQL)?.execute([self.now])?;
        self.deleted = true;
        let freed: i64 = expired.iter().map(|e| e.2).sum();
        self.set_used(self.agent.used.saturating_sub(freed as u64));
        Ok(())
    }

    pub fn set_used(&mut self, used: u64) {
        self.agent.used = used;
        self.agent_changed = true;
    }

    /// Moves the sequence number to at least `seq` (a restore: never back to numbers in use).
    pub fn raise_seq(&mut self, seq: i64) {
        if self.agent.last_seq < seq {
            self.agent.last_seq = seq;
            self.agent_changed = true;
        }
    }

    pub fn next_seq(&mut self) -> i64 {
        self.agent.last_seq += 1;
        self.agent_changed = true;
        self.agent.last_seq
    }

    /// Deletes every entry (a restore replaces them all).
    pub fn delete_all_entries(&mut self) -> Result<u64> {
        self.deleted = true;
        Ok(self.conn.prepare_cached("DELETE FROM entries")?.execute([])? as u64)
    }

    pub fn delete_entry(&mut self, key: &str) -> Result<()> {
        self.deleted = true;
        self.conn.prepare_cached("DELETE FROM entries WHERE key = ?1")?.execute([key.as_bytes()])?;
        Ok(())
    }

    /// Inserts or replaces the row of `e` (found by key).
    pub fn put_entry(&mut self, e: &StoredEntry, exists: bool) -> Result<()> {
        self.latest_written = self.latest_written.max(Some(e.entry.updated_at));
        write_entry_row(self.conn, e, &self.agent.policy, exists)
    }

    pub fn touch(&mut self, key: &str, gene: &Gene) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE entries SET last_accessed_by = ?2 WHERE key = ?1")?
            .execute(params![key.as_bytes(), gene.id])?;
        Ok(())
    }
}

/// Inserts (or, `exists`, replaces) the row of `e` in the `entries` of `conn`, its expiry from
/// its retention or `policy`: the one statement every writer of rows uses, a backup's too.
pub(crate) fn write_entry_row(conn: &Connection, e: &StoredEntry, policy: &DataPolicy, exists: bool) -> Result<()> {
    let en = &e.entry;
    let r = en.retention_policy;
    let expires = expires_at(en.updated_at, r.as_ref(), policy);
    // An entry that does not expire, before and after, costs the expiry index nothing:
    // it is partial (`expires_at IS NOT NULL`), so NULL to NULL touches no index page.
    let sql = if exists {
        "UPDATE entries SET entry_id = ?2, category = ?3, value = ?4, size = ?5, created_by = ?6, creator_domain = ?7, \
         last_accessed_by = ?8, created_at = ?9, updated_at = ?10, seq = ?11, read_scope = ?12, write_scope = ?13, \
         share_policy = ?14, ret_set = ?15, ret_days = ?16, ret_auto_delete = ?17, ret_anonymization = ?18, \
         expires_at = ?19 WHERE key = ?1"
    } else {
        "INSERT INTO entries (key, entry_id, category, value, size, created_by, creator_domain, last_accessed_by, \
         created_at, updated_at, seq, read_scope, write_scope, share_policy, ret_set, ret_days, ret_auto_delete, \
         ret_anonymization, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
    };
    conn.prepare_cached(sql)?.execute(params![
        en.key.as_bytes(),
        en.entry_id,
        en.category as i64,
        en.value,
        e.size as i64,
        en.created_by,
        e.creator_domain,
        en.last_accessed_by,
        en.created_at,
        en.updated_at,
        e.seq,
        en.access_policy.read_scope as i64,
        en.access_policy.write_scope as i64,
        en.access_policy.share_policy as i64,
        r.is_some(),
        r.and_then(|r| r.max_retention_days),
        r.is_some_and(|r| r.auto_delete_on_termination),
        r.is_some_and(|r| r.anonymization_supported),
        expires,
    ])?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    //! The fast paths against a commit that lands between their two statements (R-RET-4).

    use super::*;
    use crate::storage::opening::BUSY_TIMEOUT;
    use crate::storage::schema::expected_schema;
    use crate::{list_agent_memory, Arg, GeneMemory, GeneOptions};
    use std::cell::RefCell;

    thread_local! {
        static HOOK: RefCell<Option<Box<dyn FnOnce()>>> = RefCell::new(None);
    }

    /// Runs the hook set for this thread, once: in `AgentStore::read`, between the statement
    /// that read the answer and the look at the earliest expiry.
    pub(super) fn between_statements() {
        if let Some(hook) = HOOK.with(|h| h.borrow_mut().take()) {
            hook();
        }
    }

    const T0: i64 = 1_796_000_000_000;
    const DAY: i64 = 86_400_000;

    /// A temporary project root, removed on drop.
    pub(crate) struct TempRoot(pub PathBuf);
    impl TempRoot {
        pub(crate) fn new() -> TempRoot {
            let p = std::env::temp_dir().join(format!("rotifer-core-test-{}", unique_suffix()));
            std::fs::create_dir(&p).unwrap();
            TempRoot(std::fs::canonicalize(p).unwrap())
        }
    }
    impl Drop for TempRoot {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn gene_id(c: char) -> String {
        format!("v2:{}", c.to_string().repeat(64))
    }

    /// An agent with entry `old` (no retention: it never expires), and a hook that, from another
    /// connection, makes `old` expire at T0 + 1 day and adds `new`: as a deployer shortening
    /// retention and a writer of another process would, in one commit.
    fn race(root: &Path) -> (Layout, GeneMemory) {
        let layout = Layout::at(root);
        crate::create_agent_memory(&layout, "a", DEFAULT_QUOTA, DataPolicy::default()).unwrap();
        let opts = GeneOptions { agent_id: Some("a".into()), gene_id: Some(gene_id('a')), domain: None, root: Some(root.to_string_lossy().into()), url: None };
        let m = GeneMemory::open(opts).unwrap();
        m.write(&Arg::Str("old".into()), Arg::Bytes(vec![1; 8]), &Arg::Str("CACHE".into()), &Arg::Undefined, &Arg::Undefined, T0).unwrap();
        let db = layout.real().unwrap().db_path("a");
        HOOK.with(|h| {
            *h.borrow_mut() = Some(Box::new(move || {
                let other = Connection::open(&db).unwrap();
                other.busy_timeout(BUSY_TIMEOUT).unwrap();
                other
                    .execute_batch(&format!(
                        "BEGIN IMMEDIATE;
                         UPDATE agent SET max_retention_days = 1;
                         UPDATE entries SET expires_at = updated_at + {DAY} WHERE ret_set = 0;
                         INSERT INTO entries SELECT CAST('new' AS BLOB), 'id-new', category, value, size, created_by, creator_domain,
                           last_accessed_by, created_at, {t}, seq + 1, read_scope, write_scope, share_policy, 0, NULL, 0, 0, {t} + {DAY}
                           FROM entries WHERE key = CAST('old' AS BLOB);
                         COMMIT;",
                        t = T0 + 2 * DAY
                    ))
                    .unwrap();
            }))
        });
        (layout, m)
    }

    /// `old` expired by the new retention and `new` was written after it: no snapshot holds both
    /// as live at T0 + 2 days. Before, the fast path read the expiry in one snapshot and the rows
    /// in the next, and answered both.
    fn one_snapshot(keys: &[String]) {
        assert!(!(keys.contains(&"old".to_string()) && keys.contains(&"new".to_string())), "one snapshot: {keys:?}");
        if !keys.contains(&"old".to_string()) {
            assert_eq!(keys, ["new"], "the expired entry was purged, the new one is there");
        }
    }

    #[test]
    fn list_reads_expiry_and_rows_in_one_snapshot() {
        let dir = TempRoot::new();
        let (layout, _m) = race(&dir.0);
        let keys: Vec<String> = list_agent_memory(&layout, "a", None, T0 + 2 * DAY).unwrap().into_iter().map(|l| l.key).collect();
        HOOK.with(|h| assert!(h.borrow().is_none(), "the commit landed between the statements"));
        one_snapshot(&keys);
    }

    #[test]
    fn query_reads_expiry_and_rows_in_one_snapshot() {
        let dir = TempRoot::new();
        let (_layout, m) = race(&dir.0);
        let keys: Vec<String> = m.query(&Arg::Undefined, T0 + 2 * DAY).unwrap().into_iter().map(|e| e.key).collect();
        HOOK.with(|h| assert!(h.borrow().is_none(), "the commit landed between the statements"));
        one_snapshot(&keys);
    }

    // Hardened connections and the schema check (R-HOST-1).

    #[test]
    fn every_connection_distrusts_the_schema_and_is_defensive() {
        let tm = crate::TestMemory::create(1024, DataPolicy::default()).unwrap();
        let store = AgentStore::open(&Layout::at(tm.root()), crate::memory::TEST_AGENT_ID, IfMissing::Skip).unwrap().unwrap();
        store
            .read_only(|conn| {
                let trusted: i64 = conn.query_row("PRAGMA trusted_schema", [], |r| r.get(0))?;
                assert_eq!(trusted, 0);
                assert!(conn.db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE)?);
                // Defensive mode: the schema cannot be edited by writing sqlite_master.
                conn.execute_batch("PRAGMA writable_schema = ON")?;
                assert!(conn.execute("UPDATE sqlite_master SET sql = sql WHERE name = 'entries'", []).is_err());
                Ok(Some(()))
            })
            .unwrap();
        tm.dispose();
    }

    #[test]
    fn the_expected_schema_is_read_from_schema_itself() {
        let names: Vec<&str> = expected_schema().iter().map(|o| o.1.as_str()).collect();
        for name in ["agent", "entries", "entries_by_category", "entries_by_expiry"] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
    }
}
