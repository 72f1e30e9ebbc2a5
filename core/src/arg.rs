//! `Arg`: a call's argument as the caller gave it, before validation.
//!
//! The Node.js binding converts JS values into `Arg`s and the WASM protocol converts JSON into
//! them, so both front ends share one validation (the `model` module) and one set of messages.

/// A value from JS or JSON. `Undefined` and `Null` stay distinct (R-API-2 `retentionPolicy`).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    /// A JS string holding a lone UTF-16 surrogate: not valid Unicode (R-LIM-1).
    InvalidStr,
    /// A `Uint8Array` (or `Buffer`).
    Bytes(Vec<u8>),
    /// A `Uint8Array` of this many bytes, too large for any value: not copied at all.
    OversizedBytes(usize),
    /// Own enumerable properties, in order.
    Object(Vec<(String, Arg)>),
    /// Anything else: arrays, functions, other typed arrays, symbols…; the name says which.
    Other(&'static str),
}

impl Arg {
    /// `undefined` or `null`: "not given" wherever the spec treats them alike.
    pub fn is_absent(&self) -> bool {
        matches!(self, Arg::Undefined | Arg::Null)
    }

    /// What to call this value in an error message.
    pub fn kind(&self) -> &'static str {
        match self {
            Arg::Undefined => "undefined",
            Arg::Null => "null",
            Arg::Bool(_) => "a boolean",
            Arg::Number(_) => "a number",
            Arg::Str(_) => "a string",
            Arg::InvalidStr => "a string with a lone UTF-16 surrogate",
            Arg::Bytes(_) | Arg::OversizedBytes(_) => "a Uint8Array",
            Arg::Object(_) => "an object",
            Arg::Other(name) => name,
        }
    }

    pub fn str(s: &str) -> Arg {
        Arg::Str(s.to_string())
    }

    /// Converts parsed JSON (the WASM protocol). Strings stay strings: base64 values are
    /// decoded by the protocol, which knows which field holds bytes.
    pub fn from_json(v: serde_json::Value) -> Arg {
        use serde_json::Value;
        match v {
            Value::Null => Arg::Null,
            Value::Bool(b) => Arg::Bool(b),
            Value::Number(n) => match n.as_f64() {
                Some(f) => Arg::Number(f),
                None => Arg::Other("an out-of-range number"),
            },
            Value::String(s) => Arg::Str(s),
            Value::Array(_) => Arg::Other("an array"),
            Value::Object(map) => Arg::Object(map.into_iter().map(|(k, v)| (k, Arg::from_json(v))).collect()),
        }
    }
}
