//! The deployer's surface on PostgreSQL (R-HOST-1/2, R-BIND-2/3): the same memory written on
//! both bindings answers the same usage, listing pages, entries, deletes, errors and audit lines.
//!
//! Runs beside the cluster `scripts/pg-cluster.js` starts; without one it says so and passes,
//! except under CI=true.

mod common;

use common::pg::{admin_url, Db};
use common::{gene, s, Project, DAY, T0};
use rotifer_memory_core::audit_log::LogReader;
use rotifer_memory_core::binding::{pool, Agent, Binding};
use rotifer_memory_core::inspect;
use rotifer_memory_core::memory::{create_agent_memory_of, delete_agent_database_of, delete_agent_memory_of, ensure_agent_memory_of};
use rotifer_memory_core::model::RetentionArg;
use rotifer_memory_core::postgres::calls::{self, Caller, Outcome, WriteArgs};
use rotifer_memory_core::postgres::client::{Connection, Timeouts};
use rotifer_memory_core::{Arg, Category, DataPolicy, ErrorCode};

/// The same agent on both bindings: the SQLite file of `project`, and the database of `db`.
struct Both {
    sqlite: Agent,
    pg: Agent,
    url: String,
}

const AGENT: &str = "agent-7";
const POLICY: DataPolicy = DataPolicy { anonymization_supported: false, max_retention_days: Some(30) };

fn both(project: &Project, db: &Db) -> Both {
    let sqlite = Agent::sqlite(project.layout(), AGENT);
    let pg = Agent { layout: project.layout(), agent_id: AGENT.into(), binding: Binding::Postgres(pool(&db.url).unwrap()) };
    for a in [&sqlite, &pg] {
        create_agent_memory_of(a, 4096, POLICY).unwrap();
    }
    Both { sqlite, pg, url: db.url.clone() }
}

impl Both {
    /// Gene `a` writes on both, at `now`; `days`: its own retention.
    fn write(&self, project: &Project, key: &str, value: &[u8], category: Category, days: Option<i64>, now: i64) {
        let retention = match days {
            None => Arg::Undefined,
            Some(d) => common::obj(&[("maxRetentionDays", Arg::Number(d as f64)), ("autoDeleteOnTermination", Arg::Bool(false)), ("anonymizationSupported", Arg::Bool(false))]),
        };
        project.gene(AGENT).write(&s(key), Arg::Bytes(value.to_vec()), &s(category.as_str()), &Arg::Undefined, &retention, now).unwrap();
        let mut c = Connection::new(&self.url, Timeouts::default()).unwrap();
        let g = gene('a');
        let who = Caller { agent: AGENT, gene: Some(&g), domain: Some("d"), now: Some(now) };
        let retention = match days {
            None => RetentionArg::Omitted,
            Some(d) => RetentionArg::Policy(rotifer_memory_core::RetentionPolicy { max_retention_days: Some(d), auto_delete_on_termination: false, anonymization_supported: false }),
        };
        match calls::write(&mut c, who, &WriteArgs { key, value, category, access: None, retention }).unwrap() {
            Outcome::Done(_) => {}
            other => panic!("{other:?}"),
        }
    }

    fn log(&self, agent: &Agent) -> Vec<serde_json::Value> {
        let mut r = LogReader::of(agent, false).unwrap();
        let mut out = Vec::new();
        while r.next_lines(3, |l| out.push(serde_json::from_slice(l).unwrap())).unwrap() > 0 {}
        out
    }
}

fn fill(project: &Project, b: &Both) {
    b.write(project, "pref/theme", b"dark", Category::Preference, None, T0);
    b.write(project, "pattern/a", b"0123456789", Category::Pattern, None, T0 + 1);
    b.write(project, "cache/x", b"xxxxxxxx", Category::Cache, Some(1), T0 + 2);
    b.write(project, "cache/y", b"y", Category::Cache, None, T0 + 3);
    b.write(project, "ctx/\u{e9}t\u{e9}", b"summer", Category::Context, None, T0 + 4);
    b.write(project, "pattern/a", b"0123", Category::Pattern, None, T0 + 5);
}

#[test]
fn r_bind_2_usage_entries_and_pages_are_the_same_on_both_bindings() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "dep");
    let project = Project::new("pg-views");
    let b = both(&project, &db);
    fill(&project, &b);
    let now = T0 + 10;
    let (u1, u2) = (inspect::inspect(&b.sqlite, now).unwrap().unwrap(), inspect::inspect(&b.pg, now).unwrap().unwrap());
    assert_eq!(u1, u2);
    assert_eq!((u2.quota, u2.entries, u2.data_policy), (4096, 5, POLICY));
    assert_eq!(u2.next_expiry(), Some(T0 + 2 + DAY), "the entry of its own retention expires first");

    for limit in [1, 2, 1000] {
        for category in [None, Some(Category::Cache), Some(Category::Preference)] {
            for prefix in [None, Some("pattern/"), Some("c"), Some("nothing")] {
                let (mut after1, mut after2): (Option<String>, Option<String>) = (None, None);
                let mut first = true;
                loop {
                    let p1 = inspect::list_page(&b.sqlite, category, prefix, after1.as_deref(), limit, first, now).unwrap();
                    let p2 = inspect::list_page(&b.pg, category, prefix, after2.as_deref(), limit, first, now).unwrap();
                    assert_eq!(p1, p2, "limit {limit}, {category:?}, {prefix:?}, after {after1:?}");
                    first = false;
                    if !p2.more {
                        break;
                    }
                    after1 = p1.entries.last().map(|l| l.key.clone());
                    after2 = p2.entries.last().map(|l| l.key.clone());
                }
            }
        }
    }
    let all = inspect::list_all(&b.pg, None, None, now).unwrap();
    assert_eq!(all.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(), ["cache/x", "cache/y", "ctx/\u{e9}t\u{e9}", "pattern/a", "pref/theme"]);

    for key in ["pattern/a", "ctx/\u{e9}t\u{e9}", "missing"] {
        assert_eq!(inspect::get_entry(&b.sqlite, &s(key), now).unwrap(), inspect::get_entry(&b.pg, &s(key), now).unwrap(), "{key}");
    }
    let e = inspect::get_entry(&b.pg, &s("pattern/a"), now).unwrap().unwrap();
    assert_eq!((e.value.as_slice(), e.created_at, e.updated_at), (&b"0123"[..], T0 + 1, T0 + 5));
    // The same refusal of a bad key, before the server is asked.
    let (e1, e2) = (inspect::get_entry(&b.sqlite, &s(""), now).unwrap_err(), inspect::get_entry(&b.pg, &s(""), now).unwrap_err());
    assert_eq!((e1.code, e1.message), (e2.code, e2.message));
    let (e1, e2) = (inspect::list_page(&b.sqlite, None, None, None, 0, false, now).unwrap_err(), inspect::list_page(&b.pg, None, None, None, 0, false, now).unwrap_err());
    assert_eq!((e1.code, e1.message), (e2.code, e2.message));

    // A day later the entry of one day has expired: left out of the usage (never purged by
    // it), purged by the listing, on both.
    let later = T0 + 2 + DAY;
    assert_eq!(inspect::inspect(&b.sqlite, later).unwrap(), inspect::inspect(&b.pg, later).unwrap());
    assert!(inspect::get_entry(&b.pg, &s("cache/x"), later).unwrap().is_none());
    let p1 = inspect::list_page(&b.sqlite, None, None, None, 100, true, later).unwrap();
    let p2 = inspect::list_page(&b.pg, None, None, None, 100, true, later).unwrap();
    assert_eq!(p1, p2);
    assert_eq!(p2.totals.unwrap().entries, 4);
    let expired = |a: &Agent| b.log(a).into_iter().filter(|l| l["action"] == "memory.expire").count();
    assert_eq!((expired(&b.sqlite), expired(&b.pg)), (1, 1));

    // An agent with no memory: nothing, and none is created.
    let ghost = Agent { agent_id: "ghost".into(), ..b.pg.clone() };
    assert_eq!(inspect::inspect(&ghost, now).unwrap(), None);
    let empty = inspect::list_page(&ghost, None, None, None, 10, true, now).unwrap();
    assert_eq!((empty.entries.len(), empty.totals.unwrap().quota), (0, 0));
    assert_eq!(inspect::inspect(&ghost, now).unwrap(), None, "a listing created nothing");
}

#[test]
fn r_host_2_deletes_errors_and_the_audit_lines_are_the_same_on_both_bindings() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "dep");
    let project = Project::new("pg-delete");
    let b = both(&project, &db);
    fill(&project, &b);
    let now = T0 + 20;
    let del = |a: &Agent, key: Option<&str>, category: Option<&str>, prefix: Option<&str>| {
        let (k, c, p) = (key.map(s), category.map(s), prefix.map(s));
        delete_agent_memory_of(a, k.as_ref(), c.as_ref(), p.as_ref(), now)
    };
    for (key, category, prefix) in [(Some("missing"), None, None), (None, None, None), (Some("k"), Some("CACHE"), None), (None, Some("NOPE"), None), (None, None, Some(""))] {
        let (e1, e2) = (del(&b.sqlite, key, category, prefix).unwrap_err(), del(&b.pg, key, category, prefix).unwrap_err());
        assert_eq!((e1.code, &e1.message), (e2.code, &e2.message), "{key:?} {category:?} {prefix:?}");
    }
    assert_eq!(del(&b.pg, Some("missing"), None, None).unwrap_err().code, ErrorCode::NotFound);
    for (key, category, prefix, n) in [(Some("pref/theme"), None, None, 1), (None, Some("CACHE"), None, 2), (None, None, Some("nothing/"), 0), (None, Some("PATTERN"), Some("pattern/"), 1)] {
        assert_eq!(del(&b.sqlite, key, category, prefix).unwrap(), n);
        assert_eq!(del(&b.pg, key, category, prefix).unwrap(), n, "{key:?} {category:?} {prefix:?}");
    }
    assert_eq!(inspect::inspect(&b.sqlite, now).unwrap(), inspect::inspect(&b.pg, now).unwrap());

    // The audit lines, in order, of the same shape and the same fields; every one committed.
    let (l1, l2) = (b.log(&b.sqlite), b.log(&b.pg));
    let actions = |l: &[serde_json::Value]| l.iter().map(|x| format!("{} {} {}", x["action"], x["actor"], x["key"])).collect::<Vec<_>>();
    assert_eq!(actions(&l1), actions(&l2));
    assert!(l2.iter().all(|l| l["committed"] == true));
    let deletes: Vec<_> = l2.iter().filter(|l| l["action"] == "memory.delete").collect();
    assert_eq!(deletes.len(), 4);
    assert!(deletes.iter().all(|l| l["actor"] == "deployer"));
    for (a, b) in l1.iter().zip(&l2) {
        let fields = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(fields(a), fields(b), "{a} / {b}");
        for f in ["ts", "agentId", "action", "actor", "key", "entryId", "category", "size", "txLine"] {
            assert_eq!(a[f], b[f], "{f}: {a} / {b}");
        }
    }
    // Text, field for field: the lines go over as written.
    let mut r = LogReader::of(&b.pg, false).unwrap();
    assert_eq!((r.len(), r.skipped, r.remaining()), (l2.len(), 0, l2.len()));
    assert_eq!(r.actions.iter().find(|(a, _)| a == "memory.delete").map(|x| x.1), Some(4));
    r.skip(l2.len() - 2);
    let mut tail = Vec::new();
    assert_eq!(r.next_lines(10, |l| tail.push(serde_json::from_slice::<serde_json::Value>(l).unwrap())).unwrap(), 2);
    assert_eq!(tail, l2[l2.len() - 2..]);
    assert_eq!(r.next_lines(10, |_| ()).unwrap(), 0);
    assert!(r.last_seq.is_some());
}

#[test]
fn r_host_1_ensure_keeps_limits_and_delete_drops_the_agent_with_a_drop_line_and_no_password() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "dep");
    let project = Project::new("pg-drop");
    let pg = Agent { layout: project.layout(), agent_id: "a-9".into(), binding: Binding::Postgres(pool(&db.url).unwrap()) };
    let strict = DataPolicy { anonymization_supported: true, max_retention_days: Some(7) };
    assert!(ensure_agent_memory_of(&pg, 2048, strict).unwrap(), "missing: created");
    assert!(!ensure_agent_memory_of(&pg, 999_999, DataPolicy { anonymization_supported: false, max_retention_days: None }).unwrap());
    let u = inspect::inspect(&pg, T0).unwrap().unwrap();
    assert_eq!((u.quota, u.data_policy), (2048, strict), "an existing memory keeps its limits");
    create_agent_memory_of(&pg, 8192, POLICY).unwrap();
    assert_eq!(inspect::inspect(&pg, T0).unwrap().unwrap().quota, 8192, "create reconfigures");

    let mut c = Connection::new(&db.url, Timeouts::default()).unwrap();
    let g = gene('a');
    let who = Caller { agent: "a-9", gene: Some(&g), domain: None, now: Some(T0) };
    calls::write(&mut c, who, &WriteArgs { key: "k", value: b"value", category: Category::Context, access: None, retention: RetentionArg::Omitted }).unwrap();

    let dropped = delete_agent_database_of(&pg, T0 + 1).unwrap();
    assert_eq!((dropped.existed, dropped.entries, dropped.used, dropped.removed.len()), (true, 1, 6, 0));
    assert_eq!(inspect::inspect(&pg, T0 + 2).unwrap(), None, "the agent is gone from the server");
    assert_eq!(LogReader::of(&pg, false).unwrap().len(), 0, "with its audit rows");
    let line = std::fs::read_to_string(project.0.join(".rotifer/audit.jsonl")).unwrap();
    let drop: serde_json::Value = serde_json::from_str(line.lines().last().unwrap()).unwrap();
    assert_eq!((drop["action"].as_str(), drop["actor"].as_str(), drop["size"].as_u64()), (Some("memory.drop"), Some("deployer"), Some(6)));
    assert!(drop["reason"].as_str().unwrap().contains(&format!("127.0.0.1:{}", std::env::var("ROTIFER_TEST_PG_PORT").unwrap())));
    assert!(!line.contains(&db.password), "{line}");
    let again = delete_agent_database_of(&pg, T0 + 3).unwrap();
    assert!(!again.existed);

    // Another deployment's agent is not this one's to configure.
    db.admin(&format!("SELECT rotifer.setup_role('{}_other', true)", db.name));
    db.admin(&format!("INSERT INTO rotifer.agents (agent_id, owner, quota, anonymization_supported, created_ms) VALUES ('theirs', '{}_other', 10, false, 0)", db.name));
    let theirs = Agent { agent_id: "theirs".into(), ..pg.clone() };
    assert_eq!(ensure_agent_memory_of(&theirs, 100, POLICY).unwrap_err().code, ErrorCode::AccessDenied);
    assert_eq!(inspect::inspect(&theirs, T0).unwrap(), None, "row-level security hides it");
    assert_eq!(delete_agent_database_of(&theirs, T0).unwrap().existed, false);
    db.admin(&format!("DELETE FROM rotifer.agents WHERE agent_id = 'theirs'; DROP OWNED BY {0}_other; DROP ROLE {0}_other", db.name));
}

#[test]
fn r_bind_3_following_reads_new_rows_once_each_and_a_trim_shows_as_a_line() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "dep");
    let project = Project::new("pg-follow");
    let pg = Agent { layout: project.layout(), agent_id: "f-1".into(), binding: Binding::Postgres(pool(&db.url).unwrap()) };
    create_agent_memory_of(&pg, 1 << 20, POLICY).unwrap();
    let mut c = Connection::new(&db.url, Timeouts::default()).unwrap();
    let g = gene('a');
    let write = |c: &mut Connection, key: &str, now: i64| {
        let who = Caller { agent: "f-1", gene: Some(&g), domain: None, now: Some(now) };
        calls::write(c, who, &WriteArgs { key, value: b"v", category: Category::Cache, access: None, retention: RetentionArg::Omitted }).unwrap();
    };
    write(&mut c, "first", T0);
    let mut reader = LogReader::of(&pg, true).unwrap();
    let mut seen = Vec::new();
    let take = |r: &mut LogReader| {
        let mut got = Vec::new();
        while r.next_lines(2, |l| got.push(serde_json::from_slice::<serde_json::Value>(l).unwrap())).unwrap() > 0 {}
        got
    };
    seen.extend(take(&mut reader));
    assert_eq!(reader.poll().unwrap(), 0, "nothing new");
    let mut expected = vec!["first".to_string()];
    for round in 0..3 {
        for i in 0..5 {
            let k = format!("r{round}/{i}");
            write(&mut c, &k, T0 + 1);
            expected.push(k);
        }
        assert_eq!(reader.poll().unwrap(), 5, "round {round}");
        seen.extend(take(&mut reader));
        assert_eq!(reader.len(), 1 + 5 * (round + 1));
    }
    let keys: Vec<String> = seen.iter().map(|l| l["key"].as_str().unwrap().to_string()).collect();
    assert_eq!(keys, expected);
    assert!(seen.iter().all(|l| l["committed"] == true && l["agentId"] == "f-1" && l["action"] == "memory.create"));

    // The per-agent bound: past it the oldest rows go, and the trim is a line of its own.
    db.admin("UPDATE rotifer.agents SET audit_max_rows = 100 WHERE agent_id = 'f-1'");
    for i in 0..100 {
        write(&mut c, &format!("t/{i}"), T0 + 2);
    }
    assert!(reader.poll().unwrap() > 0);
    let tail = take(&mut reader);
    let trim = tail.iter().find(|l| l["action"] == "memory.audit_trim").expect("a trim line");
    assert_eq!((trim["max"].as_u64(), trim["actor"].is_null(), trim["committed"].as_bool()), (Some(100), true, Some(true)));
    assert!(trim["trimmed"].as_u64().unwrap() > 0);
    let whole = LogReader::of(&pg, false).unwrap();
    assert!(whole.len() <= 101, "{} rows kept", whole.len());
}
