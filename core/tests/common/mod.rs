//! What the core's integration tests share: a fixed clock, gene ids and `Arg` builders.
#![allow(dead_code)] // each test binary uses its own part

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
