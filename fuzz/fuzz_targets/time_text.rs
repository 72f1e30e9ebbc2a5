//! Filter times (R-API-3): any bytes as an RFC 3339 time.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rotifer_memory_core::time::{format_ms, parse_rfc3339_ceil_ms};
use rotifer_memory_core::ErrorCode;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_rfc3339_ceil_ms("since", &text) {
        Ok(ms) => {
            let _ = format_ms(ms);
        }
        Err(e) => assert_eq!(e.code, ErrorCode::InvalidInput),
    }
});
