//! A PostgreSQL database for one test, beside the cluster `scripts/pg-cluster.js` starts
//! (`npm test` does): set up, with a deployment's login role, dropped with the test.

use std::sync::atomic::{AtomicU64, Ordering};

use rotifer_memory_core::postgres::client::{Connection, Timeouts};
use rotifer_memory_core::postgres::setup::{quote_literal, setup};

/// The cluster's admin URL; `None` (the test passes, saying why) without one, but a failure
/// under CI=true.
pub fn admin_url() -> Option<String> {
    match std::env::var("ROTIFER_TEST_PG_ADMIN_URL") {
        Ok(url) => Some(url),
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => panic!("CI=true and no ROTIFER_TEST_PG_ADMIN_URL: run the tests with npm test"),
        Err(_) => {
            eprintln!("PostgreSQL tests skipped: no ROTIFER_TEST_PG_ADMIN_URL (npm test starts a cluster)");
            None
        }
    }
}

pub fn with_database(url: &str, db: &str) -> String {
    let (head, query) = url.split_once('?').unwrap_or((url, ""));
    let base = &head[..head.rfind('/').expect("a database in the URL")];
    format!("{base}/{db}?{query}")
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A fresh database, set up, with a deployment role (test clock allowed) and its URL over TCP.
pub struct Db {
    pub admin: String,
    pub name: String,
    pub role: String,
    pub url: String,
    pub password: String,
}

impl Db {
    pub fn new(root: &str, prefix: &str) -> Db {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("rotifer_{prefix}_{}_{n}", std::process::id());
        Connection::new(root, Timeouts::default()).unwrap().batch(&format!("CREATE DATABASE {name}")).unwrap();
        let admin = with_database(root, &name);
        let mut a = Connection::new(&admin, Timeouts::default()).unwrap();
        let role = format!("{name}_dep");
        setup(&mut a, Some(&role), true).unwrap();
        let password = format!("s3cret{n}x{}", std::process::id());
        a.batch(&format!("ALTER ROLE {role} PASSWORD {}", quote_literal(&password))).unwrap();
        let port: u16 = std::env::var("ROTIFER_TEST_PG_PORT").unwrap().parse().unwrap();
        let url = format!("postgresql://{role}:{password}@127.0.0.1:{port}/{name}?sslmode=disable");
        Db { admin, name, role, url, password }
    }

    pub fn admin(&self, sql: &str) {
        Connection::new(&self.admin, Timeouts::default()).unwrap().batch(sql).unwrap();
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let root = std::env::var("ROTIFER_TEST_PG_ADMIN_URL").unwrap();
        if let Ok(mut c) = Connection::new(&root, Timeouts::default()) {
            let _ = c.batch(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
            let _ = c.batch(&format!("DROP ROLE IF EXISTS {}", self.role));
        }
    }
}
