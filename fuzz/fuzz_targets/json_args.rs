//! Every argument parser over arbitrary JSON turned into `Arg`s, as the WASM protocol does.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rotifer_memory_core::model;
use rotifer_memory_core::{Arg, ErrorCode, GeneOptions};

fn only_invalid<T>(r: rotifer_memory_core::Result<T>) {
    if let Err(e) = r {
        assert_eq!(e.code, ErrorCode::InvalidInput, "{}", e.message);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let a = Arg::from_json(value);
    only_invalid(model::parse_key(&a));
    only_invalid(model::parse_category(&a));
    only_invalid(model::parse_access_policy(&a));
    only_invalid(model::parse_retention_arg(&a));
    only_invalid(model::parse_filter(&a));
    only_invalid(model::parse_data_policy(&a));
    only_invalid(model::parse_quota_arg(Some(&a)));
    only_invalid(GeneOptions::parse(&a, &["now"]));
    if let Arg::Object(fields) = &a {
        for (_, v) in fields {
            only_invalid(model::parse_filter(v));
            only_invalid(model::parse_access_policy(v));
            only_invalid(model::parse_retention_arg(v));
        }
    }
});
