//! JS values in and out, with raw N-API calls: JS → `Arg` (so validation stays in the core)
//! and core results → plain JS objects.

use napi::bindgen_prelude::{FromNapiValue, ToNapiValue, TypeName, ValidateNapiValue};
use napi::{sys, ValueType};
use rotifer_memory_core::model::Entry;
use rotifer_memory_core::time::format_ms;
use rotifer_memory_core::{Arg, Listing, MemoryError};
use std::ptr;

/// Any JS value, taken as it is: the core decides what it may be.
pub struct JsAny {
    env: sys::napi_env,
    value: sys::napi_value,
}

impl TypeName for JsAny {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ValidateNapiValue for JsAny {}

impl FromNapiValue for JsAny {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        Ok(JsAny { env, value })
    }
}

impl JsAny {
    /// A value a raw Node-API callback received.
    pub fn from_raw(env: sys::napi_env, value: sys::napi_value) -> JsAny {
        JsAny { env, value }
    }

    pub fn to_arg(&self) -> Result<Arg, MemoryError> {
        unsafe { to_arg(self.env, self.value, 0) }
    }

}

/// A JS value built here, handed back as it is.
pub struct JsOut(pub sys::napi_value);

impl TypeName for JsOut {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ToNapiValue for JsOut {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

fn napi_failed(what: &str) -> MemoryError {
    MemoryError::storage(format!("Node-API call failed: {what}"))
}

macro_rules! check {
    ($call:expr, $what:expr) => {
        if $call != sys::Status::napi_ok {
            return Err(napi_failed($what));
        }
    };
}

const MAX_DEPTH: u32 = 4;

unsafe fn to_arg(env: sys::napi_env, v: sys::napi_value, depth: u32) -> Result<Arg, MemoryError> {
    let mut t = 0;
    check!(sys::napi_typeof(env, v, &mut t), "typeof");
    Ok(match t {
        sys::ValueType::napi_undefined => Arg::Undefined,
        sys::ValueType::napi_null => Arg::Null,
        sys::ValueType::napi_boolean => {
            let mut b = false;
            check!(sys::napi_get_value_bool(env, v, &mut b), "bool");
            Arg::Bool(b)
        }
        sys::ValueType::napi_number => {
            let mut n = 0f64;
            check!(sys::napi_get_value_double(env, v, &mut n), "number");
            Arg::Number(n)
        }
        sys::ValueType::napi_string => match get_string(env, v)? {
            Some(s) => Arg::Str(s),
            None => Arg::InvalidStr,
        },
        sys::ValueType::napi_object => object_to_arg(env, v, depth)?,
        sys::ValueType::napi_function => Arg::Other("a function"),
        sys::ValueType::napi_symbol => Arg::Other("a symbol"),
        sys::ValueType::napi_bigint => Arg::Other("a bigint"),
        _ => Arg::Other("an unsupported value"),
    })
}

/// The string, or `None` if it holds a lone surrogate (which UTF-8 conversion would hide by
/// replacing it with U+FFFD).
unsafe fn get_string(env: sys::napi_env, v: sys::napi_value) -> Result<Option<String>, MemoryError> {
    // Most strings (keys, ids) are short: one copy into a buffer on the stack, instead of asking
    // V8 for the length first. It is whole if it left room for more than the terminating NUL.
    let mut short = [0u8; 256];
    let mut written = 0usize;
    check!(sys::napi_get_value_string_utf8(env, v, short.as_mut_ptr().cast(), short.len(), &mut written), "string");
    let buf = if written + 4 < short.len() {
        short[..written].to_vec()
    } else {
        let mut len = 0usize;
        check!(sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len), "string length");
        let mut buf = vec![0u8; len + 1];
        check!(sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr().cast(), len + 1, &mut written), "string");
        buf.truncate(written);
        buf
    };
    let s = String::from_utf8(buf).map_err(|_| napi_failed("string is not UTF-8"))?;
    if !s.contains('\u{FFFD}') {
        return Ok(Some(s));
    }
    // A U+FFFD may be real or a replaced lone surrogate: ask for the UTF-16 code units.
    let mut len16 = 0usize;
    check!(sys::napi_get_value_string_utf16(env, v, ptr::null_mut(), 0, &mut len16), "string length");
    let mut units = vec![0u16; len16 + 1];
    let mut written16 = 0usize;
    check!(sys::napi_get_value_string_utf16(env, v, units.as_mut_ptr(), len16 + 1, &mut written16), "string");
    units.truncate(written16);
    Ok(String::from_utf16(&units).ok())
}

/// A typed array's contents, as far as memory cares.
enum TypedArray<'a> {
    /// A `Uint8Array`'s bytes, borrowed from JS: copy them before calling into JS again.
    Uint8(&'a [u8]),
    /// Any other kind (`Uint16Array`, `Float64Array`, …): never a value.
    OtherKind,
}

/// `v` as a typed array, or `None` if it is not one.
unsafe fn typed_array<'a>(env: sys::napi_env, v: sys::napi_value) -> Result<Option<TypedArray<'a>>, MemoryError> {
    let mut is = false;
    check!(sys::napi_is_typedarray(env, v, &mut is), "is_typedarray");
    if !is {
        return Ok(None);
    }
    let mut kind = 0;
    let mut length = 0usize;
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    let mut offset = 0usize;
    check!(sys::napi_get_typedarray_info(env, v, &mut kind, &mut length, &mut data, &mut buffer, &mut offset), "typedarray");
    if kind != sys::TypedarrayType::uint8_array {
        return Ok(Some(TypedArray::OtherKind));
    }
    Ok(Some(TypedArray::Uint8(if length == 0 || data.is_null() { &[] } else { std::slice::from_raw_parts(data as *const u8, length) })))
}

unsafe fn object_to_arg(env: sys::napi_env, v: sys::napi_value, depth: u32) -> Result<Arg, MemoryError> {
    if let Some(array) = typed_array(env, v)? {
        let TypedArray::Uint8(bytes) = array else {
            return Ok(Arg::Other("a typed array other than Uint8Array"));
        };
        if bytes.len() > rotifer_memory_core::model::MAX_VALUE_BYTES {
            return Ok(Arg::OversizedBytes(bytes.len())); // rejected by the core; never worth a copy
        }
        return Ok(Arg::Bytes(bytes.to_vec()));
    }
    let mut is = false;
    check!(sys::napi_is_array(env, v, &mut is), "is_array");
    if is {
        return Ok(Arg::Other("an array"));
    }
    check!(sys::napi_is_arraybuffer(env, v, &mut is), "is_arraybuffer");
    if is {
        return Ok(Arg::Other("an ArrayBuffer"));
    }
    check!(sys::napi_is_dataview(env, v, &mut is), "is_dataview");
    if is {
        return Ok(Arg::Other("a DataView"));
    }
    if depth >= MAX_DEPTH {
        return Ok(Arg::Other("a deeply nested object"));
    }
    let mut names = ptr::null_mut();
    check!(
        sys::napi_get_all_property_names(
            env,
            v,
            sys::KeyCollectionMode::own_only,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            &mut names,
        ),
        "property names"
    );
    let mut count = 0u32;
    check!(sys::napi_get_array_length(env, names, &mut count), "property count");
    let mut fields = Vec::with_capacity(count as usize);
    for i in 0..count {
        let mut name = ptr::null_mut();
        check!(sys::napi_get_element(env, names, i, &mut name), "property name");
        let name_str = get_string(env, name)?.unwrap_or_default();
        let mut value = ptr::null_mut();
        check!(sys::napi_get_property(env, v, name, &mut value), "property");
        fields.push((name_str, to_arg(env, value, depth + 1)?));
    }
    Ok(Arg::Object(fields))
}

impl JsAny {
    /// The bytes of a `Uint8Array` of any length (a bundle, not a value), or a string's
    /// UTF-8; for anything else the `Arg`, for the core to name in its message.
    pub fn to_bulk_bytes(&self) -> Result<Result<Vec<u8>, Arg>, MemoryError> {
        if let Some(TypedArray::Uint8(bytes)) = unsafe { typed_array(self.env, self.value)? } {
            return Ok(Ok(bytes.to_vec()));
        }
        Ok(match self.to_arg()? {
            Arg::Str(s) => Ok(s.into_bytes()),
            other => Err(other),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Out

pub struct Builder {
    env: sys::napi_env,
}

impl Builder {
    pub fn new(env: sys::napi_env) -> Self {
        Builder { env }
    }

    pub fn null(&self) -> Result<sys::napi_value, MemoryError> {
        let mut v = ptr::null_mut();
        unsafe { check!(sys::napi_get_null(self.env, &mut v), "null") };
        Ok(v)
    }

    pub fn string(&self, s: &str) -> Result<sys::napi_value, MemoryError> {
        let mut v = ptr::null_mut();
        unsafe { check!(sys::napi_create_string_utf8(self.env, s.as_ptr().cast(), s.len() as isize, &mut v), "string") };
        Ok(v)
    }

    pub fn number(&self, n: f64) -> Result<sys::napi_value, MemoryError> {
        let mut v = ptr::null_mut();
        unsafe { check!(sys::napi_create_double(self.env, n, &mut v), "number") };
        Ok(v)
    }

    pub fn boolean(&self, b: bool) -> Result<sys::napi_value, MemoryError> {
        let mut v = ptr::null_mut();
        unsafe { check!(sys::napi_get_boolean(self.env, b, &mut v), "boolean") };
        Ok(v)
    }

    /// A fresh `Uint8Array` holding a copy of `bytes` (R-API-5).
    pub fn bytes(&self, bytes: &[u8]) -> Result<sys::napi_value, MemoryError> {
        unsafe {
            let mut data: *mut std::ffi::c_void = ptr::null_mut();
            let mut buffer = ptr::null_mut();
            check!(sys::napi_create_arraybuffer(self.env, bytes.len(), &mut data, &mut buffer), "arraybuffer");
            if !bytes.is_empty() {
                ptr::copy_nonoverlapping(bytes.as_ptr(), data as *mut u8, bytes.len());
            }
            let mut array = ptr::null_mut();
            check!(
                sys::napi_create_typedarray(self.env, sys::TypedarrayType::uint8_array, bytes.len(), buffer, 0, &mut array),
                "Uint8Array"
            );
            Ok(array)
        }
    }

    /// An object with these properties, defined in one call.
    pub fn object(&self, props: &[(&'static std::ffi::CStr, sys::napi_value)]) -> Result<sys::napi_value, MemoryError> {
        let descriptors: Vec<sys::napi_property_descriptor> = props
            .iter()
            .map(|(name, value)| sys::napi_property_descriptor {
                utf8name: name.as_ptr(),
                name: ptr::null_mut(),
                method: None,
                getter: None,
                setter: None,
                value: *value,
                attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::enumerable | sys::PropertyAttributes::configurable,
                data: ptr::null_mut(),
            })
            .collect();
        let mut obj = ptr::null_mut();
        unsafe {
            check!(sys::napi_create_object(self.env, &mut obj), "object");
            check!(sys::napi_define_properties(self.env, obj, descriptors.len(), descriptors.as_ptr()), "properties");
        }
        Ok(obj)
    }

    pub fn array(&self, items: &[sys::napi_value]) -> Result<sys::napi_value, MemoryError> {
        let mut arr = ptr::null_mut();
        unsafe {
            check!(sys::napi_create_array_with_length(self.env, items.len(), &mut arr), "array");
            for (i, item) in items.iter().enumerate() {
                check!(sys::napi_set_element(self.env, arr, i as u32, *item), "array element");
            }
        }
        Ok(arr)
    }

    /// A string known to be ASCII in the common case (ids, times, enum names): Latin-1 strings
    /// are cheaper for V8 to make than UTF-8 ones.
    pub fn ascii(&self, s: &str) -> Result<sys::napi_value, MemoryError> {
        if !s.is_ascii() {
            return self.string(s);
        }
        let mut v = ptr::null_mut();
        unsafe { check!(sys::napi_create_string_latin1(self.env, s.as_ptr().cast(), s.len() as isize, &mut v), "string") };
        Ok(v)
    }

    /// A `MemoryEntry` (R-ENT), made by `factory` (`makeEntry` of lib/memory.js) from its
    /// fields: a JS object literal costs far less than defining properties through Node-API.
    pub fn entry(&self, e: &Entry, factory: sys::napi_value) -> Result<sys::napi_value, MemoryError> {
        let p = &e.access_policy;
        let r = e.retention_policy.as_ref();
        let args = [
            self.ascii(&e.entry_id)?,
            self.ascii(e.category.as_str())?,
            self.string(&e.key)?,
            self.bytes(&e.value)?,
            self.ascii(&e.created_by)?,
            self.ascii(&e.last_accessed_by)?,
            self.ascii(&format_ms(e.created_at))?,
            self.ascii(&format_ms(e.updated_at))?,
            self.ascii(p.read_scope.as_str())?,
            self.ascii(p.write_scope.as_str())?,
            self.ascii(p.share_policy.as_str())?,
            self.boolean(r.is_some())?,
            match r.and_then(|r| r.max_retention_days) {
                Some(d) => self.number(d as f64)?,
                None => self.null()?,
            },
            self.boolean(r.is_some_and(|r| r.auto_delete_on_termination))?,
            self.boolean(r.is_some_and(|r| r.anonymization_supported))?,
        ];
        let mut out = ptr::null_mut();
        unsafe {
            let mut recv = ptr::null_mut();
            check!(sys::napi_get_undefined(self.env, &mut recv), "undefined");
            check!(sys::napi_call_function(self.env, recv, factory, args.len(), args.as_ptr(), &mut out), "entry factory");
        }
        Ok(out)
    }

    /// Calls the JS function `f` (if it is one; `undefined` is no callback) with the string `s`.
    /// What it throws stops the caller: the exception stays pending, and the call's own error
    /// names it.
    pub fn call_back(&self, f: &JsAny, s: &str) -> Result<(), MemoryError> {
        let mut t = 0;
        unsafe { check!(sys::napi_typeof(self.env, f.value, &mut t), "typeof") };
        if t == sys::ValueType::napi_undefined {
            return Ok(());
        }
        if t != sys::ValueType::napi_function {
            return Err(MemoryError::invalid("onStep must be a function"));
        }
        let arg = self.string(s)?;
        let mut out = ptr::null_mut();
        unsafe {
            let mut recv = ptr::null_mut();
            check!(sys::napi_get_undefined(self.env, &mut recv), "undefined");
            if sys::napi_call_function(self.env, recv, f.value, 1, &arg, &mut out) != sys::Status::napi_ok {
                let mut exception = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(self.env, &mut exception);
                return Err(MemoryError::storage(format!("onStep threw at step {s:?}; the move stopped there")));
            }
        }
        Ok(())
    }

    /// The function argument a call passes to make entries with.
    pub fn factory(&self, f: &JsAny) -> Result<sys::napi_value, MemoryError> {
        let mut t = 0;
        unsafe { check!(sys::napi_typeof(self.env, f.value, &mut t), "typeof") };
        if t != sys::ValueType::napi_function {
            return Err(MemoryError::storage("the native binding was called without its entry factory; use the package's index.js"));
        }
        Ok(f.value)
    }

    pub fn listing(&self, l: &Listing) -> Result<sys::napi_value, MemoryError> {
        self.object(&[
            (c"key", self.string(&l.key)?),
            (c"category", self.string(l.category.as_str())?),
            (c"size", self.number(l.size as f64)?),
            (c"createdBy", self.string(&l.created_by)?),
            (c"updatedAt", self.string(&format_ms(l.updated_at))?),
        ])
    }
}
