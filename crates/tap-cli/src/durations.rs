//! Durations and times as the history commands take and show them: `--since 10m`,
//! `--min-duration 250ms` in (humantime's syntax), microsecond times out.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses `10m`, `2h`, `3d`, `250ms`, `1h 30m` (humantime's syntax); for clap.
pub fn parse(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim())
        .map_err(|e| format!("{e} (expected a duration such as 250ms, 10m, 2h, 3d)"))
}

/// A duration in whole microseconds, saturating.
pub fn micros(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

/// The time `ago` before now, in microseconds since the Unix epoch (0 for a time before it).
pub fn since_us(ago: Duration) -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    micros(now.saturating_sub(ago))
}

/// A time in microseconds since the Unix epoch as RFC 3339 UTC with milliseconds.
pub fn time_us(us: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_micros(us)).to_string()
}

/// A span's length, short: `850µs`, `12.3ms`, `1.24s`, `2m05s`, `1h02m`.
pub fn format_us(us: u64) -> String {
    match us {
        0..1_000 => format!("{us}µs"),
        1_000..10_000 => format!("{:.2}ms", us as f64 / 1e3),
        10_000..1_000_000 => format!("{:.1}ms", us as f64 / 1e3),
        1_000_000..60_000_000 => format!("{:.2}s", us as f64 / 1e6),
        _ => {
            let secs = us / 1_000_000;
            if secs < 3600 {
                format!("{}m{:02}s", secs / 60, secs % 60)
            } else {
                format!("{}h{:02}m", secs / 3600, secs % 3600 / 60)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_units() {
        assert_eq!(parse("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse("3d"), Ok(Duration::from_secs(3 * 86400)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("1h 30m"), Ok(Duration::from_secs(5400)));
    }

    #[test]
    fn refuses_a_number_without_unit_and_says_what_it_wants() {
        let e = parse("10").unwrap_err();
        assert!(e.contains("10m"), "{e}");
        assert!(parse("soon").is_err());
    }

    #[test]
    fn formats_each_magnitude_briefly() {
        assert_eq!(format_us(0), "0µs");
        assert_eq!(format_us(850), "850µs");
        assert_eq!(format_us(1_234), "1.23ms");
        assert_eq!(format_us(12_345), "12.3ms");
        assert_eq!(format_us(1_240_000), "1.24s");
        assert_eq!(format_us(125_000_000), "2m05s");
        assert_eq!(format_us(3_720_000_000), "1h02m");
    }

    #[test]
    fn times_are_utc_with_milliseconds() {
        assert_eq!(time_us(1_500_000), "1970-01-01T00:00:01.500Z");
    }

    #[test]
    fn since_is_in_the_past_and_never_before_the_epoch() {
        let now = since_us(Duration::ZERO);
        assert!(since_us(Duration::from_secs(60)) <= now - 59_000_000);
        assert_eq!(since_us(Duration::from_secs(u64::MAX / 2)), 0);
    }
}
