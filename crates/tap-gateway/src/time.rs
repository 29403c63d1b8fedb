use std::time::SystemTime;

/// RFC 3339 with milliseconds, UTC: `2026-04-26T14:01:00.123Z`.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}
