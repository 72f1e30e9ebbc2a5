//! The sandbox end to end, on modules written in WAT (R-RUN-5).

mod common;

use common::*;
use rotifer_memory_core::{create_agent_memory, DataPolicy, GeneOptions, Layout};
use rotifer_memory_sandbox::{load, GeneKind, Outcome};

const ECHO: &str = r#"(module (memory (export "memory") 1)
  (func (export "express") (param $p i32) (param $n i32) (result i32)
    (i32.store8 (i32.add (local.get $p) (local.get $n)) (i32.const 0))
    (local.get $p)))"#;

#[test]
fn a_direct_gene_gets_its_input_and_returns_its_output() {
    let r = Run::default().go(ECHO, r#"{"name":"world"}"#);
    assert_eq!(output(&r), r#"{"name":"world"}"#);
    assert!(r.fuel_used > 0 && r.fuel_used < 1000, "{}", r.fuel_used);
}

#[test]
fn the_input_goes_where_alloc_says() {
    let wat = r#"(module (memory (export "memory") 1)
      (func (export "alloc") (param i32) (result i32) (i32.const 4096))
      (func (export "express") (param $p i32) (param $n i32) (result i32)
        (if (i32.ne (local.get $p) (i32.const 4096)) (then unreachable))
        (i32.store8 (i32.add (local.get $p) (local.get $n)) (i32.const 0))
        (local.get $p)))"#;
    assert_eq!(output(&Run::default().go(wat, "[1,2]")), "[1,2]");
}

#[test]
fn an_endless_loop_runs_out_of_fuel_and_says_how_much_it_had() {
    let wat = r#"(module (memory (export "memory") 1)
      (func (export "express") (param i32 i32) (result i32) (loop $l (br $l)) (i32.const 0)))"#;
    let started = std::time::Instant::now();
    let r = Run { fuel: 20_000_000, deadline_ms: Some(now_ms() + 300_000), ..Run::default() }.go(wat, "{}");
    let (code, message) = failure(&r);
    assert_eq!(code, "OUT_OF_FUEL");
    assert!(message.contains("ran out of fuel") && message.contains("20000000"), "{message}");
    assert_eq!(r.fuel_used, 20_000_000);
    assert!(started.elapsed().as_secs() < 30);
}

#[test]
fn a_gene_past_its_deadline_is_stopped_with_fuel_left() {
    let wat = r#"(module (memory (export "memory") 1)
      (func (export "express") (param i32 i32) (result i32) (loop $l (br $l)) (i32.const 0)))"#;
    let started = std::time::Instant::now();
    let r = Run { fuel: 1_000_000_000_000_000, deadline_ms: Some(now_ms() + 200), ..Run::default() }.go(wat, "{}");
    assert_eq!(r.outcome, Outcome::Timeout);
    // Stopped at the deadline's tick, not when some fuel ran out.
    assert!(started.elapsed().as_millis() < 2000, "{:?}", started.elapsed());
}

#[test]
fn memory_grow_past_the_cap_returns_minus_one() {
    // 1 GiB is 16384 pages: refused; 100 pages (6.4 MiB) is granted.
    let wat_report = r#"(module (memory (export "memory") 1)
      (data (i32.const 100) "[  ,  ]\00")
      (func $digit (param $at i32) (param $v i32)
        (i32.store8 (local.get $at) (i32.add (i32.const 48) (local.get $v))))
      (func (export "express") (param i32 i32) (result i32)
        (local $a i32) (local $b i32)
        (local.set $a (memory.grow (i32.const 16384)))
        (local.set $b (memory.grow (i32.const 100)))
        ;; -1 → "-1" is written as " -" + "1"; 1 (old size) as " 1"
        (if (i32.eq (local.get $a) (i32.const -1))
          (then (i32.store8 (i32.const 101) (i32.const 45)) (call $digit (i32.const 102) (i32.const 1)))
          (else (call $digit (i32.const 102) (i32.const 9))))
        (call $digit (i32.const 105) (local.get $b))
        (i32.const 100)))"#;
    assert_eq!(output(&Run::default().go(wat_report, "{}")), "[-1, 1]");
}

#[test]
fn memory_calls_reach_the_agent_and_remember_across_runs() {
    let root = std::env::temp_dir().join(format!("rotifer-sandbox-{}", rotifer_memory_core::store::unique_suffix()));
    std::fs::create_dir_all(&root).unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    create_agent_memory(&Layout::at(&root), "agent-1", 1 << 20, DataPolicy { anonymization_supported: false, max_retention_days: None }).unwrap();
    let memory = || GeneOptions { agent_id: Some("agent-1".into()), gene_id: Some(GENE.into()), domain: Some("test".into()), root: Some(root.to_string_lossy().into()), url: None };
    // Writes {"key":"k","value":"aGk=","category":"PREFERENCE"} then returns what it read back.
    let write = r#"{"key":"k","value":"aGk=","category":"PREFERENCE"}"#;
    let read = r#"{"key":"k"}"#;
    let wat = format!(
        r#"(module
      (import "rotifer" "writeMemory" (func $w (param i32 i32 i32 i32) (result i32)))
      (import "rotifer" "readMemory" (func $r (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (data (i32.const 1000) "{}")
      (data (i32.const 2000) "{}")
      (func (export "express") (param i32 i32) (result i32) (local $n i32)
        (if (i32.eqz (i32.load8_u (local.get 0))) (then unreachable))
        (if (i32.eq (i32.load8_u (i32.add (local.get 0) (i32.const 2))) (i32.const 119))
          (then (drop (call $w (i32.const 1000) (i32.const {}) (i32.const 8000) (i32.const 4000)))))
        (local.set $n (call $r (i32.const 2000) (i32.const {}) (i32.const 8000) (i32.const 4000)))
        (i32.store8 (i32.add (i32.const 8000) (local.get $n)) (i32.const 0))
        (i32.const 8000)))"#,
        write.replace('"', "\\\""),
        read.replace('"', "\\\""),
        write.len(),
        read.len()
    );
    let first = Run { memory: memory(), ..Run::default() }.go(&wat, r#"{"w":1}"#);
    let v: serde_json::Value = serde_json::from_str(output(&first)).unwrap();
    assert_eq!(v["value"], "aGk=");
    // A second run (a fresh store) only reads: the entry is still there.
    let second = Run { memory: memory(), ..Run::default() }.go(&wat, r#"{"x":1}"#);
    let v: serde_json::Value = serde_json::from_str(output(&second)).unwrap();
    assert_eq!(v["value"], "aGk=");
    assert_eq!(v["createdBy"], GENE);
    // Unbound (`rotifer run`): every call is denied with -2.
    let unbound = Run::default().go(&wat, r#"{"x":1}"#);
    assert!(output(&unbound).contains("MEMORY_ACCESS_DENIED"), "{}", output(&unbound));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn context_budget_timestamp_and_logs() {
    let wat = r#"(module
      (import "rotifer" "readContext" (func $ctx (param i32 i32 i32 i32) (result i32)))
      (import "rotifer" "remainingBudget" (func $budget (result i64)))
      (import "rotifer" "logicalTimestamp" (func $ts (result i64)))
      (import "rotifer" "log" (func $log (param i32 i32 i32)))
      (import "env" "log" (func $envlog (param i32 i32)))
      (memory (export "memory") 1)
      (data (i32.const 500) "agent_id")
      (data (i32.const 516) "missing")
      (data (i32.const 532) "hello")
      (func (export "express") (param i32 i32) (result i32) (local $n i32)
        ;; the input is at 0 (no alloc): the strings lie past it
        ;; "agent_id" → "cli" (5 bytes, with quotes) at 200
        (local.set $n (call $ctx (i32.const 500) (i32.const 8) (i32.const 200) (i32.const 100)))
        (if (i32.ne (local.get $n) (i32.const 5)) (then (return (i32.const -1))))
        (if (i32.ne (call $ctx (i32.const 516) (i32.const 7) (i32.const 300) (i32.const 100)) (i32.const 0)) (then (return (i32.const -2))))
        (if (i32.ne (call $ctx (i32.const 500) (i32.const 8) (i32.const 300) (i32.const 2)) (i32.const -1)) (then (return (i32.const -3))))
        (if (i64.le_s (call $budget) (i64.const 0)) (then (return (i32.const -4))))
        (if (i64.ge_s (call $ts) (call $ts)) (then (return (i32.const -5))))
        (call $log (i32.const 2) (i32.const 532) (i32.const 5))
        (call $envlog (i32.const 532) (i32.const 5))
        (i32.store8 (i32.const 205) (i32.const 0))
        (i32.const 200)))"#;
    let run = Run::default();
    let lines = run.lines.clone();
    assert_eq!(output(&run.go(wat, "{}")), "\"cli\"");
    assert_eq!(*lines.0.lock().unwrap(), vec!["[t] warn: hello", "[t] info: hello"]);
}

#[test]
fn a_log_flood_is_bounded_and_ends_on_fuel() {
    let wat = r#"(module
      (import "rotifer" "log" (func $log (param i32 i32 i32)))
      (memory (export "memory") 2)
      (func (export "express") (param i32 i32) (result i32)
        (loop $l (call $log (i32.const 1) (i32.const 0) (i32.const 60000)) (br $l))
        (i32.const 0)))"#;
    let run = Run { fuel: 50_000_000, ..Run::default() };
    let lines = run.lines.clone();
    let r = run.go(wat, "{}");
    assert_eq!(failure(&r).0, "OUT_OF_FUEL");
    let lines = lines.0.lock().unwrap();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    assert!(bytes < 1024 * 1024 + 4096, "{bytes}");
    assert!(lines.last().unwrap().contains("dropped"), "{}", lines.last().unwrap());
}

#[test]
fn a_wasi_command_reads_stdin_and_writes_stdout() {
    let wat = r#"(module
      (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 1)
      (data (i32.const 40) "note\n")
      (func (export "_start")
        (i32.store (i32.const 0) (i32.const 1024))
        (i32.store (i32.const 4) (i32.const 60000))
        (drop (call $read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
        (i32.store (i32.const 4) (i32.load (i32.const 16)))
        (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 20)))
        (i32.store (i32.const 24) (i32.const 40))
        (i32.store (i32.const 28) (i32.const 5))
        (drop (call $write (i32.const 2) (i32.const 24) (i32.const 1) (i32.const 20)))
        (call $exit (i32.const 0))))"#;
    let gene = load(&wat::parse_str(wat).unwrap(), "g").unwrap();
    assert_eq!(gene.kind, GeneKind::Wasi);
    let run = Run::default();
    let lines = run.lines.clone();
    assert_eq!(output(&run.go(wat, r#"{"a":1}"#)), r#"{"a":1}"#);
    assert_eq!(*lines.0.lock().unwrap(), vec!["[t] stderr: note"]);
}

#[test]
fn a_wasi_exit_status_fails_the_run() {
    let wat = r#"(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 1)
      (func (export "_start") (call $exit (i32.const 3))))"#;
    assert_eq!(failure(&Run::default().go(wat, "{}")).0, "EXIT_3");
}

fn refused(wat: &str) -> String {
    match load(&wat::parse_str(wat).unwrap(), "gene \"t\"") {
        Ok(_) => panic!("loaded"),
        Err(e) => e,
    }
}

#[test]
fn modules_the_sandbox_cannot_run_are_refused_by_name() {
    assert!(load(b"not wasm", "gene \"t\"").err().unwrap().contains("is not a valid WebAssembly module"));
    let e = refused(r#"(module (import "env" "clock" (func (result i64))) (memory (export "memory") 1) (func (export "express") (param i32 i32) (result i32) (i32.const 0)))"#);
    assert!(e.contains("imports \"env\".\"clock\" (function), which the sandbox does not provide"), "{e}");
    assert!(e.contains("rotifer.readContext") && e.contains("env.log"), "{e}");
    let e = refused(r#"(module (import "rotifer" "log" (func (param i32))) (memory (export "memory") 1) (func (export "express") (param i32 i32) (result i32) (i32.const 0)))"#);
    assert!(e.contains("imports rotifer.log with the type (i32) -> nothing; the sandbox's is (i32, i32, i32) -> nothing"), "{e}");
    let e = refused(r#"(module (func (export "express") (param i32 i32) (result i32) (i32.const 0)))"#);
    assert!(e.contains("does not export its memory"), "{e}");
    let e = refused(r#"(module (memory (export "memory") 1))"#);
    assert!(e.contains("does not export a function \"express"), "{e}");
    let e = refused(r#"(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))) (memory (export "memory") 1))"#);
    assert!(e.contains("exports no _start"), "{e}");
    let e = refused(r#"(module (import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32))) (memory (export "memory") 1) (func (export "_start")))"#);
    assert!(e.contains("path_open") && e.contains("WASI gene may import only"), "{e}");
}

#[test]
fn bad_outputs_fail_with_a_reason() {
    let no_nul = r#"(module (memory (export "memory") 1)
      (func (export "express") (param i32 i32) (result i32)
        (memory.fill (i32.const 0) (i32.const 65) (i32.const 65536)) (i32.const 10)))"#;
    let r = Run::default().go(no_nul, "{}");
    let (code, message) = failure(&r);
    assert_eq!(code, "INVALID_OUTPUT");
    assert!(message.contains("no NUL byte"), "{message}");
    let outside = r#"(module (memory (export "memory") 1) (func (export "express") (param i32 i32) (result i32) (i32.const 70000)))"#;
    assert!(failure(&Run::default().go(outside, "{}")).1.contains("outside the gene's memory"));
    let negative = r#"(module (memory (export "memory") 1) (func (export "express") (param i32 i32) (result i32) (i32.const -7)))"#;
    assert_eq!(failure(&Run::default().go(negative, "{}")).0, "-7");
    let trap = r#"(module (memory (export "memory") 1) (func (export "express") (param i32 i32) (result i32) unreachable))"#;
    let r = Run::default().go(trap, "{}");
    let (code, message) = failure(&r);
    assert_eq!(code, "WASM_TRAP");
    assert!(message.contains("unreachable"), "{message}");
}


#[test]
fn a_wasi_gene_writing_past_the_stdout_bound_fails() {
    // Writes the same 64 KiB iovec over and over: 16 MiB is reached after 256 writes.
    let wat = r#"(module
      (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 2)
      (func (export "_start")
        (i32.store (i32.const 0) (i32.const 1024))
        (i32.store (i32.const 4) (i32.const 65536))
        (loop $l (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16))) (br $l))))"#;
    let r = Run::default().go(wat, "{}");
    let (code, message) = failure(&r);
    assert_eq!(code, "OUTPUT_TOO_LARGE");
    assert!(message.contains("16 MiB"), "{message}");
}

#[test]
fn a_memory_call_without_fuel_left_gets_minus_four_and_does_nothing() {
    // The gene spends its fuel down to a little, then calls readMemory: -4, reported as its output.
    let root = std::env::temp_dir().join(format!("rotifer-sandbox-fuel-{}", rotifer_memory_core::store::unique_suffix()));
    std::fs::create_dir_all(&root).unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    create_agent_memory(&Layout::at(&root), "agent-2", 1 << 20, DataPolicy { anonymization_supported: false, max_retention_days: None }).unwrap();
    let wat = r#"(module
      (import "rotifer" "readMemory" (func $r (param i32 i32 i32 i32) (result i32)))
      (import "rotifer" "remainingBudget" (func $budget (result i64)))
      (memory (export "memory") 1)
      (data (i32.const 2000) "{\"key\":\"k\"}")
      (data (i32.const 3000) "{\"code\":-4}\00")
      (func (export "express") (param i32 i32) (result i32)
        (loop $l (br_if $l (i64.gt_s (call $budget) (i64.const 90))))
        (if (result i32) (i32.eq (call $r (i32.const 2000) (i32.const 11) (i32.const 8000) (i32.const 4000)) (i32.const -4))
          (then (i32.const 3000)) (else (i32.const 0)))))"#;
    let memory = GeneOptions { agent_id: Some("agent-2".into()), gene_id: Some(GENE.into()), domain: Some("test".into()), root: Some(root.to_string_lossy().into()), url: None };
    let r = Run { memory, fuel: 1_000_000, ..Run::default() }.go(wat, "{}");
    // The call found less fuel than it costs: -4, nothing read, and the gene could still answer.
    assert_eq!(output(&r), r#"{"code":-4}"#);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn read_context_refuses_keys_outside_memory_or_not_utf8_and_host_calls_cost_by_size() {
    // Checks each in turn and returns {"ok":0} if all hold, else {"ok":N} naming the first that
    // did not.
    let wat = r#"(module
      (import "rotifer" "readContext" (func $ctx (param i32 i32 i32 i32) (result i32)))
      (import "rotifer" "remainingBudget" (func $budget (result i64)))
      (import "rotifer" "log" (func $log (param i32 i32 i32)))
      (memory (export "memory") 1)
      (data (i32.const 600) "\ff\fe")
      (data (i32.const 1000) "{\"ok\":0}\00")
      (data (i32.const 1100) "{\"ok\":1}\00")
      (data (i32.const 1200) "{\"ok\":2}\00")
      (data (i32.const 1300) "{\"ok\":3}\00")
      (data (i32.const 1400) "{\"ok\":4}\00")
      (func (export "express") (param i32 i32) (result i32) (local $a i64) (local $b i64) (local $c i64)
        (if (i32.ne (call $ctx (i32.const 65530) (i32.const 100) (i32.const 0) (i32.const 10)) (i32.const -1)) (then (return (i32.const 1100))))
        (if (i32.ne (call $ctx (i32.const 600) (i32.const 2) (i32.const 0) (i32.const 10)) (i32.const -1)) (then (return (i32.const 1200))))
        (local.set $a (call $budget))
        (call $log (i32.const 1) (i32.const 8000) (i32.const 6400))
        (local.set $b (call $budget))
        (call $log (i32.const 1) (i32.const 8000) (i32.const 0))
        (local.set $c (call $budget))
        ;; 100 per call plus 1 per 64 bytes: 200 for the 6400-byte line, 100 for the empty one,
        ;; and 100 for the remainingBudget call that reads it (and a few units of the gene's own
        ;; instructions between the readings).
        (if (i32.or (i64.lt_s (i64.sub (local.get $a) (local.get $b)) (i64.const 300))
                    (i64.gt_s (i64.sub (local.get $a) (local.get $b)) (i64.const 310))) (then (return (i32.const 1300))))
        (if (i32.or (i64.lt_s (i64.sub (local.get $b) (local.get $c)) (i64.const 200))
                    (i64.gt_s (i64.sub (local.get $b) (local.get $c)) (i64.const 210))) (then (return (i32.const 1400))))
        (i32.const 1000)))"#;
    assert_eq!(output(&Run::default().go(wat, "{}")), r#"{"ok":0}"#);
}

#[test]
fn a_stderr_flood_is_bounded_in_time_by_fuel_and_deadline() {
    // Each write names 1024 buffers of 60,000 newlines: the host looks at 64 KiB of it.
    let wat = r#"(module
      (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 2)
      (func (export "_start") (local $i i32)
        (memory.fill (i32.const 8192) (i32.const 10) (i32.const 60000))
        (loop $fill
          (i32.store (i32.mul (local.get $i) (i32.const 8)) (i32.const 8192))
          (i32.store (i32.add (i32.mul (local.get $i) (i32.const 8)) (i32.const 4)) (i32.const 60000))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $fill (i32.lt_u (local.get $i) (i32.const 1000))))
        (loop $l (drop (call $write (i32.const 2) (i32.const 0) (i32.const 1000) (i32.const 8100))) (br $l))))"#;
    let started = std::time::Instant::now();
    let run = Run { deadline_ms: Some(now_ms() + 2000), ..Run::default() };
    let lines = run.lines.clone();
    let r = run.go(wat, "{}");
    assert!(started.elapsed().as_secs() < 10, "took {:?}", started.elapsed());
    assert!(matches!(&r.outcome, Outcome::Timeout) || failure(&r).0 == "OUT_OF_FUEL", "{:?}", r.outcome);
    let lines = lines.0.lock().unwrap();
    assert!(lines.last().unwrap().contains("dropped"), "{:?}", lines.last());
}

#[test]
fn too_many_iovecs_is_einval_without_reading_them() {
    let wat = r#"(module
      (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 1)
      (func (export "_start") (call $exit (call $write (i32.const 1) (i32.const 0) (i32.const 1048576) (i32.const 16)))))"#;
    // EINVAL (28) as the exit status.
    assert_eq!(failure(&Run::default().go(wat, "{}")).0, "EXIT_28");
}

#[test]
fn a_direct_output_past_the_bound_is_refused_without_being_copied() {
    // 17 MiB of 'A' with no NUL in it.
    let wat = r#"(module (memory (export "memory") 300)
      (func (export "express") (param i32 i32) (result i32)
        (memory.fill (i32.const 0) (i32.const 65) (i32.const 19660800)) (i32.const 0)))"#;
    let r = Run::default().go(wat, "{}");
    let (code, message) = failure(&r);
    assert_eq!(code, "OUTPUT_TOO_LARGE");
    assert!(message.contains("16 MiB"), "{message}");
}

#[test]
fn modules_too_large_or_with_two_memories_are_refused_before_they_run() {
    let mut big = wat::parse_str(ECHO).unwrap();
    big.resize(33 * 1024 * 1024, 0);
    let e = load(&big, "gene \"t\"").err().unwrap();
    assert!(e.contains("at most 32 MiB"), "{e}");
    let e = refused(r#"(module (memory (export "memory") 1) (memory 1) (func (export "express") (param i32 i32) (result i32) (i32.const 0)))"#);
    assert!(e.contains("not a valid WebAssembly module"), "{e}");
}
