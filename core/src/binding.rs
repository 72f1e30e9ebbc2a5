//! Where an agent's memory lives (R-BIND-1): the SQLite file of R-HOST-1, or a PostgreSQL
//! database the deployer runs. The choice, and this process's connections to each URL.
//!
//! Every call and deployer function opens an [`Agent`] and dispatches on its [`Binding`]: the
//! contract's validation and messages stay one implementation above, the storage below is
//! `storage/` (SQLite) or `postgres/`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{MemoryError, Result};
use crate::postgres::client::{is_postgres_url, Connection, Timeouts};
use crate::storage::fence::{self, FenceState};
use crate::storage::files::{rename_durably, replace_file_durably, Layout};

/// The word that names the SQLite file where a URL is expected (`--to sqlite`, the agent
/// record after a move back).
pub const SQLITE: &str = "sqlite";

/// The environment variable a deployer sets to put every agent of a host on one server.
pub const URL_ENV: &str = "ROTIFER_MEMORY_URL";

/// An agent's memory: which agent, its project root (local files: telemetry, records), and
/// where its entries live.
#[derive(Clone)]
pub struct Agent {
    pub layout: Layout,
    pub agent_id: String,
    pub binding: Binding,
}

#[derive(Clone)]
pub enum Binding {
    Sqlite,
    Postgres(Arc<PgPool>),
}

impl Agent {
    /// The agent `agent_id` under `layout`, on the binding R-BIND-1 chooses (`url`: the
    /// caller's option, first in that order).
    pub fn open(layout: Layout, agent_id: &str, url: Option<&str>) -> Result<Agent> {
        let binding = match choose(&layout, agent_id, url)? {
            None => Binding::Sqlite,
            Some(url) => Binding::Postgres(pool(&url)?),
        };
        Ok(Agent { layout, agent_id: agent_id.to_string(), binding })
    }

    /// The agent on the SQLite file, whatever else is configured.
    pub fn sqlite(layout: Layout, agent_id: &str) -> Agent {
        Agent { layout, agent_id: agent_id.to_string(), binding: Binding::Sqlite }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self.binding, Binding::Postgres(_))
    }

    /// Where the memory is, as messages and `--json` show it: `sqlite`, or the URL without
    /// its password.
    pub fn shown(&self) -> String {
        match &self.binding {
            Binding::Sqlite => SQLITE.to_string(),
            Binding::Postgres(p) => p.shown().to_string(),
        }
    }
}

/// Checks a URL given where a binding is named: a PostgreSQL URL, or `sqlite`. `what` names
/// the place in the message (`url`, `ROTIFER_MEMORY_URL`, …). The answer is `None` for SQLite.
pub fn parse_url(what: &str, url: &str) -> Result<Option<String>> {
    if url == SQLITE {
        return Ok(None);
    }
    if is_postgres_url(url) {
        // Parsed now, so that a bad URL is refused where it was given, not at the first call.
        Connection::new(url, Timeouts::default())?;
        return Ok(Some(url.to_string()));
    }
    Err(MemoryError::invalid(format!("{what} must be a postgres:// or postgresql:// URL or \"sqlite\", {}", what_was_given(url))))
}

/// What a refused binding was, without repeating it: it may be a connection string holding a
/// password (`host=h password=…`), which no URL redaction recognises.
fn what_was_given(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, _)) if !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b)) => {
            format!("not a {scheme}:// URL")
        }
        _ => "not what was given (not repeated here: it may hold a password)".to_string(),
    }
}

/// `choose_url`, once a move cut short has been finished (`finish_pending_move`) when the
/// agent's record decides: what every call and deployer function uses.
pub fn choose(layout: &Layout, agent_id: &str, url: Option<&str>) -> Result<Option<String>> {
    if url.is_none() {
        finish_pending_move(layout, agent_id)?;
    }
    choose_url(layout, agent_id, url)
}

/// The agent record `<root>/.rotifer/agents/<agentId>.json`.
pub fn record_path(layout: &Layout, agent_id: &str) -> PathBuf {
    layout
        .root
        .join(".rotifer")
        .join("agents")
        .join(format!("{agent_id}.json"))
}

/// The record a move (R-MIG-4) writes before it commits, naming the target: renamed over the
/// record once the source is fenced.
pub fn intent_path(layout: &Layout, agent_id: &str) -> PathBuf {
    layout
        .root
        .join(".rotifer")
        .join("agents")
        .join(format!("{agent_id}.json.next"))
}

/// R-MIG-4: a move's commit point is the fence on its source (`moved`, naming the move). A move
/// cut short after it, before its record named the target, is finished here: the record it
/// wrote beside the old one (`intent_path`) is renamed over it. One cut short after that, before
/// the target's `arriving` mark was lifted, has that done, and the record loses its
/// `memoryMove`. A record written by a move that never reached its commit point is left (the
/// source is not fenced): the next move replaces it. Costs one file lookup when nothing is
/// pending.
pub fn finish_pending_move(layout: &Layout, agent_id: &str) -> Result<()> {
    let record = record_path(layout, agent_id);
    let intent = intent_path(layout, agent_id);
    if let Some(move_id) = json_string_at(&intent, &["memoryMove", "move"])? {
        let fence = match choose_url(layout, agent_id, None)? {
            None => fence::read(&layout.real()?.db_path(agent_id))?,
            Some(url) => pool(&url)?.with(|c| crate::postgres::moving::fence_of(c, agent_id))?,
        };
        if fence.is_some_and(|f| f.state == FenceState::Moved && f.move_id == move_id) {
            rename_durably(&intent, &record).map_err(|e| MemoryError::storage(format!("cannot finish the move of agent {agent_id:?}: renaming {} over {} failed ({e})", intent.display(), record.display())))?;
        }
    }
    if let Some(move_id) = json_string_at(&record, &["memoryMove", "move"])? {
        settle_arrival(layout, agent_id, &move_id)?;
    }
    Ok(())
}

/// The target of move `move_id`, now named by the agent's record, in use: its `arriving` mark
/// lifted, then the record's `memoryMove` removed.
pub fn settle_arrival(layout: &Layout, agent_id: &str, move_id: &str) -> Result<()> {
    match choose_url(layout, agent_id, None)? {
        None => {
            fence::remove_if(
                &layout.real()?.db_path(agent_id),
                FenceState::Arriving,
                move_id,
            )?;
        }
        Some(url) => {
            pool(&url)?.with(|c| crate::postgres::moving::arrived(c, agent_id, move_id))?;
        }
    }
    let record = record_path(layout, agent_id);
    let Some(mut value) = read_json(&record)? else {
        return Ok(());
    };
    let Some(fields) = value.as_object_mut() else {
        return Ok(());
    };
    if fields
        .get("memoryMove")
        .and_then(|m| m.get("move"))
        .and_then(|m| m.as_str())
        != Some(move_id)
    {
        return Ok(()); // settled meanwhile, or another move's
    }
    fields.remove("memoryMove");
    write_record(&record, &value)
}

/// The JSON of `file`; `None` if there is no such file.
pub fn read_json(file: &std::path::Path) -> Result<Option<serde_json::Value>> {
    let text = match std::fs::read(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(MemoryError::storage(format!(
                "cannot read {}: {e}",
                file.display()
            )))
        }
    };
    serde_json::from_slice(&text).map(Some).map_err(|e| {
        MemoryError::storage(format!(
            "{} is not JSON ({e}); fix the file",
            file.display()
        ))
    })
}

/// Writes an agent record (or a move's intent) whole or not at all, 0600: it may hold a URL with
/// a password. The text is as the CLI writes records: two-space indents, a final newline.
pub fn write_record(file: &std::path::Path, value: &serde_json::Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| MemoryError::storage(format!("cannot encode {}: {e}", file.display())))?;
    text.push('\n');
    replace_file_durably(file, text.as_bytes())
        .map_err(|e| MemoryError::storage(format!("cannot write {} ({e})", file.display())))
}

/// R-BIND-1, in order: `url` (the caller's option); the agent record's `memoryUrl`
/// (`<root>/.rotifer/agents/<agentId>.json`, written by `agent create --memory-url` and by
/// `agent migrate`); `ROTIFER_MEMORY_URL`; `rotifer.json`'s `"memory": {"url": …}`; else the
/// SQLite file. `Some(url)` for PostgreSQL, `None` for the file. An empty value counts as
/// not given; a source that cannot be read is an error, never a silent fall to the next one.
pub fn choose_url(layout: &Layout, agent_id: &str, url: Option<&str>) -> Result<Option<String>> {
    if let Some(url) = url {
        return parse_url("url", url);
    }
    let record = record_path(layout, agent_id);
    if let Some(url) = json_string_at(&record, &["memoryUrl"])? {
        return parse_url(&format!("the agent record {}'s memoryUrl", record.display()), &url);
    }
    if let Ok(url) = std::env::var(URL_ENV) {
        if !url.is_empty() {
            return not_away_from_its_file(layout, agent_id, URL_ENV, parse_url(URL_ENV, &url)?, &record);
        }
    }
    let config = layout.root.join("rotifer.json");
    if let Some(url) = json_string_at(&config, &["memory", "url"])? {
        let what = format!("{}'s memory.url", config.display());
        return not_away_from_its_file(layout, agent_id, &what, parse_url(&what, &url)?, &record);
    }
    Ok(None)
}

/// A project-wide URL (`source`) never takes an agent away from the SQLite file that holds its
/// memory: that agent would start again, empty, on the server, its entries out of sight. Its
/// record must say where its memory is (`sqlite` keeps the file).
fn not_away_from_its_file(layout: &Layout, agent_id: &str, source: &str, url: Option<String>, record: &std::path::Path) -> Result<Option<String>> {
    let file = layout.db_path(agent_id);
    // Anything but "not there" (a folder that cannot be read, say) counts as there: never guess
    // that an agent has no file.
    let there = match std::fs::symlink_metadata(&file) {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    };
    if url.is_some() && there {
        return Err(MemoryError::storage(format!(
            "agent \"{agent_id}\" keeps its memory in the SQLite file {}, and {source} names a PostgreSQL server, where it would start again with no entries; say where its memory is in its record {}: \"memoryUrl\": \"sqlite\" keeps the file",
            file.display(),
            record.display()
        )));
    }
    Ok(url)
}

/// The non-empty string at `path` in the JSON file `file`; `None` if the file or the field is
/// missing. A file that is not JSON, or a field that is not a string, is an error.
fn json_string_at(file: &std::path::Path, path: &[&str]) -> Result<Option<String>> {
    let text = match std::fs::read(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(MemoryError::storage(format!("cannot read {} to find where the memory lives: {e}", file.display()))),
    };
    let value: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| MemoryError::storage(format!("{} is not JSON ({e}), so where the memory lives is unknown; fix the file", file.display())))?;
    let mut at = &value;
    for name in path {
        match at.get(name) {
            Some(v) => at = v,
            None => return Ok(None),
        }
    }
    match at {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) if s.is_empty() => Ok(None),
        serde_json::Value::String(s) => Ok(Some(s.clone())),
        _ => Err(MemoryError::storage(format!("{}: {} must be a string (a postgres:// URL or \"sqlite\")", file.display(), path.join(".")))),
    }
}

/// This process's connections to one PostgreSQL URL: one per caller at a time, kept for the
/// next call. Connections open lazily, so making a pool never touches the network.
pub struct PgPool {
    url: String,
    shown: String,
    idle: Mutex<Vec<Connection>>,
}

impl PgPool {
    /// The URL without its password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Runs `f` on a connection of this pool, opened if none is idle. A connection that
    /// failed (its client dropped) goes back too: its next call reconnects.
    pub fn with<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let taken = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match taken {
            Some(c) => c,
            None => Connection::new(&self.url, Timeouts::from_env()?)?,
        };
        let result = f(&mut conn);
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
        result
    }
}

/// The pool of `url`, one per URL in this process.
pub fn pool(url: &str) -> Result<Arc<PgPool>> {
    static POOLS: OnceLock<Mutex<HashMap<String, Arc<PgPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(Default::default);
    let mut pools = pools.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = pools.get(url) {
        return Ok(p.clone());
    }
    let first = Connection::new(url, Timeouts::from_env()?)?;
    let p = Arc::new(PgPool { url: url.to_string(), shown: first.shown().to_string(), idle: Mutex::new(vec![first]) });
    pools.insert(url.to_string(), p.clone());
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(record: Option<&str>, config: Option<&str>) -> (tempdir::Dir, Layout) {
        let dir = tempdir::Dir::new();
        std::fs::create_dir_all(dir.0.join(".rotifer/agents")).unwrap();
        if let Some(r) = record {
            std::fs::write(dir.0.join(".rotifer/agents/a1.json"), r).unwrap();
        }
        if let Some(c) = config {
            std::fs::write(dir.0.join("rotifer.json"), c).unwrap();
        }
        let layout = Layout::at(&dir.0);
        (dir, layout)
    }

    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicU32, Ordering};
                static N: AtomicU32 = AtomicU32::new(0);
                let p = std::env::temp_dir().join(format!("rotifer-binding-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
                std::fs::create_dir_all(&p).unwrap();
                Dir(p)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    // The environment is the process's: these tests set ROTIFER_MEMORY_URL only in the one
    // test that needs it, and that test holds the lock the others take.
    static ENV: Mutex<()> = Mutex::new(());

    #[test]
    fn the_option_comes_first_then_the_record_then_the_environment_then_rotifer_json() {
        let _env = ENV.lock().unwrap_or_else(|p| p.into_inner());
        let record = r#"{"id":"a1","memoryUrl":"postgresql://rec@h/db"}"#;
        let config = r#"{"name":"p","memory":{"url":"postgresql://cfg@h/db"}}"#;
        let (_d, both) = project(Some(record), Some(config));
        assert_eq!(choose_url(&both, "a1", Some("postgres://opt@h/db")).unwrap().as_deref(), Some("postgres://opt@h/db"));
        assert_eq!(choose_url(&both, "a1", Some("sqlite")).unwrap(), None, "the option may name the file");
        std::env::set_var(URL_ENV, "postgresql://env@h/db");
        assert_eq!(choose_url(&both, "a1", None).unwrap().as_deref(), Some("postgresql://rec@h/db"));
        let (_d, config_only) = project(None, Some(config));
        assert_eq!(choose_url(&config_only, "a1", None).unwrap().as_deref(), Some("postgresql://env@h/db"));
        std::env::remove_var(URL_ENV);
        assert_eq!(choose_url(&config_only, "a1", None).unwrap().as_deref(), Some("postgresql://cfg@h/db"));
        let (_d, none) = project(None, None);
        assert_eq!(choose_url(&none, "a1", None).unwrap(), None);
        let (_d, back) = project(Some(r#"{"id":"a1","memoryUrl":"sqlite"}"#), Some(config));
        assert_eq!(choose_url(&back, "a1", None).unwrap(), None, "a record moved back to the file overrides rotifer.json");
    }

    #[test]
    fn a_project_wide_url_never_takes_an_agent_away_from_its_file() {
        let _env = ENV.lock().unwrap_or_else(|p| p.into_inner());
        let config = r#"{"name":"p","memory":{"url":"postgresql://cfg@h/db"}}"#;
        let (_d, layout) = project(None, Some(config));
        assert_eq!(choose_url(&layout, "a1", None).unwrap().as_deref(), Some("postgresql://cfg@h/db"), "no file: the server");
        std::fs::create_dir_all(layout.memory_dir()).unwrap();
        std::fs::write(layout.db_path("a1"), b"").unwrap();
        for env in [None, Some("postgresql://env@h/db")] {
            match env {
                Some(u) => std::env::set_var(URL_ENV, u),
                None => std::env::remove_var(URL_ENV),
            }
            let e = choose_url(&layout, "a1", None).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::StorageError);
            assert!(e.message.contains("a1.db") && e.message.contains(r#""memoryUrl": "sqlite""#), "{}", e.message);
        }
        std::env::remove_var(URL_ENV);
        assert_eq!(choose_url(&layout, "a2", None).unwrap().as_deref(), Some("postgresql://cfg@h/db"), "another agent, without a file");
        assert_eq!(choose_url(&layout, "a1", Some("postgres://opt@h/db")).unwrap().as_deref(), Some("postgres://opt@h/db"), "the caller's own choice stands");
        std::fs::write(layout.root.join(".rotifer/agents/a1.json"), r#"{"id":"a1","memoryUrl":"sqlite"}"#).unwrap();
        assert_eq!(choose_url(&layout, "a1", None).unwrap(), None, "the record keeps it on the file");
    }

    #[test]
    fn a_bad_url_is_refused_without_its_password_and_a_broken_source_is_an_error() {
        let _env = ENV.lock().unwrap_or_else(|p| p.into_inner());
        let (_d, none) = project(None, None);
        let e = choose_url(&none, "a1", Some("mysql://bob:s3cret@h/db")).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::InvalidInput);
        assert!(!e.message.contains("s3cret") && e.message.contains("postgres://") && e.message.contains("not a mysql:// URL"), "{}", e.message);
        let e = choose_url(&none, "a1", Some("host=h user=bob password=s3cret")).unwrap_err();
        assert!(!e.message.contains("s3cret") && e.message.contains("not repeated"), "{}", e.message);
        let (_d, broken) = project(Some("{not json"), None);
        assert_eq!(choose_url(&broken, "a1", None).unwrap_err().code, crate::ErrorCode::StorageError);
        let (_d, typed) = project(Some(r#"{"memoryUrl": 5}"#), None);
        assert_eq!(choose_url(&typed, "a1", None).unwrap_err().code, crate::ErrorCode::StorageError);
    }

    #[test]
    fn one_pool_per_url_and_making_one_touches_no_network() {
        let a = pool("postgresql://bob:pw@127.0.0.1:1/x").unwrap();
        let b = pool("postgresql://bob:pw@127.0.0.1:1/x").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.shown(), "postgresql://bob:***@127.0.0.1:1/x");
    }
}
