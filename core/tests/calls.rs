//! What each call records and answers beyond the happy path: option parsing (§12), the audit
//! subject of every kind of line (R-AUD-1), the last accessor (R-API-1), and the order of §9
//! (purge before a query's own errors).

use rotifer_memory_core::memory::TestMemory;
use rotifer_memory_core::model::{DataPolicy, MAX_VALUE_BYTES};
use rotifer_memory_core::{Arg, ErrorCode, GeneMemory, GeneOptions};
use serde_json::Value;

mod common;
use common::{gene, obj, s, DAY, T0};

struct Fixture {
    tm: TestMemory,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture { tm: TestMemory::create(64 << 20, DataPolicy::default()).unwrap() }
    }
    fn gene(&self, id: Option<String>) -> GeneMemory {
        self.tm.gene_memory(id, Some("text".into())).unwrap()
    }
    fn audit(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.tm.root().join(".rotifer/audit.jsonl")).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
    fn last(&self, action: &str) -> Value {
        self.audit().into_iter().filter(|l| l["action"] == action).last().unwrap_or_else(|| panic!("no {action} line"))
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.tm.dispose();
    }
}

#[test]
fn gene_options_are_parsed_field_by_field() {
    let o = GeneOptions::parse(
        &obj(&[("agentId", s("agent-1")), ("geneId", s("v2:x")), ("domain", s("text.format")), ("root", s("/r")), ("now", Arg::Number(1.0))]),
        &["now"],
    )
    .unwrap();
    assert_eq!(o.agent_id.as_deref(), Some("agent-1"));
    assert_eq!(o.gene_id.as_deref(), Some("v2:x"));
    assert_eq!(o.domain.as_deref(), Some("text.format"));
    assert_eq!(o.root.as_deref(), Some("/r"));
    // Null and undefined mean absent; a geneId that is not a string is "no valid v2 id".
    let o = GeneOptions::parse(&obj(&[("agentId", Arg::Null), ("geneId", Arg::Number(3.0)), ("domain", Arg::Undefined)]), &[]).unwrap();
    assert_eq!((o.agent_id, o.gene_id, o.domain, o.root), (None, None, None, None));
    // A host field is accepted only when the host names it; the message lists what is taken.
    let err = GeneOptions::parse(&obj(&[("now", Arg::Number(1.0))]), &[]).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(err.message.contains("unknown field \"now\"") && err.message.contains("agentId, geneId, domain, root"), "{}", err.message);
    let err = GeneOptions::parse(&obj(&[("nope", Arg::Null)]), &["now"]).unwrap_err();
    assert!(err.message.contains("agentId, geneId, domain, root, url, now"), "{}", err.message);
    for bad in [obj(&[("agentId", s("../x"))]), obj(&[("agentId", Arg::Number(1.0))]), obj(&[("domain", s("Bad"))]), obj(&[("root", Arg::Bool(true))]), s("x")] {
        assert_eq!(GeneOptions::parse(&bad, &["now"]).unwrap_err().code, ErrorCode::InvalidInput, "{bad:?}");
    }
}

#[test]
fn a_memory_knows_its_agent() {
    let f = Fixture::new();
    assert_eq!(f.gene(Some(gene('a'))).agent_id(), Some("test-memory"));
    let standalone = GeneMemory::open(GeneOptions { gene_id: Some(gene('a')), ..Default::default() }).unwrap();
    assert_eq!(standalone.agent_id(), None);
}

#[test]
fn a_denial_for_no_v2_id_records_the_key_only_when_it_is_a_valid_key() {
    let f = Fixture::new();
    let anonymous = f.gene(None);
    assert_eq!(anonymous.read(&s("visible"), &Arg::Undefined, T0).unwrap_err().code, ErrorCode::AccessDenied);
    assert_eq!(f.last("memory.access_denied")["key"], "visible");
    assert_eq!(anonymous.read(&s(""), &Arg::Undefined, T0).unwrap_err().code, ErrorCode::AccessDenied);
    assert_eq!(f.last("memory.access_denied")["key"], Value::Null, "an invalid key is not recorded");
}

#[test]
fn every_line_names_its_entry() {
    let f = Fixture::new();
    let a = f.gene(Some(gene('a')));
    let b = f.gene(Some(gene('b')));
    let locked = obj(&[("readScope", s("CREATOR_GENE_ONLY")), ("writeScope", s("CREATOR_GENE_ONLY")), ("sharePolicy", s("PRIVATE"))]);
    a.write(&s("k"), Arg::Bytes(vec![1; 10]), &s("PATTERN"), &locked, &Arg::Undefined, T0).unwrap();
    let expect = |line: Value, size: u64| {
        assert_eq!((line["key"].as_str(), line["category"].as_str(), line["size"].as_u64()), (Some("k"), Some("PATTERN"), Some(size)), "{line}");
    };
    expect(f.last("memory.create"), 11);
    b.delete(&s("k"), T0).unwrap_err();
    expect(f.last("memory.access_denied"), 11);
    b.write(&s("k"), Arg::Bytes(vec![1; 20]), &s("PATTERN"), &Arg::Undefined, &Arg::Undefined, T0).unwrap_err();
    expect(f.last("memory.access_denied"), 21);
    let small = TestMemory::create(100, DataPolicy::default()).unwrap();
    let c = small.gene_memory(Some(gene('c')), None).unwrap();
    c.write(&s("k"), Arg::Bytes(vec![1; 200]), &s("PATTERN"), &Arg::Undefined, &Arg::Undefined, T0).unwrap_err();
    let text = std::fs::read_to_string(small.root().join(".rotifer/audit.jsonl")).unwrap();
    let reject: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!((reject["action"].as_str(), reject["key"].as_str(), reject["size"].as_u64()), (Some("memory.quota_reject"), Some("k"), Some(201)));
    small.dispose();
    a.delete(&s("k"), T0).unwrap();
    expect(f.last("memory.delete"), 11);
}

#[test]
fn a_read_by_another_gene_makes_it_the_last_accessor() {
    let f = Fixture::new();
    let a = f.gene(Some(gene('a')));
    let b = f.gene(Some(gene('b')));
    a.write(&s("k"), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0).unwrap();
    // A read that names another category finds nothing, and touches nothing.
    assert!(b.read(&s("k"), &s("PATTERN"), T0).unwrap().is_none());
    assert_eq!(b.read(&s("k"), &s("CACHE"), T0).unwrap().unwrap().last_accessed_by, gene('b'));
    assert!(a.read(&s("k"), &s("PATTERN"), T0).unwrap().is_none());
    assert_eq!(b.read(&s("k"), &Arg::Undefined, T0).unwrap().unwrap().last_accessed_by, gene('b'));
    let seen = a.query(&Arg::Undefined, T0).unwrap();
    assert_eq!(seen[0].last_accessed_by, gene('b'), "stored, not only answered");
    assert_eq!(a.read(&s("k"), &Arg::Undefined, T0).unwrap().unwrap().last_accessed_by, gene('a'));
}

#[test]
fn a_query_purges_expired_entries_before_reporting_its_own_errors() {
    let f = Fixture::new();
    let a = f.gene(Some(gene('a')));
    let keep = obj(&[("maxRetentionDays", Arg::Number(1.0)), ("autoDeleteOnTermination", Arg::Bool(false)), ("anonymizationSupported", Arg::Bool(false))]);
    a.write(&s("old"), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &keep, T0).unwrap();
    for i in 0..5 {
        a.write(&s(&format!("big{i}")), Arg::Bytes(vec![0; MAX_VALUE_BYTES - 4]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0).unwrap();
    }
    // Over 4 MiB: invalid input — but only after "old" was purged (§9).
    assert_eq!(a.query(&Arg::Undefined, T0 + 2 * DAY).unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(f.last("memory.expire")["key"], "old");
}

#[test]
fn a_rewrite_makes_the_writer_the_last_accessor() {
    let f = Fixture::new();
    let a = f.gene(Some(gene('a')));
    let b = f.gene(Some(gene('b')));
    a.write(&s("k"), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0).unwrap();
    let e = b.write(&s("k"), Arg::Bytes(vec![2]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0 + 1).unwrap();
    assert_eq!((e.created_by.as_str(), e.last_accessed_by.as_str()), (gene('a').as_str(), gene('b').as_str()));
}

#[test]
fn a_key_prefix_query_counts_the_rows_it_sorted_as_work_whatever_its_limit() {
    // R-RUN-5: a WASM gene pays for the work its call made; a prefix range is sorted whole.
    let f = Fixture::new();
    let a = f.gene(Some(gene('a')));
    for i in 0..400 {
        a.write(&s(&format!("p/{i:04}")), Arg::Bytes(vec![7]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0 + i).unwrap();
    }
    let work = |prefix: &str| {
        rotifer_memory_core::storage::rows::take_loaded_bytes();
        let got = a.query(&obj(&[("keyPrefix", s(prefix)), ("limit", Arg::Number(1.0))]), T0 + 1000).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].key, if prefix == "p/" { "p/0399" } else { "p/0099" }, "the newest of the range");
        assert_eq!(got[0].value, vec![7], "the row returned is whole");
        rotifer_memory_core::storage::rows::take_loaded_bytes()
    };
    let all = work("p/");
    let tenth = work("p/00");
    assert!(all >= 400, "every row sorted counts: {all}");
    assert!(all > 3 * tenth, "four times the rows, more work: {all} vs {tenth}");
}

#[test]
fn a_key_prefix_is_a_byte_range() {
    let f = Fixture::new();
    let a = f.gene(Some(gene('a')));
    for (i, k) in ["a", "ab", "az", "a\u{7f}", "aé", "b", "ba", "", "\u{10ffff}x"].iter().enumerate().filter(|(_, k)| !k.is_empty()) {
        a.write(&s(k), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0 + i as i64).unwrap();
    }
    let keys = |prefix: &str| {
        let mut k: Vec<String> = a.query(&obj(&[("keyPrefix", s(prefix)), ("limit", Arg::Number(100.0))]), T0 + 20).unwrap().into_iter().map(|e| e.key).collect();
        k.sort();
        k
    };
    assert_eq!(keys("a"), ["a", "ab", "az", "a\u{7f}", "aé"]);
    assert_eq!(keys("b"), ["b", "ba"]);
    assert_eq!(keys("az"), ["az"]);
    assert_eq!(keys("\u{10ffff}"), ["\u{10ffff}x"]);
    assert_eq!(keys("").len(), 8);
}

#[test]
fn deployer_options_take_agent_root_and_named_fields() {
    use rotifer_memory_core::memory::AgentOptions;
    let dir = std::env::temp_dir();
    let arg = obj(&[("agentId", s("a-1")), ("root", s(dir.to_str().unwrap())), ("category", s("CACHE")), ("key", Arg::Undefined)]);
    let o = AgentOptions::parse("options", &arg, &["agentId", "root", "category", "key"]).unwrap();
    assert_eq!(o.agent_id, "a-1");
    assert_eq!(o.layout.root, dir);
    assert!(matches!(o.get("category"), Some(Arg::Str(c)) if c == "CACHE"));
    assert!(o.get("key").is_none(), "undefined is absent");
    assert!(o.get("agentId").is_some() && o.get("nope").is_none());
    for (bad, why) in [
        (obj(&[]), "agentId is required"),
        (obj(&[("agentId", Arg::Number(1.0))]), "agentId must be a string"),
        (obj(&[("agentId", s("a")), ("root", Arg::Number(1.0))]), "root must be a folder path string"),
        (obj(&[("agentId", s("a")), ("other", Arg::Null)]), "unknown field"),
    ] {
        let Err(err) = AgentOptions::parse("options", &bad, &["agentId", "root"]) else { panic!("{bad:?} accepted") };
        assert!(err.message.contains(why), "{}", err.message);
    }
}

#[test]
fn a_deployer_category_delete_frees_the_bytes_of_every_entry() {
    let f = Fixture::new();
    let a = f.gene(Some(gene('a')));
    for (k, n) in [("c1", 99), ("c2", 199), ("p", 9)] {
        a.write(&s(k), Arg::Bytes(vec![1; n]), &s(if k == "p" { "PREFERENCE" } else { "CACHE" }), &Arg::Undefined, &Arg::Undefined, T0).unwrap();
    }
    let layout = rotifer_memory_core::Layout::at(f.tm.root());
    assert_eq!(rotifer_memory_core::delete_agent_memory(&layout, "test-memory", None, Some(&s("CACHE")), T0).unwrap(), 2);
    // 300 bytes freed: 10 left, so a write of 4090 more fits a 4100-byte quota exactly.
    rotifer_memory_core::create_agent_memory(&layout, "test-memory", 4100, DataPolicy::default()).unwrap();
    a.write(&s("q"), Arg::Bytes(vec![1; 4089]), &s("PREFERENCE"), &Arg::Undefined, &Arg::Undefined, T0).unwrap();
    assert_eq!(a.write(&s("r"), Arg::Bytes(vec![]), &s("PREFERENCE"), &Arg::Undefined, &Arg::Undefined, T0).unwrap_err().code, ErrorCode::QuotaExceeded);
}
