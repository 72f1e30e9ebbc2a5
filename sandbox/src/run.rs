//! One run of a gene: a fresh store with the run's fuel, memory cap and deadline, the module
//! instantiated from its prepared form, the input passed and the output taken as the gene's mode
//! says, and every way it can end turned into an `Outcome`.

use crate::check::{GeneKind, GeneModule};
use crate::engine;
use crate::limits::{MAX_OUTPUT_BYTES, MEMORY_CAP_BYTES, TABLE_ELEMENTS_CAP};
use crate::logs::{LogLimits, LogSink, RunLog};
use crate::state::{HostLimit, ProcExit, RunState, Stop};
use crate::guest;
use rotifer_memory_core::memory::{GeneMemory, GeneOptions};
use rotifer_memory_core::wasm::WasmHost;
use wasmtime::{Error, Instance, Store, StoreLimitsBuilder, Trap, UpdateDeadline};

/// What a run is given besides its module and input.
pub struct RunOptions {
    /// Prefix of the gene's log lines.
    pub gene_name: String,
    /// The memory the four calls reach (agent, root, the gene's v2 id and domain); an absent
    /// agent denies every call (`rotifer run`).
    pub memory: GeneOptions,
    /// Milliseconds since the epoch; host calls at or after it get -4, and the gene is stopped.
    pub deadline_ms: Option<i64>,
    pub fuel: u64,
    /// The object `rotifer.readContext` reads keys of.
    pub context: serde_json::Map<String, serde_json::Value>,
    pub log_limits: LogLimits,
    pub log: Box<dyn LogSink>,
}

/// A run's context from its JSON text (an object).
pub fn parse_context(json: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str(json) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        _ => Err("the run's context must be a JSON object".to_string()),
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The output JSON text, as the gene wrote it (UTF-8; not yet parsed).
    Output(String),
    /// The gene failed: `code` is what a `Try` sees and a test's `expectedError` names.
    Failed { code: String, message: String },
    /// Stopped at its deadline.
    Timeout,
    /// Stopped by `interrupt_all` (Ctrl-C).
    Interrupted,
}

#[derive(Debug)]
pub struct Report {
    pub outcome: Outcome,
    pub fuel_used: u64,
    /// The fuel the run had.
    pub fuel: u64,
}

fn failed(code: &str, message: impl Into<String>) -> Outcome {
    Outcome::Failed { code: code.to_string(), message: message.into() }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Runs `gene` on `input` (JSON bytes). `Err` only when the sandbox itself cannot work.
pub fn run(gene: &GeneModule, input: &[u8], options: RunOptions) -> Result<Report, String> {
    let engine = engine::engine()?;
    let fuel = options.fuel;
    let report = |outcome| Ok(Report { outcome, fuel_used: 0, fuel });
    let memory = if gene.uses_memory {
        match GeneMemory::open(options.memory) {
            Ok(m) => Some(WasmHost::new(m, options.deadline_ms)),
            Err(e) => return report(failed(e.code.as_str(), e.message)),
        }
    } else {
        None
    };
    let limits = StoreLimitsBuilder::new()
        .memory_size(MEMORY_CAP_BYTES)
        .table_elements(TABLE_ELEMENTS_CAP)
        .instances(1)
        .memories(1)
        .tables(4)
        .build();
    let state = RunState {
        limits,
        memory,
        log: RunLog::new(&options.gene_name, options.log_limits, options.log),
        context: options.context,
        deadline_ms: options.deadline_ms,
        stopped: None,
        last_timestamp: 0,
        stdin: if gene.kind == GeneKind::Wasi { input.to_vec() } else { Vec::new() },
        stdin_read: 0,
        stdout: Vec::new(),
    };
    let mut store = Store::new(engine, state);
    store.limiter(|s| &mut s.limits);
    store.set_fuel(fuel).map_err(|e| e.to_string())?;
    let interrupts = engine::interrupts();
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |mut ctx| {
        let state = ctx.data_mut();
        if engine::interrupts() != interrupts {
            state.stopped = Some(Stop::Interrupted);
            return Ok(UpdateDeadline::Interrupt);
        }
        if state.deadline_ms.is_some_and(|d| now_ms() >= d) {
            state.stopped = Some(Stop::Deadline);
            return Ok(UpdateDeadline::Interrupt);
        }
        Ok(UpdateDeadline::Continue(1))
    });

    let _active = engine::begin_run()?;
    let outcome = match gene.pre.instantiate(&mut store) {
        Err(e) => ended(&store, e, fuel),
        Ok(instance) => match gene.kind {
            GeneKind::Direct => direct(&mut store, instance, input, fuel),
            GeneKind::Wasi => wasi_command(&mut store, instance, fuel),
        },
    };
    store.data_mut().log.finish();
    let left = store.get_fuel().unwrap_or(0);
    Ok(Report { outcome, fuel_used: fuel.saturating_sub(left), fuel })
}

fn direct(store: &mut Store<RunState>, instance: Instance, input: &[u8], fuel: u64) -> Outcome {
    let Some(memory) = instance.get_memory(&mut *store, "memory") else { return failed("INVALID_MODULE", "it exports no memory") };
    let express = match instance.get_typed_func::<(i32, i32), i32>(&mut *store, "express") {
        Ok(f) => f,
        Err(e) => return failed("INVALID_MODULE", e.to_string()),
    };
    let len = match i32::try_from(input.len()) {
        Ok(n) => n,
        Err(_) => return failed("INVALID_INPUT", "the input is larger than a 32-bit memory"),
    };
    let ptr = match instance.get_typed_func::<i32, i32>(&mut *store, "alloc") {
        Ok(alloc) => match alloc.call(&mut *store, len) {
            Ok(p) => p,
            Err(e) => return ended(store, e, fuel),
        },
        Err(_) => 0,
    };
    let Some(at) = guest::range(ptr, len, memory.data_size(&*store)) else {
        return failed("INVALID_OUTPUT", format!("alloc({len}) returned {}, which leaves no room for the input in the gene's memory", ptr as u32));
    };
    memory.data_mut(&mut *store)[at].copy_from_slice(input);
    let result = match express.call(&mut *store, (ptr, len)) {
        Ok(r) => r,
        Err(e) => return ended(store, e, fuel),
    };
    if result < 0 {
        return failed(&result.to_string(), format!("express returned {result}"));
    }
    let data = memory.data(&*store);
    let start = result as usize;
    let Some(rest) = data.get(start..) else {
        return failed("INVALID_OUTPUT", format!("express returned {result}, which is outside the gene's memory ({} bytes)", data.len()));
    };
    // The NUL is looked for within the output bound only: a gene cannot make the host copy more.
    let window = &rest[..rest.len().min(MAX_OUTPUT_BYTES + 1)];
    match window.iter().position(|&b| b == 0) {
        Some(end) => text(&window[..end]),
        None if window.len() > MAX_OUTPUT_BYTES => failed(
            "OUTPUT_TOO_LARGE",
            format!("its output at {result} has no NUL byte within {} MiB (the most a gene may give)", MAX_OUTPUT_BYTES >> 20),
        ),
        None => failed("INVALID_OUTPUT", format!("the output at {result} has no NUL byte before the end of memory; end the output JSON with one NUL byte")),
    }
}

fn wasi_command(store: &mut Store<RunState>, instance: Instance, fuel: u64) -> Outcome {
    let start = match instance.get_typed_func::<(), ()>(&mut *store, "_start") {
        Ok(f) => f,
        Err(e) => return failed("INVALID_MODULE", e.to_string()),
    };
    if let Err(e) = start.call(&mut *store, ()) {
        match e.downcast_ref::<ProcExit>() {
            Some(ProcExit(0)) => {}
            _ => return ended(store, e, fuel),
        }
    }
    let stdout = std::mem::take(&mut store.data_mut().stdout);
    text(&stdout)
}

/// The output bytes as text; JSON is checked by the caller, as for every kind of gene.
fn text(bytes: &[u8]) -> Outcome {
    match std::str::from_utf8(bytes) {
        Ok(s) => Outcome::Output(s.to_string()),
        Err(e) => failed("INVALID_OUTPUT", format!("its output is not UTF-8 JSON ({e})")),
    }
}

/// What an error out of the gene's code means.
fn ended(store: &Store<RunState>, e: Error, fuel: u64) -> Outcome {
    if let Some(ProcExit(status)) = e.downcast_ref::<ProcExit>() {
        return failed(&format!("EXIT_{status}"), format!("the WASI command exited with status {status}"));
    }
    if let Some(limit) = e.downcast_ref::<HostLimit>() {
        return failed(limit.code, limit.message.clone());
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => failed("OUT_OF_FUEL", format!("it ran out of fuel: it had {fuel} units (about one per instruction), and used them all")),
        Some(Trap::Interrupt) => match store.data().stopped {
            Some(Stop::Interrupted) => Outcome::Interrupted,
            _ => Outcome::Timeout,
        },
        Some(trap) => failed("WASM_TRAP", format!("it trapped: {trap}")),
        None => failed("WASM_TRAP", format!("it failed: {}", crate::check::first_line(&e))),
    }
}
