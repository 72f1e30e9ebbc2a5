//! A gene's four calls on PostgreSQL (R-BIND-2): the same calls, made through `GeneMemory` on an
//! agent in the SQLite file and on one in a PostgreSQL database, answer the same entries, the
//! same errors with the same codes and messages, and leave the same audit lines and state.
//!
//! Runs beside the cluster `scripts/pg-cluster.js` starts; without one it says so and passes,
//! except under CI=true.

mod common;

use common::pg::{admin_url, Db};
use common::{gene, obj, s, Project, DAY, T0};
use rotifer_memory_core::audit_log::LogReader;
use rotifer_memory_core::binding::Agent;
use rotifer_memory_core::memory::create_agent_memory_of;
use rotifer_memory_core::{inspect, Arg, DataPolicy, ErrorCode, GeneMemory, GeneOptions};

const AGENT: &str = "agent-9";

/// One gene's handle on each binding.
struct Pair {
    file: GeneMemory,
    pg: GeneMemory,
}

fn handle(project: &Project, url: &str, gene_id: Option<String>, domain: &str) -> GeneMemory {
    GeneMemory::open(GeneOptions {
        agent_id: Some(AGENT.into()),
        gene_id,
        domain: Some(domain.into()),
        root: Some(project.0.to_string_lossy().into()),
        url: Some(url.into()),
    })
    .unwrap()
}

fn pair(project: &Project, db: &Db, gene_id: Option<String>, domain: &str) -> Pair {
    Pair { file: handle(project, "sqlite", gene_id.clone(), domain), pg: handle(project, &db.url, gene_id, domain) }
}

/// Runs `call` on both handles and checks they answer alike; the answer, as text.
fn same<T: std::fmt::Debug>(what: &str, p: &Pair, call: impl Fn(&GeneMemory) -> rotifer_memory_core::Result<T>) -> String {
    let (a, b) = (format!("{:?}", call(&p.file)), format!("{:?}", call(&p.pg)));
    assert_eq!(a, b, "{what}: the file answered the first, PostgreSQL the second");
    a
}

fn err_code<T: std::fmt::Debug>(r: rotifer_memory_core::Result<T>) -> ErrorCode {
    r.unwrap_err().code
}

fn log(agent: &Agent) -> Vec<serde_json::Value> {
    let mut r = LogReader::of(agent, false).unwrap();
    let mut out = Vec::new();
    while r.next_lines(50, |l| out.push(serde_json::from_slice(l).unwrap())).unwrap() > 0 {}
    out
}

fn access(read: &str, write: &str, share: &str) -> Arg {
    obj(&[("readScope", s(read)), ("writeScope", s(write)), ("sharePolicy", s(share))])
}

fn retention(days: f64) -> Arg {
    obj(&[("maxRetentionDays", Arg::Number(days)), ("autoDeleteOnTermination", Arg::Bool(false)), ("anonymizationSupported", Arg::Bool(false))])
}

fn v(text: &str) -> Arg {
    Arg::Bytes(text.as_bytes().to_vec())
}

fn bytes(n: usize, c: u8) -> Arg {
    Arg::Bytes(vec![c; n])
}

#[test]
fn r_bind_2_the_four_calls_answer_alike_on_both_bindings() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "mem");
    let project = Project::new("pg-memory");
    let policy = DataPolicy { anonymization_supported: false, max_retention_days: Some(30) };
    let (file, pg) = (Agent::open(project.layout(), AGENT, Some("sqlite")).unwrap(), Agent::open(project.layout(), AGENT, Some(&db.url)).unwrap());
    for a in [&file, &pg] {
        create_agent_memory_of(a, 2000, policy).unwrap();
    }
    let a = pair(&project, &db, Some(gene('a')), "d");
    let b = pair(&project, &db, Some(gene('b')), "d");
    let other = pair(&project, &db, Some(gene('c')), "e");
    let anonymous = pair(&project, &db, Some("v1:not-an-id".into()), "d");
    let u = Arg::Undefined;

    // Writes, reads, the read scope, the last accessor (R-API-1/2, R-ACC-3).
    same("write pref", &a, |m| m.write(&s("pref/theme"), v("dark"), &s("PREFERENCE"), &u, &u, T0));
    same("write ctx", &a, |m| m.write(&s("ctx/1"), v("mine"), &s("CONTEXT"), &access("CREATOR_GENE_ONLY", "CREATOR_GENE_ONLY", "PRIVATE"), &u, T0 + 1));
    let denied = same("b reads a private entry", &b, |m| m.read(&s("ctx/1"), &u, T0 + 2));
    assert!(denied.contains("AccessDenied") && denied.contains("read of \\\"ctx/1\\\" denied"), "{denied}");
    let read = same("b reads pref", &b, |m| m.read(&s("pref/theme"), &u, T0 + 3));
    assert!(read.contains(&gene('b')), "the reader becomes the last accessor: {read}");
    same("another domain", &other, |m| m.read(&s("pref/theme"), &u, T0 + 3));
    same("wrong category", &a, |m| m.read(&s("pref/theme"), &s("CACHE"), T0 + 3));
    same("missing", &a, |m| m.read(&s("nothing"), &u, T0 + 3));

    // Identity first (R-ACC-4), bad input after the purge (§9), the messages of R-ERR.
    let unidentified = same("no v2 id", &anonymous, |m| m.write(&s("k"), v("v"), &s("CACHE"), &u, &u, T0 + 4));
    assert!(unidentified.contains("no valid v2 id"), "{unidentified}");
    same("no v2 id, delete", &anonymous, |m| m.delete(&s("pref/theme"), T0 + 4));
    same("no v2 id, query", &anonymous, |m| m.query(&u, T0 + 4));
    same("cache with a day", &a, |m| m.write(&s("cache/x"), v("xxxx"), &s("CACHE"), &u, &retention(1.0), T0 + 5));
    let expired = T0 + 5 + DAY;
    for (what, call) in [
        ("empty key", Box::new(|m: &GeneMemory| m.write(&s(""), v("v"), &s("CACHE"), &u, &u, expired).map(|_| ())) as Box<dyn Fn(&GeneMemory) -> rotifer_memory_core::Result<()>>),
        ("bad category", Box::new(|m: &GeneMemory| m.write(&s("k"), v("v"), &s("BOGUS"), &u, &u, expired).map(|_| ()))),
        ("bad value", Box::new(|m: &GeneMemory| m.write(&s("k"), Arg::Number(3.0), &s("CACHE"), &u, &u, expired).map(|_| ()))),
        ("bad filter", Box::new(|m: &GeneMemory| m.query(&obj(&[("limit", Arg::Number(0.0))]), expired).map(|_| ()))),
        ("bad key to delete", Box::new(|m: &GeneMemory| m.delete(&Arg::Number(1.0), expired))),
        ("bad key to read", Box::new(|m: &GeneMemory| m.read(&s("a\u{0}b"), &u, expired).map(|_| ()))),
    ] {
        let answer = same(what, &a, |m| call(m));
        assert!(answer.contains("InvalidInput"), "{what}: {answer}");
    }
    assert_eq!(inspect::get_entry(&pg, &s("cache/x"), expired).unwrap(), None, "the first bad call purged the expired entry");
    let malformed = rotifer_memory_core::MemoryError::invalid("the request is not JSON");
    same("malformed", &a, |m| Err::<(), _>(m.reject_malformed("read", malformed.clone(), expired)));
    same("malformed, no id", &anonymous, |m| Err::<(), _>(m.reject_malformed("write", malformed.clone(), expired)));

    // Policies: only the creator changes them; the data policy and this version's scopes (R-POL).
    let t = expired + 1;
    same("b changes a's policy", &b, |m| m.write(&s("pref/theme"), v("light"), &s("PREFERENCE"), &access("ALL_GENES", "ALL_GENES", "PRIVATE"), &u, t));
    // (Another key: the file's handle folds a refusal that repeats its last one into a count,
    // R-AUD-1, while the server records each one.)
    same("a writes pref/2", &a, |m| m.write(&s("pref/2"), v("x"), &s("PREFERENCE"), &u, &u, t));
    same("b changes a's retention", &b, |m| m.write(&s("pref/2"), v("light"), &s("PREFERENCE"), &u, &retention(2.0), t));
    same("b updates a's value", &b, |m| m.write(&s("pref/theme"), v("light"), &s("PREFERENCE"), &u, &u, t));
    same("b writes a private entry", &b, |m| m.write(&s("ctx/1"), v("theirs"), &s("CONTEXT"), &u, &u, t));
    same("too long a retention", &a, |m| m.write(&s("k/60"), v("v"), &s("CONTEXT"), &u, &retention(60.0), t));
    same("forever", &a, |m| m.write(&s("k/forever"), v("v"), &s("CONTEXT"), &u, &Arg::Null, t));
    same("anonymized share", &a, |m| m.write(&s("k/anon"), v("v"), &s("CONTEXT"), &access("SAME_DOMAIN", "SAME_DOMAIN", "ANONYMIZED_SHARE"), &u, t));
    same("deployer configured", &a, |m| m.write(&s("k/dc"), v("v"), &s("CONTEXT"), &access("DEPLOYER_CONFIGURED", "SAME_DOMAIN", "PRIVATE"), &u, t));

    // Room: eviction CACHE → PATTERN → CONTEXT, oldest first; a refusal changes nothing (R-QUO-3/4).
    for (i, category) in ["PATTERN", "CACHE", "CONTEXT", "CACHE", "PATTERN"].iter().enumerate() {
        same("fill", &a, |m| m.write(&s(&format!("fill/{i}")), bytes(300, b'a' + i as u8), &s(category), &u, &u, t + 1 + i as i64));
    }
    let evicting = same("evicting write", &a, |m| m.write(&s("big"), bytes(1300, b'z'), &s("PREFERENCE"), &u, &u, t + 10));
    assert!(evicting.contains("Ok("), "{evicting}");
    let refused = same("too big", &a, |m| m.write(&s("huge"), bytes(1900, b'h'), &s("PREFERENCE"), &u, &u, t + 11));
    assert!(refused.contains("QuotaExceeded") && refused.contains("1904 bytes"), "{refused}");

    // Queries: order, filters, a prefix of characters a pattern would treat as special (R-API-3).
    same("odd key", &a, |m| m.write(&s("q/%_'\\\u{1F600}"), v("odd"), &s("CONTEXT"), &u, &u, t + 12));
    same("odd key 2", &a, |m| m.write(&s("q/%x"), v("odd"), &s("CONTEXT"), &u, &u, t + 13));
    for filter in [
        Arg::Undefined,
        obj(&[("category", s("CONTEXT"))]),
        obj(&[("keyPrefix", s("q/%_"))]),
        obj(&[("keyPrefix", s("q/%"))]),
        obj(&[("keyPrefix", s("fill/")), ("limit", Arg::Number(2.0))]),
        obj(&[("since", Arg::Number((t + 3) as f64)), ("until", Arg::Number((t + 13) as f64))]),
    ] {
        same(&format!("query {filter:?}"), &a, |m| m.query(&filter, t + 14));
        same(&format!("b queries {filter:?}"), &b, |m| m.query(&filter, t + 14));
    }

    // Deletes (R-API-4): missing, denied, done.
    let missing = same("delete missing", &a, |m| m.delete(&s("nothing"), t + 15));
    assert!(missing.contains("NotFound"), "{missing}");
    same("b deletes a private entry", &b, |m| m.delete(&s("ctx/1"), t + 15));
    same("a deletes it", &a, |m| m.delete(&s("ctx/1"), t + 16));
    same("gone", &a, |m| m.read(&s("ctx/1"), &u, t + 17));

    // The same state and the same audit, line for line (R-BIND-3: every PostgreSQL row committed).
    assert_eq!(inspect::inspect(&file, t + 17).unwrap(), inspect::inspect(&pg, t + 17).unwrap());
    let (l1, l2) = (log(&file), log(&pg));
    let shape = |l: &serde_json::Value| {
        let mut v = l.clone();
        let o = v.as_object_mut().unwrap();
        o.remove("committed");
        v
    };
    assert_eq!(l1.len(), l2.len(), "{:#?}\n---\n{:#?}", l1, l2);
    for (x, y) in l1.iter().zip(&l2) {
        assert_eq!(shape(x), shape(y));
    }
    assert!(l2.iter().all(|l| l["committed"] == true));
    let count = |action: &str| l2.iter().filter(|l| l["action"] == action).count();
    assert_eq!((count("memory.expire"), count("memory.evict"), count("memory.quota_reject")), (1, 3, 1));
    let evicted: Vec<_> = l2.iter().filter(|l| l["action"] == "memory.evict").map(|l| l["key"].as_str().unwrap().to_string()).collect();
    assert_eq!(evicted, ["fill/1", "fill/3", "fill/0"], "CACHE oldest first, then PATTERN");
}

#[test]
fn r_lim_4_a_query_of_more_than_4_mib_is_refused_on_postgresql_too() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "mem");
    let project = Project::new("pg-memory-big");
    let policy = DataPolicy { anonymization_supported: false, max_retention_days: None };
    for url in ["sqlite", db.url.as_str()] {
        create_agent_memory_of(&Agent::open(project.layout(), AGENT, Some(url)).unwrap(), 8 << 20, policy).unwrap();
    }
    let a = pair(&project, &db, Some(gene('a')), "d");
    for i in 0..5 {
        same("MiB", &a, |m| m.write(&s(&format!("big/{i}")), bytes(1 << 20, b'0' + i), &s("CONTEXT"), &Arg::Undefined, &Arg::Undefined, T0 + i as i64));
    }
    let answer = same("all", &a, |m| m.query(&Arg::Undefined, T0 + 10).map(|v| v.len()));
    assert!(answer.contains("InvalidInput") && answer.contains("4 MiB"), "{answer}");
    assert_eq!(same("four", &a, |m| m.query(&obj(&[("limit", Arg::Number(3.0))]), T0 + 10).map(|v| v.len())), "Ok(3)");
}

#[test]
fn r_bind_1_a_handle_follows_the_agent_record_and_refuses_a_bad_url() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "mem");
    let project = Project::new("pg-memory-record");
    std::fs::create_dir_all(project.0.join(".rotifer/agents")).unwrap();
    std::fs::write(project.0.join(format!(".rotifer/agents/{AGENT}.json")), serde_json::json!({ "id": AGENT, "memoryUrl": db.url }).to_string()).unwrap();
    let m = project.gene(AGENT);
    m.write(&s("k"), v("on the server"), &s("CONTEXT"), &Arg::Undefined, &Arg::Undefined, T0).unwrap();
    assert!(!project.0.join(".rotifer/memory").join(format!("{AGENT}.db")).exists(), "no file was written");
    let on_server = Agent::open(project.layout(), AGENT, Some(&db.url)).unwrap();
    assert_eq!(inspect::get_entry(&on_server, &s("k"), T0).unwrap().unwrap().value, b"on the server");
    let bad = GeneOptions::parse(&obj(&[("agentId", s(AGENT)), ("url", s("mysql://bob:hunter2@h/db"))]), &[]).unwrap_err();
    assert_eq!(bad.code, ErrorCode::InvalidInput);
    assert!(!bad.message.contains("hunter2"), "{}", bad.message);
    assert_eq!(err_code(GeneOptions::parse(&obj(&[("agentId", s(AGENT)), ("url", Arg::Number(1.0))]), &[])), ErrorCode::InvalidInput);
}

#[test]
fn r_acc_6_an_entry_of_a_gene_without_a_domain_admits_no_other_gene_by_domain() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "mem");
    let project = Project::new("pg-memory-domainless");
    let open = |url: &str, g: char, domain: Option<&str>| {
        GeneMemory::open(GeneOptions { agent_id: Some(AGENT.into()), gene_id: Some(gene(g)), domain: domain.map(str::to_string), root: Some(project.0.to_string_lossy().into()), url: Some(url.into()) }).unwrap()
    };
    for url in ["sqlite", db.url.as_str()] {
        open(url, 'd', None).write(&s("mine"), v("v"), &s("CONTEXT"), &Arg::Undefined, &Arg::Undefined, T0).unwrap();
        for (g, domain) in [('e', Some("text")), ('f', None)] {
            let other = open(url, g, domain);
            assert_eq!(err_code(other.read(&s("mine"), &Arg::Undefined, T0 + 1)), ErrorCode::AccessDenied, "{url} {domain:?}");
            assert_eq!(err_code(other.delete(&s("mine"), T0 + 1)), ErrorCode::AccessDenied, "{url} {domain:?}");
            assert_eq!(err_code(other.write(&s("mine"), v("w"), &s("CONTEXT"), &Arg::Undefined, &Arg::Undefined, T0 + 1)), ErrorCode::AccessDenied);
            assert_eq!(other.query(&Arg::Undefined, T0 + 1).unwrap().len(), 0);
        }
    }
}
