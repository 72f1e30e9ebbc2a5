//! The WASM gene sandbox (`rotifer-memory-sandbox`) for the CLI's gene runtime: load a module
//! (checked, from the cache when it holds it), run it, stop every run (Ctrl-C), and the IR
//! compiler of `rotifer compile`. Conversion only; the rules live in the sandbox crate.

use crate::guard;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use rotifer_memory_core::{GeneOptions, MemoryError};
use rotifer_memory_sandbox::{cache, logs, GeneModule, Outcome};
use std::path::Path;
use std::sync::Arc;

/// What `NativeWasmGene.run` is given besides the input.
#[napi(object)]
pub struct WasmRunOptions {
    pub gene_name: String,
    pub agent_id: Option<String>,
    pub root: Option<String>,
    pub gene_id: Option<String>,
    pub domain: Option<String>,
    /// Milliseconds since the epoch.
    pub deadline: Option<f64>,
    pub fuel: f64,
    /// The JSON object `rotifer.readContext` reads.
    pub context: String,
}

/// How a run ended: `outcome` is `output`, `failed`, `timeout` or `interrupted`.
#[napi(object)]
pub struct WasmRunResult {
    pub outcome: String,
    pub output: Option<String>,
    pub code: Option<String>,
    pub message: Option<String>,
    pub fuel: f64,
    pub fuel_used: f64,
}

/// A checked, compiled gene module.
#[napi]
pub struct NativeWasmGene {
    gene: Arc<GeneModule>,
    cached: bool,
}

#[napi]
impl NativeWasmGene {
    /// Compiles and checks `bytes`; `what` names the gene and file in messages; `cacheDir`
    /// keeps the compiled module; compiling gives up at `deadline` (ms since the epoch).
    #[napi(factory)]
    pub fn load(bytes: Buffer, what: String, cache_dir: Option<String>, deadline: Option<f64>) -> napi::Result<Self, String> {
        guard(|| {
            let deadline = deadline.map(|d| d.ceil() as i64);
            let (gene, source) = cache::load(&bytes, &what, cache_dir.as_deref().map(Path::new), deadline).map_err(MemoryError::invalid)?;
            Ok(NativeWasmGene { gene: Arc::new(gene), cached: source == cache::Source::Cache })
        })
    }

    /// `direct` or `wasi`.
    #[napi(getter)]
    pub fn kind(&self) -> String {
        self.gene.kind.as_str().to_string()
    }

    /// Whether the compiled module came from the cache.
    #[napi(getter)]
    pub fn cached(&self) -> bool {
        self.cached
    }

    /// Runs the gene once on `input` (JSON text).
    #[napi]
    pub fn run(&self, input: String, options: WasmRunOptions) -> napi::Result<WasmRunResult, String> {
        guard(|| {
            let context = rotifer_memory_sandbox::parse_context(&options.context).map_err(MemoryError::invalid)?;
            let report = rotifer_memory_sandbox::run(
                &self.gene,
                input.as_bytes(),
                rotifer_memory_sandbox::RunOptions {
                    gene_name: options.gene_name,
                    memory: GeneOptions { agent_id: options.agent_id, gene_id: options.gene_id, domain: options.domain, root: options.root, url: None },
                    deadline_ms: options.deadline.map(|d| d.ceil() as i64),
                    fuel: options.fuel.max(0.0) as u64,
                    context,
                    log_limits: logs::LogLimits::default(),
                    log: Box::new(logs::Stderr),
                },
            )
            .map_err(MemoryError::storage)?;
            let (outcome, output, code, message) = match report.outcome {
                Outcome::Output(text) => ("output", Some(text), None, None),
                Outcome::Failed { code, message } => ("failed", None, Some(code), Some(message)),
                Outcome::Timeout => ("timeout", None, None, None),
                Outcome::Interrupted => ("interrupted", None, None, None),
            };
            Ok(WasmRunResult { outcome: outcome.into(), output, code, message, fuel: report.fuel as f64, fuel_used: report.fuel_used as f64 })
        })
    }
}

/// Stops every WASM gene running in this process (any thread) at its next tick.
#[napi]
pub fn interrupt_wasm_genes() {
    rotifer_memory_sandbox::interrupt_all();
}

/// The sandbox's fixed bounds, for messages and the CLI's `readContext`.
#[napi(object)]
pub struct WasmLimits {
    pub fuel: f64,
    pub memory_bytes: f64,
    pub log_bytes_per_run: f64,
    pub log_lines_per_second: f64,
}

#[napi]
pub fn wasm_limits() -> WasmLimits {
    let log = logs::LogLimits::default();
    WasmLimits {
        fuel: rotifer_memory_sandbox::limits::DEFAULT_FUEL as f64,
        memory_bytes: rotifer_memory_sandbox::limits::MEMORY_CAP_BYTES as f64,
        log_bytes_per_run: log.bytes_per_run as f64,
        log_lines_per_second: f64::from(log.lines_per_second),
    }
}

/// `gene.ir.wasm` made from a gene's WebAssembly (`rotifer compile`).
#[napi(object)]
pub struct CompiledIr {
    pub bytes: Buffer,
    pub ir_hash: String,
    pub code_section_size: u32,
}

/// Compiles `wasm` into the IR: `phenotype` is the JSON text of the phenotype as it will be
/// written; `what` names the input in messages.
#[napi]
pub fn compile_ir(wasm: Buffer, phenotype: String, what: String) -> napi::Result<CompiledIr, String> {
    guard(|| {
        let compiled = rotifer_memory_sandbox::ir::compile_json(&wasm, &phenotype, &what).map_err(MemoryError::invalid)?;
        Ok(CompiledIr { bytes: compiled.bytes.into(), ir_hash: compiled.ir_hash, code_section_size: compiled.code_section_size as u32 })
    })
}

/// The IR checks' findings on a compiled module.
#[napi(object)]
pub struct IrVerification {
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

#[napi]
pub fn verify_ir(wasm: Buffer) -> napi::Result<IrVerification, String> {
    guard(|| {
        let v = rotifer_memory_sandbox::ir::verify(&wasm);
        Ok(IrVerification { errors: v.errors, warnings: v.warnings })
    })
}

/// Arms the gene watchdog for a gene run on this thread: past `deadline` (ms since the epoch) the
/// process writes `timeoutText` to stderr and exits 1; on SIGINT it writes `interruptText` and
/// exits 130 (see the sandbox crate's `watchdog`).
#[napi]
pub fn arm_gene_watchdog(deadline: f64, timeout_text: String, interrupt_text: String) -> napi::Result<(), String> {
    guard(|| {
        rotifer_memory_sandbox::watchdog::arm(deadline, timeout_text, interrupt_text);
        Ok(())
    })
}

/// The line written before the timeout's: what the gene's output lost to its bounds.
#[napi]
pub fn note_gene_watchdog(text: String) -> napi::Result<(), String> {
    guard(|| {
        rotifer_memory_sandbox::watchdog::note(text);
        Ok(())
    })
}

/// Disarms the watchdog; false when it is already ending the process.
#[napi]
pub fn disarm_gene_watchdog() -> napi::Result<bool, String> {
    guard(|| Ok(rotifer_memory_sandbox::watchdog::disarm()))
}

/// Claims the ending of the process (a handler about to exit): false when the watchdog has it.
#[napi]
pub fn claim_process_exit() -> napi::Result<bool, String> {
    guard(|| Ok(rotifer_memory_sandbox::watchdog::claim()))
}
