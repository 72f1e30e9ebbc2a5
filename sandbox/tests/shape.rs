//! The crate's shape: `lib.rs` lists its modules in dependency order, and each module uses only
//! modules listed above it, so no two modules import each other, directly or around a circle.

use std::path::Path;

/// The modules `src` names after `crate::` (`crate::a::b`, `crate::{a, b::c}`).
fn used(src: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    for (i, _) in src.match_indices("crate::") {
        let rest = &src[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(inner.split(',').map(|p| ident(p.trim())).filter(|m| !m.is_empty()));
        } else {
            out.push(ident(rest));
        }
    }
    out
}

#[test]
fn each_module_uses_only_those_listed_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let order: Vec<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect();
    assert!(order.len() >= 10, "{order:?}");
    for (at, module) in order.iter().enumerate() {
        let text = std::fs::read_to_string(src.join(format!("{module}.rs"))).unwrap();
        for dep in used(&text) {
            if &dep == module {
                continue;
            }
            let pos = order.iter().position(|m| *m == dep).unwrap_or_else(|| panic!("{module} uses crate::{dep}, which lib.rs does not list"));
            assert!(pos < at, "{module} uses {dep}, which lib.rs lists below it: an import circle or the order is wrong");
        }
    }
}
