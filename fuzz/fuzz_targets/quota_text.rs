//! Quota text (R-QUO-2): any bytes; an accepted quota is 1 byte to 1 TB, a rejection is
//! MEMORY_INVALID_INPUT with a message.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rotifer_memory_core::quota::{parse_memory_quota, MAX_QUOTA};
use rotifer_memory_core::ErrorCode;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_memory_quota(&text) {
        Ok(q) => assert!((1..=MAX_QUOTA).contains(&q)),
        Err(e) => assert!(e.code == ErrorCode::InvalidInput && !e.message.is_empty()),
    }
});
