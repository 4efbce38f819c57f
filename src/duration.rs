//! Durations that users give in milliseconds (config `timeout`, `ctx.timeout`, store
//! options), read in one place: any number becomes a usable `Duration` or is refused, so
//! no clock downstream can overflow or panic on it.

use std::time::Duration;

use tokio::time::Instant;

/// The longest duration toolnexus keeps: one year. Larger values (`1e300`, `Infinity`) mean
/// "no practical limit" and are clamped to it, which keeps every deadline representable.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// `ms` milliseconds, clamped to [`MAX_DURATION`]; `None` for NaN and negative numbers.
/// Whether zero is allowed is the caller's to decide.
pub fn from_millis(ms: f64) -> Option<Duration> {
    if ms.is_nan() || ms < 0.0 {
        return None;
    }
    let max_ms = MAX_DURATION.as_millis() as f64;
    Some(if ms >= max_ms {
        MAX_DURATION
    } else {
        Duration::from_secs_f64(ms / 1000.0)
    })
}

/// `now + duration`, or the furthest deadline a clock can hold when that overflows.
pub fn deadline_after(now: Instant, duration: Duration) -> Instant {
    now.checked_add(duration)
        .or_else(|| now.checked_add(MAX_DURATION))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_numbers_become_durations() {
        assert_eq!(from_millis(0.0), Some(Duration::ZERO));
        assert_eq!(from_millis(1500.0), Some(Duration::from_millis(1500)));
        assert_eq!(from_millis(0.5), Some(Duration::from_micros(500)));
    }

    #[test]
    fn huge_numbers_are_clamped() {
        for ms in [1e22, 1e30, 1e300, f64::MAX, f64::INFINITY] {
            assert_eq!(from_millis(ms), Some(MAX_DURATION), "{ms}");
        }
    }

    #[test]
    fn unusable_numbers_are_refused() {
        for ms in [-1.0, -0.5, f64::NEG_INFINITY, f64::NAN] {
            assert_eq!(from_millis(ms), None, "{ms}");
        }
    }

    #[test]
    fn deadlines_never_overflow() {
        let now = Instant::now();
        assert_eq!(
            deadline_after(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
        assert_eq!(deadline_after(now, Duration::MAX), now + MAX_DURATION);
    }
}
