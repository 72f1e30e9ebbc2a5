//! What the core's unit tests share: a fixed clock, a temporary project root removed on drop,
//! and a gene's memory of an agent in it.

use crate::memory::{GeneMemory, GeneOptions};

pub const T0: i64 = 1_796_000_000_000;

/// A temporary project root, removed when dropped.
pub struct Root(pub std::path::PathBuf);

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A new root whose folder name says which test made it.
pub fn root(name: &str) -> Root {
    let p = std::env::temp_dir().join(format!("rotifer-core-unit-{name}-{}", crate::store::unique_suffix()));
    std::fs::create_dir_all(&p).unwrap();
    Root(std::fs::canonicalize(p).unwrap())
}

/// Gene `v2:aaaa…`'s memory of `agent` in `r`, in domain `d`.
pub fn gene(r: &Root, agent: &str) -> GeneMemory {
    GeneMemory::open(GeneOptions {
        agent_id: Some(agent.into()),
        gene_id: Some(format!("v2:{}", "a".repeat(64))),
        domain: Some("d".into()),
        root: Some(r.0.to_string_lossy().into()),
        url: None,
    })
    .unwrap()
}
