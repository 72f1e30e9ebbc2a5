//! The PostgreSQL binding's client against a real server (R-BIND-2/4/6): setup, the four calls
//! as a deployment's role, and a commit whose acknowledgement is lost on the way back.
//!
//! Runs beside the cluster `scripts/pg-cluster.js` starts (`npm test` does); without one it says
//! so and passes, except under CI=true.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

mod common;

use common::pg::{admin_url, with_database};
use rotifer_memory_core::model::RetentionArg;
use rotifer_memory_core::postgres::calls::{self, Caller, Outcome, QueryArgs, WriteArgs};
use rotifer_memory_core::postgres::client::{Connection, Timeouts};
use rotifer_memory_core::postgres::setup::{latest_version, quote_literal, setup};
use rotifer_memory_core::{Category, ErrorCode};

const GENE: &str = "v2:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A fresh database, set up, and a deployment role's URL over TCP through `port` (the server's,
/// or a proxy's).
struct Db {
    admin: String,
    name: String,
    role: String,
    password: String,
}

impl Db {
    fn new(admin: &str) -> Db {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("rotifer_rs_{}_{n}", std::process::id());
        let mut c = Connection::new(admin, Timeouts::default()).unwrap();
        c.batch(&format!("CREATE DATABASE {name}")).unwrap();
        let admin = with_database(admin, &name);
        let mut a = Connection::new(&admin, Timeouts::default()).unwrap();
        let report = setup(&mut a, Some(&format!("{name}_dep")), true).unwrap();
        assert_eq!((report.from_version, report.to_version), (0, latest_version()));
        let password = format!("pw{n}x{}", std::process::id());
        a.batch(&format!("ALTER ROLE {name}_dep PASSWORD {}", quote_literal(&password))).unwrap();
        Db { admin, role: format!("{name}_dep"), name, password }
    }

    fn role_url(&self, port: u16) -> String {
        format!("postgresql://{}:{}@127.0.0.1:{port}/{}?sslmode=disable", self.role, self.password, self.name)
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

fn port() -> u16 {
    std::env::var("ROTIFER_TEST_PG_PORT").unwrap().parse().unwrap()
}

fn who(now: i64) -> Caller<'static> {
    Caller { agent: "agent-1", gene: Some(GENE), domain: Some("text.notes"), now: Some(now) }
}

fn write_args<'a>(key: &'a str, value: &'a [u8]) -> WriteArgs<'a> {
    WriteArgs { key, value, category: Category::Context, access: None, retention: RetentionArg::Omitted }
}

#[test]
fn setup_twice_then_the_four_calls_as_a_deployment() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root);
    let mut again = Connection::new(&db.admin, Timeouts::default()).unwrap();
    let report = setup(&mut again, Some(&db.role), true).unwrap();
    assert_eq!((report.from_version, report.to_version), (latest_version(), latest_version()), "nothing to migrate");

    let mut c = Connection::new(&db.role_url(port()), Timeouts::default()).unwrap();
    let stored = match calls::write(&mut c, who(1_000), &write_args("notes/1", b"hello")).unwrap() {
        Outcome::Done(e) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!((stored.key.as_str(), stored.created_at, stored.value.as_slice()), ("notes/1", 1_000, &b"hello"[..]));
    match calls::read(&mut c, who(1_001), "notes/1", None).unwrap() {
        Outcome::Done(Some(e)) => assert_eq!(e, stored),
        other => panic!("{other:?}"),
    }
    let q = QueryArgs { category: None, key_prefix: Some("notes/"), since: None, until: None, limit: 10 };
    match calls::query(&mut c, who(1_002), &q).unwrap() {
        Outcome::Done(entries) => assert_eq!(entries.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["notes/1"]),
        other => panic!("{other:?}"),
    }
    assert_eq!(calls::delete(&mut c, who(1_003), "notes/1").unwrap(), Outcome::Done(()));
    match calls::delete(&mut c, who(1_004), "notes/1").unwrap() {
        Outcome::Refused(r) => assert_eq!(r.code, ErrorCode::NotFound),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_password_never_reaches_a_message() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root);
    let wrong = format!("postgresql://{}:not-{}@127.0.0.1:{}/{}?sslmode=disable", db.role, db.password, port(), db.name);
    let mut c = Connection::new(&wrong, Timeouts::default()).unwrap();
    let e = calls::read(&mut c, who(1), "k", None).err().expect("refused login");
    assert_eq!(e.code, ErrorCode::StorageError);
    assert!(!e.message.contains(&db.password), "{}", e.message);
}

/// A TCP proxy to the server whose open connections can be made to lose every reply, or to hold
/// their requests back until released (delivered late, after the client gave up).
struct Proxy {
    port: u16,
    faults: Arc<Faults>,
}

#[derive(Default)]
struct Faults {
    /// Connections opened before this generation are the ones a fault hits.
    generation: AtomicU64,
    lose_replies: AtomicBool,
    hold_requests: AtomicBool,
    released: AtomicBool,
    /// How many replies were lost, and requests held: the test proves its failure happened.
    lost: AtomicU64,
    held: AtomicU64,
    /// What the server answered to requests delivered late.
    late_replies: std::sync::Mutex<Vec<u8>>,
}

impl Proxy {
    fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let faults = Arc::new(Faults::default());
        let f = faults.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { break };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else { continue };
                let born = f.generation.load(Ordering::SeqCst);
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let up = f.clone();
                std::thread::spawn(move || pipe(c2, s2, &up, born, Direction::Request));
                let down = f.clone();
                std::thread::spawn(move || pipe(server, client, &down, born, Direction::Reply));
            }
        });
        Proxy { port, faults }
    }

    /// From now on, connections already open lose every reply (and are closed); new ones work.
    fn lose_replies_of_open_connections(&self) {
        self.faults.generation.fetch_add(1, Ordering::SeqCst);
        self.faults.lose_replies.store(true, Ordering::SeqCst);
    }

    /// From now on, requests on connections already open wait in the proxy until `release`.
    fn hold_requests_of_open_connections(&self) {
        self.faults.generation.fetch_add(1, Ordering::SeqCst);
        self.faults.hold_requests.store(true, Ordering::SeqCst);
    }

    fn release(&self) {
        self.faults.released.store(true, Ordering::SeqCst);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Request,
    Reply,
}

fn pipe(mut from: TcpStream, mut to: TcpStream, f: &Faults, born: u64, direction: Direction) {
    let mut buf = [0u8; 16384];
    let hit = || f.generation.load(Ordering::SeqCst) > born;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if direction == Direction::Reply && hit() && f.lose_replies.load(Ordering::SeqCst) {
            f.lost.fetch_add(1, Ordering::SeqCst);
            // The server's answer (its COMMIT included) goes nowhere; the client sees the
            // connection end.
            let _ = to.shutdown(std::net::Shutdown::Both);
            break;
        }
        if direction == Direction::Request && hit() && f.hold_requests.load(Ordering::SeqCst) {
            f.held.fetch_add(1, Ordering::SeqCst);
            while !f.released.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if direction == Direction::Reply && hit() && f.released.load(Ordering::SeqCst) {
            f.late_replies.lock().unwrap().extend_from_slice(&buf[..n]);
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

#[test]
fn a_commit_whose_acknowledgement_is_lost_is_found_out_and_not_applied_twice() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root);
    let proxy = Proxy::start(port());
    let timeouts = Timeouts { connect: Duration::from_secs(5), call: Duration::from_secs(5) };
    let mut c = Connection::new(&db.role_url(proxy.port), timeouts).unwrap();
    // Prepared and connected: the next write is one round trip.
    assert!(matches!(calls::write(&mut c, who(1_000), &write_args("warm", b"x")).unwrap(), Outcome::Done(_)));
    proxy.lose_replies_of_open_connections();
    let stored = match calls::write(&mut c, who(2_000), &write_args("lost-ack", b"once")).unwrap() {
        Outcome::Done(e) => e,
        other => panic!("a committed write is reported done: {other:?}"),
    };
    assert_eq!((stored.key.as_str(), stored.updated_at, stored.value.as_slice()), ("lost-ack", 2_000, &b"once"[..]));
    assert_eq!(proxy.faults.lost.load(Ordering::SeqCst), 1, "the write's answer was lost on the way");

    let mut check = Connection::new(&db.role_url(port()), Timeouts::default()).unwrap();
    let rows = check.query("SELECT count(*)::int FROM rotifer.audit WHERE key = 'lost-ack'", &[]).unwrap();
    assert_eq!(rows[0].get::<_, i32>(0), 1, "applied once, audited once");
    match calls::read(&mut check, who(3_000), "lost-ack", None).unwrap() {
        Outcome::Done(Some(e)) => assert_eq!((e.created_at, e.value.as_slice()), (2_000, &b"once"[..])),
        other => panic!("{other:?}"),
    }
}

#[test]
fn r_bind_6_a_change_delivered_after_its_call_gave_up_is_never_applied() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root);
    let proxy = Proxy::start(port());
    let timeouts = Timeouts { connect: Duration::from_secs(5), call: Duration::from_millis(800) };
    let mut c = Connection::new(&db.role_url(proxy.port), timeouts).unwrap();
    assert!(matches!(calls::write(&mut c, who(1_000), &write_args("warm", b"x")).unwrap(), Outcome::Done(_)));
    proxy.hold_requests_of_open_connections();
    // The request waits in the network; the call gives up at its deadline, asks on a new
    // connection, learns it did not commit, and says so. The agent is new: its row, which the
    // held call would create, is made by the settling so that the tombstone can be written.
    let fresh = Caller { agent: "agent-new", ..who(2_000) };
    let e = calls::write(&mut c, fresh, &write_args("late", b"never")).err().expect("the call fails");
    assert_eq!(e.code, ErrorCode::StorageError);
    assert!(e.message.contains("no answer within 800 ms"), "{}", e.message);
    assert_eq!(proxy.faults.held.load(Ordering::SeqCst), 1, "the request was held back");

    // Now the request arrives: the server runs it, and the tombstone refuses it whole.
    proxy.release();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !proxy.faults.late_replies.lock().unwrap().windows(5).any(|w| w == b"23505") {
        assert!(std::time::Instant::now() < deadline, "the late request was answered with a unique violation");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut check = Connection::new(&db.role_url(port()), Timeouts::default()).unwrap();
    let rows = check.query("SELECT (SELECT count(*)::int FROM rotifer.entries WHERE key = 'late') + (SELECT count(*)::int FROM rotifer.audit WHERE key = 'late')", &[]).unwrap();
    assert_eq!(rows[0].get::<_, i32>(0), 0, "neither the entry nor its audit row");
    let rows = check.query("SELECT last_seq::int FROM rotifer.agents WHERE agent_id = 'agent-new'", &[]).unwrap();
    assert_eq!(rows[0].get::<_, i32>(0), 0, "nothing counted on the new agent");
    // And the agent serves the next call as usual.
    assert!(matches!(calls::write(&mut check, who(3_000), &write_args("after", b"y")).unwrap(), Outcome::Done(_)));
}
