//! What the sandbox's tests share: a run with test defaults, and readers of its outcome.
#![allow(dead_code)]

use rotifer_memory_core::GeneOptions;
use rotifer_memory_sandbox::logs::{LogLimits, LogSink};
use rotifer_memory_sandbox::{load, run, Outcome, Report, RunOptions};
use std::sync::{Arc, Mutex};

pub const GENE: &str = "v2:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

#[derive(Clone, Default)]
pub struct Lines(pub Arc<Mutex<Vec<String>>>);
impl LogSink for Lines {
    fn line(&mut self, line: &str) {
        self.0.lock().unwrap().push(line.to_string());
    }
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

pub struct Run {
    pub memory: GeneOptions,
    pub deadline_ms: Option<i64>,
    pub fuel: u64,
    pub context: serde_json::Value,
    pub log_limits: LogLimits,
    pub lines: Lines,
}

impl Default for Run {
    fn default() -> Run {
        Run {
            memory: GeneOptions { agent_id: None, gene_id: Some(GENE.into()), domain: Some("test".into()), root: None, url: None },
            deadline_ms: Some(now_ms() + 20_000),
            fuel: 500_000_000,
            context: serde_json::json!({ "agent_id": "cli", "timestamp": 5 }),
            log_limits: LogLimits::default(),
            lines: Lines::default(),
        }
    }
}

impl Run {
    pub fn go(self, wat: &str, input: &str) -> Report {
        let bytes = wat::parse_str(wat).expect("valid WAT");
        let gene = load(&bytes, "gene \"t\"").expect("loads");
        let serde_json::Value::Object(context) = self.context else { panic!() };
        run(&gene, input.as_bytes(), RunOptions {
            gene_name: "t".into(),
            memory: self.memory,
            deadline_ms: self.deadline_ms,
            fuel: self.fuel,
            context,
            log_limits: self.log_limits,
            log: Box::new(self.lines.clone()),
        })
        .expect("the sandbox works")
    }
}

pub fn output(r: &Report) -> &str {
    match &r.outcome {
        Outcome::Output(s) => s,
        other => panic!("expected an output, got {other:?}"),
    }
}

pub fn failure(r: &Report) -> (&str, &str) {
    match &r.outcome {
        Outcome::Failed { code, message } => (code, message),
        other => panic!("expected a failure, got {other:?}"),
    }
}

