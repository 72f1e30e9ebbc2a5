//! Setting up a database for the binding (R-BIND-4, `rotifer binding setup`): the roles, the
//! schema's migrations not yet applied, every function and the grants, in one transaction, in
//! the order `sql/order.txt` gives; then, if asked, one deployment's login role. Idempotent: a
//! second run changes nothing but the functions' text.

use super::client::{is_postgres_url, Connection, Timeouts};
use crate::error::{MemoryError, Result};

/// The files of `sql/`, embedded at build time, by the names `order.txt` uses.
const FILES: &[(&str, &str)] = &[
    ("roles.sql", include_str!("sql/roles.sql")),
    ("001_schema.sql", include_str!("sql/001_schema.sql")),
    ("002_agent_moves.sql", include_str!("sql/002_agent_moves.sql")),
    ("functions/00_common.sql", include_str!("sql/functions/00_common.sql")),
    ("functions/memory_read.sql", include_str!("sql/functions/memory_read.sql")),
    ("functions/memory_write.sql", include_str!("sql/functions/memory_write.sql")),
    ("functions/memory_query.sql", include_str!("sql/functions/memory_query.sql")),
    ("functions/memory_delete.sql", include_str!("sql/functions/memory_delete.sql")),
    ("functions/setup_role.sql", include_str!("sql/functions/setup_role.sql")),
    ("functions/agent_usage.sql", include_str!("sql/functions/agent_usage.sql")),
    ("functions/agent_get.sql", include_str!("sql/functions/agent_get.sql")),
    ("functions/memory_list.sql", include_str!("sql/functions/memory_list.sql")),
    ("functions/memory_deployer_delete.sql", include_str!("sql/functions/memory_deployer_delete.sql")),
    ("functions/agent_configure.sql", include_str!("sql/functions/agent_configure.sql")),
    ("functions/agent_drop.sql", include_str!("sql/functions/agent_drop.sql")),
    ("functions/attempt_settle.sql", include_str!("sql/functions/attempt_settle.sql")),
    ("functions/memory_import.sql", include_str!("sql/functions/memory_import.sql")),
    ("functions/memory_restore.sql", include_str!("sql/functions/memory_restore.sql")),
    ("functions/agent_migrate.sql", include_str!("sql/functions/agent_migrate.sql")),
    ("grants.sql", include_str!("sql/grants.sql")),
];
const ORDER: &str = include_str!("sql/order.txt");

/// The schema version this release brings.
pub fn latest_version() -> i32 {
    steps().iter().filter_map(|s| if let Step::Migration(v, _) = s { Some(*v) } else { None }).max().unwrap_or(0)
}

enum Step {
    Roles(&'static str),
    Migration(i32, &'static str),
    Function(&'static str),
    Grants(&'static str),
}

fn file(name: &str) -> &'static str {
    FILES.iter().find(|(n, _)| *n == name).map(|(_, text)| *text).unwrap_or_else(|| panic!("sql/{name} is listed in order.txt but not embedded"))
}

fn steps() -> Vec<Step> {
    ORDER
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f[0] {
                "roles" => Step::Roles(file(f[1])),
                "migration" => Step::Migration(f[1].parse().expect("a migration's version is a number"), file(f[2])),
                "function" => Step::Function(file(f[1])),
                "grants" => Step::Grants(file(f[1])),
                other => panic!("sql/order.txt: unknown step {other:?}"),
            }
        })
        .collect()
}

/// What a setup did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupReport {
    pub from_version: i32,
    pub to_version: i32,
}

/// Sets up (or moves forward) the database at the administrator's `admin`, and with `role`, makes
/// or updates that deployment's login role (`test_clock`: test clusters only).
pub fn setup(admin: &mut Connection, role: Option<&str>, test_clock: bool) -> Result<SetupReport> {
    let mut script = String::new();
    for step in steps() {
        if let Step::Roles(sql) = step {
            script.push_str(sql);
        }
    }
    admin.batch(&script)?;
    // Two statements: a statement naming a table that does not exist fails when planned.
    let from = match admin.query_one_i32("SELECT (to_regclass('rotifer.schema_version') IS NOT NULL)::int")? {
        0 => 0,
        _ => admin.query_one_i32("SELECT coalesce(max(version), 0) FROM rotifer.schema_version")?,
    };
    if from > latest_version() {
        return Err(MemoryError::storage(format!(
            "the database's memory schema is version {from}, newer than this release's {}: upgrade rotifer",
            latest_version()
        )));
    }
    let mut tx = String::from("BEGIN;\n");
    for step in steps() {
        match step {
            Step::Roles(_) => {}
            Step::Migration(v, sql) if v > from => {
                tx.push_str(sql);
                tx.push_str(&format!("\nINSERT INTO rotifer.schema_version (version) VALUES ({v});\n"));
            }
            Step::Migration(..) => {}
            Step::Function(sql) => {
                tx.push_str("SET LOCAL ROLE rotifer_owner;\n");
                tx.push_str(sql);
                tx.push_str("\nRESET ROLE;\n");
            }
            Step::Grants(sql) => tx.push_str(sql),
        }
    }
    if let Some(role) = role {
        tx.push_str(&format!("SELECT rotifer.setup_role({}, {test_clock});\n", quote_literal(role)));
    }
    tx.push_str("COMMIT;\n");
    admin.batch(&tx)?;
    Ok(SetupReport { from_version: from, to_version: latest_version() })
}

/// What `rotifer binding setup` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindingSetup {
    pub report: SetupReport,
    /// With a role: the URL its deployment uses (the administrator's, as that role, no password).
    pub role_url: Option<String>,
    pub password_set: bool,
}

/// `rotifer binding setup <admin-url> [--role <name>] [--password-stdin]` (R-BIND-4): the schema
/// set up or moved forward as the administrator at `admin_url`, and with `role`, that
/// deployment's login role made or updated, its password set when one is given. The password
/// goes to the server as a SCRAM-SHA-256 verifier, as psql's `\password` sends it: the text
/// never reaches the server's logs or any message.
pub fn setup_binding(admin_url: &str, role: Option<&str>, password: Option<&str>) -> Result<BindingSetup> {
    if !is_postgres_url(admin_url) {
        return Err(MemoryError::invalid("the administrator's URL must be a postgres:// or postgresql:// URL (libpq's form)"));
    }
    if let Some(role) = role {
        check_role_name(role)?;
    }
    if password.is_some() && role.is_none() {
        return Err(MemoryError::invalid("a password is for a deployment's role: give the role too"));
    }
    if password.is_some_and(str::is_empty) {
        return Err(MemoryError::invalid("the role's password is empty"));
    }
    let mut admin = Connection::new(admin_url, Timeouts::from_env()?)?;
    let report = setup(&mut admin, role, false)?;
    if let (Some(role), Some(password)) = (role, password) {
        let verifier = postgres_protocol::password::scram_sha_256(password.as_bytes());
        admin.batch(&format!("ALTER ROLE {} PASSWORD {}", quote_ident(role), quote_literal(&verifier)))?;
    }
    let role_url = role.map(|r| url_as_role(admin_url, r)).transpose()?;
    Ok(BindingSetup { report, role_url, password_set: role.is_some() && password.is_some() })
}

/// A deployment's role name: 1 to 63 characters (PostgreSQL's limit), letters, digits, `_`, `.`
/// and `-`, not starting with a digit or `pg_` (reserved by PostgreSQL).
pub fn check_role_name(role: &str) -> Result<()> {
    let ok = !role.is_empty()
        && role.len() <= 63
        && role.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        && !role.as_bytes()[0].is_ascii_digit()
        && !role.to_ascii_lowercase().starts_with("pg_");
    if ok {
        Ok(())
    } else {
        Err(MemoryError::invalid(format!(
            "invalid role name {:?}: give 1 to 63 letters, digits, \"_\", \".\" or \"-\", not starting with a digit or pg_",
            role.chars().take(80).collect::<String>()
        )))
    }
}

/// The URL a deployment's hosts use: `admin_url`'s hosts, ports, database and `sslmode` and
/// `connect_timeout`, with `role` as the user, rebuilt from the parsed URL, so that nothing else
/// of the administrator's (password, key files, their passwords) can come along, however the
/// URL was written.
pub fn url_as_role(admin_url: &str, role: &str) -> Result<String> {
    use tokio_postgres::config::{Host, SslMode};
    let config: tokio_postgres::Config = admin_url
        .parse()
        .map_err(|_| MemoryError::invalid("the administrator's URL is not a PostgreSQL URL (libpq's form)"))?;
    let scheme = if admin_url.starts_with("postgres://") { "postgres" } else { "postgresql" };
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect()
    };
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let name = match h {
                Host::Tcp(name) if name.contains(':') => format!("[{name}]"),
                Host::Tcp(name) => encode(name),
                Host::Unix(path) => encode(&path.to_string_lossy()),
            };
            match ports.get(i).or(if ports.len() == 1 { ports.first() } else { None }) {
                Some(port) => format!("{name}:{port}"),
                None => name,
            }
        })
        .collect();
    let mut params = Vec::new();
    match config.get_ssl_mode() {
        SslMode::Disable => params.push("sslmode=disable".to_string()),
        SslMode::Require => params.push("sslmode=require".to_string()),
        _ => {}
    }
    if let Some(t) = config.get_connect_timeout() {
        params.push(format!("connect_timeout={}", t.as_secs()));
    }
    let db = config.get_dbname().map(|d| format!("/{}", encode(d))).unwrap_or_default();
    let query = if params.is_empty() { String::new() } else { format!("?{}", params.join("&")) };
    // Role names hold only characters a URL's user info may hold as they are.
    Ok(format!("{scheme}://{role}@{}{db}{query}", hosts.join(",")))
}

/// A SQL identifier: `s` in double quotes, its quotes doubled.
pub fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// A SQL string literal of `s` (standard_conforming_strings: only quotes double).
pub fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_bind_4_the_deployment_url_names_the_role_and_never_a_password() {
        let u = |url: &str| url_as_role(url, "fleet").unwrap();
        assert_eq!(u("postgresql://admin:s3cret@db.example:5432/app?sslmode=require"), "postgresql://fleet@db.example:5432/app?sslmode=require");
        assert_eq!(u("postgres://db/app"), "postgres://fleet@db:5432/app", "the port is said");
        assert_eq!(u("postgresql://admin:pw@db/app?user=x&password=y&connect_timeout=3"), "postgresql://fleet@db:5432/app?connect_timeout=3");
        assert_eq!(u("postgresql://%2Frun%2Fpg:5432/app"), "postgresql://fleet@%2Frun%2Fpg:5432/app");
        // A password holding "?" or "/", and the administrator's key files and their password: none come along.
        // (A URL the client cannot parse is refused, as connecting to it would be.)
        let mut parsed = 0;
        for url in ["postgresql://admin:pa?ss@db/app", "postgresql://admin:pa/ss@db/app", "postgresql://a@b:pw@db/app", "postgresql://admin@db/app?sslpassword=kp&sslkey=/k&sslcert=/c&password=pw"] {
            let Ok(out) = url_as_role(url, "fleet") else { continue };
            parsed += 1;
            assert!(!["pa?ss", "pa/ss", "kp", "/k", "/c", "pw", "admin"].iter().any(|x| out.contains(x)), "{url} -> {out}");
            assert!(out.starts_with("postgresql://fleet@db"), "{out}");
        }
        assert!(parsed >= 2, "the URLs with secrets were read: {parsed}");
    }

    #[test]
    fn r_bind_4_role_names_are_checked_before_anything_is_sent() {
        for good in ["fleet", "fleet_a", "Fleet-1.prod", &"r".repeat(63)] {
            check_role_name(good).unwrap();
        }
        for bad in ["", "1fleet", "pg_fleet", "PG_x", "a b", "a\"b", "a'b", "é", &"r".repeat(64)] {
            assert_eq!(check_role_name(bad).unwrap_err().code, crate::ErrorCode::InvalidInput, "{bad}");
        }
        let e = setup_binding("mysql://admin@db/app", Some("fleet"), None).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::InvalidInput);
        let e = setup_binding("postgresql://admin@127.0.0.1:1/app", None, Some("pw")).unwrap_err();
        assert!(e.message.contains("give the role"), "{}", e.message);
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }
}
