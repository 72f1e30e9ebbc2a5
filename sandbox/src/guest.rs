//! What every host function starts with: taking its fuel, finding the gene's memory, and
//! checking that a range the gene names lies inside it.

use crate::limits::{HOST_CALL_FUEL, HOST_FUEL_PER_64_BYTES};
use crate::state::RunState;
use wasmtime::{AsContextMut, Caller, Extern, Memory};

/// The gene's exported memory.
pub fn memory_of(caller: &mut Caller<'_, RunState>) -> Option<Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(m)) => Some(m),
        _ => None,
    }
}

/// Takes `units` of fuel; false when there is less left, which is left as it is: the call
/// answers -4 (or its errno), and the gene may still return (or runs out on its own).
pub fn pay(store: &mut impl AsContextMut, units: u64) -> bool {
    let mut store = store.as_context_mut();
    let fuel = store.get_fuel().unwrap_or(0);
    fuel >= units && store.set_fuel(fuel - units).is_ok()
}

/// Takes what a call has already done and cannot refuse any more (a response produced): as much
/// of `units` as is left.
pub fn pay_after(store: &mut impl AsContextMut, units: u64) {
    let mut store = store.as_context_mut();
    let fuel = store.get_fuel().unwrap_or(0);
    let _ = store.set_fuel(fuel.saturating_sub(units));
}

/// The fuel of a host call moving `bytes`: every host function costs at least `HOST_CALL_FUEL`.
pub fn cost(bytes: usize) -> u64 {
    HOST_CALL_FUEL + (bytes as u64 / 64) * HOST_FUEL_PER_64_BYTES
}

/// Takes the fuel a host call moving `bytes` costs (see `pay`).
pub fn charge(store: &mut impl AsContextMut, bytes: usize) -> bool {
    pay(store, cost(bytes))
}

/// `[ptr, ptr + len)` inside a memory of `size` bytes (wasm32 pointers are unsigned).
pub fn range(ptr: i32, len: i32, size: usize) -> Option<std::ops::Range<usize>> {
    let (start, len) = (ptr as u32 as usize, len as u32 as usize);
    let end = start.checked_add(len)?;
    (end <= size).then_some(start..end)
}
