//! Setting up a database for the binding (R-BIND-4, `rotifer binding setup`): the roles, the
//! schema's migrations not yet applied, every function and the grants, in one transaction, in
//! the order `sql/order.txt` gives; then, if asked, one deployment's login role. Idempotent: a
//! second run changes nothing but the functions' text.

use super::client::Connection;
use crate::error::{MemoryError, Result};

/// The files of `sql/`, embedded at build time, by the names `order.txt` uses.
const FILES: &[(&str, &str)] = &[
    ("roles.sql", include_str!("sql/roles.sql")),
    ("001_schema.sql", include_str!("sql/001_schema.sql")),
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

/// A SQL string literal of `s` (standard_conforming_strings: only quotes double).
pub fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}
