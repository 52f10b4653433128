//! Wall-clock time for runs and gate facts, behind a trait so tests can fix it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of the current time in milliseconds since the epoch.
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> u64;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }
}

/// A fixed clock (tests).
#[derive(Clone, Copy, Debug)]
pub struct FixedClock(pub u64);

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.0
    }
}

/// `Date#toISOString()` of epoch milliseconds: `2026-11-30T08:54:20.866Z`.
/// Times past 9999-12-31T23:59:59.999Z (which RFC 3339 cannot write) are written as that.
pub fn iso(ms: u64) -> String {
    const LAST: u64 = 253_402_300_799_999;
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms.min(LAST))).to_string()
}

/// Epoch milliseconds of an ISO-8601 UTC timestamp.
pub fn parse_iso(s: &str) -> Option<u64> {
    let t = humantime::parse_rfc3339_weak(s.trim_end_matches('Z')).ok()?;
    t.duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        assert_eq!(iso(1_796_028_860_866), "2026-11-30T08:54:20.866Z");
        assert_eq!(
            parse_iso("2026-11-30T08:54:20.866Z"),
            Some(1_796_028_860_866)
        );
        assert_eq!(parse_iso("nonsense"), None);
        assert_eq!(iso(u64::MAX), "9999-12-31T23:59:59.999Z");
    }
}
