//! What the core's integration tests share: a fixed clock, gene ids and `Arg` builders.
#![allow(dead_code)] // each test binary uses its own part

pub mod pg;

use rotifer_memory_core::Arg;

pub const DAY: i64 = 86_400_000;
pub const T0: i64 = 1_796_000_000_000;

/// The v2 id `v2:cccc…` (64 times `c`).
pub fn gene(c: char) -> String {
    format!("v2:{}", c.to_string().repeat(64))
}

pub fn s(v: &str) -> Arg {
    Arg::Str(v.to_string())
}

pub fn obj(fields: &[(&str, Arg)]) -> Arg {
    Arg::Object(fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
}

/// A temporary project root (removed on drop), and what tests do with its agents.
pub struct Project(pub std::path::PathBuf);

impl Project {
    pub fn new(name: &str) -> Project {
        let p = std::env::temp_dir().join(format!("rotifer-core-{name}-{}", rotifer_memory_core::store::unique_suffix()));
        std::fs::create_dir_all(&p).unwrap();
        Project(std::fs::canonicalize(p).unwrap())
    }
    pub fn layout(&self) -> rotifer_memory_core::Layout {
        rotifer_memory_core::Layout::at(&self.0)
    }
    /// Gene `a`'s memory of `agent`, in domain `d`.
    pub fn gene(&self, agent: &str) -> rotifer_memory_core::GeneMemory {
        rotifer_memory_core::GeneMemory::open(rotifer_memory_core::GeneOptions {
            agent_id: Some(agent.into()),
            gene_id: Some(gene('a')),
            domain: Some("d".into()),
            root: Some(self.0.to_string_lossy().into()),
            url: None,
        })
        .unwrap()
    }
    /// The agent's live keys, as the deployer lists them.
    pub fn keys(&self, agent: &str, now: i64) -> Vec<String> {
        rotifer_memory_core::list_agent_memory(&self.layout(), agent, None, now).unwrap().into_iter().map(|l| l.key).collect()
    }
    pub fn audit(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.0.join(".rotifer/audit.jsonl")).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
