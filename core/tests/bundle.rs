//! Export and import bundles (R-MIG-1..3), the deployer's read-only views (inspect, get) and
//! key-prefix list/delete (R-HOST-2), on temporary project roots.

use rotifer_memory_core::bundle::{export_agent_memory, import_agent_memory, parse_bundle, write_bundle_file, Imported, OnConflict};
use rotifer_memory_core::inspect::{get_agent_entry, inspect_agent_memory};
use rotifer_memory_core::memory::{delete_agent_memory_matching, list_agent_memory_matching};
use rotifer_memory_core::model::{Category, DataPolicy, Entry, MAX_VALUE_BYTES};
use rotifer_memory_core::{create_agent_memory, list_agent_memory, Arg, ErrorCode, GeneMemory, GeneOptions, Layout};
use sha2::{Digest, Sha256};
use std::path::PathBuf;

mod common;
use common::{gene, obj, s, DAY, T0};

fn access(read: &str, write: &str, share: &str) -> Arg {
    obj(&[("readScope", s(read)), ("writeScope", s(write)), ("sharePolicy", s(share))])
}

fn keep(days: Option<i64>) -> Arg {
    obj(&[
        ("maxRetentionDays", days.map_or(Arg::Null, |d| Arg::Number(d as f64))),
        ("autoDeleteOnTermination", Arg::Bool(true)),
        ("anonymizationSupported", Arg::Bool(false)),
    ])
}

/// A temporary project root, removed on drop.
struct Root(PathBuf);

impl Root {
    fn new() -> Root {
        let dir = std::env::temp_dir().join(format!("rotifer-bundle-test-{}", rotifer_memory_core::store::unique_suffix()));
        std::fs::create_dir(&dir).unwrap();
        Root(dir)
    }
    fn layout(&self) -> Layout {
        Layout::at(&self.0)
    }
    fn gene(&self, agent: &str, c: char, domain: Option<&str>) -> GeneMemory {
        GeneMemory::open(GeneOptions {
            agent_id: Some(agent.into()),
            gene_id: Some(gene(c)),
            domain: domain.map(Into::into),
            root: Some(self.0.to_str().unwrap().into()),
            url: None,
        })
        .unwrap()
    }
    fn audit(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.0.join(".rotifer/audit.jsonl")).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
    fn entries(&self, agent: &str) -> Vec<Entry> {
        // Not every entry is readable by one gene: read them as the deployer does.
        list_agent_memory(&self.layout(), agent, None, T0 + 30)
            .unwrap()
            .iter()
            .map(|l| get_agent_entry(&self.layout(), agent, &s(&l.key), T0 + 30).unwrap().unwrap())
            .collect()
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(m: &GeneMemory, key: &str, value: Vec<u8>, category: &str, access: Arg, retention: Arg, now: i64) -> Entry {
    m.write(&s(key), Arg::Bytes(value), &s(category), &access, &retention, now).unwrap()
}

/// An agent "src" with entries of every category, scope, share policy and retention, and a
/// 1 MiB value.
fn source() -> Root {
    let r = Root::new();
    create_agent_memory(&r.layout(), "src", 8 << 20, DataPolicy { anonymization_supported: true, max_retention_days: None }).unwrap();
    let a = r.gene("src", 'a', Some("text.format"));
    let b = r.gene("src", 'b', None);
    write(&a, "pref/indent", b"4".to_vec(), "PREFERENCE", access("CREATOR_GENE_ONLY", "CREATOR_GENE_ONLY", "PRIVATE"), Arg::Undefined, T0);
    write(&b, "pattern/big", vec![0xAB; MAX_VALUE_BYTES], "PATTERN", access("ALL_GENES", "SAME_DOMAIN", "KNOWLEDGE_GENE"), keep(None), T0 + 1);
    write(&a, "context/doc", "héllo\n".as_bytes().to_vec(), "CONTEXT", access("SAME_DOMAIN", "ALL_GENES", "ANONYMIZED_SHARE"), keep(Some(30)), T0 + 2);
    write(&b, "cache/x", vec![], "CACHE", Arg::Undefined, Arg::Null, T0 + 3);
    // Rewritten by another gene: createdAt and updatedAt differ, lastAccessedBy is b.
    let c = r.gene("src", 'c', Some("text.format"));
    write(&c, "context/doc", "héllo\nagain".as_bytes().to_vec(), "CONTEXT", Arg::Undefined, Arg::Undefined, T0 + 4);
    r
}

fn fresh(quota: u64, policy: DataPolicy) -> Root {
    let r = Root::new();
    create_agent_memory(&r.layout(), "dst", quota, policy).unwrap();
    r
}

fn open_policy() -> DataPolicy {
    DataPolicy { anonymization_supported: true, max_retention_days: None }
}

/// Rewrites entry line `n` (2 = first entry) with `f` and fixes the checksum, as someone
/// crafting a bundle would.
fn edit_line(bundle: &[u8], n: usize, f: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let text = std::str::from_utf8(bundle).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut v: serde_json::Value = serde_json::from_str(&lines[n - 1]).unwrap();
    f(&mut v);
    lines[n - 1] = v.to_string();
    let body: String = lines[1..].iter().map(|l| format!("{l}\n")).collect();
    let mut header: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    header["entriesSha256"] = serde_json::Value::String(hex(&Sha256::digest(body.as_bytes())));
    format!("{header}\n{body}").into_bytes()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn line_of(bundle: &[u8], key: &str) -> usize {
    let text = std::str::from_utf8(bundle).unwrap();
    text.lines().position(|l| l.contains(&format!("\"key\":{}", serde_json::Value::String(key.into())))).unwrap() + 1
}

#[test]
fn round_trip_keeps_keys_values_creators_policies_and_times() {
    // R-MIG-1..3
    let src = source();
    let before_audit = src.audit().len();
    let exported = export_agent_memory(&src.layout(), "src", false, T0 + 10).unwrap();
    assert_eq!(src.audit().len(), before_audit, "export writes no audit line");
    let text = std::str::from_utf8(&exported.bytes).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["format"], "rotifer-memory-bundle");
    assert_eq!(header["version"], 1);
    assert_eq!(header["agentId"], "src");
    assert_eq!(header["exportedAt"], "2026-11-30T00:53:20.010Z");
    assert_eq!(header["dataPolicy"], serde_json::json!({ "anonymizationSupported": true, "maxRetentionDays": null }));
    assert_eq!(header["counts"], serde_json::json!({ "PREFERENCE": 1, "PATTERN": 1, "CONTEXT": 1, "CACHE": 0 }));
    let body = &exported.bytes[text.find('\n').unwrap() + 1..];
    assert_eq!(header["entriesSha256"], hex(&Sha256::digest(body)));
    assert_eq!(text.lines().count(), 4, "CACHE stays behind unless asked for");
    let doc: serde_json::Value = serde_json::from_str(text.lines().nth(3).unwrap()).unwrap();
    assert_eq!(doc["key"], "context/doc");
    assert_eq!(doc["creatorDomain"], "text.format");
    assert_eq!(doc["lastAccessedBy"], gene('c'));

    let dst = fresh(8 << 20, open_policy());
    let report = import_agent_memory(&dst.layout(), "dst", &exported.bytes, OnConflict::Fail, T0 + 20).unwrap();
    assert_eq!(report, Imported { created: 3, updated: 0, skipped: 0, expired: 0 });
    let want: Vec<Entry> = src.entries("src").into_iter().filter(|e| e.category != Category::Cache).collect();
    let got = dst.entries("dst");
    assert_eq!(got.len(), 3);
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(g.key, w.key);
        assert_eq!(g.value, w.value);
        assert_eq!(g.category, w.category);
        assert_eq!(g.created_by, w.created_by);
        assert_eq!(g.created_at, w.created_at);
        assert_eq!(g.updated_at, w.updated_at);
        assert_eq!(g.access_policy, w.access_policy);
        assert_eq!(g.retention_policy, w.retention_policy);
        assert_eq!(g.last_accessed_by, w.created_by, "lastAccessedBy becomes the creator");
        assert_eq!(g.entry_id, rotifer_memory_core::model::entry_id("dst", &g.key), "entryId is the target's");
    }
    // The creator's domain came along: a same-domain gene of the target may read the entry.
    let same_domain = dst.gene("dst", 'd', Some("text.format"));
    assert!(same_domain.read(&s("context/doc"), &Arg::Undefined, T0 + 21).unwrap().is_some());
    // One audit line per entry, actor deployer.
    let audit = dst.audit();
    assert_eq!(audit.len(), 3);
    assert!(audit.iter().all(|l| l["action"] == "memory.create" && l["actor"] == "deployer" && l["agentId"] == "dst"));

    // With CACHE on request.
    let with_cache = export_agent_memory(&src.layout(), "src", true, T0 + 10).unwrap();
    let dst2 = fresh(8 << 20, open_policy());
    let report = import_agent_memory(&dst2.layout(), "dst", &with_cache.bytes, OnConflict::Fail, T0 + 20).unwrap();
    assert_eq!(report.created, 4);
    assert!(get_agent_entry(&dst2.layout(), "dst", &s("cache/x"), T0 + 20).unwrap().is_some());

    // Files: 0600, complete.
    let file = dst.0.join("out.jsonl");
    write_bundle_file(&file, &with_cache.bytes).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read(&file).unwrap(), with_cache.bytes);
}

#[test]
fn odd_keys_survive_and_stay_on_one_line() {
    // Keys with newlines, quotes and Unicode line separators: one line each, back unchanged.
    let src = Root::new();
    create_agent_memory(&src.layout(), "src", 1 << 20, DataPolicy::default()).unwrap();
    let a = src.gene("src", 'a', None);
    let keys = ["line\nbreak\"}", "sep\u{2028}{\"x\":1}\u{2029}\u{85}", "é/ü/😀"];
    for k in keys {
        write(&a, k, k.as_bytes().to_vec(), "PREFERENCE", Arg::Undefined, Arg::Undefined, T0);
    }
    let b = export_agent_memory(&src.layout(), "src", false, T0).unwrap().bytes;
    let text = std::str::from_utf8(&b).unwrap();
    assert!(!text.contains(['\u{85}', '\u{2028}', '\u{2029}']), "{text}");
    assert_eq!(text.lines().count(), 4);
    let dst = fresh(1 << 20, DataPolicy::default());
    assert_eq!(import_agent_memory(&dst.layout(), "dst", &b, OnConflict::Fail, T0).unwrap().created, 3);
    for k in keys {
        assert_eq!(get_agent_entry(&dst.layout(), "dst", &s(k), T0).unwrap().unwrap().value, k.as_bytes());
    }
}

#[test]
fn expired_entries_are_never_exported() {
    let src = Root::new();
    create_agent_memory(&src.layout(), "src", 1 << 20, DataPolicy::default()).unwrap();
    let a = src.gene("src", 'a', None);
    write(&a, "short", b"1".to_vec(), "CONTEXT", Arg::Undefined, keep(Some(1)), T0);
    write(&a, "long", b"2".to_vec(), "CONTEXT", Arg::Undefined, keep(Some(9)), T0);
    let b = export_agent_memory(&src.layout(), "src", true, T0 + DAY).unwrap();
    let keys: Vec<String> = parse_bundle(&b.bytes).unwrap().entries.into_iter().map(|e| e.entry.key).collect();
    assert_eq!(keys, ["long"]);
    // Export purges nothing and logs nothing: reading is not audited.
    assert!(src.audit().iter().all(|l| l["action"] == "memory.create"));
    // An entry that expires between export and import is left out (and counted).
    let dst = fresh(1 << 20, DataPolicy::default());
    let r = import_agent_memory(&dst.layout(), "dst", &b.bytes, OnConflict::Fail, T0 + 9 * DAY).unwrap();
    assert_eq!(r, Imported { created: 0, updated: 0, skipped: 0, expired: 1 });
    assert!(list_agent_memory(&dst.layout(), "dst", None, T0 + 9 * DAY).unwrap().is_empty());
}

/// The target is unchanged: no entry, no audit line.
fn assert_untouched(dst: &Root) {
    assert!(list_agent_memory(&dst.layout(), "dst", None, T0 + 20).unwrap().is_empty());
    assert!(dst.audit().is_empty(), "{:?}", dst.audit());
}

#[test]
fn damaged_bundles_are_refused_whole_with_the_line() {
    let src = source();
    let good = export_agent_memory(&src.layout(), "src", true, T0 + 10).unwrap().bytes;
    let dst = fresh(8 << 20, open_policy());
    let refuse = |bytes: &[u8]| import_agent_memory(&dst.layout(), "dst", bytes, OnConflict::Fail, T0 + 20).unwrap_err();

    // Tampered: one byte of a value changed.
    let mut tampered = good.clone();
    let at = std::str::from_utf8(&tampered).unwrap().find("\"value\":\"NA").unwrap() + 9;
    tampered[at] = b'O';
    let e = refuse(&tampered);
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(e.message.contains("entriesSha256") && e.message.contains("edited"), "{}", e.message);
    assert_untouched(&dst);

    // Edited so that a line no longer reads: that line is named.
    let text = std::str::from_utf8(&good).unwrap();
    let broken = text.replacen("\"category\":\"PATTERN\"", "\"category\":\"PATTERNS\"", 1);
    let e = refuse(broken.as_bytes());
    assert!(e.message.starts_with("bundle line 3 (key \"pattern/big\")") && e.message.contains("PATTERNS") && e.message.contains("entriesSha256"), "{}", e.message);

    // Truncated in the middle of a line, and after a whole line.
    let e = refuse(&good[..good.len() - 10]);
    assert!(e.message.contains("bundle line 5") && e.message.contains("truncated"), "{}", e.message);
    let cut = good[..good.len() - 1].iter().rposition(|b| *b == b'\n').unwrap() + 1;
    let e = refuse(&good[..cut]);
    assert!(e.message.contains("bundle line 5") && e.message.contains("truncated"), "{}", e.message);
    let e = refuse(&good[..20]);
    assert!(e.message.contains("bundle line 1"), "{}", e.message);
    assert_eq!(refuse(b"").code, ErrorCode::InvalidInput);
    assert_untouched(&dst);

    // A newer format version, another format.
    let e = refuse(text.replacen("\"version\":1", "\"version\":2", 1).as_bytes());
    assert!(e.message.contains("bundle line 1") && e.message.contains("newer"), "{}", e.message);
    let e = refuse(text.replacen("rotifer-memory-bundle", "other", 1).as_bytes());
    assert!(e.message.contains("not a rotifer memory bundle"), "{}", e.message);
    assert!(refuse(b"{}\n").message.contains("bundle line 1"));
    assert!(refuse(b"not json\n").message.contains("bundle line 1"));

    // Edited with a recomputed checksum: every entry is validated like a write.
    let big = line_of(&good, "pattern/big");
    let cases: Vec<(Box<dyn FnOnce(&mut serde_json::Value)>, &str)> = vec![
        (Box::new(|v| v["category"] = "cache".into()), "category"),
        (Box::new(|v| v["accessPolicy"]["readScope"] = "ANYONE".into()), "readScope"),
        (Box::new(|v| v["accessPolicy"]["readScope"] = "DEPLOYER_CONFIGURED".into()), "DEPLOYER_CONFIGURED"),
        (Box::new(|v| v["retentionPolicy"]["maxRetentionDays"] = 0.into()), "maxRetentionDays"),
        (Box::new(|v| v["createdBy"] = "v1:x".into()), "createdBy"),
        (Box::new(|v| v["createdAt"] = "2026-11-30".into()), "createdAt"),
        (Box::new(|v| v["value"] = "AAAA=".into()), "base64"),
        (Box::new(|v| v["value"] = base64_of(&vec![0; MAX_VALUE_BYTES + 1]).into()), "1 MiB"),
        (Box::new(|v| v["creatorDomain"] = "Bad Domain".into()), "domain"),
        (Box::new(|v| v["key"] = "k".repeat(1025).into()), "at most 1024"),
        (Box::new(|v| v["entryId"] = "00".into()), "entryId"),
        (Box::new(|v| v["extra"] = 1.into()), "unknown field"),
        // What a restore used to take from a backup (R-HOST-1b): a bundle never did.
        (Box::new(|v| v["retentionPolicy"]["maxRetentionDays"] = (-1).into()), "maxRetentionDays"),
        (Box::new(|v| v["retentionPolicy"]["autoDeleteOnTermination"] = 7.into()), "autoDeleteOnTermination"),
        (Box::new(|v| v["retentionPolicy"]["anonymizationSupported"] = 9.into()), "anonymizationSupported"),
        (Box::new(|v| v["creatorDomain"] = "../../etc".into()), "domain"),
        (Box::new(|v| v["updatedAt"] = 9e18.into()), "updatedAt"),
        (Box::new(|v| v["updatedAt"] = "+275760-09-13T00:00:00.000Z".into()), "updatedAt"),
        (Box::new(|v| v["createdAt"] = "1969-12-31T23:59:59.999Z".into()), "createdAt"),
        (Box::new(|v| v["updatedAt"] = "2000-01-01T00:00:00.000Z".into()), "before createdAt"),
    ];
    for (edit, needle) in cases {
        let e = refuse(&edit_line(&good, big, edit));
        assert!(e.message.contains(&format!("bundle line {big}")) && e.message.contains(needle), "{needle}: {}", e.message);
    }
    // The same key twice.
    let twice = edit_line(&good, 2, |v| {
        v["key"] = "pattern/big".into();
        v["entryId"] = rotifer_memory_core::model::entry_id("src", "pattern/big").into();
    });
    assert!(refuse(&twice).message.contains("a second time"));
    assert_untouched(&dst);
}

fn base64_of(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

#[test]
fn r_ent_4_an_entry_with_a_time_past_the_imports_clock_is_refused_and_the_stores_own_export_imports() {
    // The store floors every later write's time at the latest stored one (R-ENT-4): one entry
    // of year 9999 would stamp every write after the import with it.
    let src = source();
    let good = export_agent_memory(&src.layout(), "src", true, T0 + 10).unwrap().bytes;
    let dst = fresh(8 << 20, open_policy());
    let import_at = T0 + 20;
    let big = line_of(&good, "pattern/big");
    let ahead = |ms: i64| rotifer_memory_core::time::format_ms(ms);
    let cases: Vec<(Box<dyn FnOnce(&mut serde_json::Value)>, &str)> = vec![
        (Box::new(|v| v["updatedAt"] = "9999-12-31T23:59:59.999Z".into()), "updatedAt"),
        (
            Box::new(|v| {
                v["createdAt"] = "9999-12-31T23:59:59.999Z".into();
                v["updatedAt"] = "9999-12-31T23:59:59.999Z".into();
            }),
            "createdAt",
        ),
        (Box::new(move |v| v["updatedAt"] = ahead(import_at + DAY + 1).into()), "updatedAt"),
    ];
    for (edit, needle) in cases {
        let e = import_agent_memory(&dst.layout(), "dst", &edit_line(&good, big, edit), OnConflict::Fail, import_at).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput, "{needle}: {}", e.message);
        assert!(
            e.message.contains(&format!("bundle line {big}")) && e.message.contains(needle) && e.message.contains("future") && e.message.contains("nothing was imported"),
            "{needle}: {}",
            e.message
        );
        assert_untouched(&dst);
    }
    // Within the slack (the importing clock a little behind the exporting one) it imports.
    let slightly = edit_line(&good, big, |v| v["updatedAt"] = ahead(import_at + DAY).into());
    assert_eq!(import_agent_memory(&dst.layout(), "dst", &slightly, OnConflict::Fail, import_at).unwrap().created, 4);
    // Whatever the store writes, its own export imports, even into a clock a little behind
    // the one that wrote it (written up to T0 + 4, imported at T0).
    let dst2 = fresh(8 << 20, open_policy());
    assert_eq!(import_agent_memory(&dst2.layout(), "dst", &good, OnConflict::Fail, T0).unwrap().created, 4);
}

#[test]
fn over_quota_and_policy_violations_change_nothing() {
    let src = source();
    let bundle = export_agent_memory(&src.layout(), "src", false, T0 + 10).unwrap().bytes;

    // 1 MiB does not fit in 1 MiB with the other entries: refused, nothing evicted.
    let small = fresh(1 << 20, open_policy());
    let e = import_agent_memory(&small.layout(), "dst", &bundle, OnConflict::Fail, T0 + 20).unwrap_err();
    assert_eq!(e.code, ErrorCode::QuotaExceeded);
    assert!(e.message.contains("quota of 1048576") && e.message.contains("bundle line"), "{}", e.message);
    assert_untouched(&small);
    // Even with an evictable entry in the target: import never evicts.
    let g = small.gene("dst", 'e', None);
    write(&g, "cache/old", vec![1; 1000], "CACHE", Arg::Undefined, Arg::Undefined, T0);
    assert_eq!(import_agent_memory(&small.layout(), "dst", &bundle, OnConflict::Fail, T0 + 20).unwrap_err().code, ErrorCode::QuotaExceeded);
    assert_eq!(list_agent_memory(&small.layout(), "dst", None, T0 + 20).unwrap().len(), 1);

    // Sharing needs anonymization; forever exceeds a finite maximum (R-POL-1/2).
    for policy in [DataPolicy::default(), DataPolicy { anonymization_supported: true, max_retention_days: Some(30) }] {
        let dst = fresh(8 << 20, policy);
        let e = import_agent_memory(&dst.layout(), "dst", &bundle, OnConflict::Fail, T0 + 20).unwrap_err();
        assert_eq!(e.code, ErrorCode::AccessDenied, "{}", e.message);
        assert!(e.message.contains("bundle line 3") && e.message.contains("data policy"), "{}", e.message);
        assert_untouched(&dst);
    }
}

#[test]
fn conflicts_fail_skip_or_replace() {
    let src = source();
    let bundle = export_agent_memory(&src.layout(), "src", false, T0 + 10).unwrap().bytes;
    let dst = fresh(8 << 20, open_policy());
    let z = dst.gene("dst", 'e', None);
    write(&z, "pref/indent", b"2".to_vec(), "PREFERENCE", access("ALL_GENES", "ALL_GENES", "PRIVATE"), Arg::Undefined, T0 + 5);
    let audit_before = dst.audit().len();

    let e = import_agent_memory(&dst.layout(), "dst", &bundle, OnConflict::Fail, T0 + 20).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(e.message.contains("bundle line 2") && e.message.contains("\"pref/indent\"") && e.message.contains("skip"), "{}", e.message);
    assert_eq!(list_agent_memory(&dst.layout(), "dst", None, T0 + 20).unwrap().len(), 1);
    assert_eq!(dst.audit().len(), audit_before);

    let r = import_agent_memory(&dst.layout(), "dst", &bundle, OnConflict::Skip, T0 + 20).unwrap();
    assert_eq!(r, Imported { created: 2, updated: 0, skipped: 1, expired: 0 });
    assert_eq!(get_agent_entry(&dst.layout(), "dst", &s("pref/indent"), T0 + 20).unwrap().unwrap().value, b"2");

    let r = import_agent_memory(&dst.layout(), "dst", &bundle, OnConflict::Replace, T0 + 21).unwrap();
    assert_eq!(r, Imported { created: 0, updated: 3, skipped: 0, expired: 0 });
    let e = get_agent_entry(&dst.layout(), "dst", &s("pref/indent"), T0 + 21).unwrap().unwrap();
    assert_eq!((e.value.as_slice(), e.created_by.as_str(), e.created_at), (&b"4"[..], gene('a').as_str(), T0));
    let updates = dst.audit().iter().filter(|l| l["action"] == "memory.update" && l["actor"] == "deployer").count();
    assert_eq!(updates, 3);
    // The quota counts the replaced entries once.
    let usage = inspect_agent_memory(&dst.layout(), "dst", T0 + 21).unwrap().unwrap();
    let listed: u64 = list_agent_memory(&dst.layout(), "dst", None, T0 + 21).unwrap().iter().map(|l| l.size).sum();
    assert_eq!(usage.used, listed);
    assert!(matches!(OnConflict::parse(&s("merge")), Err(e) if e.message.contains("skip")));
}

#[test]
fn inspect_and_get_only_read() {
    let src = source();
    let layout = src.layout();
    let audit = src.audit().len();
    let u = inspect_agent_memory(&layout, "src", T0 + 10).unwrap().unwrap();
    assert_eq!(u.quota, 8 << 20);
    assert_eq!(u.entries, 4);
    let by = |c: Category| u.categories.iter().find(|(k, _)| *k == c).unwrap().1;
    assert_eq!(by(Category::Preference).bytes, 12);
    assert_eq!(by(Category::Preference).evictable_bytes, 0);
    assert_eq!(by(Category::Pattern).bytes, (11 + MAX_VALUE_BYTES) as u64);
    assert_eq!(by(Category::Pattern).evictable_bytes, by(Category::Pattern).bytes);
    assert_eq!(by(Category::Context).next_expiry, Some(T0 + 4 + 30 * DAY));
    assert_eq!(by(Category::Cache), rotifer_memory_core::inspect::CategoryUsage { entries: 1, bytes: 7, evictable_bytes: 7, next_expiry: None });
    assert_eq!(u.used, u.categories.iter().map(|c| c.1.bytes).sum::<u64>());
    // After the CONTEXT entry expired (not purged yet), it no longer counts, and get misses it.
    let later = inspect_agent_memory(&layout, "src", T0 + 4 + 30 * DAY).unwrap().unwrap();
    assert_eq!(later.entries, 3);
    assert!(get_agent_entry(&layout, "src", &s("context/doc"), T0 + 4 + 30 * DAY).unwrap().is_none());

    // get ignores access policies, returns the value, and never touches lastAccessedBy.
    let e = get_agent_entry(&layout, "src", &s("pref/indent"), T0 + 10).unwrap().unwrap();
    assert_eq!(e.value, b"4");
    assert_eq!(e.last_accessed_by, gene('a'));
    let e = get_agent_entry(&layout, "src", &s("context/doc"), T0 + 10).unwrap().unwrap();
    assert_eq!(e.last_accessed_by, gene('c'));
    assert!(get_agent_entry(&layout, "src", &s("nope"), T0 + 10).unwrap().is_none());
    assert_eq!(get_agent_entry(&layout, "src", &s(""), T0 + 10).unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(src.audit().len(), audit, "reading is not audited");

    // Neither creates a database.
    assert!(inspect_agent_memory(&layout, "never", T0).unwrap().is_none());
    assert!(get_agent_entry(&layout, "never", &s("k"), T0).unwrap().is_none());
    assert_eq!(export_agent_memory(&layout, "never", false, T0).unwrap_err().code, ErrorCode::NotFound);
    assert!(!src.0.join(".rotifer/memory/never.db").exists());
}

#[test]
fn inspect_shows_the_quota_the_database_enforces() {
    // R-HOST-1: after createAgentMemory reconfigures an agent, the figures follow the database.
    let r = Root::new();
    create_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    create_agent_memory(&r.layout(), "a", 2 << 20, DataPolicy { anonymization_supported: true, max_retention_days: Some(3) }).unwrap();
    let u = inspect_agent_memory(&r.layout(), "a", T0).unwrap().unwrap();
    assert_eq!(u.quota, 2 << 20);
    assert_eq!(u.data_policy, DataPolicy { anonymization_supported: true, max_retention_days: Some(3) });
}

#[test]
fn key_prefix_list_and_delete() {
    // R-HOST-2 with a plain key prefix (no wildcards).
    let r = Root::new();
    create_agent_memory(&r.layout(), "a", 1 << 20, DataPolicy::default()).unwrap();
    let g = r.gene("a", 'a', None);
    for (k, c) in [("user/1", "CACHE"), ("user/2", "PREFERENCE"), ("user%", "CACHE"), ("users", "CACHE"), ("other", "CACHE")] {
        write(&g, k, vec![1], c, Arg::Undefined, Arg::Undefined, T0);
    }
    let keys = |prefix: Option<&str>, c: Option<Category>| -> Vec<String> {
        list_agent_memory_matching(&r.layout(), "a", c, prefix, T0).unwrap().into_iter().map(|l| l.key).collect()
    };
    assert_eq!(keys(Some("user/"), None), ["user/1", "user/2"]);
    assert_eq!(keys(Some("user%"), None), ["user%"]);
    assert_eq!(keys(Some("user/"), Some(Category::Cache)), ["user/1"]);
    assert_eq!(keys(None, None).len(), 5);

    let del = |key: Option<Arg>, c: Option<Arg>, p: Option<Arg>| delete_agent_memory_matching(&r.layout(), "a", key.as_ref(), c.as_ref(), p.as_ref(), T0);
    assert_eq!(del(None, Some(s("CACHE")), Some(s("user/"))).unwrap(), 1);
    assert_eq!(keys(None, None), ["other", "user%", "user/2", "users"]);
    assert_eq!(del(None, None, Some(s("user"))).unwrap(), 3);
    assert_eq!(del(None, None, Some(s("zzz"))).unwrap(), 0);
    assert_eq!(del(None, None, Some(s(""))).unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(del(Some(s("other")), None, Some(s("o"))).unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(del(None, None, None).unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(keys(None, None), ["other"]);
    let deletes = r.audit().iter().filter(|l| l["action"] == "memory.delete" && l["actor"] == "deployer").count();
    assert_eq!(deletes, 4);
}
