//! Moving memory on PostgreSQL (R-MIG-2/3, R-HOST-1b, R-BIND-2): the same memory on both bindings
//! exports the same bytes; the same bundle imports into either with the same report, the same
//! refusals word for word, the same entries and the same audit lines; a plan made against an
//! agent that changed since writes nothing; a forged plan is refused whole; a backup made on
//! either binding restores into either alike.
//!
//! Runs beside the cluster `scripts/pg-cluster.js` starts; without one it says so and passes,
//! except under CI=true.

mod common;

use common::pg::{admin_url, Db};
use common::{gene, s, Project, DAY, T0};
use rotifer_memory_core::audit_log::LogReader;
use rotifer_memory_core::binding::{pool, Agent, Binding};
use rotifer_memory_core::bundle::OnConflict;
use rotifer_memory_core::memory::create_agent_memory_of;
use rotifer_memory_core::postgres::client::{Connection, Timeouts};
use rotifer_memory_core::time::CallTime;
use rotifer_memory_core::transfer::{backup_agent_memory_of, export_agent_memory_of, import_agent_memory_of, restore_agent_memory_of};
use rotifer_memory_core::{Arg, DataPolicy, ErrorCode, GeneMemory, GeneOptions};

const POLICY: DataPolicy = DataPolicy { anonymization_supported: true, max_retention_days: Some(30) };

fn agents(project: &Project, db: &Db, id: &str) -> [Agent; 2] {
    [Agent::sqlite(project.layout(), id), Agent { layout: project.layout(), agent_id: id.into(), binding: Binding::Postgres(pool(&db.url).unwrap()) }]
}

/// Gene `g`'s memory of `agent`, on the agent's binding (`db`'s server for PostgreSQL).
fn handle(project: &Project, db: &Db, agent: &Agent, g: char, domain: &str) -> GeneMemory {
    let url = match &agent.binding {
        Binding::Sqlite => "sqlite".to_string(),
        Binding::Postgres(_) => db.url.clone(),
    };
    GeneMemory::open(GeneOptions {
        agent_id: Some(agent.agent_id.clone()),
        gene_id: Some(gene(g)),
        domain: Some(domain.into()),
        root: Some(project.0.to_string_lossy().into()),
        url: Some(url),
    })
    .unwrap()
}

fn policy(read: &str, share: &str) -> Arg {
    common::obj(&[("readScope", s(read)), ("writeScope", s("SAME_DOMAIN")), ("sharePolicy", s(share))])
}

fn keep(days: i64) -> Arg {
    common::obj(&[("maxRetentionDays", Arg::Number(days as f64)), ("autoDeleteOnTermination", Arg::Bool(true)), ("anonymizationSupported", Arg::Bool(false))])
}

/// Every kind of entry: each category, scopes, a share policy, retentions, odd keys, a value
/// that is not text, one entry read by another gene (its lastAccessedBy differs).
fn fill(project: &Project, db: &Db, agent: &Agent) {
    let a = handle(project, db, agent, 'a', "text.notes");
    let b = handle(project, db, agent, 'b', "text.notes");
    let w = |h: &GeneMemory, key: &str, value: &[u8], category: &str, access: Arg, retention: Arg, now: i64| {
        h.write(&s(key), Arg::Bytes(value.to_vec()), &s(category), &access, &retention, now).unwrap();
    };
    w(&a, "pref/theme", b"dark", "PREFERENCE", Arg::Undefined, Arg::Undefined, T0);
    w(&a, "pattern/it's 100%_done", &[0, 159, 255, 10], "PATTERN", policy("ALL_GENES", "ANONYMIZED_SHARE"), keep(10), T0 + 1);
    w(&b, "ctx/\u{e9}t\u{e9} \u{2028} \u{1F600}", b"summer", "CONTEXT", policy("CREATOR_GENE_ONLY", "PRIVATE"), Arg::Undefined, T0 + 2);
    w(&a, "cache/x", b"xxxxxxxx", "CACHE", Arg::Undefined, keep(1), T0 + 3);
    w(&a, "ctx/shared", b"for all", "CONTEXT", policy("ALL_GENES", "PRIVATE"), Arg::Undefined, T0 + 4);
    assert!(b.read(&s("ctx/shared"), &Arg::Undefined, T0 + 5).unwrap().is_some());
}

fn log_of(agent: &Agent) -> Vec<serde_json::Value> {
    let mut r = LogReader::of(agent, false).unwrap();
    let mut out = Vec::new();
    while r.next_lines(50, |l| out.push(serde_json::from_slice(l).unwrap())).unwrap() > 0 {}
    out
}

#[test]
fn r_mig_2_the_same_memory_exports_the_same_bundle_on_both_bindings() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "bnd");
    let project = Project::new("pg-export");
    let both = agents(&project, &db, "agent-src");
    for a in &both {
        create_agent_memory_of(a, 1 << 20, POLICY).unwrap();
        fill(&project, &db, a);
    }
    for include_cache in [false, true] {
        let [f, p] = [&both[0], &both[1]].map(|a| export_agent_memory_of(a, include_cache, CallTime::from(T0 + 10)).unwrap());
        assert_eq!(String::from_utf8_lossy(&f.bytes), String::from_utf8_lossy(&p.bytes), "includeCache {include_cache}");
        assert_eq!(f.counts, p.counts);
    }
    // Later, the CACHE entry has expired: left out on both.
    let [f, p] = [&both[0], &both[1]].map(|a| export_agent_memory_of(a, true, CallTime::from(T0 + DAY + 3)).unwrap());
    assert_eq!(f.bytes, p.bytes);
    assert!(!String::from_utf8_lossy(&p.bytes).contains("cache/x"));
    // No memory: the same code, the binding named.
    let none = agents(&project, &db, "nobody");
    let (e1, e2) = (export_agent_memory_of(&none[0], false, CallTime::from(T0)).unwrap_err(), export_agent_memory_of(&none[1], false, CallTime::from(T0)).unwrap_err());
    assert_eq!((e1.code, e2.code), (ErrorCode::NotFound, ErrorCode::NotFound));
    assert!(e2.message.contains("127.0.0.1") && !e2.message.contains(&db.password), "{}", e2.message);
}

#[test]
fn r_mig_3_the_same_bundle_imports_alike_on_both_bindings() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "bnd");
    let project = Project::new("pg-import");
    let source = Agent::sqlite(project.layout(), "agent-src");
    create_agent_memory_of(&source, 1 << 20, POLICY).unwrap();
    fill(&project, &db, &source);
    let bundle = export_agent_memory_of(&source, true, CallTime::from(T0 + 10)).unwrap().bytes;
    let now = || CallTime::from(T0 + 20);

    // Refusals, word for word: a data policy the bundle breaks, a quota it exceeds, a key it has.
    let strict = agents(&project, &db, "agent-strict");
    let small = agents(&project, &db, "agent-small");
    let taken = agents(&project, &db, "agent-taken");
    for i in 0..2 {
        create_agent_memory_of(&strict[i], 1 << 20, DataPolicy { anonymization_supported: false, max_retention_days: Some(30) }).unwrap();
        create_agent_memory_of(&small[i], 40, POLICY).unwrap();
        create_agent_memory_of(&taken[i], 1 << 20, POLICY).unwrap();
        handle(&project, &db, &taken[i], 'a', "text.notes").write(&s("pref/theme"), Arg::Bytes(b"light".to_vec()), &s("PREFERENCE"), &Arg::Undefined, &Arg::Undefined, T0 + 15).unwrap();
    }
    for (pair, code) in [(&strict, ErrorCode::AccessDenied), (&small, ErrorCode::QuotaExceeded), (&taken, ErrorCode::InvalidInput)] {
        let [e1, e2] = [&pair[0], &pair[1]].map(|a| import_agent_memory_of(a, &bundle, OnConflict::Fail, now()).unwrap_err());
        assert_eq!((e1.code, &e1.message), (e2.code, &e2.message), "{}", pair[0].agent_id);
        assert_eq!(e1.code, code, "{}", e1.message);
        assert!(e1.message.starts_with("bundle line ") && e1.message.ends_with("nothing was imported"), "{}", e1.message);
    }
    let [l1, l2] = [&taken[0], &taken[1]].map(log_of);
    assert_eq!(l1.len(), l2.len(), "a refused import writes nothing");

    // Skip, then replace: the same reports, entries and audit lines.
    for on_conflict in [OnConflict::Skip, OnConflict::Replace] {
        let [r1, r2] = [&taken[0], &taken[1]].map(|a| import_agent_memory_of(a, &bundle, on_conflict, now()).unwrap());
        assert_eq!(r1, r2, "{on_conflict:?}");
    }
    let [f, p] = [&taken[0], &taken[1]].map(|a| export_agent_memory_of(a, true, CallTime::from(T0 + 30)).unwrap());
    assert_eq!(String::from_utf8_lossy(&f.bytes), String::from_utf8_lossy(&p.bytes));
    let [l1, l2] = [&taken[0], &taken[1]].map(log_of);
    let shape = |l: &[serde_json::Value]| {
        l.iter().map(|x| format!("{} {} {} {} {} {} {}", x["ts"], x["action"], x["actor"], x["key"], x["category"], x["size"], x["txLine"])).collect::<Vec<_>>()
    };
    assert_eq!(shape(&l1), shape(&l2));
    assert!(l2.iter().any(|l| l["action"] == "memory.update" && l["actor"] == "deployer"));

    // The imported entries behave as written ones: scopes kept (gene b reads its private entry,
    // gene a may not), lastAccessedBy became createdBy.
    let b = handle(&project, &db, &taken[1], 'b', "text.notes");
    let e = b.read(&s("ctx/\u{e9}t\u{e9} \u{2028} \u{1F600}"), &Arg::Undefined, T0 + 31).unwrap().unwrap();
    assert_eq!((e.created_by, e.created_at), (gene('b'), T0 + 2));
    let a = handle(&project, &db, &taken[1], 'a', "text.notes");
    assert_eq!(a.read(&s("ctx/\u{e9}t\u{e9} \u{2028} \u{1F600}"), &Arg::Undefined, T0 + 31).unwrap_err().code, ErrorCode::AccessDenied);
    assert_eq!(a.read(&s("ctx/shared"), &Arg::Undefined, T0 + 31).unwrap().unwrap().last_accessed_by, gene('a'));
}

#[test]
fn r_mig_3_a_stale_or_forged_plan_writes_nothing() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "bnd");
    let project = Project::new("pg-import-forged");
    let [_, pg] = agents(&project, &db, "agent-f");
    create_agent_memory_of(&pg, 1000, POLICY).unwrap();
    let mut c = Connection::new(&db.url, Timeouts::default()).unwrap();
    let entry = |replaces: bool, share: &str, days: Option<i32>| {
        serde_json::json!([{"key": "k", "category": "CONTEXT", "created_by": gene('a'), "creator_domain": "d", "created_at": T0, "updated_at": T0,
            "read_scope": "SAME_DOMAIN", "write_scope": "SAME_DOMAIN", "share_policy": share, "ret_set": days.is_some(), "ret_days": days,
            "ret_auto_delete": false, "ret_anonymization": false, "replaces": replaces}])
    };
    let import = |c: &mut Connection, seq: i64, used: i64, entries: serde_json::Value, value: &[u8]| {
        let values: Vec<&[u8]> = vec![value];
        c.query("SELECT rotifer.memory_import($1, $2, $3, $4, $5, $6, $7, $8, $9)", &[&"agent-f", &seq, &used, &1000i64, &true, &Some(30i32), &entries, &values, &Some(T0 + 10)])
            .map(|rows| rows[0].get::<_, String>(0))
    };
    // Planned against another state: nothing written, the client is told to plan again.
    assert_eq!(import(&mut c, 5, 0, entry(false, "PRIVATE", None), b"v").unwrap(), "changed");
    // Forged: an entry said to be new that exists, a share policy or retention the agent refuses,
    // a value over the quota; each refused whole.
    assert_eq!(import(&mut c, 0, 0, entry(false, "PRIVATE", None), b"v").unwrap(), "ok");
    for (entries, value, what) in [
        (entry(false, "PRIVATE", None), &b"w"[..], "does not match"),
        (entry(true, "PRIVATE", Some(31)), &b"w"[..], "data policy"),
        (entry(true, "PRIVATE", None), &[0u8; 2000][..], "quota"),
    ] {
        let e = import(&mut c, 1, 2, entries, value).unwrap_err();
        assert!(e.message.contains(what), "{what}: {}", e.message);
    }
    let rows = c.query("SELECT convert_from(value, 'UTF8') || ',' || (SELECT count(*) FROM rotifer.audit WHERE agent_id = 'agent-f')::text FROM rotifer.entries WHERE agent_id = 'agent-f'", &[]).unwrap();
    assert_eq!(rows[0].get::<_, String>(0), "v,1", "the first import only");
}

#[test]
fn r_host_1b_a_backup_of_either_binding_restores_into_either_alike() {
    let Some(root) = admin_url() else { return };
    let db = Db::new(&root, "bnd");
    let project = Project::new("pg-backup");
    let both = agents(&project, &db, "agent-b");
    for a in &both {
        create_agent_memory_of(a, 1 << 20, POLICY).unwrap();
        fill(&project, &db, a);
    }
    let file = |name: &str| project.0.join(name);
    let [bf, bp] = [(&both[0], "from-file.db"), (&both[1], "from-pg.db")].map(|(a, name)| backup_agent_memory_of(a, &file(name)).unwrap());
    assert_eq!((bf.entries, bf.used), (bp.entries, bp.used));
    assert_eq!(bp.entries, 5);
    // A backup never replaces a file, on either.
    let e = backup_agent_memory_of(&both[1], &file("from-file.db")).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);

    // Changed since, then each binding restores the other's backup: the same report and memory.
    for a in &both {
        handle(&project, &db, a, 'a', "text.notes").write(&s("later"), Arg::Bytes(b"gone soon".to_vec()), &s("CONTEXT"), &Arg::Undefined, &Arg::Undefined, T0 + 20).unwrap();
    }
    let r_file = restore_agent_memory_of(&both[0], &file("from-pg.db"), CallTime::from(T0 + DAY + 10)).unwrap();
    let r_pg = restore_agent_memory_of(&both[1], &file("from-file.db"), CallTime::from(T0 + DAY + 10)).unwrap();
    assert_eq!(r_file, r_pg);
    assert_eq!((r_pg.entries, r_pg.expired), (4, 1), "the CACHE entry kept a day has expired: left out");
    let [f, p] = [&both[0], &both[1]].map(|a| export_agent_memory_of(a, true, CallTime::from(T0 + DAY + 20)).unwrap());
    assert_eq!(String::from_utf8_lossy(&f.bytes), String::from_utf8_lossy(&p.bytes), "the same entries, lastAccessedBy and times kept");
    let [l1, l2] = [&both[0], &both[1]].map(log_of);
    let last = |l: &[serde_json::Value]| {
        let x = l.last().unwrap().clone();
        (x["action"].clone(), x["actor"].clone(), x["size"].clone(), x["reason"].as_str().unwrap().replace("from-pg.db", "B").replace("from-file.db", "B"))
    };
    assert_eq!(last(&l1), last(&l2));
    assert_eq!(last(&l2).0, "memory.restore");
    // The sequence goes on past the backup's: a write after it is numbered after every entry.
    for a in &both {
        handle(&project, &db, a, 'a', "text.notes").write(&s("after"), Arg::Bytes(b"x".to_vec()), &s("CONTEXT"), &Arg::Undefined, &Arg::Undefined, T0 + DAY + 30).unwrap();
    }
    let mut c = Connection::new(&db.url, Timeouts::default()).unwrap();
    let rows = c.query("SELECT (SELECT seq FROM rotifer.entries WHERE agent_id = 'agent-b' AND key = 'after') > (SELECT max(seq) FROM rotifer.entries WHERE agent_id = 'agent-b' AND key <> 'after')", &[]).unwrap();
    assert!(rows[0].get::<_, bool>(0));

    // Refusals, word for word: another agent's backup, a quota too small; nothing changes.
    let other = agents(&project, &db, "agent-other");
    create_agent_memory_of(&other[0], 1 << 20, POLICY).unwrap();
    backup_agent_memory_of(&other[0], &file("other.db")).unwrap();
    let [e1, e2] = [&both[0], &both[1]].map(|a| restore_agent_memory_of(a, &file("other.db"), CallTime::from(T0 + DAY + 40)).unwrap_err());
    assert_eq!((e1.code, &e1.message), (e2.code, &e2.message));
    assert!(e2.message.contains("is of agent \"agent-other\""), "{}", e2.message);
    for a in &both {
        create_agent_memory_of(a, 30, POLICY).unwrap();
    }
    let [e1, e2] = [&both[0], &both[1]].map(|a| restore_agent_memory_of(a, &file("from-file.db"), CallTime::from(T0 + DAY + 40)).unwrap_err());
    assert_eq!((e1.code, &e1.message), (e2.code, &e2.message));
    assert_eq!(e2.code, ErrorCode::QuotaExceeded);
    let [f2, p2] = [&both[0], &both[1]].map(|a| export_agent_memory_of(a, true, CallTime::from(T0 + DAY + 50)).unwrap());
    assert_eq!(String::from_utf8_lossy(&f2.bytes), String::from_utf8_lossy(&p2.bytes), "nothing changed by the refusals");
    assert!(String::from_utf8_lossy(&p2.bytes).contains("\"key\":\"after\""));
}
