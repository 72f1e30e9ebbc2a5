//! A connection to a PostgreSQL binding (R-BIND-6/7): opened lazily, every round trip bounded by
//! a deadline, reopened by the next call after a failure. Credentials never reach a message.
//!
//! Blocking on tokio-postgres in a runtime of our own (one thread: the caller's), rather than the
//! `postgres` crate's client: a peer that stops forwarding (a proxy, a half-open TCP connection)
//! keeps a socket open and acknowledged, so only a deadline on the call itself bounds the wait,
//! and the `postgres` crate has none.

use std::collections::HashMap;
use std::time::Duration;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row, Statement};

use crate::error::{MemoryError, Result};

/// How long a connection attempt, and a call, may take (R-BIND-6); the deployer changes them
/// with the URL's `connect_timeout` (seconds, libpq's parameter) and `ROTIFER_PG_CALL_TIMEOUT_MS`.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    pub call: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { connect: Duration::from_secs(5), call: Duration::from_secs(10) }
    }
}

/// The environment variable that sets a call's deadline, in milliseconds.
pub const CALL_TIMEOUT_ENV: &str = "ROTIFER_PG_CALL_TIMEOUT_MS";

impl Timeouts {
    /// The defaults, with the call's deadline from `ROTIFER_PG_CALL_TIMEOUT_MS` when it is set
    /// (a whole number of milliseconds from 100 to 600000; anything else is refused, never
    /// ignored: a deployer who set it expects it to hold).
    pub fn from_env() -> Result<Timeouts> {
        Timeouts::with_call_timeout(std::env::var(CALL_TIMEOUT_ENV).ok().as_deref())
    }

    fn with_call_timeout(value: Option<&str>) -> Result<Timeouts> {
        let mut t = Timeouts::default();
        match value {
            None | Some("") => {}
            Some(v) => match v.parse::<u64>() {
                Ok(ms) if (100..=600_000).contains(&ms) => t.call = Duration::from_millis(ms),
                _ => {
                    return Err(MemoryError::invalid(format!(
                        "{CALL_TIMEOUT_ENV} must be a whole number of milliseconds from 100 to 600000, not {:?}",
                        v.chars().take(40).collect::<String>()
                    )))
                }
            },
        }
        Ok(t)
    }
}

/// The URL with its password (and any `password=` parameter) replaced by `***`.
///
/// Parsers disagree on where the user info ends (libpq: at the last `@` before the first `/`;
/// tokio-postgres: at the first `@` anywhere), and a password holding an unencoded `/`, `?` or
/// `@` moves it. So whatever any of them could take for the password goes: everything from the
/// first `:` after `scheme://` to the last `@`, when that `:` comes first. A URL with an `@` in a
/// parameter may lose more than its password; it never shows one.
pub fn redact_url(url: &str) -> String {
    let mut out = url.to_string();
    if let Some(scheme_end) = out.find("://") {
        let rest = scheme_end + 3;
        if let (Some(colon), Some(at)) = (out[rest..].find(':'), out[rest..].rfind('@')) {
            if colon < at {
                out.replace_range(rest + colon + 1..rest + at, "***");
            }
        }
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        out = format!("{head}{}", redact_password_parameters(query));
    }
    out
}

/// `password=…` parameters of a query as `password=***`. A value runs to the next `&` that
/// starts another `name=` parameter, so an unencoded `&` in a password does not show its rest.
fn redact_password_parameters(query: &str) -> String {
    let starts_parameter = |p: &str| p.split_once('=').is_some_and(|(name, _)| !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    let mut out: Vec<String> = Vec::new();
    let mut in_password = false;
    for part in query.split('&') {
        if starts_parameter(part) || out.is_empty() {
            in_password = part.to_ascii_lowercase().starts_with("password=");
            out.push(if in_password { "password=***".to_string() } else { part.to_string() });
        } else if !in_password {
            let last = out.last_mut().expect("a first part");
            last.push('&');
            last.push_str(part);
        }
    }
    out.join("&")
}

/// Is `url` one of PostgreSQL's (R-BIND-1)?
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

pub struct Connection {
    runtime: tokio::runtime::Runtime,
    config: tokio_postgres::Config,
    shown: String,
    timeouts: Timeouts,
    client: Option<Client>,
    statements: HashMap<&'static str, Statement>,
    /// Whether the last call was sent (it got past connecting): if not, it cannot have committed.
    sent: bool,
}

impl Connection {
    /// Parses `url` (libpq's URL form); connects at the first call.
    pub fn new(url: &str, timeouts: Timeouts) -> Result<Connection> {
        let shown = redact_url(url);
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e: tokio_postgres::Error| MemoryError::invalid(format!("the memory URL {shown} is not a PostgreSQL URL: {}", redact_url(&e.to_string()))))?;
        let connect = config.get_connect_timeout().copied().unwrap_or(timeouts.connect);
        config.connect_timeout(connect);
        // A dead peer is noticed by the kernel too, not only by the call's deadline.
        config.keepalives(true).keepalives_idle(Duration::from_secs(10));
        config.tcp_user_timeout(timeouts.call);
        if config.get_application_name().is_none() {
            config.application_name("rotifer-memory");
        }
        // The client's plain statements resolve operators and functions by the session's
        // search_path: pinned, so that nothing another role could create in a schema on the
        // path (`public`, where CREATE is granted) takes part in them. Every name of ours is
        // qualified.
        let options = match config.get_options() {
            Some(o) if !o.is_empty() => format!("{o} -c search_path=pg_catalog"),
            _ => "-c search_path=pg_catalog".to_string(),
        };
        config.options(&options);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| MemoryError::storage(format!("could not start the PostgreSQL client: {e}")))?;
        Ok(Connection { runtime, config, shown, timeouts: Timeouts { connect, ..timeouts }, client: None, statements: HashMap::new(), sent: false })
    }

    /// The URL as messages show it.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    fn failed(&mut self, what: &str, e: impl std::fmt::Display) -> MemoryError {
        // The connection is in an unknown state: the next call opens a new one.
        self.client = None;
        self.statements.clear();
        MemoryError::storage(format!("PostgreSQL at {}: {what}: {}", self.shown, redact_url(&e.to_string())))
    }

    fn connect(&mut self) -> Result<()> {
        if self.client.as_ref().is_some_and(|c| !c.is_closed()) {
            return Ok(());
        }
        self.statements.clear();
        let config = self.config.clone();
        let deadline = self.timeouts.connect;
        // Polled while a call blocks on the runtime: that is when it has work.
        let outcome = if self.uses_tls() {
            let tls = super::tls::connector();
            self.runtime.block_on(async move { tokio::time::timeout(deadline, config.connect(tls)).await }).map(|r| {
                r.map(|(client, connection)| {
                    self.runtime.spawn(async move {
                        let _ = connection.await;
                    });
                    client
                })
            })
        } else {
            self.runtime.block_on(async move { tokio::time::timeout(deadline, config.connect(tokio_postgres::NoTls)).await }).map(|r| {
                r.map(|(client, connection)| {
                    self.runtime.spawn(async move {
                        let _ = connection.await;
                    });
                    client
                })
            })
        };
        match outcome {
            Err(_) => Err(self.failed("could not connect", format!("no answer within {} ms", deadline.as_millis()))),
            Ok(Err(e)) => Err(self.failed("could not connect", e)),
            Ok(Ok(client)) => {
                self.client = Some(client);
                Ok(())
            }
        }
    }

    /// TLS as libpq's `sslmode` says, except over Unix sockets, where libpq never uses it: a URL
    /// that names a socket connects to all its hosts without TLS.
    fn uses_tls(&self) -> bool {
        let socket = self.config.get_hosts().iter().any(|h| matches!(h, tokio_postgres::config::Host::Unix(_)));
        !socket && self.config.get_ssl_mode() != tokio_postgres::config::SslMode::Disable
    }

    /// Runs `sql` (prepared once per connection) with `params`; every row of its answer. One
    /// round trip once the statement is prepared.
    pub fn query(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        self.sent = false;
        self.connect()?;
        self.sent = true;
        let deadline = self.timeouts.call;
        let client = self.client.as_ref().expect("connected");
        let cached = self.statements.get(sql).cloned();
        let outcome = self.runtime.block_on(async {
            tokio::time::timeout(deadline, async {
                let statement = match cached {
                    Some(s) => s,
                    None => client.prepare(sql).await?,
                };
                let rows = client.query(&statement, params).await?;
                Ok::<_, tokio_postgres::Error>((statement, rows))
            })
            .await
        });
        match outcome {
            Err(_) => Err(self.failed("the call did not finish", format!("no answer within {} ms", deadline.as_millis()))),
            Ok(Err(e)) => Err(self.server_error(e)),
            Ok(Ok((statement, rows))) => {
                self.statements.insert(sql, statement);
                Ok(rows)
            }
        }
    }

    /// Runs `f` with `deadline` as each call's deadline instead of the connection's: for a
    /// deployer's long operation (a move), never a gene's call.
    pub fn with_call_deadline<T>(&mut self, deadline: Duration, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let usual = std::mem::replace(&mut self.timeouts.call, deadline);
        let answer = f(self);
        self.timeouts.call = usual;
        answer
    }

    /// Runs a script of several statements (simple protocol), with a deadline of a minute:
    /// setup only, never a gene's call.
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        self.connect()?;
        let deadline = Duration::from_secs(60);
        let client = self.client.as_ref().expect("connected");
        let outcome = self.runtime.block_on(async { tokio::time::timeout(deadline, client.batch_execute(sql)).await });
        match outcome {
            Err(_) => Err(self.failed("the script did not finish", format!("no answer within {} s", deadline.as_secs()))),
            Ok(Err(e)) => Err(self.server_error(e)),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// The one integer a statement without parameters answers.
    pub fn query_one_i32(&mut self, sql: &'static str) -> Result<i32> {
        let rows = self.query(sql, &[])?;
        rows.first().map(|r| r.get::<_, i32>(0)).ok_or_else(|| MemoryError::storage(format!("PostgreSQL at {}: no answer to {sql}", self.shown)))
    }

    /// An error of the server (its SQLSTATE kept, the connection kept if it is still sound) or of
    /// the connection.
    fn server_error(&mut self, e: tokio_postgres::Error) -> MemoryError {
        match e.as_db_error() {
            Some(db) if !self.client.as_ref().is_some_and(|c| c.is_closed()) => {
                let message = format!("PostgreSQL at {}: {} ({})", self.shown, db.message(), db.code().code());
                match db.code().code() {
                    // The binding's own refusals (see sql/functions/00_common.sql).
                    "RT001" | "RT004" => MemoryError::denied(message),
                    "RT002" | "RT003" => MemoryError::invalid(message),
                    "RT005" => MemoryError::not_found(message),
                    // RT010, a moved agent (R-MIG-4), among them.
                    _ => MemoryError::storage(message),
                }
            }
            _ => self.failed("the connection failed", e),
        }
    }

    /// Whether the last `query` reached the point of sending its call: a call that failed before
    /// it (no connection could be made) changed nothing.
    pub fn last_call_sent(&self) -> bool {
        self.sent
    }

    /// Forgets the connection (tests: as a broken one would be).
    pub fn reset(&mut self) {
        self.client = None;
        self.statements.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(redact_url("postgresql://bob:s3cret@db.example/app"), "postgresql://bob:***@db.example/app");
        assert_eq!(redact_url("postgres://bob@db/app?password=s3cret&sslmode=require"), "postgres://bob@db/app?password=***&sslmode=require");
        assert_eq!(redact_url("postgresql://bob:a@b@db/app"), "postgresql://bob:***@db/app", "the last @ ends the user info");
        assert_eq!(redact_url("postgresql://db/app"), "postgresql://db/app");
        assert_eq!(redact_url("postgresql://bob@db:5432/app?sslmode=disable"), "postgresql://bob@db:5432/app?sslmode=disable");
        assert_eq!(redact_url("postgresql:///app?host=/run/postgresql&user=bob"), "postgresql:///app?host=/run/postgresql&user=bob");
    }

    #[test]
    fn a_password_that_moves_where_the_user_info_ends_never_shows() {
        // tokio-postgres takes everything up to the first @ as the user info, libpq the authority
        // up to the first / or ?: both readings of each URL are hidden.
        for (url, secret) in [
            ("postgresql://bob:pa/ss@db/app", "pa/ss"),
            ("postgresql://bob:pa?ss@db/app", "pa?ss"),
            ("postgresql://a@b:s3cret@db/app", "s3cret"),
            ("postgres://bob@db/app?password=s3&cret&sslmode=require", "cret"),
            ("postgres://bob@db/app?sslmode=require&PASSWORD=s3cret", "s3cret"),
        ] {
            let shown = redact_url(url);
            assert!(!shown.contains(secret), "{url} shows as {shown}");
            let e = Connection::new(url, Timeouts::default()).err().map(|e| e.message).unwrap_or_default();
            assert!(!e.contains(secret), "{e}");
        }
        assert_eq!(redact_url("postgres://bob@db/app?password=s3&cret&sslmode=require"), "postgres://bob@db/app?password=***&sslmode=require");
    }

    #[test]
    fn r_bind_6_the_call_deadline_comes_from_the_environment_or_is_refused() {
        assert_eq!(Timeouts::with_call_timeout(None).unwrap().call, Duration::from_secs(10));
        assert_eq!(Timeouts::with_call_timeout(Some("")).unwrap().call, Duration::from_secs(10));
        assert_eq!(Timeouts::with_call_timeout(Some("250")).unwrap().call, Duration::from_millis(250));
        assert_eq!(Timeouts::with_call_timeout(Some("600000")).unwrap().call, Duration::from_secs(600));
        for bad in ["99", "600001", "1.5", "-1", "10s", " 250"] {
            let e = Timeouts::with_call_timeout(Some(bad)).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::InvalidInput, "{bad}");
            assert!(e.message.contains(CALL_TIMEOUT_ENV), "{}", e.message);
        }
    }

    #[test]
    fn postgres_urls_are_told_apart() {
        assert!(is_postgres_url("postgres://h/db"));
        assert!(is_postgres_url("postgresql://h/db"));
        assert!(!is_postgres_url("sqlite"));
        assert!(!is_postgres_url("/tmp/x.db"));
    }

    #[test]
    fn a_bad_url_is_invalid_input_without_its_password() {
        let e = Connection::new("postgresql://bob:s3cret@db/app?sslmode=bogus", Timeouts::default()).err().expect("refused");
        assert_eq!(e.code, crate::ErrorCode::InvalidInput);
        assert!(!e.message.contains("s3cret"), "{}", e.message);
    }

    #[test]
    fn an_unreachable_server_is_a_storage_error_without_the_password() {
        // A port nothing listens on: refused at once; a blackholed address would take the timeout.
        let timeouts = Timeouts { connect: Duration::from_millis(500), call: Duration::from_millis(500) };
        let mut c = Connection::new("postgresql://bob:s3cret@127.0.0.1:1/app", timeouts).unwrap();
        let e = c.query("SELECT 1", &[]).err().expect("fails");
        assert_eq!(e.code, crate::ErrorCode::StorageError);
        assert!(!e.message.contains("s3cret"), "{}", e.message);
        assert!(e.message.contains("127.0.0.1:1") || e.message.contains("could not connect"), "{}", e.message);
    }
}
