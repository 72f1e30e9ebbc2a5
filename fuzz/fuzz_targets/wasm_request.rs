//! The WASM host-call protocol (R-WASM): the first byte picks the call and the size of `out`,
//! the rest is the request. Only documented return values; responses are JSON; an error
//! envelope is JSON followed by one NUL; never a storage error (a caught panic would be one).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::wasm::{Call, WasmHost};
use rotifer_memory_core::TestMemory;
use std::sync::{Mutex, OnceLock};

struct Fixture {
    _tm: TestMemory,
    host: WasmHost,
}

fn fixture() -> &'static Mutex<Fixture> {
    static F: OnceLock<Mutex<Fixture>> = OnceLock::new();
    F.get_or_init(|| {
        let tm = TestMemory::create(16 * 1024, DataPolicy { anonymization_supported: true, max_retention_days: None }).unwrap();
        let host = WasmHost::new(tm.gene_memory(Some(format!("v2:{}", "a".repeat(64))), Some("text".into())).unwrap(), None);
        Mutex::new(Fixture { _tm: tm, host })
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&head, request)) = data.split_first() else { return };
    let call = Call::ALL[(head & 3) as usize];
    let cap = [0usize, 16, 256, 4096, 1 << 20][((head >> 2) % 5) as usize];
    let mut f = fixture().lock().unwrap();
    let reply = f.host.call(call, request, cap, 1_796_000_000_000 + i64::from(head >> 5) * 86_400_000);
    assert!(reply.code >= 0 || [-1, -2, -8, -10, -12].contains(&reply.code), "undocumented return value {}", reply.code);
    if let Some(out) = &reply.out {
        assert!(out.len() <= cap);
        if reply.code >= 0 {
            assert_eq!(out.len(), reply.code as usize);
            serde_json::from_slice::<serde_json::Value>(out).expect("a JSON response");
        } else {
            assert_eq!(out.last(), Some(&0));
            let v: serde_json::Value = serde_json::from_slice(&out[..out.len() - 1]).expect("a JSON envelope");
            assert!(v["__rotifer_error"]["code"].as_str().is_some_and(|c| c != "MEMORY_STORAGE_ERROR"));
        }
    }
});
