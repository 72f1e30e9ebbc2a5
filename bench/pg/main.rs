//! The PostgreSQL rows of the benchmark (bench/pg.js drives this program): the binding's calls
//! (`postgres::calls`, through the binding's own `Connection`) against the store a user would
//! hand-write on the same server with the same client crate: one table keyed by (agent, key),
//! prepared statements, one round trip per call (one upsert, one select, one range query), no
//! contract: no lock, no clock, no purge, no access check, no quota, no audit.
//!
//!   pg-bench serve     commands on stdin, one JSON line each; one JSON answer line each
//!   pg-bench writer J  one process of the concurrency rows: connects, warms up, prints "ready",
//!                      waits for a line on stdin, makes J.count updates, prints its times
//!
//! Commands (`serve`):
//!   {"cmd":"setup","admin":URL,"port":P,"entries":N,"writers":W,"writerEntries":M}
//!       a fresh database with the binding set up and a deployment role; agent "bench-main" of
//!       N entries in both stores, agents "bench-w-0".."bench-w-<W-1>" of M entries each.
//!       Answers the role's URL (for `writer`).
//!   {"cmd":"batch","side":"ours"|"base","op":"read-hit"|"read-miss"|"update"|"create"|"query","keys":[…],"expect":n}
//!       the calls, timed: {"wall":ns,"cpu":ns,"calls":n}. `cpu` is this process's only: the
//!       server's work is not in it.
//!   {"cmd":"teardown"}  drops the database and the role.

use std::io::{BufRead, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rotifer_memory_core::model::RetentionArg;
use rotifer_memory_core::postgres::calls::{self, Caller, Outcome, QueryArgs, WriteArgs};
use rotifer_memory_core::postgres::client::{Connection, Timeouts};
use rotifer_memory_core::postgres::setup::{quote_literal, setup};
use rotifer_memory_core::Category;
use serde_json::{json, Value};
use tokio_postgres::{Client, NoTls, Statement};

const GENE: &str = "v2:6d3c1b5f0e6a4b7c9d8e2f1a3b5c7d9e0f2a4c6e8b1d3f5a7c9e1b3d5f7a9c1e";
const DOMAIN: &str = "bench";
const MAIN_AGENT: &str = "bench-main";
const VALUE: [u8; 100] = [0x61; 100];
const CATEGORY: Category = Category::Context;

type Fail = Box<dyn std::error::Error>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let outcome = match args.get(1).map(String::as_str) {
        Some("serve") => serve(),
        Some("writer") => writer(args.get(2).map(String::as_str).unwrap_or("{}")),
        _ => Err("usage: pg-bench serve | pg-bench writer '<json>'".into()),
    };
    if let Err(e) = outcome {
        eprintln!("pg-bench: {e}");
        std::process::exit(1);
    }
}

/// Group keys as bench/rows.js makes them: `s000042/0008417` (groups of 200).
fn group_key(i: u64) -> String {
    format!("s{:06}/{:07}", i / 200, i)
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as i64
}

fn cpu_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn who(agent: &str) -> Caller<'_> {
    Caller { agent, gene: Some(GENE), domain: Some(DOMAIN), now: None }
}

/// The smallest text above every text starting with `prefix` (the keys here are ASCII).
fn prefix_end(prefix: &str) -> String {
    let mut b = prefix.as_bytes().to_vec();
    let last = b.pop().expect("a prefix");
    b.push(last + 1);
    String::from_utf8(b).expect("ASCII")
}

/// The binding, as a host uses it: its `Connection` and its typed calls.
struct Ours {
    c: Connection,
}

impl Ours {
    fn new(url: &str) -> Result<Ours, Fail> {
        Ok(Ours { c: Connection::new(url, Timeouts::default())? })
    }

    fn read(&mut self, agent: &str, key: &str) -> Result<bool, Fail> {
        match calls::read(&mut self.c, who(agent), key, None)? {
            Outcome::Done(e) => Ok(e.is_some()),
            Outcome::Refused(r) => Err(format!("read refused: {r:?}").into()),
        }
    }

    fn write(&mut self, agent: &str, key: &str) -> Result<(), Fail> {
        let w = WriteArgs { key, value: &VALUE, category: CATEGORY, access: None, retention: RetentionArg::Omitted };
        match calls::write(&mut self.c, who(agent), &w)? {
            Outcome::Done(_) => Ok(()),
            Outcome::Refused(r) => Err(format!("write refused: {r:?}").into()),
        }
    }

    fn query(&mut self, agent: &str, prefix: &str, limit: i32) -> Result<usize, Fail> {
        let q = QueryArgs { category: None, key_prefix: Some(prefix), since: None, until: None, limit };
        match calls::query(&mut self.c, who(agent), &q)? {
            Outcome::Done(entries) => Ok(entries.len()),
            Outcome::Refused(r) => Err(format!("query refused: {r:?}").into()),
        }
    }
}

/// What a hand-written store answers for an entry.
#[allow(dead_code)]
struct Plain {
    key: String,
    category: String,
    value: Vec<u8>,
    updated_at: i64,
}

/// The hand-written store: tokio-postgres on a current-thread runtime, as the binding's client
/// uses it, with its statements prepared once.
struct Base {
    rt: tokio::runtime::Runtime,
    client: Client,
    read: Statement,
    upsert: Statement,
    range: Statement,
}

const PLAIN_TABLE: &str = "CREATE TABLE plain.memory (
  agent text NOT NULL,
  key text COLLATE \"C\" NOT NULL,
  category text NOT NULL,
  value bytea NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (agent, key)
)";

impl Base {
    fn new(url: &str) -> Result<Base, Fail> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
        let config: tokio_postgres::Config = url.parse()?;
        let (client, connection) = rt.block_on(config.connect(NoTls))?;
        rt.spawn(async move {
            let _ = connection.await;
        });
        let (read, upsert, range) = rt.block_on(async {
            Ok::<_, tokio_postgres::Error>((
                client.prepare("SELECT key, category, value, updated_at FROM plain.memory WHERE agent = $1 AND key = $2").await?,
                client
                    .prepare(
                        "INSERT INTO plain.memory (agent, key, category, value, updated_at) VALUES ($1, $2, $3, $4, $5)
                         ON CONFLICT (agent, key) DO UPDATE SET category = EXCLUDED.category, value = EXCLUDED.value, updated_at = EXCLUDED.updated_at",
                    )
                    .await?,
                client
                    .prepare(
                        "SELECT key, category, value, updated_at FROM plain.memory
                         WHERE agent = $1 AND key >= $2 AND key < $3 ORDER BY updated_at DESC LIMIT $4",
                    )
                    .await?,
            ))
        })?;
        Ok(Base { rt, client, read, upsert, range })
    }

    fn row(r: &tokio_postgres::Row) -> Plain {
        Plain { key: r.get(0), category: r.get(1), value: r.get(2), updated_at: r.get(3) }
    }

    fn read(&mut self, agent: &str, key: &str) -> Result<bool, Fail> {
        let rows = self.rt.block_on(self.client.query(&self.read, &[&agent, &key]))?;
        Ok(rows.first().map(Base::row).is_some())
    }

    fn write(&mut self, agent: &str, key: &str) -> Result<(), Fail> {
        let n = self.rt.block_on(self.client.execute(&self.upsert, &[&agent, &key, &CATEGORY.as_str(), &&VALUE[..], &now_ms()]))?;
        if n != 1 {
            return Err(format!("upsert changed {n} rows").into());
        }
        Ok(())
    }

    fn query(&mut self, agent: &str, prefix: &str, limit: i64) -> Result<usize, Fail> {
        let end = prefix_end(prefix);
        let rows = self.rt.block_on(self.client.query(&self.range, &[&agent, &prefix, &end, &limit]))?;
        Ok(rows.iter().map(Base::row).count())
    }
}

fn with_database(url: &str, db: &str) -> String {
    let (head, query) = url.split_once('?').unwrap_or((url, ""));
    let base = &head[..head.rfind('/').expect("a database in the URL")];
    format!("{base}/{db}?{query}")
}

struct Setup {
    root: String,
    name: String,
    role: String,
    url: String,
}

impl Setup {
    fn new(admin: &str, port: u16) -> Result<Setup, Fail> {
        let name = format!("rotifer_bench_{}", std::process::id());
        let role = format!("{name}_dep");
        let mut root = Connection::new(admin, Timeouts::default())?;
        root.batch(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))?;
        root.batch(&format!("CREATE DATABASE {name}"))?;
        let mut db = Connection::new(&with_database(admin, &name), Timeouts::default())?;
        // The server's clock (no test clock): as a deployment runs.
        setup(&mut db, Some(&role), false)?;
        let password = format!("bench{}", std::process::id());
        db.batch(&format!(
            "ALTER ROLE {role} PASSWORD {pw};
             CREATE SCHEMA plain AUTHORIZATION {role};
             SET ROLE {role};
             {PLAIN_TABLE};
             RESET ROLE;",
            pw = quote_literal(&password)
        ))?;
        let url = format!("postgresql://{role}:{password}@127.0.0.1:{port}/{name}?sslmode=disable");
        Ok(Setup { root: admin.to_string(), name, role, url })
    }

    fn teardown(&self) -> Result<(), Fail> {
        let mut c = Connection::new(&self.root, Timeouts::default())?;
        c.batch(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name))?;
        c.batch(&format!("DROP ROLE IF EXISTS {}", self.role))?;
        Ok(())
    }
}

fn fill(ours: &mut Ours, base: &mut Base, agent: &str, n: u64) -> Result<(), Fail> {
    for i in 0..n {
        let k = group_key(i);
        ours.write(agent, &k)?;
        base.write(agent, &k)?;
    }
    Ok(())
}

fn serve() -> Result<(), Fail> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut state: Option<(Setup, Ours, Base)> = None;
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let cmd: Value = serde_json::from_str(&line)?;
        let answer = match cmd["cmd"].as_str() {
            Some("setup") => {
                let admin = cmd["admin"].as_str().ok_or("setup: no admin URL")?;
                let port = cmd["port"].as_u64().ok_or("setup: no port")? as u16;
                let s = Setup::new(admin, port)?;
                let mut ours = Ours::new(&s.url)?;
                let mut base = Base::new(&s.url)?;
                let started = Instant::now();
                fill(&mut ours, &mut base, MAIN_AGENT, cmd["entries"].as_u64().unwrap_or(0))?;
                for w in 0..cmd["writers"].as_u64().unwrap_or(0) {
                    fill(&mut ours, &mut base, &format!("bench-w-{w}"), cmd["writerEntries"].as_u64().unwrap_or(0))?;
                }
                // Fresh statistics for the planner, as autovacuum would have by now.
                let mut admin_db = Connection::new(&with_database(admin, &s.name), Timeouts::default())?;
                admin_db.batch("VACUUM ANALYZE")?;
                let version: String = admin_db.query("SELECT current_setting('server_version')", &[])?[0].get(0);
                let fill_s = started.elapsed().as_secs_f64();
                let url = s.url.clone();
                state = Some((s, ours, base));
                json!({ "ok": true, "url": url, "server": format!("PostgreSQL {version}"), "fillSeconds": fill_s })
            }
            Some("batch") => {
                let (_, ours, base) = state.as_mut().ok_or("batch before setup")?;
                batch(ours, base, &cmd)?
            }
            Some("teardown") => {
                if let Some((s, ours, base)) = state.take() {
                    drop(ours);
                    drop(base);
                    s.teardown()?;
                }
                json!({ "ok": true })
            }
            other => return Err(format!("unknown command {other:?}").into()),
        };
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    if let Some((s, ours, base)) = state.take() {
        drop(ours);
        drop(base);
        s.teardown()?;
    }
    Ok(())
}

fn batch(ours: &mut Ours, base: &mut Base, cmd: &Value) -> Result<Value, Fail> {
    let side = cmd["side"].as_str().ok_or("batch: no side")?;
    let op = cmd["op"].as_str().ok_or("batch: no op")?;
    let keys: Vec<String> = cmd["keys"].as_array().ok_or("batch: no keys")?.iter().map(|k| k.as_str().unwrap_or_default().to_string()).collect();
    let expect = cmd["expect"].as_u64().unwrap_or(0) as usize;
    let agent = cmd["agent"].as_str().unwrap_or(MAIN_AGENT);
    let mut bad = 0usize;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    for k in &keys {
        let ok = match (side, op) {
            ("ours", "read-hit") => ours.read(agent, k)?,
            ("ours", "read-miss") => !ours.read(agent, k)?,
            ("ours", "update" | "create") => ours.write(agent, k).map(|_| true)?,
            ("ours", "query") => ours.query(agent, k, 100)? == expect,
            ("base", "read-hit") => base.read(agent, k)?,
            ("base", "read-miss") => !base.read(agent, k)?,
            ("base", "update" | "create") => base.write(agent, k).map(|_| true)?,
            ("base", "query") => base.query(agent, k, 100)? == expect,
            _ => return Err(format!("batch: unknown side or op {side} {op}").into()),
        };
        if !ok {
            bad += 1;
        }
    }
    let wall = t0.elapsed().as_nanos() as u64;
    let cpu = cpu_ns() - c0;
    if bad > 0 {
        return Err(format!("{side} {op}: {bad} of {} calls answered something unexpected", keys.len()).into());
    }
    Ok(json!({ "wall": wall, "cpu": cpu, "calls": keys.len() }))
}

/// One process of the concurrency rows: its own agent, its own connection, random updates.
fn writer(args: &str) -> Result<(), Fail> {
    let a: Value = serde_json::from_str(args)?;
    let url = a["url"].as_str().ok_or("writer: no url")?;
    let side = a["side"].as_str().ok_or("writer: no side")?;
    let agent = a["agent"].as_str().ok_or("writer: no agent")?;
    let entries = a["entries"].as_u64().ok_or("writer: no entries")?.max(1);
    let count = a["count"].as_u64().ok_or("writer: no count")?;
    let mut seed = a["seed"].as_u64().unwrap_or(1) | 1;
    let mut next = move || {
        // xorshift64: the same keys for both sides.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % entries
    };
    let keys: Vec<String> = (0..count + 20).map(|_| group_key(next())).collect();
    let mut ours = if side == "ours" { Some(Ours::new(url)?) } else { None };
    let mut base = if side == "base" { Some(Base::new(url)?) } else { None };
    let mut write = |k: &str| -> Result<(), Fail> {
        match (&mut ours, &mut base) {
            (Some(o), _) => o.write(agent, k),
            (_, Some(b)) => b.write(agent, k),
            _ => Err(format!("writer: unknown side {side}").into()),
        }
    };
    for k in &keys[..20] {
        write(k)?;
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")?;
    out.flush()?;
    let mut go = String::new();
    std::io::stdin().read_line(&mut go)?;
    let start = SystemTime::now().duration_since(UNIX_EPOCH)?;
    for k in &keys[20..] {
        write(k)?;
    }
    let end = SystemTime::now().duration_since(UNIX_EPOCH)?;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    writeln!(out, "{}", json!({ "start": ms(start), "end": ms(end), "writes": count }))?;
    Ok(())
}
