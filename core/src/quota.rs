//! Quota text (R-QUO-2) and the default quota (R-QUO-1). Eviction itself runs in the store,
//! which walks candidates in `Category::EVICTABLE` order (R-QUO-3).

use crate::error::{MemoryError, Result};

pub const DEFAULT_QUOTA: u64 = 10 * 1024 * 1024;
pub const MAX_QUOTA: u64 = 1024 * 1024 * 1024 * 1024;

const FORMS: &str = "a number and a unit KB, MB or GB (1 KB = 1024 bytes), such as 512KB, 50MB, 1.5GB or \"50 mb\"; more than 0 and at most 1024GB";

/// Parses `50MB`, `1.5GB`, ` 512 kb ` into bytes, floored (R-QUO-2).
pub fn parse_memory_quota(text: &str) -> Result<u64> {
    parse_size(text).map_err(|why| MemoryError::invalid(format!("memory quota {why}")))
}

/// A size in the text of quotas (R-QUO-2), for other settings (the audit log's, R-AUD-7); the
/// error says what is wrong with it, to follow the setting's name.
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let bad = |why: &str| format!("{text:?} {why}; write {FORMS}");
    let t = text.trim_matches(|c: char| c == ' ');
    let digits_end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, rest) = t.split_at(digits_end);
    let unit = rest.trim_start_matches(' ');
    if number.is_empty() {
        return Err(bad(if t.starts_with('-') { "is negative" } else { "does not start with a number" }));
    }
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if int.is_empty() || frac.contains('.') || (number.contains('.') && frac.is_empty()) {
        return Err(bad("is not a decimal number"));
    }
    // A zero says so whatever follows it (`0`, `0MB`, `0.0 kb`): "more than 0" is the fix.
    if number.bytes().all(|b| b == b'0' || b == b'.') {
        return Err(bad("must be more than 0"));
    }
    // `1e3MB`: an exponent is not a decimal number; name it rather than "an unknown unit".
    if unit.len() > 1 && unit.starts_with(['e', 'E']) && unit[1..].starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
        return Err(bad("is not a plain decimal number (no exponent)"));
    }
    let multiplier: u64 = match unit.to_ascii_uppercase().as_str() {
        "KB" => 1024,
        "MB" => 1024 * 1024,
        "GB" => 1024 * 1024 * 1024,
        "" => return Err(bad("has no unit")),
        _ => return Err(bad("has an unknown unit")),
    };
    // Exact arithmetic: bytes = floor((int + frac / 10^len) * multiplier).
    let int_value: u128 = int.parse::<u128>().map_err(|_| bad("is too large"))?;
    let mut bytes: u128 = int_value.checked_mul(multiplier as u128).ok_or_else(|| bad("is too large"))?;
    bytes += u128::from(fraction_bytes(frac, multiplier));
    if bytes == 0 {
        return Err(bad("must be more than 0"));
    }
    if bytes > MAX_QUOTA as u128 {
        return Err(bad("is over 1024GB"));
    }
    Ok(bytes as u64)
}

/// floor(0.`frac` × `multiplier`), exact for a fraction of any length: long multiplication from
/// the last digit, whose final carry is the whole part. (`frac` holds ASCII digits only.)
fn fraction_bytes(frac: &str, multiplier: u64) -> u64 {
    frac.bytes().rev().fold(0, |carry, d| (u64::from(d - b'0') * multiplier + carry) / 10)
}

/// A quota given as a number of bytes (the API also takes numbers).
pub fn check_quota_bytes(n: f64) -> Result<u64> {
    if n.is_finite() && n.fract() == 0.0 && n >= 1.0 && n <= MAX_QUOTA as f64 {
        Ok(n as u64)
    } else {
        Err(MemoryError::invalid(format!(
            "memory quota {n} is not valid: give a whole number of bytes from 1 to {MAX_QUOTA} (1024GB), or text: {FORMS}"
        )))
    }
}

/// A quota for messages, in the units quotas are written in: `50MB (52428800 bytes)`,
/// `0.5KB (512 bytes)`, `1024GB (1099511627776 bytes)`, or `1000 bytes` when no unit gives a
/// short exact number. The CLI's `formatQuota` (lib/cli/format.js) writes the same text.
pub fn describe_quota(bytes: u64) -> String {
    match unit_form(bytes) {
        Some(text) => format!("{text} ({bytes} bytes)"),
        None if bytes == 1 => "1 byte".to_string(),
        None => format!("{bytes} bytes"),
    }
}

/// `bytes` as a number (at most 3 decimals, at least 0.5) and the largest unit that gives one.
fn unit_form(bytes: u64) -> Option<String> {
    for (unit, size) in [("GB", 1u64 << 30), ("MB", 1 << 20), ("KB", 1 << 10)] {
        // Exact when bytes × 1000 is a multiple of the unit; at least half a unit reads well.
        if (u128::from(bytes) * 1000) % u128::from(size) == 0 && bytes * 2 >= size {
            let thousandths = u128::from(bytes) * 1000 / u128::from(size);
            let (whole, frac) = (thousandths / 1000, thousandths % 1000);
            let frac = if frac == 0 { String::new() } else { format!(".{frac:03}").trim_end_matches('0').to_string() };
            return Some(format!("{whole}{frac}{unit}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms() {
        // R-QUO-2
        assert_eq!(parse_memory_quota("512KB").unwrap(), 512 * 1024);
        assert_eq!(parse_memory_quota("50MB").unwrap(), 50 * 1024 * 1024);
        assert_eq!(parse_memory_quota("50 mb").unwrap(), 50 * 1024 * 1024);
        assert_eq!(parse_memory_quota(" 1.5GB ").unwrap(), 1536 * 1024 * 1024);
        assert_eq!(parse_memory_quota("1 gB").unwrap(), 1024 * 1024 * 1024);
        assert_eq!(parse_memory_quota("0.001KB").unwrap(), 1); // 1.024 floors to 1
        assert_eq!(parse_memory_quota("1024GB").unwrap(), MAX_QUOTA);
        assert_eq!(parse_memory_quota("007KB").unwrap(), 7 * 1024);
        // Long fractions are exact (30 nines × 1 GB used to overflow): 0.999…9 GB floors to
        // 1 GB − 1 byte, and 0.5 followed by many zeros and a 1 to exactly half a kilobyte.
        assert_eq!(parse_memory_quota(&format!("0.{}GB", "9".repeat(40))).unwrap(), 1024 * 1024 * 1024 - 1);
        assert_eq!(parse_memory_quota(&format!("0.5{}1KB", "0".repeat(60))).unwrap(), 512);
        assert_eq!(parse_memory_quota("7777.67777777777777777737770077077377700770GB").unwrap_err().code, crate::ErrorCode::InvalidInput);
        assert_eq!(parse_memory_quota("1023.99999999999999999999999999999999999GB").unwrap(), MAX_QUOTA - 1);
    }

    #[test]
    fn rejected_forms() {
        for bad in [
            "100", "0MB", "-5MB", "2TB", "1025GB", "1024.001GB", "0.0001KB", "1e3KB", "abc", "", "MB", "1.5.5MB",
            "1.MB", ".5MB", "5 M B", "5MiB", "5B", "+5MB", "5MB5", "１MB", "5\tMB", "99999999999999999999999999999999999999999GB",
        ] {
            let e = parse_memory_quota(bad).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::InvalidInput, "{bad}");
            assert!(e.message.contains("512KB"), "message shows the accepted forms: {}", e.message);
        }
    }

    #[test]
    fn rejections_say_what_is_wrong() {
        for (bad, why) in [
            ("0", "must be more than 0"),
            ("0MB", "must be more than 0"),
            ("0.00 kb", "must be more than 0"),
            ("0.0001KB", "must be more than 0"),
            ("1e3MB", "is not a plain decimal number (no exponent)"),
            ("2E-1GB", "is not a plain decimal number (no exponent)"),
            ("100", "has no unit"),
            ("5MiB", "has an unknown unit"),
        ] {
            let e = parse_memory_quota(bad).unwrap_err();
            assert!(e.message.contains(&format!("{bad:?} {why};")), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn quotas_in_messages() {
        assert_eq!(describe_quota(50 * 1024 * 1024), "50MB (52428800 bytes)");
        assert_eq!(describe_quota(512), "0.5KB (512 bytes)");
        assert_eq!(describe_quota(MAX_QUOTA), "1024GB (1099511627776 bytes)");
        assert_eq!(describe_quota(1536 * 1024 * 1024), "1.5GB (1610612736 bytes)");
        assert_eq!(describe_quota(1000), "1000 bytes");
        assert_eq!(describe_quota(1), "1 byte");
        assert_eq!(describe_quota(2047), "2047 bytes");
        // Every form printed parses back to the same quota.
        for q in [512, 1024, 1536, 50 << 20, 3 << 29, MAX_QUOTA] {
            let text = unit_form(q).unwrap();
            assert_eq!(parse_memory_quota(&text).unwrap(), q, "{text}");
        }
    }

    #[test]
    fn numeric_quotas() {
        assert_eq!(check_quota_bytes(1.0).unwrap(), 1);
        for bad in [0.0, -1.0, 1.5, f64::NAN, (MAX_QUOTA + 1) as f64] {
            assert!(check_quota_bytes(bad).is_err(), "{bad}");
        }
    }
}
