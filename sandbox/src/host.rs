//! The playground's host functions under `rotifer` (and the legacy `env.log`): the four memory
//! calls go straight into the core's R-WASM protocol; `log`, `readContext`, `remainingBudget`
//! and `logicalTimestamp` are answered here. Every call costs fuel, so a gene that only calls the
//! host still runs out.

use crate::abi::ROTIFER;
use crate::guest::{charge, memory_of, pay, pay_after, range};
use crate::limits::{FUEL_PER_MEMORY_BYTE, HOST_CALL_FUEL, HOST_FUEL_PER_64_BYTES};
use crate::state::RunState;
use rotifer_memory_core::time::CallTime;
use rotifer_memory_core::wasm::{Call, DEADLINE_PASSED, MAX_REQUEST_BYTES};
use wasmtime::{Caller, Linker};

const LEVELS: [&str; 4] = ["debug", "info", "warn", "error"];

/// A memory call: its request paid for by the byte before it is read (a request over the
/// protocol's bound is refused unread, so no more is charged), the response it made (or the entries
/// the store loaded for it, if more) by the byte after, whether or not it fitted in `out`.
fn memory_call(mut caller: Caller<'_, RunState>, call: Call, req: i32, req_len: i32, out: i32, out_cap: i32) -> i32 {
    let read = (req_len as u32 as usize).min(MAX_REQUEST_BYTES + 1);
    let now = CallTime::system();
    if !pay(&mut caller, HOST_CALL_FUEL + read as u64 * FUEL_PER_MEMORY_BYTE) {
        return DEADLINE_PASSED;
    }
    let Some(memory) = memory_of(&mut caller) else { return DEADLINE_PASSED };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let Some(host) = state.memory.as_mut() else { return DEADLINE_PASSED };
    let (Some(req), Some(out)) = (range(req, req_len, data.len()), range(out, out_cap, data.len())) else {
        return host.out_of_bounds(now.ms()).code;
    };
    let reply = host.call(call, &data[req], out.len(), now);
    let made = host.made();
    let mut copied = 0;
    if let Some(bytes) = &reply.out {
        copied = bytes.len().min(out.len());
        data[out.start..out.start + copied].copy_from_slice(&bytes[..copied]);
    }
    // The work is done: it costs its size, even if that spends the fuel (the gene then stops at
    // its next instruction).
    pay_after(&mut caller, made as u64 * FUEL_PER_MEMORY_BYTE + (copied as u64 / 64) * HOST_FUEL_PER_64_BYTES);
    reply.code
}

fn log(mut caller: Caller<'_, RunState>, level: &str, ptr: i32, len: i32) {
    let full = len as u32 as usize;
    if !charge(&mut caller, full.min(1 << 22)) {
        return;
    }
    let Some(memory) = memory_of(&mut caller) else { return };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let readable = state.log.readable(full);
    match range(ptr, readable as i32, data.len()) {
        Some(r) => {
            let text = data[r].to_vec();
            state.log.message(level, &text, full)
        }
        None => {
            let note = format!("(log message outside the gene's memory: {full} bytes at {})", ptr as u32);
            state.log.message(level, note.as_bytes(), note.len())
        }
    }
}

/// `readContext(key_ptr, key_len, out_ptr, out_cap) -> i32`: the JSON of the context's
/// top-level `key` written at `out`; 0 when there is no such key; -1 when it does not fit, the
/// key is not UTF-8, or a range lies outside memory. The key is paid for before it is read, the
/// value's JSON by the byte after.
fn read_context(mut caller: Caller<'_, RunState>, key: i32, key_len: i32, out: i32, out_cap: i32) -> i32 {
    if !charge(&mut caller, key_len as u32 as usize) {
        return DEADLINE_PASSED;
    }
    let Some(memory) = memory_of(&mut caller) else { return -1 };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let Some(key) = range(key, key_len, data.len()) else { return -1 };
    let Ok(key) = std::str::from_utf8(&data[key]) else { return -1 };
    let Some(value) = state.context.get(key) else { return 0 };
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    let made = bytes.len() as u64 * FUEL_PER_MEMORY_BYTE;
    let written = match range(out, out_cap, data.len()) {
        Some(out) if bytes.len() <= out.len() => {
            data[out.start..out.start + bytes.len()].copy_from_slice(&bytes);
            bytes.len() as i32
        }
        _ => -1,
    };
    // Encoded whether or not it fitted: paid for as a memory call's response is.
    pay_after(&mut caller, made);
    written
}

/// Milliseconds since the epoch, each later than the one before in this run.
fn logical_timestamp(mut caller: Caller<'_, RunState>) -> i64 {
    pay_after(&mut caller, HOST_CALL_FUEL);
    let state = caller.data_mut();
    let now = CallTime::system().ms();
    state.last_timestamp = now.max(state.last_timestamp + 1);
    state.last_timestamp
}

/// Defines every `rotifer.*` and `env.log` function in `linker`.
pub fn link(linker: &mut Linker<RunState>) -> wasmtime::Result<()> {
    for call in Call::ALL {
        linker.func_wrap(ROTIFER, call.name(), move |caller: Caller<'_, RunState>, a: i32, b: i32, c: i32, d: i32| -> i32 {
            memory_call(caller, call, a, b, c, d)
        })?;
    }
    linker.func_wrap(ROTIFER, "log", |caller: Caller<'_, RunState>, level: i32, ptr: i32, len: i32| {
        let name = usize::try_from(level).ok().and_then(|l| LEVELS.get(l)).copied().unwrap_or("error");
        log(caller, name, ptr, len)
    })?;
    linker.func_wrap("env", "log", |caller: Caller<'_, RunState>, ptr: i32, len: i32| log(caller, "info", ptr, len))?;
    linker.func_wrap(ROTIFER, "readContext", read_context)?;
    linker.func_wrap(ROTIFER, "remainingBudget", |mut caller: Caller<'_, RunState>| -> i64 {
        pay_after(&mut caller, HOST_CALL_FUEL);
        caller.get_fuel().map(|f| f.min(i64::MAX as u64) as i64).unwrap_or(0)
    })?;
    linker.func_wrap(ROTIFER, "logicalTimestamp", logical_timestamp)?;
    Ok(())
}

