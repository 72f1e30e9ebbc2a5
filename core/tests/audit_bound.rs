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

// ---------------------------------------------------------------------------------------------
// One agent's changes never remove another agent's lines (R-AUD-7), and cost a bounded line

mod common;
use common::Project;
use rotifer_memory_core::audit_log::read_agent_log;

/// The bytes of every audit file of the project (`audit.jsonl`, rotated ones, the kept file).
fn audit_bytes(p: &Project) -> (u64, Vec<String>) {
    let mut total = 0;
    let mut names = Vec::new();
    for e in std::fs::read_dir(p.0.join(".rotifer")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("audit.") && name.ends_with(".jsonl") {
            total += e.metadata().unwrap().len();
            names.push(name);
        }
    }
    names.sort();
    (total, names)
}

fn keys_of(p: &Project, agent: &str) -> Vec<String> {
    let log = read_agent_log(&p.layout(), agent).unwrap();
    assert_eq!(log.skipped, 0, "every line read is an audit line");
    log.lines
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["committed"], true, "{l}");
            v["key"].as_str().unwrap_or("-").to_string()
        })
        .collect()
}

#[test]
fn r_aud_7_a_gene_rewriting_a_long_key_never_removes_another_agents_lines() {
    let p = Project::new("flood");
    std::fs::write(p.0.join("rotifer.json"), r#"{"audit":{"maxSize":"8KB","keep":2,"keepPerAgent":"64KB"}}"#).unwrap();
    let quiet = p.gene("quiet");
    for i in 0..15 {
        quiet.write(&s(&format!("q{i:02}")), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0 + i).unwrap();
    }
    let quiet_keys: Vec<String> = (0..15).map(|i| format!("q{i:02}")).collect();
    assert_eq!(keys_of(&p, "quiet"), quiet_keys);
    // The flood: one key of 1,024 × U+0001 (6 bytes each in JSON), rewritten with two values.
    let loud = p.gene("loud");
    let key = "\u{1}".repeat(1024);
    let n = 3000u64;
    for i in 0..n {
        loud.write(&s(&key), Arg::Bytes(vec![(i % 2) as u8]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, T0 + 100 + i as i64).unwrap();
    }
    let (total, names) = audit_bytes(&p);
    assert!(names.contains(&"audit.kept.jsonl".to_string()), "{names:?}");
    assert!(names.len() <= 4, "at most keep + 1 files and the kept file: {names:?}");
    // The quiet agent's lines are all still there, in order, judged committed.
    assert_eq!(keys_of(&p, "quiet"), quiet_keys, "another agent's flood removed none of them");
    // The flood keeps its latest 64 KB of lines (and what the live files hold): the newest ones,
    // none missing in between, each showing the key's beginning and its length.
    let log = read_agent_log(&p.layout(), "loud").unwrap();
    let lines: Vec<Value> = log.lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.len() > 64 * 1024 / 700 && (lines.len() as u64) < n, "{} lines of the flood kept", lines.len());
    let txs: Vec<i64> = lines.iter().map(|l| l["tx"].as_i64().unwrap()).collect();
    assert_eq!(*txs.last().unwrap(), n as i64);
    assert!(txs.windows(2).all(|w| w[1] == w[0] + 1), "contiguous, in order");
    // Each change line is bounded (it was 6.8 KB).
    for l in &log.lines {
        assert!(l.len() < 700, "{} bytes", l.len());
    }
    assert_eq!(lines[0]["keyBytes"], 1024);
    assert!(lines[0]["key"].as_str().unwrap().ends_with('…'));
    // Disk: the live files, plus 64 KB per agent in the kept file.
    assert!(total < 3 * (8 * 1024 + 700) + 2 * 64 * 1024 + 1024, "{total} bytes on disk");
}

#[test]
fn r_aud_7_each_agents_latest_lines_survive_many_rotations_and_a_lowered_keep() {
    let p = Project::new("kept");
    std::fs::write(p.0.join("rotifer.json"), r#"{"audit":{"maxSize":"2KB","keep":6,"keepPerAgent":"4KB"}}"#).unwrap();
    let (a, b) = (p.gene("a"), p.gene("b"));
    let write = |m: &GeneMemory, k: String, t: i64| m.write(&s(&k), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, t).unwrap();
    for i in 0..200 {
        write(&a, format!("a{i:03}"), T0 + i);
        if i % 20 == 0 {
            write(&b, format!("b{i:03}"), T0 + i);
        }
    }
    let b_keys: Vec<String> = (0..200).step_by(20).map(|i| format!("b{i:03}")).collect();
    assert_eq!(keys_of(&p, "b"), b_keys, "b's 10 lines (under 3 KB) all kept");
    let a_keys = keys_of(&p, "a");
    let first: usize = a_keys[0][1..].parse().unwrap();
    assert_eq!(a_keys, (first..200).map(|i| format!("a{i:03}")).collect::<Vec<_>>(), "a's newest lines, none missing");
    // Lowered keep: the files past it go at the next rotation, their agents' lines kept.
    std::fs::write(p.0.join("rotifer.json"), r#"{"audit":{"maxSize":"2KB","keep":1,"keepPerAgent":"4KB"}}"#).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100)); // the settings are looked at once a second
    for i in 200..215 {
        write(&a, format!("a{i:03}"), T0 + i);
    }
    let (_, names) = audit_bytes(&p);
    assert!(names.iter().all(|n| ["audit.1.jsonl", "audit.jsonl", "audit.kept.jsonl"].contains(&n.as_str())), "{names:?}");
    assert!(names.contains(&"audit.kept.jsonl".to_string()), "{names:?}");
    assert_eq!(keys_of(&p, "b"), b_keys);
    let a_keys = keys_of(&p, "a");
    let first: usize = a_keys[0][1..].parse().unwrap();
    assert_eq!(a_keys, (first..215).map(|i| format!("a{i:03}")).collect::<Vec<_>>());
}

#[test]
fn r_aud_7_a_rotation_cut_short_after_keeping_lines_never_shows_them_twice() {
    let p = Project::new("cut-short");
    std::fs::write(p.0.join("rotifer.json"), r#"{"audit":{"maxSize":"2KB","keep":2}}"#).unwrap();
    let a = p.gene("a");
    let write = |k: String, t: i64| a.write(&s(&k), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, t).unwrap();
    let mut i = 0;
    let dot = p.0.join(".rotifer");
    while !dot.join("audit.2.jsonl").exists() {
        write(format!("k{i:03}"), T0 + i);
        i += 1;
    }
    let expected = keys_of(&p, "a");
    // As a rotation killed between writing the kept file and removing the file it took in
    // leaves them: the kept file holds audit.2's lines and names it in its first line.
    use std::os::unix::fs::MetadataExt;
    let two = dot.join("audit.2.jsonl");
    let m = std::fs::metadata(&two).unwrap();
    let header = format!(
        "{{\"keptFrom\":[{{\"dev\":{},\"ino\":{},\"size\":{},\"mtimeNs\":{}}}]}}\n",
        m.dev(),
        m.ino(),
        m.len(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec())
    );
    let mut kept = header.into_bytes();
    kept.extend(std::fs::read(&two).unwrap());
    std::fs::write(dot.join("audit.kept.jsonl"), kept).unwrap();
    assert_eq!(keys_of(&p, "a"), expected, "each line once");
    // The next rotation removes audit.2 without taking its lines in a second time.
    let before_kept = std::fs::read(dot.join("audit.kept.jsonl")).unwrap();
    let inode = std::fs::metadata(&two).unwrap().ino();
    let mut more = expected.clone();
    while std::fs::metadata(&two).ok().map(|m| m.ino()) == Some(inode) {
        write(format!("k{i:03}"), T0 + i);
        more.push(format!("k{i:03}"));
        i += 1;
    }
    assert_eq!(keys_of(&p, "a"), more);
    assert_eq!(std::fs::read(dot.join("audit.kept.jsonl")).unwrap(), before_kept, "audit.2 was not taken in again");
}

#[test]
fn r_aud_7_a_kept_file_that_cannot_be_written_stops_the_rotation_never_a_line() {
    let p = Project::new("kept-blocked");
    std::fs::write(p.0.join("rotifer.json"), r#"{"audit":{"maxSize":"1KB","keep":1}}"#).unwrap();
    let a = p.gene("a");
    let write = |k: String, t: i64| a.write(&s(&k), Arg::Bytes(vec![1]), &s("CACHE"), &Arg::Undefined, &Arg::Undefined, t).unwrap();
    write("first".into(), T0);
    // A folder where the kept file goes: keeping the lines fails, so audit.1 is not dropped.
    std::fs::create_dir_all(p.0.join(".rotifer/audit.kept.jsonl")).unwrap();
    let mut expected = vec!["first".to_string()];
    for i in 0..40 {
        let k = format!("k{i:02}");
        write(k.clone(), T0 + 1 + i);
        expected.push(k);
    }
    assert_eq!(keys_of_lenient(&p, "a"), expected, "every line is kept: the changes never failed");
    // Once the kept file can be written, rotation goes on (a second after the failure) and the
    // agent's lines from the file that goes are kept.
    std::fs::remove_dir(p.0.join(".rotifer/audit.kept.jsonl")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    for i in 40..50 {
        let k = format!("k{i:02}");
        write(k.clone(), T0 + 1 + i);
        expected.push(k);
    }
    assert!(p.0.join(".rotifer/audit.kept.jsonl").is_file());
    assert_eq!(keys_of(&p, "a"), expected, "the default 1 MiB per agent keeps them all");
}

/// `keys_of` for a project whose kept file cannot be read (a folder at its path): read the
/// numbered files' lines of `agent` directly.
fn keys_of_lenient(p: &Project, agent: &str) -> Vec<String> {
    let dir = p.0.join(".rotifer");
    let mut files: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = if name == "audit.jsonl" { Some(0) } else { name.strip_prefix("audit.").and_then(|r| r.strip_suffix(".jsonl")).and_then(|n| n.parse().ok()) };
            n.map(|n| (n, e.path()))
        })
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0));
    let mut keys = Vec::new();
    for (_, f) in files {
        for l in std::fs::read_to_string(f).unwrap().lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["agentId"] == agent {
                keys.push(v["key"].as_str().unwrap().to_string());
            }
        }
    }
    keys
}
