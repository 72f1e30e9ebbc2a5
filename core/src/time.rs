//! Times: milliseconds since the epoch inside, RFC 3339 with exactly millisecond precision
//! and a `Z` suffix outside (R-ENT, R-RET-1).

use crate::error::{MemoryError, Result};
use chrono::{DateTime, Utc};

pub const MS_PER_DAY: i64 = 86_400_000;
/// 9999-12-31T23:59:59.999Z: the last instant RFC 3339 can write with four year digits.
pub const MAX_MS: i64 = 253_402_300_799_999;

/// How far past its own clock reading a restore or an import takes a stored time (R-ENT-4):
/// clocks of two machines, or one stepped back, differ by seconds, not days. Every later write
/// stores at least the latest stored time, so a time further ahead would stamp every write
/// after it with a time its clock has not reached.
pub const FUTURE_SLACK_MS: i64 = MS_PER_DAY;

/// What is wrong with a stored time `ms` brought in by a restore or an import at `now`: later
/// than `now` plus `FUTURE_SLACK_MS`.
pub fn check_not_future(ms: i64, now: i64) -> std::result::Result<(), String> {
    if ms > now.saturating_add(FUTURE_SLACK_MS) {
        return Err(format!(
            "{} is in the future: later than this clock's {} by more than a day, which would stamp every later write with it",
            format_ms(ms),
            format_ms(now)
        ));
    }
    Ok(())
}

/// The system clock in milliseconds since the epoch.
pub fn system_now() -> i64 {
    Utc::now().timestamp_millis()
}

/// A call's time: the test clock's reading, or the system clock's, read the first time the call
/// needs it (a read that finds nothing to judge by time never reads it) and the same for the
/// rest of the call. A changing call takes the system clock again once it holds the agent's
/// write lock (`under_lock`, R-ENT-4): a reading taken before waiting for the lock is old.
#[derive(Debug)]
pub struct CallTime {
    ms: std::cell::Cell<Option<i64>>,
    /// A test clock's reading, given: never read again.
    fixed: bool,
}

impl CallTime {
    /// The system clock's time, when first asked for.
    pub fn system() -> CallTime {
        CallTime { ms: std::cell::Cell::new(None), fixed: false }
    }

    /// The test clock's reading, if one was given; `None` for the system clock (a binding with
    /// a clock of its own, PostgreSQL's, then takes that one, R-BIND-5).
    pub fn given(&self) -> Option<i64> {
        if self.fixed { self.ms.get() } else { None }
    }

    pub fn ms(&self) -> i64 {
        match self.ms.get() {
            Some(ms) => ms,
            None => {
                let ms = system_now();
                self.ms.set(Some(ms));
                ms
            }
        }
    }

    /// The time once the write lock is held: the system clock read now (and kept for the rest
    /// of the call), or the test clock's reading as given.
    pub fn under_lock(&self) -> i64 {
        if !self.fixed {
            self.ms.set(Some(system_now()));
        }
        self.ms()
    }
}

impl From<i64> for CallTime {
    fn from(ms: i64) -> CallTime {
        CallTime { ms: std::cell::Cell::new(Some(ms)), fixed: true }
    }
}

impl From<&CallTime> for CallTime {
    fn from(t: &CallTime) -> CallTime {
        CallTime { ms: std::cell::Cell::new(t.ms.get()), fixed: t.fixed }
    }
}

/// Checks a clock reading (the `now` test clock may return anything).
pub fn check_now(ms: f64) -> Result<i64> {
    if !ms.is_finite() || ms.fract() != 0.0 || ms < 0.0 || ms > MAX_MS as f64 {
        return Err(MemoryError::invalid(format!(
            "now() returned {ms}; it must return whole milliseconds since 1970-01-01T00:00:00Z, up to year 9999"
        )));
    }
    Ok(ms as i64)
}

/// `2026-11-30T01:38:19.123Z`, for 0 ≤ `ms` ≤ `MAX_MS` (the clock check keeps times there).
/// Written by hand: it runs for every entry returned, and this is several times faster than a
/// general-purpose formatter.
pub fn format_ms(ms: i64) -> String {
    let ms = ms.clamp(0, MAX_MS);
    let (days, ms_of_day) = (ms / MS_PER_DAY, ms % MS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let (h, min, sec, milli) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60, ms_of_day / 1000 % 60, ms_of_day % 1000);
    let mut out = [0u8; 24];
    let mut put = |at: usize, value: i64, width: usize| {
        let mut v = value;
        for i in (0..width).rev() {
            out[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, y, 4);
    put(5, m, 2);
    put(8, d, 2);
    put(11, h, 2);
    put(14, min, 2);
    put(17, sec, 2);
    put(20, milli, 3);
    for (at, c) in [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':'), (19, b'.'), (23, b'Z')] {
        out[at] = c;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// (year, month, day) of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Parses an RFC 3339 time with any offset and fraction into milliseconds, rounding a
/// sub-millisecond fraction up: stored times are whole milliseconds, so `t >= x` and `t < x`
/// mean the same for the rounded `x` as for the exact one.
pub fn parse_rfc3339_ceil_ms(field: &str, text: &str) -> Result<i64> {
    let t = DateTime::parse_from_rfc3339(text).map_err(|_| {
        MemoryError::invalid(format!(
            "filter.{field} {text:?} is not an RFC 3339 time; write it like 2026-11-30T01:38:19.123Z"
        ))
    })?;
    // chrono keeps nanoseconds and drops further digits, so the fraction is read from the text.
    Ok(if has_sub_ms_fraction(text) { t.timestamp_millis() + 1 } else { t.timestamp_millis() })
}

/// Whether the fraction of a valid RFC 3339 time has a non-zero digit past the milliseconds
/// (the only `.` of such a time starts its fraction).
fn has_sub_ms_fraction(text: &str) -> bool {
    text.split_once('.').is_some_and(|(_, rest)| {
        rest.bytes().take_while(u8::is_ascii_digit).skip(3).any(|d| d != b'0')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_exact_milliseconds_with_z() {
        // R-ENT createdAt/updatedAt shape
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_ms(1_796_002_699_123), "2026-11-30T01:38:19.123Z");
        assert_eq!(format_ms(MAX_MS), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn formatting_agrees_with_chrono_everywhere() {
        use chrono::SecondsFormat;
        let mut ms = 0i64;
        while ms <= MAX_MS {
            let expected = DateTime::<Utc>::from_timestamp_millis(ms).unwrap().to_rfc3339_opts(SecondsFormat::Millis, true);
            assert_eq!(format_ms(ms), expected, "{ms}");
            // An irregular stride visits leap days, month ends and every field's range.
            ms += 86_399_999 * 13 + 7_777;
        }
        for ms in [951_782_400_000, 951_868_799_999, 4_107_542_399_999, MAX_MS] {
            let expected = DateTime::<Utc>::from_timestamp_millis(ms).unwrap().to_rfc3339_opts(SecondsFormat::Millis, true);
            assert_eq!(format_ms(ms), expected);
        }
    }

    #[test]
    fn parses_offsets_and_rounds_fractions_up() {
        assert_eq!(parse_rfc3339_ceil_ms("since", "1970-01-01T00:00:00.001Z").unwrap(), 1);
        assert_eq!(parse_rfc3339_ceil_ms("since", "1970-01-01T01:00:00+01:00").unwrap(), 0);
        assert_eq!(parse_rfc3339_ceil_ms("since", "1970-01-01T00:00:00.0001Z").unwrap(), 1);
        assert_eq!(parse_rfc3339_ceil_ms("since", "1970-01-01T00:00:00.002000Z").unwrap(), 2);
        // Digits past the nanoseconds count too: any non-zero one rounds up.
        assert_eq!(parse_rfc3339_ceil_ms("since", "1970-01-01T00:00:01.0000000001Z").unwrap(), 1001);
        assert_eq!(parse_rfc3339_ceil_ms("since", "1970-01-01T00:00:01.000000000000000000000007+00:00").unwrap(), 1001);
        assert_eq!(parse_rfc3339_ceil_ms("since", "1970-01-01T00:00:01.0010000000000Z").unwrap(), 1001);
        assert_eq!(parse_rfc3339_ceil_ms("since", "1970-01-01T00:00:01.0019999999999Z").unwrap(), 1002);
        assert_eq!(parse_rfc3339_ceil_ms("until", "1969-12-31T23:59:59.9990000001Z").unwrap(), 0);
        for bad in ["", "yesterday", "2026-11-30", "2026-13-01T00:00:00Z", "2026-11-30T00:00:00"] {
            let e = parse_rfc3339_ceil_ms("until", bad).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::InvalidInput, "{bad}");
            assert!(e.message.contains("filter.until"));
        }
    }

    #[test]
    fn the_system_clock_is_read_again_under_the_lock_and_a_test_clock_never() {
        // R-ENT-4: a reading taken before the lock is replaced by one taken under it.
        let t = CallTime::system();
        t.ms.set(Some(5));
        assert_eq!(t.ms(), 5);
        let locked = t.under_lock();
        assert!(locked > 1_700_000_000_000, "{locked}");
        assert_eq!(t.ms(), locked, "kept for the rest of the call");
        let fixed = CallTime::from(42);
        assert_eq!(fixed.under_lock(), 42);
        assert_eq!(CallTime::from(&fixed).under_lock(), 42);
    }

    #[test]
    fn clock_readings_are_checked() {
        assert_eq!(check_now(5.0).unwrap(), 5);
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1.5, (MAX_MS + 1) as f64] {
            assert!(check_now(bad).is_err(), "{bad}");
        }
    }
}
