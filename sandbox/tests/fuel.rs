//! Genes that make the host work for them (R-RUN-5): every host call is charged by the work it
//! does — each iovec walked, each byte of a memory request parsed, each byte of a response read
//! and encoded (whether or not it fits in `out`) — so a loop of host calls runs out of fuel the
//! way a loop of instructions does, instead of running to its deadline.

mod common;

use common::*;
use rotifer_memory_core::{create_agent_memory, DataPolicy, GeneOptions, Layout};
use rotifer_memory_sandbox::Outcome;

/// A WASI gene calling `func` `calls` times with `count` iovecs of length 0 (memory is zeroed:
/// the table at 0 holds `{ptr 0, len 0}` entries), then returning.
fn empty_iovecs(func: &str, fd: i32, count: i32, calls: i32) -> String {
    format!(
        r#"(module
      (import "wasi_snapshot_preview1" "{func}" (func $io (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "_start") (local $i i32)
        (loop $l
          (if (i32.ne (call $io (i32.const {fd}) (i32.const 0) (i32.const {count}) (i32.const 60000)) (i32.const 0)) (then unreachable))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $l (i32.lt_u (local.get $i) (i32.const {calls}))))))"#
    )
}

#[test]
fn every_iovec_a_wasi_call_walks_is_paid_for() {
    // 100 calls of 1,024 empty buffers each: the host walks 102,400 iovecs, at least one unit
    // of fuel each (a flat charge per call let an endless loop of them outlast any fuel).
    for (func, fd) in [("fd_write", 1), ("fd_write", 2), ("fd_read", 0)] {
        let r = Run::default().go(&empty_iovecs(func, fd, 1024, 100), "");
        assert_eq!(r.outcome, Outcome::Output(String::new()), "{func} on fd {fd}");
        assert!(r.fuel_used >= 100 * 1024, "{func} on fd {fd}: 102,400 iovecs walked for {} fuel", r.fuel_used);
        // One buffer a call costs about what it did: the charge is by the work, not a new flat fee.
        let one = Run::default().go(&empty_iovecs(func, fd, 1, 100), "");
        assert!(one.fuel_used < 100 * 300, "{func} on fd {fd}: 100 calls of one iovec used {} fuel", one.fuel_used);
    }
}

#[test]
fn an_endless_loop_of_empty_writes_runs_out_of_fuel() {
    let wat = r#"(module
      (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "_start") (loop $l (drop (call $write (i32.const 2) (i32.const 0) (i32.const 1024) (i32.const 60000))) (br $l))))"#;
    // The default fuel: 5,000,000 calls walking 1,024 iovecs each at a flat rate (minutes), under
    // 50,000 when each iovec is paid for.
    let r = Run { deadline_ms: Some(now_ms() + 120_000), ..Run::default() }.go(wat, "");
    assert_eq!(failure(&r).0, "OUT_OF_FUEL");
}

/// A fresh project root with one agent (16 MiB quota).
fn agent(name: &str) -> (std::path::PathBuf, GeneOptions) {
    let root = std::env::temp_dir().join(format!("rotifer-sandbox-{name}-{}", rotifer_memory_core::store::unique_suffix()));
    std::fs::create_dir_all(&root).unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    create_agent_memory(&Layout::at(&root), "agent-1", 16 << 20, DataPolicy { anonymization_supported: false, max_retention_days: None }).unwrap();
    let memory = GeneOptions { agent_id: Some("agent-1".into()), gene_id: Some(GENE.into()), domain: Some("test".into()), root: Some(root.to_string_lossy().into()), url: None };
    (root, memory)
}

/// A direct gene making one `call` with its input as the request and `out_cap` bytes of out,
/// answering `{"code":-N}` for a return value -N down to -9, `{"code": 0}` for any length
/// returned. (The request comes as the input, which the host copies in for no fuel.)
fn one_call(call: &str, out_cap: u32) -> String {
    format!(
        r#"(module
      (import "rotifer" "{call}" (func $call (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 64)
      (data (i32.const 16) "{{\"code\":-0}}\00")
      (func (export "alloc") (param i32) (result i32) (i32.const 65536))
      (func (export "express") (param i32 i32) (result i32) (local $n i32)
        (local.set $n (call $call (local.get 0) (local.get 1) (i32.const 2000000) (i32.const {out_cap})))
        (if (i32.lt_s (local.get $n) (i32.const 0))
          (then (i32.store8 (i32.const 25) (i32.sub (i32.const 48) (local.get $n))))
          (else (i32.store8 (i32.const 24) (i32.const 32))))
        (i32.const 16)))"#
    )
}

#[test]
fn a_memory_request_is_paid_for_by_the_byte_before_it_is_parsed() {
    let (root, memory) = agent("request");
    // A 96 KiB value: 131,072 bytes of base64, parsed and decoded whatever the answer is.
    let value = "A".repeat(131_072);
    let request = format!(r#"{{"key":"big","value":"{value}","category":"PREFERENCE"}}"#);
    let r = Run { memory: memory.clone(), ..Run::default() }.go(&one_call("writeMemory", 0), &request);
    // out_cap 0: too small for the entry (-1), the write done.
    assert_eq!(output(&r), r#"{"code":-1}"#);
    assert!(r.fuel_used >= request.len() as u64, "a {}-byte request cost {} fuel", request.len(), r.fuel_used);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_response_too_large_for_out_is_paid_for_by_the_byte_it_was_made_of() {
    let (root, memory) = agent("response");
    // Eight entries of 96 KiB: the query's response is over a MiB of base64.
    let value = "A".repeat(131_072);
    for i in 0..8 {
        let request = format!(r#"{{"key":"k{i}","value":"{value}","category":"PREFERENCE"}}"#);
        let r = Run { memory: memory.clone(), ..Run::default() }.go(&one_call("writeMemory", 2_000_000), &request);
        assert_eq!(output(&r), r#"{"code": 0}"#, "write {i}");
    }
    let big = Run { memory: memory.clone(), ..Run::default() }.go(&one_call("queryMemory", 2_000_000), "{}");
    assert_eq!(output(&big), r#"{"code": 0}"#);
    // out_cap 0: the whole query is read and encoded, kept for a retry, and answered -1; what
    // was made costs as much as when it is delivered.
    let r = Run { memory, ..Run::default() }.go(&one_call("queryMemory", 0), "{}");
    assert_eq!(output(&r), r#"{"code":-1}"#);
    assert!(r.fuel_used >= 8 * 131_072, "a response of over 1 MiB made for {} fuel", r.fuel_used);
    assert!(big.fuel_used >= 8 * 131_072, "a response of over 1 MiB delivered for {} fuel", big.fuel_used);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_context_value_is_paid_for_by_the_byte_of_its_json_even_when_it_does_not_fit() {
    let wat = r#"(module
      (import "rotifer" "readContext" (func $ctx (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (data (i32.const 100) "big")
      (data (i32.const 200) "{}\00")
      (func (export "express") (param i32 i32) (result i32)
        (if (i32.ne (call $ctx (i32.const 100) (i32.const 3) (i32.const 0) (i32.const 0)) (i32.const -1)) (then unreachable))
        (i32.const 200)))"#;
    let context = serde_json::json!({ "agent_id": "cli", "big": "x".repeat(200_000) });
    let r = Run { context, ..Run::default() }.go(wat, "{}");
    assert_eq!(output(&r), "{}");
    assert!(r.fuel_used >= 200_000, "a 200 KB value encoded for {} fuel", r.fuel_used);
}

/// A direct gene making `call` with its input as the request, with an `out` of 4 KiB, forever.
fn endless_calls(call: &str) -> String {
    format!(
        r#"(module
      (import "rotifer" "{call}" (func $call (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 64)
      (func (export "alloc") (param i32) (result i32) (i32.const 65536))
      (func (export "express") (param i32 i32) (result i32)
        (loop $l (drop (call $call (local.get 0) (local.get 1) (i32.const 2000000) (i32.const 4096))) (br $l))
        (i32.const 0)))"#
    )
}

#[test]
fn a_read_that_loads_a_large_entry_and_answers_little_is_paid_for_by_what_it_loaded() {
    let (root, memory) = agent("loads");
    // A 768 KiB PREFERENCE entry.
    let value = "A".repeat(1 << 20);
    let request = format!(r#"{{"key":"big","value":"{value}","category":"PREFERENCE"}}"#);
    let w = Run { memory: memory.clone(), ..Run::default() }.go(&one_call("writeMemory", 2_000_000), &request);
    assert_eq!(output(&w), r#"{"code": 0}"#);
    // Read as CACHE: the entry is loaded, and the answer is null. 20 M fuel pays for a few dozen
    // such loads, not for the ~140,000 calls a flat charge allowed.
    let fuel = 20_000_000;
    let r = Run { memory: memory.clone(), fuel, deadline_ms: Some(now_ms() + 10_000), ..Run::default() }
        .go(&endless_calls("readMemory"), r#"{"key":"big","category":"CACHE"}"#);
    assert_eq!(failure(&r).0, "OUT_OF_FUEL");
    let _ = std::fs::remove_dir_all(&root);
}
