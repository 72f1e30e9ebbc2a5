//! The `wasi_snapshot_preview1` subset a WASI command gene (a TypeScript gene compiled with
//! Javy) may import: the Rotifer playground's nine functions (streams, clock, empty
//! environment, `proc_exit`), plus an empty argument list and `random_get`. Stdin is the input
//! JSON; stdout is collected (bounded) and is the output; stderr goes to the run's bounded log.
//! There are no files, sockets or directories to reach.

use crate::abi::WASI;
use crate::guest::{charge, memory_of, pay, range};
use crate::limits::{FUEL_PER_IOVEC, FUEL_PER_SCANNED_BYTE, HOST_CALL_FUEL, MAX_IOVECS, MAX_OUTPUT_BYTES, MAX_STDERR_SCAN};
use crate::state::{HostLimit, ProcExit, RunState};
use wasmtime::{Caller, Error, Linker};

const SUCCESS: i32 = 0;
const EBADF: i32 = 8;
const EFAULT: i32 = 21;
const EINVAL: i32 = 28;
const ENOSYS: i32 = 52;
/// WASI's filetype for a character device (what a terminal stream is).
const CHARACTER_DEVICE: u8 = 2;

/// The `(ptr, len)` pairs of an iovec array of `count` (at most `MAX_IOVECS`) entries, each
/// inside memory; `Err(errno)` otherwise.
fn iovecs(data: &[u8], iovs: i32, count: i32) -> Result<Vec<std::ops::Range<usize>>, i32> {
    let count = count as u32;
    if count > MAX_IOVECS {
        return Err(EINVAL);
    }
    let table = range(iovs, (count * 8) as i32, data.len()).ok_or(EFAULT)?;
    let mut out = Vec::with_capacity(count as usize);
    for entry in data[table].chunks_exact(8) {
        let ptr = i32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
        let len = i32::from_le_bytes([entry[4], entry[5], entry[6], entry[7]]);
        out.push(range(ptr, len, data.len()).ok_or(EFAULT)?);
    }
    Ok(out)
}

/// Takes the fuel of a read or write naming `count` buffers, before they are walked: each one
/// costs, even an empty one (a count over `MAX_IOVECS` is refused unread, for the call's fee).
fn pay_iovecs(caller: &mut Caller<'_, RunState>, count: i32) -> bool {
    let walked = if count as u32 <= MAX_IOVECS { count as u32 as u64 } else { 0 };
    pay(caller, HOST_CALL_FUEL + walked * FUEL_PER_IOVEC)
}

fn put_u32(data: &mut [u8], at: i32, value: u32) -> bool {
    match range(at, 4, data.len()) {
        Some(r) => {
            data[r].copy_from_slice(&value.to_le_bytes());
            true
        }
        None => false,
    }
}

fn fd_read(mut caller: Caller<'_, RunState>, fd: i32, iovs: i32, count: i32, nread: i32) -> i32 {
    if !pay_iovecs(&mut caller, count) {
        return ENOSYS;
    }
    if fd != 0 {
        return EBADF;
    }
    let Some(memory) = memory_of(&mut caller) else { return EFAULT };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let buffers = match iovecs(data, iovs, count) {
        Ok(b) => b,
        Err(errno) => return errno,
    };
    let mut total = 0usize;
    for buffer in buffers {
        let rest = &state.stdin[state.stdin_read..];
        let n = rest.len().min(buffer.len());
        data[buffer.start..buffer.start + n].copy_from_slice(&rest[..n]);
        state.stdin_read += n;
        total += n;
        if n < buffer.len() {
            break;
        }
    }
    if put_u32(data, nread, total as u32) { SUCCESS } else { EFAULT }
}

/// `fd_write` to stdout (collected, at most `MAX_OUTPUT_BYTES`) or stderr (the run's log: at
/// most `MAX_STDERR_SCAN` bytes of one write are looked at, each byte and each line paid for in
/// fuel, the rest dropped unread), so one call's work is bounded whatever the gene asks.
fn fd_write(mut caller: Caller<'_, RunState>, fd: i32, iovs: i32, count: i32, nwritten: i32) -> Result<i32, Error> {
    if !pay_iovecs(&mut caller, count) {
        return Ok(ENOSYS);
    }
    if fd != 1 && fd != 2 {
        return Ok(EBADF);
    }
    let Some(memory) = memory_of(&mut caller) else { return Ok(EFAULT) };
    let buffers = match iovecs(memory.data(&caller), iovs, count) {
        Ok(b) => b,
        Err(errno) => return Ok(errno),
    };
    let total: usize = buffers.iter().map(|b| b.len()).sum();
    if fd == 1 {
        if !charge(&mut caller, total) {
            return Ok(ENOSYS);
        }
        let (data, state) = memory.data_and_store_mut(&mut caller);
        if state.stdout.len() + total > MAX_OUTPUT_BYTES {
            return Err(Error::new(HostLimit {
                code: "OUTPUT_TOO_LARGE",
                message: format!("its output is over {} MiB (the most a gene may write to stdout)", MAX_OUTPUT_BYTES >> 20),
            }));
        }
        for buffer in &buffers {
            state.stdout.extend_from_slice(&data[buffer.clone()]);
        }
        return Ok(if put_u32(data, nwritten, total as u32) { SUCCESS } else { EFAULT });
    }
    // stderr: what is looked at, and what it costs.
    let mut scan = Vec::new();
    let mut budget = MAX_STDERR_SCAN;
    {
        let data = memory.data(&caller);
        for buffer in &buffers {
            let n = buffer.len().min(budget);
            scan.push(buffer.start..buffer.start + n);
            budget -= n;
            if budget == 0 {
                break;
            }
        }
        let scanned: usize = scan.iter().map(|r| r.len()).sum();
        let lines = scan.iter().map(|r| data[r.clone()].iter().filter(|&&b| b == b'\n').count()).sum::<usize>();
        let units = scanned as u64 * FUEL_PER_SCANNED_BYTE + lines as u64 * HOST_CALL_FUEL;
        if !pay(&mut caller, units) {
            return Ok(ENOSYS);
        }
    }
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let mut scanned = 0;
    for r in &scan {
        state.log.stderr(&data[r.clone()]);
        scanned += r.len();
    }
    state.log.drop_unread(total - scanned);
    Ok(if put_u32(data, nwritten, total as u32) { SUCCESS } else { EFAULT })
}

fn fd_fdstat_get(mut caller: Caller<'_, RunState>, fd: i32, stat: i32) -> i32 {
    if !charge(&mut caller, 0) {
        return ENOSYS;
    }
    if !(0..=2).contains(&fd) {
        return EBADF;
    }
    let Some(memory) = memory_of(&mut caller) else { return EFAULT };
    let data = memory.data_mut(&mut caller);
    match range(stat, 24, data.len()) {
        Some(r) => {
            data[r.clone()].fill(0);
            data[r.start] = CHARACTER_DEVICE;
            SUCCESS
        }
        None => EFAULT,
    }
}

/// `(count_ptr, size_ptr)`: no environment variables and no arguments.
fn empty_sizes(mut caller: Caller<'_, RunState>, count: i32, size: i32) -> i32 {
    if !charge(&mut caller, 0) {
        return ENOSYS;
    }
    let Some(memory) = memory_of(&mut caller) else { return EFAULT };
    let data = memory.data_mut(&mut caller);
    if put_u32(data, count, 0) && put_u32(data, size, 0) { SUCCESS } else { EFAULT }
}

fn clock_time_get(mut caller: Caller<'_, RunState>, clock: i32, _precision: i64, time: i32) -> i32 {
    if !charge(&mut caller, 0) {
        return ENOSYS;
    }
    if !(0..=3).contains(&clock) {
        return EINVAL;
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let Some(memory) = memory_of(&mut caller) else { return EFAULT };
    let data = memory.data_mut(&mut caller);
    match range(time, 8, data.len()) {
        Some(r) => {
            data[r].copy_from_slice(&nanos.to_le_bytes());
            SUCCESS
        }
        None => EFAULT,
    }
}

fn random_get(mut caller: Caller<'_, RunState>, buf: i32, len: i32) -> i32 {
    if !pay(&mut caller, HOST_CALL_FUEL + len as u32 as u64 * FUEL_PER_SCANNED_BYTE) {
        return ENOSYS;
    }
    let Some(memory) = memory_of(&mut caller) else { return EFAULT };
    let data = memory.data_mut(&mut caller);
    let Some(r) = range(buf, len, data.len()) else { return EFAULT };
    fill_random(&mut data[r]);
    SUCCESS
}

/// Bytes from the kernel's generator.
fn fill_random(out: &mut [u8]) {
    let mut done = 0;
    while done < out.len() {
        // SAFETY: writes at most `out.len() - done` bytes into `out[done..]`.
        let n = unsafe { libc::getrandom(out[done..].as_mut_ptr().cast(), out.len() - done, 0) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        done += n as usize;
    }
}

/// Defines the subset in `linker`.
pub fn link(linker: &mut Linker<RunState>) -> wasmtime::Result<()> {
    linker.func_wrap(WASI, "fd_read", fd_read)?;
    linker.func_wrap(WASI, "fd_write", fd_write)?;
    linker.func_wrap(WASI, "fd_close", |mut c: Caller<'_, RunState>, _fd: i32| -> i32 { if charge(&mut c, 0) { SUCCESS } else { ENOSYS } })?;
    linker.func_wrap(WASI, "fd_seek", |mut c: Caller<'_, RunState>, _fd: i32, _offset: i64, _whence: i32, _new: i32| -> i32 {
        charge(&mut c, 0);
        ENOSYS
    })?;
    linker.func_wrap(WASI, "fd_fdstat_get", fd_fdstat_get)?;
    linker.func_wrap(WASI, "environ_sizes_get", empty_sizes)?;
    linker.func_wrap(WASI, "environ_get", |mut c: Caller<'_, RunState>, _a: i32, _b: i32| -> i32 { if charge(&mut c, 0) { SUCCESS } else { ENOSYS } })?;
    linker.func_wrap(WASI, "args_sizes_get", empty_sizes)?;
    linker.func_wrap(WASI, "args_get", |mut c: Caller<'_, RunState>, _a: i32, _b: i32| -> i32 { if charge(&mut c, 0) { SUCCESS } else { ENOSYS } })?;
    linker.func_wrap(WASI, "clock_time_get", clock_time_get)?;
    linker.func_wrap(WASI, "random_get", random_get)?;
    linker.func_wrap(WASI, "proc_exit", |_: Caller<'_, RunState>, status: i32| -> Result<(), Error> { Err(Error::new(ProcExit(status))) })?;
    Ok(())
}
