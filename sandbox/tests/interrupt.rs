//! `interrupt_all` (Ctrl-C) stops every run of the process, so it has a test binary of its own:
//! in `run.rs` it would stop the other tests' genes too.

use rotifer_memory_core::GeneOptions;
use rotifer_memory_sandbox::{load, run, Outcome, RunOptions};

#[test]
fn interrupt_all_stops_a_running_gene_at_once() {
    let wat = r#"(module (memory (export "memory") 1)
      (func (export "express") (param i32 i32) (result i32) (loop $l (br $l)) (i32.const 0)))"#;
    let gene = load(&wat::parse_str(wat).unwrap(), "g").unwrap();
    let running = std::thread::spawn(move || {
        let options = RunOptions {
            gene_name: "g".into(),
            memory: GeneOptions::default(),
            deadline_ms: None,
            fuel: 1_000_000_000_000_000,
            context: Default::default(),
            log_limits: Default::default(),
            log: Box::new(rotifer_memory_sandbox::logs::Stderr),
        };
        let started = std::time::Instant::now();
        (run(&gene, b"{}", options).unwrap(), started)
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    let asked = std::time::Instant::now();
    rotifer_memory_sandbox::interrupt_all();
    let (report, _) = running.join().unwrap();
    assert_eq!(report.outcome, Outcome::Interrupted);
    assert!(asked.elapsed().as_millis() < 2000);
}
