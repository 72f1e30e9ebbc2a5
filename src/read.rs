//! `readMemory` as a plain Node-API function, for the call a gene makes most: a `#[napi]` class
//! method pays napi-rs's borrow tracking and the unwrapping of `this` on every call, a third of
//! what a read that finds nothing costs beyond SQLite. The handle is an `External` of the
//! gene's memory, made once per `GeneMemoryAccess`; the entry factory is bound once, to the
//! function. Conversion and error mapping only, like the rest of the binding.

use crate::convert::{Builder, JsAny};
use crate::{call_time, guard, CoreResult};
use napi::sys;
use rotifer_memory_core::time::CallTime;
use rotifer_memory_core::{Arg, GeneMemory, MemoryError};
use std::ffi::{c_void, CString};
use std::ptr;
use std::sync::Arc;

/// Marks the externals made by `handle`: no other external is ever taken for one.
const HANDLE_TAG: sys::napi_type_tag = sys::napi_type_tag { lower: 0x726f_7469_6665_722d, upper: 0x6d65_6d6f_7279_2d72 };

/// An `External` holding a reference to `memory`, released when JS collects it.
pub fn handle(env: sys::napi_env, memory: &Arc<GeneMemory>) -> CoreResult<sys::napi_value> {
    unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
        drop(Arc::from_raw(data as *const GeneMemory));
    }
    let data = Arc::into_raw(memory.clone()) as *mut c_void;
    let mut external = ptr::null_mut();
    unsafe {
        if sys::napi_create_external(env, data, Some(release), ptr::null_mut(), &mut external) != sys::Status::napi_ok {
            drop(Arc::from_raw(data as *const GeneMemory));
            return Err(MemoryError::storage("Node-API call failed: external"));
        }
        if sys::napi_type_tag_object(env, external, &HANDLE_TAG) != sys::Status::napi_ok {
            return Err(MemoryError::storage("Node-API call failed: type tag"));
        }
    }
    Ok(external)
}

/// `read(handle, key, category?, now?)` with `makeEntry` bound: the function `lib/memory.js`
/// calls for `readMemory`.
pub fn function(env: sys::napi_env, make_entry: &JsAny) -> CoreResult<sys::napi_value> {
    let b = Builder::new(env);
    let factory = b.factory(make_entry)?;
    let mut reference = ptr::null_mut();
    let mut f = ptr::null_mut();
    unsafe {
        // Never deleted: one per loaded binding, as long as it is loaded.
        if sys::napi_create_reference(env, factory, 1, &mut reference) != sys::Status::napi_ok
            || sys::napi_create_function(env, c"read".as_ptr(), 4, Some(read), reference as *mut c_void, &mut f) != sys::Status::napi_ok
        {
            return Err(MemoryError::storage("Node-API call failed: function"));
        }
    }
    Ok(f)
}

unsafe extern "C" fn read(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = 4usize;
    let mut argv = [ptr::null_mut(); 4];
    let mut data: *mut c_void = ptr::null_mut();
    let result = guard(|| {
        if sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) != sys::Status::napi_ok {
            return Err(MemoryError::storage("Node-API call failed: arguments"));
        }
        let memory = memory_of(env, argv[0])?;
        // `argc` is now how many arguments were passed: the others are `undefined`, and need no
        // look (`lib/memory.js` leaves out a category and a clock it does not have).
        let arg = |i: usize| if i < argc { JsAny::from_raw(env, argv[i]).to_arg() } else { Ok(Arg::Undefined) };
        let now = if argc > 3 { call_time(&JsAny::from_raw(env, argv[3]))? } else { CallTime::system() };
        let found = memory.read(&arg(1)?, &arg(2)?, now)?;
        let b = Builder::new(env);
        match found {
            Some(e) => {
                let mut factory = ptr::null_mut();
                if sys::napi_get_reference_value(env, data as sys::napi_ref, &mut factory) != sys::Status::napi_ok {
                    return Err(MemoryError::storage("Node-API call failed: entry factory"));
                }
                b.entry(&e, factory)
            }
            None => b.null(),
        }
    });
    match result {
        Ok(v) => v,
        Err(e) => {
            // The same error a `#[napi]` function throws: the code in `error.code`.
            let text = |s: &str| CString::new(s.replace('\0', "\\0")).unwrap_or_default();
            let (code, message) = (text(&e.status), text(&e.reason));
            sys::napi_throw_error(env, code.as_ptr(), message.as_ptr());
            ptr::null_mut()
        }
    }
}

/// The gene's memory behind a handle made by `handle`.
unsafe fn memory_of<'a>(env: sys::napi_env, v: sys::napi_value) -> CoreResult<&'a GeneMemory> {
    let wrong = || MemoryError::storage("the native read was called without its handle; use the package's index.js");
    // Externals only: the tag check would throw a TypeError of its own for `null`/`undefined`.
    let mut kind = 0;
    let mut tagged = false;
    if sys::napi_typeof(env, v, &mut kind) != sys::Status::napi_ok
        || kind != sys::ValueType::napi_external
        || sys::napi_check_object_type_tag(env, v, &HANDLE_TAG, &mut tagged) != sys::Status::napi_ok
        || !tagged
    {
        return Err(wrong());
    }
    let mut data: *mut c_void = ptr::null_mut();
    if sys::napi_get_value_external(env, v, &mut data) != sys::Status::napi_ok || data.is_null() {
        return Err(wrong());
    }
    // Alive while the external is, which the caller's argument holds for this call.
    Ok(&*(data as *const GeneMemory))
}
