//! The Rotifer playground's IR: `rotifer compile` turns a gene's WebAssembly into
//! `gene.ir.wasm` by appending four custom sections (MessagePack maps, as the playground's
//! compiler writes them), and names the result by its `irHash`. `verify` runs the IR checks
//! on a compiled module; the sandbox's own checks (`check::load`) run on it as well.

use crate::check;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use wasmparser::{Parser, Payload};

pub const IR_SPEC_VERSION: &str = "0.2.0";
pub const IR_VERSION: u32 = 2;
const SECTIONS: [&str; 4] = ["rotifer.version", "rotifer.phenotype", "rotifer.constraints", "rotifer.metering"];

#[derive(Serialize)]
struct VersionSection {
    spec_version: &'static str,
    ir_version: u32,
}

#[derive(Serialize)]
struct MeteringSection {
    fuel_per_instruction: u64,
    fuel_per_memory_page: u64,
    fuel_per_host_call: u64,
}

#[derive(Serialize)]
struct MemoryConstraints {
    max_initial_pages: u32,
    max_grow_pages: u32,
    total_memory_limit: u64,
}

#[derive(Serialize)]
struct FuelPerInstruction {
    arithmetic: u64,
    memory: u64,
    control: u64,
    host_call: u64,
}

#[derive(Serialize)]
struct FuelConstraints {
    max_fuel: u64,
    fuel_per_instruction: FuelPerInstruction,
}

#[derive(Serialize)]
struct OutputConstraints {
    max_output_size: u64,
}

#[derive(Serialize)]
struct ConstraintsSection {
    memory: MemoryConstraints,
    fuel: FuelConstraints,
    output: OutputConstraints,
    host_functions: Vec<&'static str>,
}

#[derive(Serialize)]
struct NetworkSection {
    allowed_domains: Vec<String>,
    max_timeout_ms: u64,
    max_response_bytes: u64,
    max_requests_per_min: u64,
}

#[derive(Serialize)]
struct PhenotypeSection {
    domain: String,
    input_schema: Value,
    output_schema: Value,
    version: String,
    /// The author's UTF-8 bytes (a MessagePack array of integers, as the playground writes it).
    author: Vec<u8>,
    created_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fidelity: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    network: Option<NetworkSection>,
}

fn msgpack<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    rmp_serde::to_vec_named(value).map_err(|e| format!("the IR section could not be written: {e}"))
}

fn version_payload() -> Result<Vec<u8>, String> {
    msgpack(&VersionSection { spec_version: IR_SPEC_VERSION, ir_version: IR_VERSION })
}

/// The playground's default constraints section (the figures its compiler embeds).
fn constraints_payload() -> Result<Vec<u8>, String> {
    msgpack(&ConstraintsSection {
        memory: MemoryConstraints { max_initial_pages: 16, max_grow_pages: 64, total_memory_limit: 5_242_880 },
        fuel: FuelConstraints { max_fuel: 1_000_000, fuel_per_instruction: FuelPerInstruction { arithmetic: 1, memory: 2, control: 1, host_call: 100 } },
        output: OutputConstraints { max_output_size: 1_048_576 },
        host_functions: vec!["rotifer.log", "rotifer.readContext", "rotifer.remainingBudget", "rotifer.logicalTimestamp"],
    })
}

fn metering_payload() -> Result<Vec<u8>, String> {
    msgpack(&MeteringSection { fuel_per_instruction: 1, fuel_per_memory_page: 1000, fuel_per_host_call: 100 })
}

fn phenotype_payload(p: &Value) -> Result<Vec<u8>, String> {
    let text = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let network = p.get("network").filter(|n| n.is_object()).map(|n| NetworkSection {
        allowed_domains: n.get("allowedDomains").and_then(Value::as_array).map(|a| a.iter().filter_map(|d| d.as_str().map(String::from)).collect()).unwrap_or_default(),
        max_timeout_ms: n.get("maxTimeoutMs").and_then(Value::as_u64).unwrap_or(30_000),
        max_response_bytes: n.get("maxResponseBytes").and_then(Value::as_u64).unwrap_or(1_048_576),
        max_requests_per_min: n.get("maxRequestsPerMin").and_then(Value::as_u64).unwrap_or(10),
    });
    msgpack(&PhenotypeSection {
        domain: text("domain"),
        input_schema: p.get("inputSchema").cloned().unwrap_or(Value::Null),
        output_schema: p.get("outputSchema").cloned().unwrap_or(Value::Null),
        version: text("version"),
        author: text("author").into_bytes(),
        created_at: p.get("createdAt").and_then(Value::as_u64).unwrap_or(0),
        tags: p.get("tags").and_then(Value::as_array).map(|a| a.iter().filter_map(|t| t.as_str().map(String::from)).collect()),
        fidelity: p.get("fidelity").and_then(Value::as_str).filter(|f| *f == "Native" || *f == "Hybrid").map(String::from),
        network,
    })
}

fn leb128(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn custom_section(name: &str, payload: &[u8], out: &mut Vec<u8>) {
    let mut body = Vec::with_capacity(name.len() + payload.len() + 5);
    leb128(name.len(), &mut body);
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(payload);
    out.push(0);
    leb128(body.len(), out);
    out.extend_from_slice(&body);
}

/// A module's sections as byte ranges (id and size included), and where its code is.
struct Layout {
    /// Every section but the `rotifer.*` custom sections (which a recompile replaces).
    kept: Vec<std::ops::Range<usize>>,
    code_body: Option<std::ops::Range<usize>>,
    found: Vec<(String, usize)>,
}

fn layout(wasm: &[u8]) -> Result<Layout, String> {
    let mut kept = Vec::new();
    let mut code_body = None;
    let mut found = Vec::new();
    let mut last_end = 8usize;
    for payload in Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| format!("invalid WebAssembly: {e}"))?;
        let (range, rotifer) = match &payload {
            Payload::Version { .. } => continue,
            Payload::End(_) => break,
            Payload::CodeSectionStart { range, size, .. } => {
                code_body = Some(range.clone());
                // The header (id and size) lies before the body; the entries follow as payloads.
                let _ = size;
                (last_end..range.end, false)
            }
            Payload::CodeSectionEntry(_) => continue,
            Payload::CustomSection(c) => {
                found.push((c.name().to_string(), c.data().len()));
                (last_end..c.range().end, c.name().starts_with("rotifer."))
            }
            other => match other.as_section() {
                Some((_, r)) => (last_end..r.end, false),
                None => continue,
            },
        };
        last_end = range.end;
        if !rotifer {
            kept.push(range);
        }
    }
    Ok(Layout { kept, code_body, found })
}

/// What `compile` makes.
pub struct Compiled {
    pub bytes: Vec<u8>,
    /// SHA-256 (lowercase hex) of the version, phenotype and constraints sections and the code.
    pub ir_hash: String,
    pub code_section_size: usize,
}

/// `gene.wasm` → `gene.ir.wasm`: `phenotype` is the gene's phenotype as it will be written
/// (its `fidelity` already `Native` or `Hybrid`), `what` names the input in messages. The
/// module must be one the sandbox runs (checked first); earlier `rotifer.*` sections are
/// replaced.
pub fn compile(wasm: &[u8], phenotype: &Value, what: &str) -> Result<Compiled, String> {
    check::load(wasm, what)?;
    let l = layout(wasm)?;
    let code = l.code_body.clone().ok_or_else(|| format!("{what} has no code section (no function bodies)"))?;
    let (version, pheno, constraints, metering) = (version_payload()?, phenotype_payload(phenotype)?, constraints_payload()?, metering_payload()?);
    let mut hash = Sha256::new();
    hash.update(&version);
    hash.update(&pheno);
    hash.update(&constraints);
    hash.update(&wasm[code.clone()]);
    let ir_hash = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();

    let mut bytes = wasm[..8].to_vec();
    for r in &l.kept {
        bytes.extend_from_slice(&wasm[r.clone()]);
    }
    for (name, payload) in SECTIONS.iter().zip([&version, &pheno, &constraints, &metering]) {
        custom_section(name, payload, &mut bytes);
    }
    Ok(Compiled { bytes, ir_hash, code_section_size: code.len() })
}

/// `compile` with the phenotype as JSON text.
pub fn compile_json(wasm: &[u8], phenotype: &str, what: &str) -> Result<Compiled, String> {
    let phenotype: Value = serde_json::from_str(phenotype).map_err(|e| format!("the phenotype is not JSON: {e}"))?;
    compile(wasm, &phenotype, what)
}

/// The IR checks' findings: errors fail a module, warnings are told.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verification {
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

/// The IR checks on a compiled module: its four sections, its exports, its memory's size, and
/// no thread or atomic instruction (SIMD is accepted with a warning).
pub fn verify(wasm: &[u8]) -> Verification {
    let mut v = Verification::default();
    let l = match layout(wasm) {
        Ok(l) => l,
        Err(e) => {
            v.errors.push(format!("invalid WASM structure: {e}"));
            return v;
        }
    };
    let missing: Vec<&str> = SECTIONS.iter().copied().filter(|s| !l.found.iter().any(|(n, _)| n == s)).collect();
    if !missing.is_empty() {
        v.errors.push(format!("missing required custom sections: {}", missing.join(", ")));
    }
    for (name, len) in &l.found {
        if name.starts_with("rotifer.") && *len == 0 {
            v.warnings.push(format!("custom section {name} is empty"));
        }
    }
    let (mut simd, mut exports, mut memories) = (0usize, Vec::new(), Vec::new());
    for payload in Parser::new(0).parse_all(wasm) {
        match payload {
            Ok(Payload::ExportSection(r)) => exports.extend(r.into_iter().flatten().map(|e| (e.name.to_string(), e.kind))),
            Ok(Payload::MemorySection(r)) => memories.extend(r.into_iter().flatten()),
            Ok(Payload::ImportSection(r)) => {
                for import in r.into_imports().flatten() {
                    if let wasmparser::TypeRef::Memory(m) = import.ty {
                        memories.push(m);
                    }
                }
            }
            Ok(Payload::CodeSectionEntry(body)) => {
                let Ok(mut ops) = body.get_operators_reader() else { continue };
                while !ops.eof() {
                    let Ok(op) = ops.read() else { break };
                    let name = format!("{op:?}");
                    if name.contains("Atomic") {
                        let short = name.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("").to_string();
                        let text = format!("prohibited thread/atomic instruction: {short}");
                        if !v.errors.contains(&text) {
                            v.errors.push(text);
                        }
                    } else if ["V128", "I8x16", "I16x8", "I32x4", "I64x2", "F32x4", "F64x2"].iter().any(|p| name.starts_with(p)) {
                        simd += 1;
                    }
                }
            }
            _ => {}
        }
    }
    let has = |n: &str, k: wasmparser::ExternalKind| exports.iter().any(|(e, ek)| e == n && *ek == k);
    if !has("express", wasmparser::ExternalKind::Func) && !has("_start", wasmparser::ExternalKind::Func) {
        v.errors.push("missing required export: 'express' function or '_start' (WASI)".into());
    }
    if !has("memory", wasmparser::ExternalKind::Memory) {
        v.errors.push("missing required export: 'memory'".into());
    }
    if simd > 0 {
        v.warnings.push(format!("module uses {simd} SIMD instructions (accepted; common in Javy/QuickJS modules)"));
    }
    for m in memories {
        if m.initial > 256 {
            v.errors.push(format!("memory initial size {} pages exceeds limit of 256 pages", m.initial));
        }
        match m.maximum {
            Some(max) if max > 1024 => v.warnings.push(format!("memory maximum {max} pages exceeds recommended 1024 pages")),
            None => v.warnings.push("memory has no maximum — consider setting a bound".into()),
            _ => {}
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn the_fixed_sections_are_the_playground_bytes() {
        assert_eq!(hex(&version_payload().unwrap()), "82ac737065635f76657273696f6ea5302e322e30aa69725f76657273696f6e02");
        assert_eq!(
            hex(&metering_payload().unwrap()),
            "83b46675656c5f7065725f696e737472756374696f6e01b46675656c5f7065725f6d656d6f72795f70616765cd03e8b26675656c5f7065725f686f73745f63616c6c64"
        );
        let c = constraints_payload().unwrap();
        assert!(hex(&c).starts_with("84a66d656d6f727983"), "{}", hex(&c));
        assert_eq!(c.len(), 276);
    }

    const GENE: &str = r#"(module (memory (export "memory") 1 4)
      (func (export "express") (param i32 i32) (result i32) (i32.const 0)))"#;

    fn phenotype() -> Value {
        serde_json::json!({ "domain": "t.x", "version": "1.0.0", "inputSchema": {"type": "object"}, "outputSchema": {}, "fidelity": "Native" })
    }

    #[test]
    fn compile_appends_the_sections_and_a_recompile_gives_the_same_bytes() {
        let wasm = wat::parse_str(GENE).unwrap();
        let once = compile(&wasm, &phenotype(), "g").unwrap();
        assert_eq!(verify(&once.bytes), Verification::default());
        assert_eq!(once.ir_hash.len(), 64);
        // The IR still runs: its code is the input's.
        assert!(check::load(&once.bytes, "g").is_ok());
        let twice = compile(&once.bytes, &phenotype(), "g").unwrap();
        assert_eq!(twice.bytes, once.bytes);
        assert_eq!(twice.ir_hash, once.ir_hash);
        // The hash covers the phenotype: another version, another hash.
        let mut other = phenotype();
        other["version"] = "1.0.1".into();
        assert_ne!(compile(&wasm, &other, "g").unwrap().ir_hash, once.ir_hash);
    }

    #[test]
    fn verify_tells_what_is_missing() {
        let wasm = wat::parse_str(r#"(module (memory 300) (func (export "f")))"#).unwrap();
        let v = verify(&wasm);
        assert!(v.errors.iter().any(|e| e.starts_with("missing required custom sections: rotifer.version")), "{v:?}");
        assert!(v.errors.iter().any(|e| e.contains("'express'")), "{v:?}");
        assert!(v.errors.iter().any(|e| e.contains("'memory'")), "{v:?}");
        assert!(v.errors.iter().any(|e| e.contains("300 pages")), "{v:?}");
        assert!(v.warnings.iter().any(|w| w.contains("no maximum")), "{v:?}");
    }

    #[test]
    fn compile_refuses_what_the_sandbox_cannot_run() {
        let e = compile(&wat::parse_str(r#"(module (memory (export "memory") 1))"#).unwrap(), &phenotype(), "genes/x/gene.wasm").err().unwrap();
        assert!(e.contains("express"), "{e}");
        assert!(compile(b"nope", &phenotype(), "w").is_err());
    }
}
