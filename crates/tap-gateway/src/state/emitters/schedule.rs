//! `every`: when an emitter runs. `30s`, `5m`, `2h`, `1d`, also `30 sec`, `5 minutes`,
//! `every 5m`; `idle` (prompts only); absent: a command runs continuously, a prompt once.

use crate::error::Error;
use crate::limits::MIN_EMITTER_EVERY;
use std::time::Duration;
use tap_protocol::emitters::{EmitterKind, Schedule};
use tap_protocol::ErrorCode;

/// Parses `every` for an emitter of `kind`: its schedule and, for a timed one, the interval.
pub(crate) fn parse(
    every: Option<&str>,
    kind: EmitterKind,
) -> Result<(Schedule, Option<Duration>), Error> {
    let Some(raw) = every.map(str::trim).filter(|e| !e.is_empty()) else {
        return Ok(match kind {
            EmitterKind::Command => (Schedule::Continuous, None),
            EmitterKind::Prompt => (Schedule::OneTime, None),
        });
    };
    let text = raw.to_ascii_lowercase();
    let text = text
        .strip_prefix("every")
        .map_or(text.as_str(), str::trim_start);
    if text == "idle" {
        return match kind {
            EmitterKind::Prompt => Ok((Schedule::Idle, None)),
            EmitterKind::Command => Err(Error::new(ErrorCode::InvalidJson, "'every: idle' is for prompts; a command runs continuously (no 'every') or on an interval")),
        };
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| {
        Error::new(
            ErrorCode::InvalidJson,
            format!("'every' must be like 30s, 5m, 2h, 1d or idle, not '{raw}'"),
        )
    })?;
    let unit_secs = match unit.trim() {
        "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86_400,
        _ => {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                format!("'every' must be like 30s, 5m, 2h, 1d or idle, not '{raw}'"),
            ))
        }
    };
    let every = Duration::from_secs(n.saturating_mul(unit_secs));
    if every < MIN_EMITTER_EVERY {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            format!("'every' must be at least {} s", MIN_EMITTER_EVERY.as_secs()),
        ));
    }
    Ok((Schedule::Timed, Some(every)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use EmitterKind::{Command, Prompt};

    #[test]
    fn the_forms_the_reference_accepts() {
        for (text, secs) in [
            ("30s", 30),
            ("30 sec", 30),
            ("every 5m", 300),
            ("2h", 7200),
            ("1d", 86_400),
            ("5 minutes", 300),
            ("Every 10S", 10),
        ] {
            assert_eq!(
                parse(Some(text), Command).unwrap(),
                (Schedule::Timed, Some(Duration::from_secs(secs))),
                "{text}"
            );
        }
        assert_eq!(parse(None, Command).unwrap(), (Schedule::Continuous, None));
        assert_eq!(parse(None, Prompt).unwrap(), (Schedule::OneTime, None));
        assert_eq!(parse(Some("idle"), Prompt).unwrap(), (Schedule::Idle, None));
    }

    #[test]
    fn what_is_refused() {
        for bad in ["soon", "5 weeks", "0s", "m5", "-3s"] {
            assert!(parse(Some(bad), Command).is_err(), "{bad}");
        }
        assert!(parse(Some("idle"), Command)
            .unwrap_err()
            .message
            .contains("prompts"));
    }
}
