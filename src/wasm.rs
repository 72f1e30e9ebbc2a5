//! `NativeWasmHost`: the core's WASM host-call protocol for Node's own `WebAssembly`.
//!
//! `lib/wasm-imports.js` bounds-checks the gene's pointers and passes `Uint8Array` views of the
//! gene's memory; this class reads the request in place and writes the reply into `out`, so
//! each host call copies the request once (when it must be kept) and the response once.

use crate::convert::JsAny;
use crate::{call_time, guard, now_ms, CoreResult};
use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::{sys, ValueType};
use napi_derive::napi;
use rotifer_memory_core::wasm::{error_reply, Call, Reply, WasmHost, MAX_REQUEST_BYTES};
use rotifer_memory_core::{Arg, ErrorCode, GeneMemory, GeneOptions, MemoryError};
use std::ptr;

/// A `Uint8Array` (a view of the gene's memory), taken as it is and read in place.
pub struct Bytes {
    env: sys::napi_env,
    value: sys::napi_value,
}

impl TypeName for Bytes {
    fn type_name() -> &'static str {
        "Uint8Array"
    }
    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ValidateNapiValue for Bytes {}

impl FromNapiValue for Bytes {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        // Checked in `raw`, inside `guard`, so a wrong argument is a memory error like any other.
        Ok(Bytes { env, value })
    }
}

impl Bytes {
    /// The view's first byte and length. They stay valid until JS runs again: only code on this
    /// thread (JS, or the gene's WASM) can grow or detach a memory, and none runs during a call.
    unsafe fn raw(&self) -> CoreResult<(*mut u8, usize)> {
        let failed = || MemoryError::storage("the WebAssembly host passed something other than a Uint8Array view");
        let mut is = false;
        if sys::napi_is_typedarray(self.env, self.value, &mut is) != sys::Status::napi_ok || !is {
            return Err(failed());
        }
        let mut kind = 0;
        let mut length = 0usize;
        let mut data: *mut std::ffi::c_void = ptr::null_mut();
        let mut buffer = ptr::null_mut();
        let mut offset = 0usize;
        let status = sys::napi_get_typedarray_info(self.env, self.value, &mut kind, &mut length, &mut data, &mut buffer, &mut offset);
        if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array || (data.is_null() && length > 0) {
            return Err(failed());
        }
        Ok((data.cast(), length))
    }
}

/// The request bytes behind a view (an empty view may have no data pointer at all).
unsafe fn request_slice<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 || ptr.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(ptr, len)
    }
}

/// Copies the reply's bytes (never more than `cap`) to `out` and returns its code.
unsafe fn deliver(out: *mut u8, cap: usize, reply: Reply) -> i32 {
    if let Some(bytes) = &reply.out {
        let n = bytes.len().min(cap);
        if n > 0 {
            ptr::copy_nonoverlapping(bytes.as_ptr(), out, n);
        }
    }
    reply.code
}

/// `deadline`: ms since the epoch, or absent. A fraction rounds up, since whole-millisecond
/// clocks reach `ceil(deadline)` exactly when they reach `deadline`.
fn parse_deadline(arg: &Arg) -> CoreResult<Option<i64>> {
    match arg {
        Arg::Undefined | Arg::Null => Ok(None),
        // `as` saturates: an infinite deadline never passes, a negative infinite one always has.
        Arg::Number(n) if !n.is_nan() => Ok(Some(n.ceil() as i64)),
        other => Err(MemoryError::invalid(format!(
            "options.deadline must be a number of milliseconds since the epoch (calls at or after it get -4), not {}",
            match other {
                Arg::Number(_) => "NaN",
                o => o.kind(),
            }
        ))),
    }
}

/// The protocol of one gene instance; `createMemoryImports` in `lib/wasm-imports.js` wraps it.
#[napi]
pub struct NativeWasmHost {
    inner: WasmHost,
}

#[napi]
impl NativeWasmHost {
    /// The options of `GeneMemoryAccess`, plus `deadline`.
    #[napi(constructor)]
    pub fn new(options: JsAny) -> napi::Result<Self, String> {
        guard(|| {
            let arg = options.to_arg()?;
            let gene = GeneOptions::parse(&arg, &["now", "deadline"])?;
            let deadline = match &arg {
                Arg::Object(fields) => fields.iter().find(|(n, _)| n == "deadline").map(|(_, v)| parse_deadline(v)),
                _ => None,
            };
            let deadline = deadline.transpose()?.flatten();
            Ok(NativeWasmHost { inner: WasmHost::new(GeneMemory::open(gene)?, deadline) })
        })
    }

    /// One host call (`readMemory`, …) on views of the gene's request and `out`; returns what
    /// the gene gets back. A bad clock reading is the call's error, reported to the gene.
    #[napi(ts_args_type = "name: string, request: Uint8Array, out: Uint8Array, now: number | undefined")]
    pub fn call(&mut self, name: JsAny, request: Bytes, out: Bytes, now: JsAny) -> napi::Result<i32, String> {
        guard(|| {
            let call = match name.to_arg()? {
                Arg::Str(s) => Call::from_name(&s),
                _ => None,
            }
            .ok_or_else(|| MemoryError::storage("unknown WebAssembly host call"))?;
            let (out_ptr, out_cap) = unsafe { out.raw()? };
            let reply = match call_time(&now) {
                Ok(now) => {
                    let (req_ptr, req_len) = unsafe { request.raw()? };
                    // The request may overlap `out`: this borrow ends before `out` is written. A
                    // request left in a shared memory (not copied) is over the limit: only its
                    // length is read.
                    let bytes = unsafe { request_slice(req_ptr, req_len) };
                    self.inner.call(call, bytes, out_cap, now)
                }
                Err(e) => error_reply(&e, out_cap),
            };
            Ok(unsafe { deliver(out_ptr, out_cap, reply) })
        })
    }

    /// The longest request the protocol reads: `lib/wasm-imports.js` copies a request out of a
    /// shared memory only up to this length (a longer one is refused by its length alone).
    #[napi(getter)]
    pub fn max_request_bytes(&self) -> u32 {
        MAX_REQUEST_BYTES as u32
    }

    /// A call whose request or `out` lies outside the gene's memory: `-4` past the deadline,
    /// else `-10`, and nothing is written.
    #[napi(ts_args_type = "now: number | undefined")]
    pub fn out_of_bounds(&mut self, now: JsAny) -> napi::Result<i32, String> {
        guard(|| Ok(self.inner.out_of_bounds(now_ms(&now)?).code))
    }

    /// A failure found before the protocol ran (a test clock that threw): its return value,
    /// with the error envelope written to `out` when it fits.
    #[napi(ts_args_type = "out: Uint8Array, code: string, message: string")]
    pub fn fail(&mut self, out: Bytes, code: JsAny, message: JsAny) -> napi::Result<i32, String> {
        guard(|| {
            const CODES: [ErrorCode; 5] =
                [ErrorCode::NotFound, ErrorCode::AccessDenied, ErrorCode::QuotaExceeded, ErrorCode::InvalidInput, ErrorCode::StorageError];
            let code = match code.to_arg()? {
                Arg::Str(s) => CODES.into_iter().find(|c| c.as_str() == s),
                _ => None,
            }
            .unwrap_or(ErrorCode::StorageError);
            let message = match message.to_arg()? {
                Arg::Str(s) => s,
                _ => "memory call failed".to_string(),
            };
            let (out_ptr, out_cap) = unsafe { out.raw()? };
            Ok(unsafe { deliver(out_ptr, out_cap, error_reply(&MemoryError::new(code, message), out_cap)) })
        })
    }
}
