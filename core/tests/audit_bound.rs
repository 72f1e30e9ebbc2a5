//! The bound on what a gene can make the logs hold by calls that change nothing (R-AUD-1/4):
//! refusals are written one by one up to a per-handle budget, then counted and summarised,
//! and every refusal stays accounted for.

use rotifer_memory_core::audit::{FULL_REFUSAL_LINES, REFUSAL_KEY_BYTES, SUMMARY_INTERVAL_MS};
use rotifer_memory_core::memory::TestMemory;
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::{Arg, ErrorCode, GeneMemory};
use serde_json::Value;

const T0: i64 = 1_796_000_000_000;

fn gene(c: char) -> String {
    format!("v2:{}", c.to_string().repeat(64))
}

fn s(v: &str) -> Arg {
    Arg::Str(v.to_string())
}

fn lines(tm: &TestMemory, file: &str) -> (u64, Vec<Value>) {
    let text = std::fs::read_to_string(tm.root().join(".rotifer").join(file)).unwrap_or_default();
    (text.len() as u64, text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
}

/// The refusals a set of lines accounts for: one per full line, `count` per summary line.
fn accounted(lines: &[Value], action: &str) -> u64 {
    lines.iter().filter(|l| l["action"] == action).map(|l| l["count"].as_u64().unwrap_or(1)).sum()
}

/// A share policy the default data policy forbids: every such write is denied (R-POL).
fn shared() -> Arg {
    Arg::Object(vec![
        ("readScope".into(), s("ALL_GENES")),
        ("writeScope".into(), s("ALL_GENES")),
        ("sharePolicy".into(), s("ANONYMIZED_SHARE")),
    ])
}

fn denied_write(m: &GeneMemory, key: &str, now: i64) {
    let e = m.write(&s(key), Arg::Bytes(vec![1]), &s("CACHE"), &shared(), &Arg::Undefined, now).unwrap_err();
    assert_eq!(e.code, ErrorCode::AccessDenied);
}

#[test]
fn a_denied_write_loop_adds_a_few_lines_and_every_denial_is_counted() {
    let tm = TestMemory::create(1024, DataPolicy::default()).unwrap();
    let key = "\u{1}".repeat(1024);
    let n = 100_000u64;
    {
        let m = tm.gene_memory(Some(gene('a')), None).unwrap();
        for i in 0..n {
            // 10 ms apart: the loop spans 1000 s, so summaries are due now and then.
            denied_write(&m, &key, T0 + i as i64 * 10);
        }
        let (bytes, audit) = lines(&tm, "audit.jsonl");
        // One full line, then a summary at most once a minute of the loop's 1000 s.
        assert!(audit.len() <= 1 + 1000 / (SUMMARY_INTERVAL_MS as usize / 1000) + 1, "{} lines", audit.len());
        assert!(bytes < 16 * 1024, "{bytes} bytes for {n} denials");
        assert!(accounted(&audit, "memory.access_denied") < n, "the last ones are still counted in memory");
    } // dropping the handle writes the summary it owes
    let (bytes, audit) = lines(&tm, "audit.jsonl");
    assert!(bytes < 16 * 1024, "{bytes} bytes");
    assert_eq!(accounted(&audit, "memory.access_denied"), n, "every denial is accounted for");
    let (tbytes, telemetry) = lines(&tm, "telemetry.jsonl");
    assert!(tbytes < 16 * 1024, "{tbytes} telemetry bytes");
    assert_eq!(telemetry.iter().map(|l| l["count"].as_u64().unwrap_or(1)).sum::<u64>(), n);
    // The full line shows the key's first bytes only; the entry id names the whole key.
    let first = &audit[0];
    assert_eq!(first["key"].as_str().unwrap(), format!("{}…", "\u{1}".repeat(REFUSAL_KEY_BYTES)));
    assert_eq!(first["entryId"], rotifer_memory_core::model::entry_id("test-memory", &key));
    // A summary names what it counts and since when.
    let summary = audit.iter().find(|l| l.get("count").is_some()).unwrap();
    assert_eq!(summary["op"], "write");
    assert_eq!(summary["code"], "MEMORY_ACCESS_DENIED");
    assert_eq!(summary["actor"], gene('a'));
    assert!(summary["since"].is_string() && summary["reason"].as_str().unwrap().contains("more denials"));
    tm.dispose();
}

#[test]
fn distinct_refusals_are_written_up_to_the_budget_then_counted() {
    let tm = TestMemory::create(1024, DataPolicy::default()).unwrap();
    let m = tm.gene_memory(Some(gene('a')), None).unwrap();
    for i in 0..(FULL_REFUSAL_LINES as usize + 5) {
        denied_write(&m, &format!("k{i}"), T0);
    }
    // Quota rejections count against the same budget: this write can never fit.
    let e = m.write(&s("big"), Arg::Bytes(vec![0; 2000]), &s("PREFERENCE"), &Arg::Undefined, &Arg::Undefined, T0).unwrap_err();
    assert_eq!(e.code, ErrorCode::QuotaExceeded);
    let (_, audit) = lines(&tm, "audit.jsonl");
    assert_eq!(audit.len(), FULL_REFUSAL_LINES as usize, "only the budget is written in full");
    assert!(audit.iter().all(|l| l.get("count").is_none()));
    // The summary is due a minute after the first counted refusal, at the next refusal.
    denied_write(&m, "late", T0 + SUMMARY_INTERVAL_MS);
    let (_, audit) = lines(&tm, "audit.jsonl");
    assert_eq!(accounted(&audit, "memory.access_denied"), FULL_REFUSAL_LINES as u64 + 6);
    assert_eq!(accounted(&audit, "memory.quota_reject"), 1);
    // A new handle has a budget of its own.
    let other = tm.gene_memory(Some(gene('a')), None).unwrap();
    denied_write(&other, "k0", T0 + SUMMARY_INTERVAL_MS);
    assert_eq!(lines(&tm, "audit.jsonl").1.last().unwrap()["key"], "k0");
    tm.dispose();
}

#[test]
fn a_caller_without_v2_id_is_bounded_too() {
    let tm = TestMemory::create(1024, DataPolicy::default()).unwrap();
    {
        let m = tm.gene_memory(Some("not-a-v2-id".into()), None).unwrap();
        for i in 0..1000 {
            assert_eq!(m.read(&s("k"), &Arg::Undefined, T0 + i).unwrap_err().code, ErrorCode::AccessDenied);
        }
        assert_eq!(lines(&tm, "audit.jsonl").1.len(), 1);
    }
    let (_, audit) = lines(&tm, "audit.jsonl");
    assert_eq!(accounted(&audit, "memory.access_denied"), 1000);
    assert_eq!(audit.last().unwrap()["actor"], Value::Null);
    tm.dispose();
}

#[test]
fn changes_are_never_summarised() {
    // R-AUD-1: every change keeps a line of its own, however many.
    let tm = TestMemory::create(1 << 20, DataPolicy::default()).unwrap();
    let m = tm.gene_memory(Some(gene('a')), None).unwrap();
    for i in 0..(FULL_REFUSAL_LINES as i64 * 3) {
        m.write(&s("k"), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0 + i).unwrap();
    }
    assert_eq!(lines(&tm, "audit.jsonl").1.len(), FULL_REFUSAL_LINES as usize * 3);
    tm.dispose();
}
