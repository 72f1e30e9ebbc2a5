//! Fuzzing with proptest: every parser of untrusted input, and the WASM host-call protocol,
//! over arbitrary and near-valid inputs. No panic, no hang, and only the documented answers.
//!
//! `cargo test -p rotifer-memory-core --test fuzz_props` runs a bounded number of cases per
//! target (CI); `scripts/fuzz-long.sh` runs each with `PROPTEST_CASES=1000000`.
//! A failure prints the minimal input and the seed; `FUZZ_SEED=<seed>` reproduces it.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use rotifer_memory_core::model::{self, DataPolicy, MAX_VALUE_BYTES};
use rotifer_memory_core::quota::{check_quota_bytes, parse_memory_quota, MAX_QUOTA};
use rotifer_memory_core::time::{check_now, format_ms, parse_rfc3339_ceil_ms, MAX_MS};
use rotifer_memory_core::wasm::{Call, WasmHost, DEADLINE_PASSED, OUT_TOO_SMALL};
use rotifer_memory_core::{Arg, ErrorCode, GeneMemory, GeneOptions, TestMemory};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Harness: bounded cases, a reproducible seed, and a watchdog that turns a hang into a failure.

static PROGRESS: AtomicU64 = AtomicU64::new(0);
static START: OnceLock<Instant> = OnceLock::new();
const HANG: Duration = Duration::from_secs(60);

/// Milliseconds since the first target started: the clock of the watchdog and of progress.
fn clock_ms() -> u64 {
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Aborts the test process if no case finishes for `HANG`: a hang is a failure, not a stall.
fn watchdog() {
    static WATCHDOG: Once = Once::new();
    WATCHDOG.call_once(|| {
        PROGRESS.store(clock_ms(), Ordering::Relaxed);
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_secs(1));
            if clock_ms().saturating_sub(PROGRESS.load(Ordering::Relaxed)) > HANG.as_millis() as u64 {
                eprintln!("fuzz_props: no case finished for {HANG:?}: a hang");
                std::process::abort();
            }
        });
    });
}

fn progress() {
    PROGRESS.fetch_max(clock_ms(), Ordering::Relaxed);
}

fn run<S: Strategy>(name: &str, default_cases: u32, strategy: S, test: impl FnMut(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    watchdog();
    progress();
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default_cases);
    let seed: u64 = std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_2026);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    seed_bytes[8..16].copy_from_slice(&(name.len() as u64).to_le_bytes());
    let config = Config { cases, failure_persistence: None, max_shrink_iters: 2000, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes));
    let test = std::cell::RefCell::new(test);
    let result = runner.run(&strategy, |v| {
        let r = (test.borrow_mut())(v);
        progress();
        r
    });
    if let Err(e) = result {
        panic!("{name}: {e} (FUZZ_SEED={seed} PROPTEST_CASES={cases} reproduces it)");
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies

const NAMES: &[&str] = &[
    "readScope", "writeScope", "sharePolicy", "maxRetentionDays", "autoDeleteOnTermination", "anonymizationSupported",
    "category", "keyPrefix", "since", "until", "limit", "agentId", "geneId", "domain", "root", "now", "quota", "dataPolicy",
    "key", "value", "accessPolicy", "retentionPolicy", "filter",
];
const WORDS: &[&str] = &[
    "CACHE", "PATTERN", "CONTEXT", "PREFERENCE", "cache", "CREATOR_GENE_ONLY", "SAME_DOMAIN", "ALL_GENES", "DEPLOYER_CONFIGURED",
    "PRIVATE", "ANONYMIZED_SHARE", "KNOWLEDGE_GENE", "", "2026-11-30T01:38:19.123Z", "2026-11-30T01:38:19.123456789+14:00",
    "9999-12-31T23:59:59.999Z", "0000-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-30T24:00:00Z", "1.5GB", "50 mb",
    "1024GB", "0KB", "text.format", "a..b", "v2:0000000000000000000000000000000000000000000000000000000000000000", "../x",
];

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        (-5i64..3000).prop_map(|n| n as f64),
        prop::sample::select(vec![
            0.0, -0.0, 0.5, 1.0, 1000.0, 1001.0, 2147483647.0, 2147483648.0, 9007199254740993.0, f64::NAN, f64::INFINITY,
            f64::NEG_INFINITY, f64::MAX, f64::MIN_POSITIVE, MAX_MS as f64, 1e300,
        ]),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(WORDS).prop_map(String::from),
        any::<String>(),
        "[ -~]{0,40}",
        "[0-9 .]{0,12}(kb|KB|Mb|gB|TB|B|)[ ]{0,2}",
        "[0-9]{1,5}-[0-9]{1,2}-[0-9]{1,2}[Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\\.[0-9]{0,12})?(Z|z|[+-][0-9]{2}:[0-9]{2})?",
        prop::collection::vec(prop::char::any(), 1025..1100).prop_map(|c| c.into_iter().collect()),
    ]
}

fn arg() -> impl Strategy<Value = Arg> {
    let leaf = prop_oneof![
        Just(Arg::Undefined),
        Just(Arg::Null),
        any::<bool>().prop_map(Arg::Bool),
        number().prop_map(Arg::Number),
        text().prop_map(Arg::Str),
        Just(Arg::InvalidStr),
        prop::collection::vec(any::<u8>(), 0..48).prop_map(Arg::Bytes),
        Just(Arg::Other("an array")),
    ];
    leaf.prop_recursive(4, 48, 7, |inner| {
        prop::collection::vec((prop_oneof![prop::sample::select(NAMES).prop_map(String::from), "[a-zA-Z]{0,10}"], inner), 0..7)
            .prop_map(Arg::Object)
    })
}

/// Objects whose fields are mostly the expected ones: the interesting region of the input space.
fn shaped(names: &'static [&'static str]) -> impl Strategy<Value = Arg> {
    prop::collection::vec((prop_oneof![9 => prop::sample::select(names).prop_map(String::from), 1 => "[a-z]{1,6}"], arg()), 0..6)
        .prop_map(Arg::Object)
}

fn only_invalid_input<T>(what: &str, r: rotifer_memory_core::Result<T>) -> Result<Option<T>, TestCaseError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            prop_assert_eq!(e.code, ErrorCode::InvalidInput, "{}: {}", what, e.message);
            prop_assert!(!e.message.is_empty());
            Ok(None)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parsers

#[test]
fn arg_parsers_never_panic_and_answer_only_invalid_input() {
    run("arg parsers", 2000, arg(), |a| {
        if let Some(k) = only_invalid_input("key", model::parse_key(&a))? {
            prop_assert!(!k.is_empty() && k.len() <= model::MAX_KEY_BYTES && !k.contains('\0'));
        }
        only_invalid_input("category", model::parse_category(&a))?;
        only_invalid_input("optional category", model::parse_optional_category(&a))?;
        only_invalid_input("accessPolicy", model::parse_access_policy(&a))?;
        only_invalid_input("retentionPolicy", model::parse_retention_arg(&a))?;
        if let Some(f) = only_invalid_input("filter", model::parse_filter(&a))? {
            prop_assert!((1..=1000).contains(&f.limit));
        }
        if let Some(p) = only_invalid_input("dataPolicy", model::parse_data_policy(&a))? {
            prop_assert!(p.max_retention_days.is_none_or(|d| (1..=model::MAX_RETENTION_DAYS).contains(&d)));
        }
        if let Some(q) = only_invalid_input("quota", model::parse_quota_arg(Some(&a)))? {
            prop_assert!((1..=MAX_QUOTA).contains(&q));
        }
        only_invalid_input("options", model::option_fields("options", &a, &["agentId", "root"]))?;
        only_invalid_input("gene options", GeneOptions::parse(&a, &["now"]))?;
        if let Some(v) = only_invalid_input("value", model::parse_value(a.clone()))? {
            prop_assert!(v.len() <= MAX_VALUE_BYTES);
        }
        if let Arg::Str(s) = &a {
            let _ = model::check_agent_id(s);
            let _ = model::check_domain(s);
            let _ = model::is_valid_gene_id(s);
        }
        Ok(())
    });
}

#[test]
fn shaped_policies_and_filters_never_panic() {
    const POLICY: &[&str] = &["readScope", "writeScope", "sharePolicy", "maxRetentionDays", "autoDeleteOnTermination", "anonymizationSupported"];
    const FILTER: &[&str] = &["category", "keyPrefix", "since", "until", "limit"];
    run("shaped policies and filters", 800, (shaped(POLICY), shaped(FILTER)), |(p, f)| {
        only_invalid_input("accessPolicy", model::parse_access_policy(&p))?;
        only_invalid_input("retentionPolicy", model::parse_retention_arg(&p))?;
        only_invalid_input("dataPolicy", model::parse_data_policy(&p))?;
        if let Some(parsed) = only_invalid_input("filter", model::parse_filter(&f))? {
            prop_assert!((1..=1000).contains(&parsed.limit));
        }
        Ok(())
    });
}

#[test]
fn time_parsing_never_panics() {
    run("time", 5000, (text(), number(), any::<i64>()), |(s, n, ms)| {
        if let Some(t) = only_invalid_input("since", parse_rfc3339_ceil_ms("since", &s))? {
            // Accepted times round-trip when they are whole milliseconds in range.
            if (0..=MAX_MS).contains(&t) && s.ends_with('Z') && s.len() == 24 {
                prop_assert_eq!(parse_rfc3339_ceil_ms("since", &format_ms(t)).unwrap(), t);
            }
        }
        if let Some(t) = only_invalid_input("now", check_now(n))? {
            prop_assert!((0..=MAX_MS).contains(&t));
        }
        let _ = format_ms(ms);
        Ok(())
    });
}

/// floor(`int`.`frac` × unit), computed independently of the store: the full decimal product of
/// the digits and the unit, with the last `frac.len()` digits cut off.
fn expected_quota(int: &str, frac: &str, unit: &str) -> Option<u128> {
    let mult: u32 = match unit.to_ascii_uppercase().as_str() {
        "KB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        _ => return None,
    };
    // Schoolbook multiplication, least significant digit first.
    let digits: Vec<u64> = format!("{int}{frac}").bytes().rev().map(|d| u64::from(d - b'0')).collect();
    let mut product = Vec::with_capacity(digits.len() + 10);
    let mut carry = 0u64;
    for d in digits {
        let v = d * u64::from(mult) + carry;
        product.push((v % 10) as u8);
        carry = v / 10;
    }
    while carry > 0 {
        product.push((carry % 10) as u8);
        carry /= 10;
    }
    let whole: String = product[frac.len()..].iter().rev().map(|d| char::from(b'0' + d)).collect();
    let whole = whole.trim_start_matches('0');
    if whole.len() > 30 {
        return Some(u128::MAX);
    }
    Some(if whole.is_empty() { 0 } else { whole.parse().unwrap() })
}

#[test]
fn quota_text_never_panics_and_floors_exactly() {
    let near_valid = ("[ ]{0,2}", "[0-9]{1,14}", prop::option::of("[0-9]{0,9}|9{20,60}|[0-9]{10,80}"), "[ ]{0,2}", "(kb|KB|mB|Gb|TB|B|kib|)", "[ ]{0,2}");
    run("quota text", 5000, (text(), near_valid, number()), |(s, (lead, int, frac, mid, unit, trail), n)| {
        if let Some(q) = only_invalid_input("quota", parse_memory_quota(&s))? {
            prop_assert!((1..=MAX_QUOTA).contains(&q));
        }
        let t = format!("{lead}{int}{}{mid}{unit}{trail}", frac.as_ref().map(|f| format!(".{f}")).unwrap_or_default());
        let got = only_invalid_input("quota", parse_memory_quota(&t))?;
        let frac_ok = frac.as_ref().is_none_or(|f| !f.is_empty());
        let want = if frac_ok { expected_quota(&int, frac.as_deref().unwrap_or(""), &unit) } else { None };
        match want {
            Some(b) if b >= 1 && b <= MAX_QUOTA as u128 => prop_assert_eq!(got, Some(b as u64), "{:?}", t),
            _ => prop_assert_eq!(got, None, "{:?} must be rejected", t),
        }
        if let Some(q) = only_invalid_input("quota bytes", check_quota_bytes(n))? {
            prop_assert_eq!(q as f64, n);
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// The WASM host-call protocol

fn json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..2000).prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)),
        text().prop_map(Value::String),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(|b| {
            use base64::Engine as _;
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }),
        Just(Value::String("not base64!".into())),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((prop_oneof![prop::sample::select(NAMES).prop_map(String::from), "[a-z]{1,5}"], inner), 0..6)
                .prop_map(|f| Value::Object(f.into_iter().collect())),
        ]
    })
}

fn pool(words: &'static [&'static str]) -> impl Strategy<Value = serde_json::Value> + Clone {
    prop::sample::select(words).prop_map(serde_json::Value::from)
}

/// Mostly valid, sometimes arbitrary: the field values of a shaped request.
fn field(valid: impl Strategy<Value = serde_json::Value> + Clone + 'static) -> BoxedStrategy<serde_json::Value> {
    prop_oneof![5 => valid, 1 => json()].boxed()
}

/// A request for `c`: its own fields (one sometimes dropped, one sometimes added), then maybe
/// cut or corrupted; or arbitrary JSON; or arbitrary bytes.
fn request_for(c: Call) -> BoxedStrategy<Vec<u8>> {
    use base64::Engine as _;
    use serde_json::{json, Value};
    const SCOPES: &[&str] = &["CREATOR_GENE_ONLY", "SAME_DOMAIN", "ALL_GENES", "DEPLOYER_CONFIGURED"];
    const CATEGORIES: &[&str] = &["CACHE", "PATTERN", "CONTEXT", "PREFERENCE"];
    let key = field(pool(&["k1", "k2", "p/x", "é"]));
    let value = field(prop::collection::vec(any::<u8>(), 0..64).prop_map(|b| json!(base64::engine::general_purpose::STANDARD.encode(b))));
    let category = field(pool(CATEGORIES));
    let access = field((pool(SCOPES), pool(SCOPES), pool(&["PRIVATE", "KNOWLEDGE_GENE"]))
        .prop_map(|(r, w, s)| json!({ "readScope": r, "writeScope": w, "sharePolicy": s })));
    let retention = field(prop_oneof![
        Just(Value::Null),
        (pool(&["1", "30"]), any::<bool>(), any::<bool>()).prop_map(|(d, a, b)| json!({
            "maxRetentionDays": d.as_str().unwrap().parse::<i64>().unwrap(), "autoDeleteOnTermination": a, "anonymizationSupported": b
        })),
    ]);
    let filter = field((0u32..25, pool(&["", "k", "p/"]), pool(CATEGORIES), 0u8..8).prop_map(|(limit, prefix, cat, mask)| {
        let mut f = serde_json::Map::new();
        if mask & 1 != 0 { f.insert("limit".into(), json!(limit)); }
        if mask & 2 != 0 { f.insert("keyPrefix".into(), prefix); }
        if mask & 4 != 0 { f.insert("category".into(), cat); }
        Value::Object(f)
    }));
    let fields: BoxedStrategy<Vec<(&'static str, Value)>> = match c {
        Call::Read => (key, prop::option::of(category)).prop_map(|(k, c)| {
            let mut v = vec![("key", k)];
            v.extend(c.map(|c| ("category", c)));
            v
        }).boxed(),
        Call::Write => (key, value, category, prop::option::of(access), prop::option::of(retention)).prop_map(|(k, v, c, a, r)| {
            let mut f = vec![("key", k), ("value", v), ("category", c)];
            f.extend(a.map(|a| ("accessPolicy", a)));
            f.extend(r.map(|r| ("retentionPolicy", r)));
            f
        }).boxed(),
        Call::Query => prop::option::of(filter).prop_map(|f| f.map(|f| vec![("filter", f)]).unwrap_or_default()).boxed(),
        Call::Delete => key.prop_map(|k| vec![("key", k)]).boxed(),
    };
    let shaped = (fields, any::<prop::sample::Index>(), prop::option::weighted(0.1, ("[a-zA-Z]{1,6}", json()))).prop_map(|(fields, drop, extra)| {
        let mut o = serde_json::Map::new();
        let skip = if drop.index(8) == 0 && !fields.is_empty() { Some(drop.index(fields.len())) } else { None };
        for (i, (n, v)) in fields.into_iter().enumerate() {
            if Some(i) != skip { o.insert(n.to_string(), v); }
        }
        if let Some((n, v)) = extra { o.insert(n, v); }
        serde_json::to_vec(&Value::Object(o)).unwrap()
    }).boxed();
    prop_oneof![
        12 => shaped.clone(),
        2 => json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => prop::collection::vec(any::<u8>(), 0..200),
        1 => (shaped, any::<prop::sample::Index>(), any::<u8>()).prop_map(|(mut bytes, i, b)| {
            let at = i.index(bytes.len().max(1));
            if at % 2 == 0 { bytes.truncate(at) } else if at < bytes.len() { bytes[at] = b }
            bytes
        }),
    ]
    .boxed()
}

fn call_and_request() -> impl Strategy<Value = (Call, Vec<u8>)> {
    prop::sample::select(Call::ALL.to_vec()).prop_flat_map(|c| (Just(c), request_for(c)))
}

fn out_cap() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..8, 8usize..200, 200usize..5000, Just(1 << 20)]
}

/// Checks one reply against R-WASM-2/3.
fn check_reply(code: i32, out: &Option<Vec<u8>>, cap: usize) -> Result<(), TestCaseError> {
    prop_assert!(
        code >= 0 || [OUT_TOO_SMALL, -2, DEADLINE_PASSED, -8, -10, -12].contains(&code),
        "undocumented return value {} (a storage error or a caught panic?): {:?}",
        code,
        out.as_ref().map(|o| String::from_utf8_lossy(o).into_owned())
    );
    if let Some(o) = out {
        prop_assert!(o.len() <= cap, "never more than out_cap bytes");
    }
    if code >= 0 {
        let o = out.as_ref().expect("a response");
        prop_assert_eq!(o.len(), code as usize);
        let v: serde_json::Value = serde_json::from_slice(o).map_err(|e| TestCaseError::fail(format!("response is not JSON: {e}")))?;
        prop_assert!(v.is_null() || v.is_object() || v.is_array());
    } else if code == DEADLINE_PASSED {
        prop_assert!(out.is_none(), "after -4, out is untouched");
    } else if let Some(o) = out {
        prop_assert_eq!(o.last(), Some(&0u8), "the envelope ends with one NUL");
        let v: serde_json::Value = serde_json::from_slice(&o[..o.len() - 1]).map_err(|e| TestCaseError::fail(format!("envelope is not JSON: {e}")))?;
        let code_text = v["__rotifer_error"]["code"].as_str().unwrap_or("");
        prop_assert!(code_text.starts_with("MEMORY_") && code_text != "MEMORY_STORAGE_ERROR", "{}", v);
        prop_assert!(v["__rotifer_error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    Ok(())
}

fn gene_id(c: char) -> String {
    format!("v2:{}", c.to_string().repeat(64))
}

/// The hosts the WASM target calls: genes of two domains, one with no v2 id, one with no agent,
/// one past its deadline. Rebuilt now and then, so that a million cases do not grow the test
/// memory's audit log without bound.
struct Hosts {
    tm: TestMemory,
    hosts: Vec<WasmHost>,
    calls: u32,
}

impl Hosts {
    fn new() -> Hosts {
        let tm = TestMemory::create(16 * 1024, DataPolicy { anonymization_supported: true, max_retention_days: None }).unwrap();
        let hosts = vec![
            WasmHost::new(tm.gene_memory(Some(gene_id('a')), Some("text".into())).unwrap(), None),
            WasmHost::new(tm.gene_memory(Some(gene_id('b')), Some("image".into())).unwrap(), None),
            WasmHost::new(tm.gene_memory(None, None).unwrap(), None),
            WasmHost::new(GeneMemory::open(GeneOptions::default()).unwrap(), None), // no agent
            WasmHost::new(tm.gene_memory(Some(gene_id('c')), None).unwrap(), Some(1_000)), // deadline passed
        ];
        Hosts { tm, hosts, calls: 0 }
    }

    fn get(&mut self, i: usize) -> &mut WasmHost {
        self.calls += 1;
        if self.calls > 50_000 {
            self.tm.dispose();
            *self = Hosts::new();
        }
        &mut self.hosts[i]
    }
}

#[test]
fn wasm_protocol_never_panics_and_answers_only_documented_codes() {
    let mut hosts = Hosts::new();
    let t0 = 1_796_000_000_000i64;
    let mut seen = std::collections::HashSet::new();
    let host = prop_oneof![4 => Just(0usize), 3 => Just(1usize), 1 => Just(2usize), 1 => Just(3usize), 1 => Just(4usize)];
    let strategy = (host, call_and_request(), out_cap(), 0i64..400_000_000);
    run("wasm protocol", 2000, strategy, |(h, (c, req), cap, dt)| {
        let now = t0 + dt;
        let host = hosts.get(h);
        let reply = host.call(c, &req, cap, now);
        check_reply(reply.code, &reply.out, cap)?;
        seen.insert((c.name(), reply.code.clamp(-100, 0)));
        match h {
            2 | 3 => prop_assert_eq!(reply.code, -2, "no v2 id / no agent: -2 whatever the request"),
            4 => prop_assert_eq!(reply.code, DEADLINE_PASSED),
            _ => {}
        }
        if reply.code == OUT_TOO_SMALL {
            // R-WASM-4: the same request with room receives the kept response, not a new call.
            let again = host.call(c, &req, 1 << 22, now + 1);
            check_reply(again.code, &again.out, 1 << 22)?;
            prop_assert!(again.code >= 0, "the retry receives the kept response: {}", again.code);
        }
        let oob = host.out_of_bounds(now);
        prop_assert!(oob.out.is_none() && (oob.code == -10 || oob.code == DEADLINE_PASSED));
        Ok(())
    });
    hosts.tm.dispose();
    if std::env::var("FUZZ_SEED").is_err() {
        // The generator reaches the valid region too: every call succeeds at least once.
        for (c, code) in [("readMemory", 0), ("writeMemory", 0), ("queryMemory", 0), ("deleteMemory", 0), ("writeMemory", -10), ("readMemory", -1)] {
            assert!(seen.contains(&(c, code)), "{c} never answered {code}: {seen:?}");
        }
    }
}
