//! The one wasmtime engine of the process, and the epoch ticker that enforces deadlines.
//!
//! Fuel bounds what a gene computes; the epoch bounds how long it takes (a gene blocked in a
//! host call still consumes no fuel). The ticker advances the epoch every `TICK` while any run
//! is active and sleeps otherwise, so an idle process pays nothing for it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;
use wasmtime::{Config, Engine, OptLevel};

/// How often a running gene's deadline and interruption are looked at.
pub const TICK: Duration = Duration::from_millis(10);

struct Shared {
    engine: Engine,
    active: Mutex<usize>,
    wake: Condvar,
}

static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
/// Bumped by `interrupt_all`: a run that started before the bump stops at its next tick.
static INTERRUPTS: AtomicU64 = AtomicU64::new(0);

fn shared() -> Result<&'static Shared, String> {
    SHARED
        .get_or_init(|| {
            let mut config = Config::new();
            config.consume_fuel(true);
            config.epoch_interruption(true);
            config.cranelift_opt_level(OptLevel::Speed);
            // One memory per gene: the host functions and the cap are about `memory`.
            config.wasm_multi_memory(false);
            // A gene runs once per process: copying its data segments at instantiation is
            // cheaper than making a copy-on-write image of them (a memfd) when it is loaded.
            config.memory_init_cow(false);
            let engine = Engine::new(&config).map_err(|e| format!("the WebAssembly engine could not start: {e}"))?;
            Ok(Shared { engine, active: Mutex::new(0), wake: Condvar::new() })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The engine every gene module is compiled for.
pub fn engine() -> Result<&'static Engine, String> {
    shared().map(|s| &s.engine)
}

/// Marks a run active for as long as the guard lives (the ticker runs while any is).
pub struct ActiveRun(&'static Shared);

pub fn begin_run() -> Result<ActiveRun, String> {
    static TICKER: OnceLock<()> = OnceLock::new();
    let shared = shared()?;
    TICKER.get_or_init(|| {
        let _ = std::thread::Builder::new().name("rotifer-wasm-epoch".into()).spawn(move || loop {
            {
                let mut active = shared.active.lock().unwrap_or_else(|p| p.into_inner());
                while *active == 0 {
                    active = shared.wake.wait(active).unwrap_or_else(|p| p.into_inner());
                }
            }
            std::thread::sleep(TICK);
            shared.engine.increment_epoch();
        });
    });
    *shared.active.lock().unwrap_or_else(|p| p.into_inner()) += 1;
    shared.wake.notify_all();
    Ok(ActiveRun(shared))
}

impl Drop for ActiveRun {
    fn drop(&mut self) {
        let mut active = self.0.active.lock().unwrap_or_else(|p| p.into_inner());
        *active = active.saturating_sub(1);
    }
}

/// Stops every run in progress at its next tick (Ctrl-C).
pub fn interrupt_all() {
    INTERRUPTS.fetch_add(1, Ordering::SeqCst);
}

/// The interruption count a run compares against the one it started with.
pub fn interrupts() -> u64 {
    INTERRUPTS.load(Ordering::SeqCst)
}
