//! What the sandbox checks before a gene runs: the bytes are WebAssembly, every import is a
//! host function this sandbox provides (with its exact type), and the exports fit one of the
//! two modes. A module that fails any of these never runs, and the message names what is wrong.

use crate::abi::{is_memory_call, listed, HostFn, HOST_FUNCTIONS, V, WASI};
use crate::engine;
use crate::limits::MAX_MODULE_BYTES;
use crate::state::RunState;
use crate::abi::V::I32;
use wasmtime::{ExternType, FuncType, InstancePre, Module, ValType};

/// How a gene is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneKind {
    /// `express(ptr, len) -> ptr` over the exported `memory`, optional `alloc(len) -> ptr`.
    Direct,
    /// `_start()`, input on stdin, output on stdout.
    Wasi,
}

impl GeneKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GeneKind::Direct => "direct",
            GeneKind::Wasi => "wasi",
        }
    }
}

fn signature(params: &[String], results: &[String]) -> String {
    let results = match results.len() {
        0 => "nothing".to_string(),
        1 => results[0].clone(),
        _ => format!("({})", results.join(", ")),
    };
    format!("({}) -> {}", params.join(", "), results)
}

fn type_name(t: &ValType) -> String {
    match t {
        ValType::I32 => "i32".into(),
        ValType::I64 => "i64".into(),
        ValType::F32 => "f32".into(),
        ValType::F64 => "f64".into(),
        ValType::V128 => "v128".into(),
        ValType::Ref(_) => "a reference".into(),
    }
}

fn v_name(v: &V) -> String {
    match v {
        V::I32 => "i32".into(),
        V::I64 => "i64".into(),
    }
}

fn matches(ft: &FuncType, f: &HostFn) -> bool {
    let same = |got: Vec<ValType>, want: &[V]| {
        got.len() == want.len()
            && got.iter().zip(want).all(|(g, w)| matches!((g, w), (ValType::I32, V::I32) | (ValType::I64, V::I64)))
    };
    same(ft.params().collect(), f.2) && same(ft.results().collect(), f.3)
}

fn func_signature(ft: &FuncType) -> String {
    signature(&ft.params().map(|t| type_name(&t)).collect::<Vec<_>>(), &ft.results().map(|t| type_name(&t)).collect::<Vec<_>>())
}

/// A gene's module, checked and compiled, ready to instantiate.
pub struct GeneModule {
    pub module: Module,
    /// The module linked to the host functions, ready to instantiate once per run.
    pub(crate) pre: InstancePre<RunState>,
    pub kind: GeneKind,
    /// Whether it imports any of the four memory calls (the memory is opened only then).
    pub uses_memory: bool,
}

/// Compiles `bytes` and checks them. `what` names the file in messages (`gene "x" (v2:…):
/// genes/x/gene.ir.wasm`).
pub fn load(bytes: &[u8], what: &str) -> Result<GeneModule, String> {
    load_until(bytes, what, None)
}

/// `load`, given up at `deadline_ms` (ms since the epoch) or on `interrupt_all`: compiling is
/// the one step no fuel bounds, so it runs on a thread of its own that this one stops waiting
/// for (the thread finishes its work and ends on its own).
pub fn load_until(bytes: &[u8], what: &str, deadline_ms: Option<i64>) -> Result<GeneModule, String> {
    if bytes.len() > MAX_MODULE_BYTES {
        return Err(format!("{what} is {} bytes; the sandbox compiles modules of at most {} MiB", bytes.len(), MAX_MODULE_BYTES >> 20));
    }
    crate::bounds::within_compile_bounds(bytes, what)?;
    let engine = engine::engine()?;
    let interrupts = engine::interrupts();
    let (tx, rx) = std::sync::mpsc::channel();
    let (owned, compiler) = (bytes.to_vec(), engine.clone());
    std::thread::Builder::new()
        .name("rotifer-wasm-compile".into())
        .spawn(move || {
            let _ = tx.send(Module::new(&compiler, &owned));
        })
        .map_err(|e| format!("{what} could not be compiled: no thread for the compiler ({e})"))?;
    let module = loop {
        match rx.recv_timeout(engine::TICK) {
            Ok(result) => break result.map_err(|e| format!("{what} is not a valid WebAssembly module ({})", first_line(&e)))?,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if engine::interrupts() != interrupts {
                    return Err(format!("{what}: compiling was interrupted"));
                }
                if deadline_ms.is_some_and(|d| now_ms() >= d) {
                    return Err(format!("{what} was still compiling at the run's deadline"));
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(format!("{what} could not be compiled (the compiler stopped)")),
        }
    };
    check(module, what)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// The checks on an already compiled module (from the cache, or just compiled).
pub fn check(module: Module, what: &str) -> Result<GeneModule, String> {
    let export = |name: &str| module.exports().find(|e| e.name() == name).map(|e| e.ty());
    let start = matches!(export("_start"), Some(ExternType::Func(ft)) if ft.params().len() == 0 && ft.results().len() == 0);
    let imports_wasi = module.imports().any(|i| i.module() == WASI);
    let kind = if start || imports_wasi { GeneKind::Wasi } else { GeneKind::Direct };

    let mut uses_memory = false;
    for import in module.imports() {
        let (m, n) = (import.module(), import.name());
        let shown = format!("{}.{}", quoted(m), quoted(n));
        let host = HOST_FUNCTIONS.iter().find(|f| f.0 == m && f.1 == n);
        let ft = match (host, import.ty()) {
            (Some(_), ExternType::Func(ft)) => ft,
            (Some(_), other) => return Err(format!("{what} imports {shown} as a {}; it is a function", extern_kind(&other))),
            (None, other) => {
                let allowed = match kind {
                    GeneKind::Direct => listed(|f| f.0 != WASI),
                    GeneKind::Wasi => listed(|f| !is_memory_call(f.0, f.1)),
                };
                return Err(format!(
                    "{what} imports {shown} ({}), which the sandbox does not provide; a {} gene may import only the functions {allowed}",
                    extern_kind(&other),
                    if kind == GeneKind::Wasi { "WASI" } else { "WASM" }
                ));
            }
        };
        let host = host.expect("matched above");
        if !matches(&ft, host) {
            let want = signature(&host.2.iter().map(v_name).collect::<Vec<_>>(), &host.3.iter().map(v_name).collect::<Vec<_>>());
            return Err(format!("{what} imports {m}.{n} with the type {}; the sandbox's is {want}", func_signature(&ft)));
        }
        if is_memory_call(m, n) {
            if kind == GeneKind::Wasi {
                return Err(format!(
                    "{what} is a WASI command (a TypeScript gene compiled to WASM) and imports rotifer.{n}; compiled TypeScript genes cannot use memory: run the gene as TypeScript (index.ts, without gene.ir.wasm) to use ctx.memory"
                ));
            }
            uses_memory = true;
        }
    }

    let memory = export("memory");
    match kind {
        GeneKind::Wasi => {
            if !start {
                return Err(format!("{what} imports {WASI} but exports no _start function; a WASI gene must be a command module (_start: () -> nothing)"));
            }
        }
        GeneKind::Direct => {
            if !matches!(memory, Some(ExternType::Memory(_))) {
                return Err(format!("{what} does not export its memory as \"memory\""));
            }
            match export("express") {
                Some(ExternType::Func(ft)) if matches(&ft, &HostFn("", "", &[I32, I32], &[I32])) => {}
                Some(ExternType::Func(ft)) => {
                    return Err(format!("{what} exports express with the type {}; it must be (i32, i32) -> i32", func_signature(&ft)))
                }
                _ => return Err(format!("{what} does not export a function \"express(ptr: i32, len: i32) -> i32\" (or \"_start\", for a WASI command)")),
            }
            if let Some(ty) = export("alloc") {
                if !matches!(&ty, ExternType::Func(ft) if matches(ft, &HostFn("", "", &[I32], &[I32]))) {
                    return Err(format!("{what} exports alloc, which must be a function (i32) -> i32"));
                }
            }
        }
    }
    if let Some(ExternType::Memory(m)) = &memory {
        if m.is_shared() || m.is_64() {
            return Err(format!("{what} exports a {} memory; a gene's memory is a plain 32-bit one", if m.is_shared() { "shared" } else { "64-bit" }));
        }
    }
    let pre = crate::linker::linker()?.instantiate_pre(&module).map_err(|e| format!("{what} cannot be linked to the sandbox's host functions ({})", first_line(&e)))?;
    Ok(GeneModule { module, pre, kind, uses_memory })
}

fn extern_kind(t: &ExternType) -> &'static str {
    match t {
        ExternType::Func(_) => "function",
        ExternType::Global(_) => "global",
        ExternType::Table(_) => "table",
        ExternType::Memory(_) => "memory",
        _ => "item",
    }
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// The first line of an engine error (the rest is a backtrace of the compiler's own).
pub fn first_line(e: &wasmtime::Error) -> String {
    let text = format!("{e:#}");
    text.lines().next().unwrap_or("").to_string()
}
