//! The host-call JSON protocol of WASM genes (R-WASM-1..5).
//!
//! A gene's WebAssembly imports `readMemory`, `writeMemory`, `queryMemory` and `deleteMemory`
//! from the module `rotifer`, each `(req_ptr, req_len, out_ptr, out_cap) -> i32`. The host
//! checks that both ranges lie inside the gene's memory, hands the `req_len` request bytes and
//! `out_cap` to [`WasmHost::call`] (or calls [`WasmHost::out_of_bounds`]), writes the bytes of
//! the returned [`Reply`], if any, at `out_ptr`, and returns its code. Nothing here knows a
//! WebAssembly engine, so a wasmtime host and the Node.js binding share it.
//!
//! Requests are validated by the same core as the JS API: this module only turns JSON into
//! [`Arg`]s (decoding base64 values) and entries into JSON.

use crate::arg::Arg;
use crate::error::{ErrorCode, MemoryError, Result};
use crate::memory::GeneMemory;
use crate::model::Entry;
use crate::time::{format_ms, CallTime};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Serialize;
use std::collections::HashSet;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Return value: `out` cannot hold the response; it is kept for a retry (R-WASM-3/4).
pub const OUT_TOO_SMALL: i32 = -1;
/// Return value: the run's deadline has passed; nothing was done and `out` is untouched.
pub const DEADLINE_PASSED: i32 = -4;
/// The largest request read. The largest valid one, a write of a 1 MiB value, is about
/// 1.4 MB (base64 plus a key of up to 1024 bytes); this leaves room for generous formatting.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// The JSON `null` of a read miss and of a delete (R-WASM-2).
const NULL: &[u8] = b"null";

/// One of the four host functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Call {
    Read,
    Write,
    Query,
    Delete,
}

impl Call {
    pub const ALL: [Call; 4] = [Call::Read, Call::Write, Call::Query, Call::Delete];

    /// The import name, e.g. `readMemory`.
    pub fn name(self) -> &'static str {
        match self {
            Call::Read => "readMemory",
            Call::Write => "writeMemory",
            Call::Query => "queryMemory",
            Call::Delete => "deleteMemory",
        }
    }

    /// The call of an import name (`readMemory`, …).
    pub fn from_name(name: &str) -> Option<Call> {
        Call::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The request's fields: the call's parameter names (R-WASM-1).
    fn fields(self) -> &'static [&'static str] {
        match self {
            Call::Read => &["key", "category"],
            Call::Write => &["key", "value", "category", "accessPolicy", "retentionPolicy"],
            Call::Query => &["filter"],
            Call::Delete => &["key"],
        }
    }

    fn required(self) -> &'static [&'static str] {
        match self {
            Call::Read | Call::Delete => &["key"],
            Call::Write => &["key", "value", "category"],
            Call::Query => &[],
        }
    }
}

/// What a host call answers: the `i32` to return to the gene, and the bytes to write at
/// `out_ptr` (never more than `out_cap`), or `None` to leave `out` untouched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub code: i32,
    pub out: Option<Vec<u8>>,
}

/// A response that did not fit, kept for a byte-identical retry (R-WASM-4).
struct Kept {
    call: Call,
    request: Vec<u8>,
    response: Vec<u8>,
}

/// The protocol for one gene instance: its memory, the run's deadline, and the response kept
/// after a `-1`.
pub struct WasmHost {
    memory: GeneMemory,
    /// Calls at or after this instant (ms since the epoch) get `-4`.
    deadline: Option<i64>,
    kept: Option<Kept>,
    /// Bytes of response the last call made (read from the store and encoded).
    made: usize,
}

impl WasmHost {
    pub fn new(memory: GeneMemory, deadline: Option<i64>) -> WasmHost {
        WasmHost { memory, deadline, kept: None, made: 0 }
    }

    pub fn deadline(&self) -> Option<i64> {
        self.deadline
    }

    /// The bytes of response the last `call` made — entries read and encoded as JSON — whether
    /// or not they fitted in `out` (a response too large is made in full, then kept): what a
    /// metering host charges for the work, besides the request it read: the response it made,
    /// or the bytes of the entries the store loaded for it if more (whatever the answer, an error
    /// too). 0 when the call made nothing (the deadline had passed, or it delivered a kept
    /// response).
    pub fn made(&self) -> usize {
        self.made
    }

    /// Runs one host call on the request bytes, with `out_cap` bytes available at `out_ptr`.
    ///
    /// Order: the deadline (`-4`, nothing done, the kept response stays); then the kept
    /// response, which answers only the very next call and only if it is the same function with
    /// a byte-identical request; then the call itself. Never panics.
    ///
    /// `now`: a test clock's reading, or `CallTime::system()` (a changing call reads the system
    /// clock again once it holds the write lock, R-ENT-4).
    pub fn call(&mut self, call: Call, request: &[u8], out_cap: usize, now: impl Into<CallTime>) -> Reply {
        let now = now.into();
        self.made = 0;
        if self.deadline_passed(now.ms()) {
            return Reply { code: DEADLINE_PASSED, out: None };
        }
        // Any other call discards the kept response: the gene has moved on, and a later
        // identical request is a new call (a re-read must see fresh data).
        if let Some(kept) = self.kept.take() {
            if kept.call == call && kept.request == request {
                return self.deliver(kept, out_cap);
            }
        }
        crate::storage::rows::take_loaded_bytes();
        // A bug in the core must not unwind into the gene's engine (R-ERR-3).
        let result = catch_unwind(AssertUnwindSafe(|| self.execute(call, request, &now))).unwrap_or_else(|panic| {
            let what = crate::error::panic_message(panic.as_ref());
            Err(MemoryError::storage(format!(
                "internal error in rotifer-memory ({what}) during {}; please report it",
                call.name()
            )))
        });
        // The work is the larger of the entries the store loaded (a read answered null for a
        // category mismatch, a denial, rows skipped as unreadable, a query refused as too large
        // after reading) and the response encoded.
        let loaded = usize::try_from(crate::storage::rows::take_loaded_bytes()).unwrap_or(usize::MAX);
        self.made = match &result {
            Ok(response) => response.len().max(loaded),
            Err(_) => loaded,
        };
        match result {
            Ok(response) => match fits(response.len(), out_cap) {
                Some(code) => Reply { code, out: Some(response) },
                None => self.keep(Kept { call, request: request.to_vec(), response }, out_cap),
            },
            Err(e) => error_reply(&e, out_cap),
        }
    }

    /// The answer to a call whose `req` or `out` range lies outside the gene's memory: nothing
    /// can be read or written there, so `-10` with `out` untouched (or `-4` if the deadline has
    /// passed, which is checked first). The kept response is discarded like on any other call.
    pub fn out_of_bounds(&mut self, now: i64) -> Reply {
        if self.deadline_passed(now) {
            return Reply { code: DEADLINE_PASSED, out: None };
        }
        self.made = 0;
        self.kept = None;
        Reply { code: ErrorCode::InvalidInput.wasm_code(), out: None }
    }

    fn deadline_passed(&self, now: i64) -> bool {
        self.deadline.is_some_and(|d| now >= d)
    }

    /// The kept response if it fits now, else `-1` again.
    fn deliver(&mut self, kept: Kept, out_cap: usize) -> Reply {
        match fits(kept.response.len(), out_cap) {
            Some(code) => Reply { code, out: Some(kept.response) },
            None => self.keep(kept, out_cap),
        }
    }

    /// `-1`: keeps the response, and writes the error envelope (when it fits) saying how large
    /// `out` must be, so that a gene can grow its buffer to the exact size.
    fn keep(&mut self, kept: Kept, out_cap: usize) -> Reply {
        let len = kept.response.len();
        let message = format!(
            "the {} response is {len} bytes and out holds only {out_cap}; call again with the same request and an out of at least {len} bytes: the response was kept, so the call is not run again",
            kept.call.name()
        );
        self.kept = Some(kept);
        let mut reply = error_reply(&MemoryError::invalid(message), out_cap);
        reply.code = OUT_TOO_SMALL;
        reply
    }

    fn execute(&self, call: Call, request: &[u8], now: &CallTime) -> Result<Vec<u8>> {
        let req = match parse_request(call, request) {
            Ok(r) => r,
            Err(e) => return Err(self.reject(call, e, now)),
        };
        let m = &self.memory;
        match req {
            Request::Read { key, category } => match m.read(&key, &category, now)? {
                Some(e) => to_json(&EntryJson::from(&e)),
                None => Ok(NULL.to_vec()),
            },
            Request::Write { key, value, category, access, retention } => {
                let e = m.write(&key, value, &category, &access, &retention, now)?;
                to_json(&EntryJson::from(&e))
            }
            Request::Query { filter } => {
                let entries = m.query(&filter, now)?;
                to_json(&entries.iter().map(EntryJson::from).collect::<Vec<_>>())
            }
            Request::Delete { key } => {
                m.delete(&key, now)?;
                Ok(NULL.to_vec())
            }
        }
    }

    /// The error for a malformed request: the core still sees the call, so a gene with no
    /// agent or no v2 id gets `-2` whatever it sends (R-WASM-5), and expired entries are purged
    /// first (R-RET-4).
    fn reject(&self, call: Call, malformed: MemoryError, now: &CallTime) -> MemoryError {
        let op = match call {
            Call::Read => "read",
            Call::Write => "write",
            Call::Query => "query",
            Call::Delete => "delete",
        };
        self.memory.reject_malformed(op, malformed, now)
    }
}

/// The reply to a failed call: its negative code, and the `__rotifer_error` envelope followed
/// by one NUL when both fit in `out` (R-WASM-3).
pub fn error_reply(e: &MemoryError, out_cap: usize) -> Reply {
    Reply { code: e.code.wasm_code(), out: envelope(e, out_cap) }
}

/// `{"__rotifer_error":{"code":…,"message":…}}` and a NUL, if that fits in `out_cap` bytes.
pub fn envelope(e: &MemoryError, out_cap: usize) -> Option<Vec<u8>> {
    #[derive(Serialize)]
    struct Inner<'a> {
        code: &'static str,
        message: &'a str,
    }
    #[derive(Serialize)]
    struct Envelope<'a> {
        __rotifer_error: Inner<'a>,
    }
    let mut bytes = serde_json::to_vec(&Envelope { __rotifer_error: Inner { code: e.code.as_str(), message: &e.message } }).ok()?;
    // The message is JSON-escaped, so this NUL is the only one: the gene can find the end.
    bytes.push(0);
    (bytes.len() <= out_cap).then_some(bytes)
}

// ---------------------------------------------------------------------------------------------
// Requests (R-WASM-1)

enum Request {
    Read { key: Arg, category: Arg },
    Write { key: Arg, value: Arg, category: Arg, access: Arg, retention: Arg },
    Query { filter: Arg },
    Delete { key: Arg },
}

fn parse_request(call: Call, bytes: &[u8]) -> Result<Request> {
    let name = call.name();
    let shape = || format!("{{{}}}", call.fields().iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", "));
    if bytes.len() > MAX_REQUEST_BYTES {
        return Err(MemoryError::invalid(format!(
            "the {name} request is {} bytes; a request may be at most {MAX_REQUEST_BYTES} bytes (a 1 MiB value is 1398104 bytes of base64)",
            bytes.len()
        )));
    }
    let parsed = serde_json::from_slice::<JsonArg>(bytes).map_err(|e| {
        MemoryError::invalid(format!("the {name} request could not be read ({e}); send one UTF-8 JSON object {}, each field once", shape()))
    })?;
    let mut fields = match parsed.0 {
        Arg::Object(f) => f,
        other => {
            return Err(MemoryError::invalid(format!(
                "the {name} request must be a JSON object {}, not {}",
                shape(),
                json_kind(&other)
            )))
        }
    };
    if let Some((unknown, _)) = fields.iter().find(|(n, _)| !call.fields().contains(&n.as_str())) {
        return Err(MemoryError::invalid(format!(
            "the {name} request has an unknown field {unknown:?}; it takes {}",
            shape()
        )));
    }
    if let Some(missing) = call.required().iter().find(|f| !fields.iter().any(|(n, _)| n == *f)) {
        return Err(MemoryError::invalid(format!("the {name} request lacks the field \"{missing}\"; it takes {}", shape())));
    }
    // An absent field is `undefined`, `null` stays `null` (R-API-2 retentionPolicy).
    let mut take = |field: &str| match fields.iter().position(|(n, _)| n == field) {
        Some(i) => fields.swap_remove(i).1,
        None => Arg::Undefined,
    };
    Ok(match call {
        Call::Read => Request::Read { key: take("key"), category: take("category") },
        Call::Write => Request::Write {
            key: take("key"),
            value: decode_value(take("value"))?,
            category: take("category"),
            access: take("accessPolicy"),
            retention: take("retentionPolicy"),
        },
        Call::Query => Request::Query { filter: take("filter") },
        Call::Delete => Request::Delete { key: take("key") },
    })
}

/// R-ENT `value` in JSON: standard base64 with padding.
pub(crate) fn decode_value(v: Arg) -> Result<Arg> {
    match v {
        Arg::Str(s) => BASE64.decode(s.as_bytes()).map(Arg::Bytes).map_err(|e| {
            MemoryError::invalid(format!(
                "value is not standard base64 with padding ({e}); encode the bytes with the alphabet A-Z a-z 0-9 + / and '=' padding, no line breaks"
            ))
        }),
        other => Err(MemoryError::invalid(format!(
            "value must be a string of standard base64 with padding (\"\" for no bytes), not {}",
            json_kind(&other)
        ))),
    }
}

/// How to name a JSON value in a message.
/// The return value for a response of `len` bytes, if it fits in `out_cap`.
fn fits(len: usize, out_cap: usize) -> Option<i32> {
    if len <= out_cap {
        i32::try_from(len).ok()
    } else {
        None
    }
}

pub(crate) fn json_kind(a: &Arg) -> &'static str {
    match a {
        Arg::Null => "null",
        Arg::Bool(_) => "a boolean",
        Arg::Number(_) => "a number",
        Arg::Str(_) => "a string",
        Arg::Object(_) => "an object",
        other => other.kind(),
    }
}

/// JSON parsed straight into an `Arg`, keeping field order and rejecting an object that names
/// a field twice (which JSON parsers resolve differently, so it is never guessed at).
pub(crate) struct JsonArg(pub(crate) Arg);

impl<'de> Deserialize<'de> for JsonArg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(ArgVisitor).map(JsonArg)
    }
}

struct ArgVisitor;

impl<'de> Visitor<'de> for ArgVisitor {
    type Value = Arg;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Arg, E> {
        Ok(Arg::Null)
    }
    fn visit_none<E: de::Error>(self) -> std::result::Result<Arg, E> {
        Ok(Arg::Null)
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> std::result::Result<Arg, E> {
        Ok(Arg::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> std::result::Result<Arg, E> {
        Ok(Arg::Number(n as f64))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> std::result::Result<Arg, E> {
        Ok(Arg::Number(n as f64))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> std::result::Result<Arg, E> {
        Ok(Arg::Number(n))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<Arg, E> {
        Ok(Arg::Str(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> std::result::Result<Arg, E> {
        Ok(Arg::Str(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Arg, A::Error> {
        // No field takes an array: read past it and let validation name it.
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Arg::Other("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Arg, A::Error> {
        let mut fields = Vec::new();
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            if !seen.insert(name.clone()) {
                return Err(de::Error::custom(format!("the field {name:?} appears twice")));
            }
            let JsonArg(value) = map.next_value()?;
            fields.push((name, value));
        }
        Ok(Arg::Object(fields))
    }
}

// ---------------------------------------------------------------------------------------------
// Responses (R-WASM-2): the same field names and shapes as the JS `MemoryEntry`.

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntryJson<'a> {
    entry_id: &'a str,
    category: &'static str,
    key: &'a str,
    value: String,
    created_by: &'a str,
    last_accessed_by: &'a str,
    created_at: String,
    updated_at: String,
    access_policy: AccessJson,
    retention_policy: Option<RetentionJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AccessJson {
    read_scope: &'static str,
    write_scope: &'static str,
    share_policy: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RetentionJson {
    max_retention_days: Option<i64>,
    auto_delete_on_termination: bool,
    anonymization_supported: bool,
}

impl<'a> From<&'a Entry> for EntryJson<'a> {
    fn from(e: &'a Entry) -> Self {
        let p = &e.access_policy;
        EntryJson {
            entry_id: &e.entry_id,
            category: e.category.as_str(),
            key: &e.key,
            value: BASE64.encode(&e.value),
            created_by: &e.created_by,
            last_accessed_by: &e.last_accessed_by,
            created_at: format_ms(e.created_at),
            updated_at: format_ms(e.updated_at),
            access_policy: AccessJson {
                read_scope: p.read_scope.as_str(),
                write_scope: p.write_scope.as_str(),
                share_policy: p.share_policy.as_str(),
            },
            retention_policy: e.retention_policy.map(|r| RetentionJson {
                max_retention_days: r.max_retention_days,
                auto_delete_on_termination: r.auto_delete_on_termination,
                anonymization_supported: r.anonymization_supported,
            }),
        }
    }
}

fn to_json<T: Serialize + ?Sized>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| MemoryError::storage(format!("could not encode the response as JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataPolicy, GeneOptions, TestMemory};
    use serde_json::{json, Value};

    const T0: i64 = 1_796_002_699_123;
    const BIG: usize = 1 << 24;

    fn gene(n: u8) -> String {
        format!("v2:{}", format!("{n:02x}").repeat(32))
    }

    fn store() -> TestMemory {
        TestMemory::create(10 * 1024 * 1024, DataPolicy::default()).unwrap()
    }

    fn host(mem: &TestMemory, n: u8, domain: &str) -> WasmHost {
        WasmHost::new(mem.gene_memory(Some(gene(n)), Some(domain.to_string())).unwrap(), None)
    }

    fn req(v: Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap()
    }

    /// A success: the code is the byte count of `out`, which is JSON.
    fn ok(r: &Reply) -> Value {
        let out = r.out.as_ref().unwrap_or_else(|| panic!("no out for code {}", r.code));
        assert!(r.code >= 0, "code {} out {}", r.code, String::from_utf8_lossy(out));
        assert_eq!(r.code as usize, out.len());
        serde_json::from_slice(out).unwrap()
    }

    /// A failure with its envelope: returns the message.
    fn failed(r: &Reply, code: i32, name: &str) -> String {
        assert_eq!(r.code, code, "{:?}", r.out.as_ref().map(|o| String::from_utf8_lossy(o).into_owned()));
        let out = r.out.as_ref().expect("an envelope");
        assert_eq!(out.last(), Some(&0), "ends with NUL");
        assert_eq!(out.iter().filter(|b| **b == 0).count(), 1, "exactly one NUL");
        let v: Value = serde_json::from_slice(&out[..out.len() - 1]).unwrap();
        let inner = v["__rotifer_error"].as_object().expect("__rotifer_error");
        assert_eq!(v.as_object().unwrap().len(), 1);
        assert_eq!(inner.len(), 2);
        assert_eq!(inner["code"], name);
        let message = inner["message"].as_str().unwrap().to_string();
        assert!(!message.is_empty());
        message
    }

    fn audit_count(mem: &TestMemory, action: &str) -> usize {
        let text = std::fs::read_to_string(mem.root().join(".rotifer").join("audit.jsonl")).unwrap_or_default();
        text.lines().filter(|l| l.contains(&format!("\"action\":\"{action}\""))).count()
    }

    fn write_req(key: &str, value: &[u8], category: &str) -> Vec<u8> {
        req(json!({"key": key, "value": BASE64.encode(value), "category": category}))
    }

    #[test]
    fn call_names_are_the_import_names() {
        for c in Call::ALL {
            assert_eq!(Call::from_name(c.name()), Some(c));
        }
        assert_eq!(Call::from_name("read"), None);
        assert_eq!(Call::from_name("ReadMemory"), None);
    }

    #[test]
    fn write_read_query_delete_round_trip() {
        // R-WASM-1, R-WASM-2: requests named by parameters, entries as JSON with base64 values.
        let mem = store();
        let mut h = host(&mem, 1, "text");
        let written = ok(&h.call(Call::Write, &write_req("k", &[0, 1, 2, 255], "PATTERN"), BIG, T0));
        let fields: Vec<&str> = written.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = vec![
            "entryId", "category", "key", "value", "createdBy", "lastAccessedBy", "createdAt", "updatedAt", "accessPolicy",
            "retentionPolicy",
        ];
        let mut got = fields.clone();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected);
        assert_eq!(written["value"], "AAEC/w==");
        assert_eq!(written["category"], "PATTERN");
        assert_eq!(written["key"], "k");
        assert_eq!(written["entryId"], crate::model::entry_id(crate::memory::TEST_AGENT_ID, "k"));
        assert_eq!(written["createdBy"], gene(1));
        assert_eq!(written["lastAccessedBy"], gene(1));
        assert_eq!(written["createdAt"], "2026-11-30T01:38:19.123Z");
        assert_eq!(written["updatedAt"], "2026-11-30T01:38:19.123Z");
        assert_eq!(written["accessPolicy"], json!({"readScope":"SAME_DOMAIN","writeScope":"SAME_DOMAIN","sharePolicy":"PRIVATE"}));
        assert_eq!(written["retentionPolicy"], Value::Null);

        // Another gene of the domain reads it and becomes the last accessor.
        let mut other = host(&mem, 2, "text");
        let read = ok(&other.call(Call::Read, &req(json!({"key":"k"})), BIG, T0 + 1));
        assert_eq!(read["value"], "AAEC/w==");
        assert_eq!(read["lastAccessedBy"], gene(2));
        // A null category is "not given"; another category is no match.
        assert_eq!(ok(&other.call(Call::Read, &req(json!({"key":"k","category":null})), BIG, T0 + 2))["key"], "k");
        let miss = other.call(Call::Read, &req(json!({"key":"k","category":"CACHE"})), BIG, T0 + 3);
        assert_eq!(miss, Reply { code: 4, out: Some(b"null".to_vec()) });

        ok(&h.call(Call::Write, &write_req("k2", b"", "CACHE"), BIG, T0 + 4));
        let all = ok(&h.call(Call::Query, b"{}", BIG, T0 + 5));
        let keys: Vec<&str> = all.as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap()).collect();
        assert_eq!(keys, ["k2", "k"], "most recently updated first");
        assert_eq!(all[0]["value"], "");
        let filtered = ok(&h.call(Call::Query, &req(json!({"filter":{"category":"PATTERN","limit":5}})), BIG, T0 + 6));
        assert_eq!(filtered.as_array().unwrap().len(), 1);
        assert_eq!(filtered[0]["key"], "k");
        assert_eq!(ok(&h.call(Call::Query, br#"{"filter":null}"#, BIG, T0 + 7)).as_array().unwrap().len(), 2);
        assert_eq!(ok(&h.call(Call::Query, br#"{"filter":{"keyPrefix":"zz"}}"#, BIG, T0 + 7)), json!([]));

        assert_eq!(h.call(Call::Delete, br#"{"key":"k"}"#, BIG, T0 + 8), Reply { code: 4, out: Some(b"null".to_vec()) });
        assert_eq!(h.call(Call::Read, br#"{"key":"k"}"#, BIG, T0 + 9), Reply { code: 4, out: Some(b"null".to_vec()) });
        failed(&h.call(Call::Delete, br#"{"key":"k"}"#, BIG, T0 + 10), -12, "MEMORY_NOT_FOUND");
        mem.dispose();
    }

    #[test]
    fn policies_travel_as_json_and_absent_retention_differs_from_null() {
        // R-WASM-1 with R-API-2: an absent retentionPolicy is undefined (unchanged), null resets.
        let mem = store();
        let mut creator = host(&mem, 1, "text");
        let mut peer = host(&mem, 2, "text");
        let retention = json!({"maxRetentionDays":7,"autoDeleteOnTermination":true,"anonymizationSupported":false});
        let access = json!({"readScope":"SAME_DOMAIN","writeScope":"SAME_DOMAIN","sharePolicy":"PRIVATE"});
        let first = req(json!({"key":"k","value":"AQ==","category":"CONTEXT","accessPolicy":access,"retentionPolicy":retention}));
        assert_eq!(ok(&creator.call(Call::Write, &first, BIG, T0))["retentionPolicy"], retention);

        let absent = ok(&peer.call(Call::Write, br#"{"key":"k","value":"Ag==","category":"CONTEXT"}"#, BIG, T0 + 1));
        assert_eq!(absent["retentionPolicy"], retention, "absent leaves the policy as it is");
        assert_eq!(absent["value"], "Ag==");

        let null = br#"{"key":"k","value":"Aw==","category":"CONTEXT","retentionPolicy":null}"#;
        failed(&peer.call(Call::Write, null, BIG, T0 + 2), -2, "MEMORY_ACCESS_DENIED");
        let reset = ok(&creator.call(Call::Write, null, BIG, T0 + 3));
        assert_eq!(reset["retentionPolicy"], Value::Null, "the creator's null goes back to the agent's policy");
        mem.dispose();
    }

    #[test]
    fn malformed_requests_are_invalid_input_with_an_envelope() {
        // R-WASM-1: unknown fields, non-objects, non-JSON, non-UTF-8, bad base64 → -10.
        let mem = store();
        let mut h = host(&mem, 1, "text");
        let cases: Vec<(Call, &[u8], &str)> = vec![
            (Call::Read, b"", "could not be read"),
            (Call::Read, b"nul", "could not be read"),
            (Call::Read, b"{\"key\":\"k\"} x", "could not be read"),
            (Call::Read, b"{\"key\":\"k\",}", "could not be read"),
            (Call::Read, b"[]", "must be a JSON object"),
            (Call::Read, b"null", "must be a JSON object"),
            (Call::Read, b"\"k\"", "must be a JSON object"),
            (Call::Read, b"42", "must be a JSON object"),
            (Call::Read, b"{\"key\":\"k\",\"extra\":1}", "unknown field \\\"extra\\\""),
            (Call::Read, b"{\"key\":\"k\",\"key\":\"j\"}", "appears twice"),
            (Call::Read, b"{}", "lacks the field \\\"key\\\""),
            (Call::Read, b"{\"key\":1}", "key must be a string"),
            (Call::Read, b"{\"key\":\"\"}", "key must not be empty"),
            (Call::Read, b"{\"key\":\"k\",\"category\":\"cache\"}", "category"),
            (Call::Read, b"{\"key\":\"\\ud800\"}", "could not be read"),
            (Call::Read, b"{\"key\":\"\xff\"}", "could not be read"),
            (Call::Read, b"\xfe\xff\x00{", "could not be read"),
            (Call::Delete, b"{\"key\":\"k\",\"category\":\"CACHE\"}", "unknown field"),
            (Call::Query, b"{\"limit\":5}", "unknown field \\\"limit\\\""),
            (Call::Query, b"{\"filter\":{\"prefix\":\"a\"}}", "filter has an unknown field"),
            (Call::Query, b"{\"filter\":{\"limit\":0}}", "limit"),
            (Call::Query, b"{\"filter\":{\"limit\":1e999}}", "could not be read"),
            (Call::Query, b"{\"filter\":[]}", "filter must be an object"),
            (Call::Write, b"{\"key\":\"k\",\"category\":\"CACHE\"}", "lacks the field \\\"value\\\""),
            (Call::Write, b"{\"key\":\"k\",\"value\":\"AQ==\"}", "lacks the field \\\"category\\\""),
            (Call::Write, b"{\"key\":\"k\",\"value\":\"AQ\",\"category\":\"CACHE\"}", "base64"),
            (Call::Write, b"{\"key\":\"k\",\"value\":\"AQ=\",\"category\":\"CACHE\"}", "base64"),
            (Call::Write, b"{\"key\":\"k\",\"value\":\"AQ==\\n\",\"category\":\"CACHE\"}", "base64"),
            (Call::Write, b"{\"key\":\"k\",\"value\":\"-_-_\",\"category\":\"CACHE\"}", "base64"),
            (Call::Write, b"{\"key\":\"k\",\"value\":\"AR==\",\"category\":\"CACHE\"}", "base64"),
            (Call::Write, b"{\"key\":\"k\",\"value\":[1],\"category\":\"CACHE\"}", "value must be a string of standard base64"),
            (Call::Write, b"{\"key\":\"k\",\"value\":null,\"category\":\"CACHE\"}", "not null"),
            (Call::Write, b"{\"key\":\"k\",\"value\":\"AQ==\",\"category\":\"CACHE\",\"accessPolicy\":null}", "accessPolicy"),
            (Call::Write, b"{\"key\":\"k\",\"value\":\"AQ==\",\"category\":\"CACHE\",\"retentionPolicy\":{}}", "retentionPolicy"),
            (Call::Write, b"{\"key\":\"k\",\"value\":\"AQ==\",\"category\":\"CACHE\",\"filter\":{}}", "unknown field"),
        ];
        for (call, bytes, needle) in cases {
            let r = h.call(call, bytes, BIG, T0);
            let out = r.out.clone().map(|o| String::from_utf8_lossy(&o).into_owned()).unwrap_or_default();
            assert!(out.contains(needle), "{} {:?}: {out}", call.name(), String::from_utf8_lossy(bytes));
            failed(&r, -10, "MEMORY_INVALID_INPUT");
        }
        // None of them wrote anything.
        assert_eq!(ok(&h.call(Call::Query, b"{}", BIG, T0 + 1)), json!([]));
        assert_eq!(audit_count(&mem, "memory.create"), 0);
        mem.dispose();
    }

    #[test]
    fn envelope_is_written_only_when_it_and_its_nul_fit() {
        // R-WASM-3
        let mem = store();
        let mut h = host(&mem, 1, "text");
        let full = h.call(Call::Delete, br#"{"key":"missing"}"#, BIG, T0);
        failed(&full, -12, "MEMORY_NOT_FOUND");
        let n = full.out.as_ref().unwrap().len();
        assert_eq!(h.call(Call::Delete, br#"{"key":"missing"}"#, n, T0), full, "exactly enough room");
        // Room for the JSON but not its NUL: nothing is written.
        assert_eq!(h.call(Call::Delete, br#"{"key":"missing"}"#, n - 1, T0), Reply { code: -12, out: None });
        assert_eq!(h.call(Call::Delete, br#"{"key":"missing"}"#, 0, T0), Reply { code: -12, out: None });
        mem.dispose();
    }

    #[test]
    fn every_error_code_maps_to_its_return_value() {
        // R-WASM-3 with the §11 table.
        let mem = TestMemory::create(64, DataPolicy::default()).unwrap();
        let mut owner = host(&mem, 1, "a");
        let mut stranger = host(&mem, 2, "b");
        let private = json!({"key":"p","value":"AQ==","category":"PREFERENCE",
            "accessPolicy":{"readScope":"CREATOR_GENE_ONLY","writeScope":"CREATOR_GENE_ONLY","sharePolicy":"PRIVATE"}});
        ok(&owner.call(Call::Write, &req(private), BIG, T0));
        failed(&stranger.call(Call::Read, br#"{"key":"p"}"#, BIG, T0 + 1), -2, "MEMORY_ACCESS_DENIED");
        failed(&stranger.call(Call::Delete, br#"{"key":"nope"}"#, BIG, T0 + 1), -12, "MEMORY_NOT_FOUND");
        let quota = owner.call(Call::Write, &write_req("big", &[7; 100], "PREFERENCE"), BIG, T0 + 2);
        assert!(failed(&quota, -8, "MEMORY_QUOTA_EXCEEDED").contains("quota"));
        failed(&owner.call(Call::Read, b"{", BIG, T0 + 3), -10, "MEMORY_INVALID_INPUT");
        let share = json!({"key":"s","value":"","category":"CACHE",
            "accessPolicy":{"readScope":"ALL_GENES","writeScope":"ALL_GENES","sharePolicy":"KNOWLEDGE_GENE"}});
        failed(&owner.call(Call::Write, &req(share), BIG, T0 + 4), -2, "MEMORY_ACCESS_DENIED");
        mem.dispose();
        // A store that is gone fails with a storage error.
        failed(&owner.call(Call::Read, br#"{"key":"p"}"#, BIG, T0 + 5), -13, "MEMORY_STORAGE_ERROR");
    }

    #[test]
    fn a_gene_without_v2_id_or_agent_gets_minus_2_on_every_call() {
        // R-WASM-5, R-ACC-4, R-ACC-5: denied before the request is even looked at.
        let mem = store();
        let no_id = WasmHost::new(mem.gene_memory(None, Some("text".into())).unwrap(), None);
        let bad_id = WasmHost::new(mem.gene_memory(Some("v2:ABC".into()), None).unwrap(), None);
        let no_agent = WasmHost::new(
            GeneMemory::open(GeneOptions { agent_id: None, gene_id: Some(gene(1)), ..GeneOptions::default() }).unwrap(),
            None,
        );
        for mut h in [no_id, bad_id, no_agent] {
            for (call, bytes) in [
                (Call::Read, &br#"{"key":"k"}"#[..]),
                (Call::Write, &write_req("k", b"x", "CACHE")[..]),
                (Call::Query, &b"{}"[..]),
                (Call::Delete, &br#"{"key":"k"}"#[..]),
                (Call::Read, &b"not json"[..]),
                (Call::Write, &br#"{"key":"k","value":"%%","category":"CACHE"}"#[..]),
                (Call::Query, &b"\xff"[..]),
                (Call::Delete, &br#"{"other":1}"#[..]),
            ] {
                let r = h.call(call, bytes, BIG, T0);
                failed(&r, -2, "MEMORY_ACCESS_DENIED");
            }
        }
        // Nothing was written, and each denial of the agent's genes was audited (R-AUD-1).
        let mut h = host(&mem, 1, "text");
        assert_eq!(ok(&h.call(Call::Query, b"{}", BIG, T0 + 1)), json!([]));
        assert_eq!(audit_count(&mem, "memory.access_denied"), 16);
        mem.dispose();
    }

    #[test]
    fn too_small_out_keeps_the_response_for_an_identical_retry() {
        // R-WASM-3 -1, R-WASM-4: the retry gets the kept response and the write is not repeated.
        let mem = store();
        let mut h = host(&mem, 1, "text");
        let request = write_req("k", &[9; 300], "CACHE");
        let first = h.call(Call::Write, &request, 250, T0);
        let message = failed(&first, -1, "MEMORY_INVALID_INPUT");
        assert!(message.contains("out holds only 250"), "{message}");
        // Still too small: -1 again, and still kept; too small for the envelope too.
        assert_eq!(h.call(Call::Write, &request, 8, T0 + 1), Reply { code: -1, out: None });
        let retry = h.call(Call::Write, &request, BIG, T0 + 2);
        let entry = ok(&retry);
        assert!(message.contains(&format!("at least {} bytes", retry.code)), "{message}");
        assert_eq!(entry["updatedAt"], format_ms(T0), "the kept response, not a second write");
        assert_eq!(audit_count(&mem, "memory.create"), 1);
        assert_eq!(audit_count(&mem, "memory.update"), 0);
        // Delivered: the same request again is a new call.
        let again = ok(&h.call(Call::Write, &request, BIG, T0 + 3));
        assert_eq!(again["updatedAt"], format_ms(T0 + 3));
        assert_eq!(audit_count(&mem, "memory.update"), 1);
        mem.dispose();
    }

    #[test]
    fn a_kept_response_answers_only_the_very_next_identical_call() {
        // R-WASM-4: a different request, or the same bytes to another function, runs anew.
        let mem = store();
        let mut h = host(&mem, 1, "text");
        ok(&h.call(Call::Write, &write_req("k", b"v1", "CACHE"), BIG, T0));
        let read = br#"{"key":"k"}"#;
        assert_eq!(h.call(Call::Read, read, 3, T0 + 1).code, -1);
        // Same bytes to delete: executed, not answered with the kept read.
        assert_eq!(h.call(Call::Delete, read, BIG, T0 + 2), Reply { code: 4, out: Some(b"null".to_vec()) });
        assert_eq!(h.call(Call::Read, read, BIG, T0 + 3), Reply { code: 4, out: Some(b"null".to_vec()) });

        let request = write_req("k", b"v2", "CACHE");
        assert_eq!(h.call(Call::Write, &request, 3, T0 + 4).code, -1, "executed; only the response is kept");
        assert_eq!(ok(&h.call(Call::Read, read, BIG, T0 + 5))["value"], BASE64.encode(b"v2"));
        let rerun = ok(&h.call(Call::Write, &request, BIG, T0 + 6));
        assert_eq!(rerun["updatedAt"], format_ms(T0 + 6), "the read in between discarded the kept response");
        assert_eq!(audit_count(&mem, "memory.update"), 1);

        // The identical retry gets the response as it was, even if the entry changed since…
        let mut peer = host(&mem, 2, "text");
        assert_eq!(h.call(Call::Read, read, 3, T0 + 7).code, -1);
        ok(&peer.call(Call::Write, &write_req("k", b"v3", "CACHE"), BIG, T0 + 8));
        assert_eq!(ok(&h.call(Call::Read, read, BIG, T0 + 9))["value"], BASE64.encode(b"v2"));
        // …while a request that differs only in spacing is not a retry.
        assert_eq!(h.call(Call::Read, read, 3, T0 + 10).code, -1);
        assert_eq!(ok(&h.call(Call::Read, br#"{ "key": "k" }"#, BIG, T0 + 11))["value"], BASE64.encode(b"v3"));
        mem.dispose();
    }

    #[test]
    fn deadline_is_checked_first_and_leaves_everything_untouched() {
        // R-WASM-3 -4: at or after the deadline nothing is done, whatever the request.
        let mem = store();
        let deadline = T0 + 10;
        let mut h = WasmHost::new(mem.gene_memory(Some(gene(1)), Some("text".into())).unwrap(), Some(deadline));
        assert_eq!(h.deadline(), Some(deadline));
        let request = write_req("k", b"v", "CACHE");
        for (call, bytes) in [(Call::Write, &request[..]), (Call::Read, &b"garbage"[..]), (Call::Delete, &br#"{"key":"k"}"#[..])] {
            assert_eq!(h.call(call, bytes, BIG, deadline), Reply { code: -4, out: None });
            assert_eq!(h.call(call, bytes, 0, deadline + 1), Reply { code: -4, out: None });
        }
        assert_eq!(h.out_of_bounds(deadline), Reply { code: -4, out: None });
        let mut no_id = WasmHost::new(mem.gene_memory(None, None).unwrap(), Some(deadline));
        assert_eq!(no_id.call(Call::Read, br#"{"key":"k"}"#, BIG, deadline), Reply { code: -4, out: None });
        assert_eq!(audit_count(&mem, "memory.create") + audit_count(&mem, "memory.access_denied"), 0);
        let mut reader = host(&mem, 2, "text");
        assert_eq!(reader.call(Call::Read, br#"{"key":"k"}"#, BIG, T0), Reply { code: 4, out: Some(b"null".to_vec()) });
        // Before the deadline the same host works.
        assert_eq!(ok(&h.call(Call::Write, &request, BIG, deadline - 1))["value"], "dg==");
        mem.dispose();
    }

    #[test]
    fn out_of_bounds_pointers_get_minus_10_and_no_out() {
        let mem = store();
        let mut h = host(&mem, 1, "text");
        let request = br#"{"key":"k"}"#;
        ok(&h.call(Call::Write, &write_req("k", b"v", "CACHE"), BIG, T0));
        assert_eq!(h.call(Call::Read, request, 3, T0 + 1).code, -1);
        assert_eq!(h.out_of_bounds(T0 + 2), Reply { code: -10, out: None });
        // The kept response went with it: the retry runs again (and sees the new accessor).
        let mut peer = host(&mem, 2, "text");
        ok(&peer.call(Call::Read, request, BIG, T0 + 3));
        assert_eq!(ok(&h.call(Call::Read, request, BIG, T0 + 4))["lastAccessedBy"], gene(1));
        assert_eq!(ok(&peer.call(Call::Query, b"{}", BIG, T0 + 5))[0]["lastAccessedBy"], gene(1));
        mem.dispose();
    }

    #[test]
    fn made_counts_a_response_made_whether_or_not_it_fits() {
        // A metering host charges the work of a call: a response too large for `out` is made in
        // full (then kept), so it counts as much as one delivered; its retry makes nothing new.
        let mem = store();
        let mut h = host(&mem, 1, "text");
        ok(&h.call(Call::Write, &write_req("k", &[7; 3000], "CACHE"), BIG, T0));
        let whole = h.call(Call::Query, b"{}", BIG, T0 + 1);
        let len = whole.out.as_ref().unwrap().len();
        assert!(len > 4000, "{len}");
        assert_eq!(h.made(), len);
        assert_eq!(h.call(Call::Query, b"{}", 0, T0 + 2).code, OUT_TOO_SMALL);
        assert_eq!(h.made(), len, "made in full although out held nothing");
        assert_eq!(h.call(Call::Query, b"{}", BIG, T0 + 3).code, len as i32);
        assert_eq!(h.made(), 0, "the kept response was delivered, not made again");
        assert_eq!(h.out_of_bounds(T0 + 4).code, -10);
        assert_eq!(h.made(), 0);
        mem.dispose();
    }

    #[test]
    fn nothing_panics_on_hostile_input() {
        // Huge requests, deep nesting, any out_cap, arbitrary bytes.
        let mem = store();
        let mut h = host(&mem, 1, "text");
        let mut huge = br#"{"key":"k"}"#.to_vec();
        huge.resize(MAX_REQUEST_BYTES + 1, b' ');
        let message = failed(&h.call(Call::Read, &huge, BIG, T0), -10, "MEMORY_INVALID_INPUT");
        assert!(message.contains(&format!("{} bytes", MAX_REQUEST_BYTES + 1)), "{message}");
        let deep = "[".repeat(100_000);
        failed(&h.call(Call::Query, deep.as_bytes(), BIG, T0), -10, "MEMORY_INVALID_INPUT");
        let deep_obj = "{\"filter\":".repeat(10_000);
        failed(&h.call(Call::Query, deep_obj.as_bytes(), BIG, T0), -10, "MEMORY_INVALID_INPUT");
        // A value over 1 MiB is the core's R-LIM-2 error.
        let over = write_req("k", &vec![0; 1_048_577], "CACHE");
        assert!(failed(&h.call(Call::Write, &over, BIG, T0), -10, "MEMORY_INVALID_INPUT").contains("1048577 bytes"));
        // out_cap extremes.
        assert_eq!(h.call(Call::Read, br#"{"key":"k"}"#, 0, T0), Reply { code: -1, out: None });
        assert_eq!(h.call(Call::Read, br#"{"key":"k"}"#, usize::MAX, T0), Reply { code: 4, out: Some(b"null".to_vec()) });
        // Deterministic junk, some of it nearly valid.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let pieces: [&[u8]; 12] =
            [b"{", b"}", b"\"key\"", b":", b",", b"\"k\"", b"\"value\"", b"\"AQ==\"", b"\xff", b"null", b"[", b"\"category\":\"CACHE\""];
        for i in 0..3000 {
            let mut bytes = Vec::new();
            for _ in 0..(next() % 12) {
                if next() % 4 == 0 {
                    bytes.push(next() as u8);
                } else {
                    bytes.extend_from_slice(pieces[(next() % 12) as usize]);
                }
            }
            let call = Call::ALL[i % 4];
            let cap = [0, 1, 5, 64, 1000, BIG][(next() % 6) as usize];
            let r = h.call(call, &bytes, cap, T0 + i as i64);
            assert!([-1, -2, -8, -10, -12, -13].contains(&r.code) || r.code >= 0, "{}", r.code);
            assert!(r.out.as_ref().map_or(0, Vec::len) <= cap);
            assert_ne!(r.code, -13, "{:?}", String::from_utf8_lossy(&bytes));
        }
        mem.dispose();
    }
}
