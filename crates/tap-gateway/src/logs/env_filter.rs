use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::EnvFilter;

/// The log filter of a process hosting the engine (`tap gateway`, the desktop app):
/// `TAP_LOG` (an `EnvFilter` directive list), default `info`.
///
/// tungstenite traces every frame's payload, and frames carry tokens and login links:
/// never below debug, whatever `TAP_LOG` says. The cap is added only when the filter
/// would allow trace; as a directive it would otherwise raise tungstenite to debug under
/// `info` (or to info under `warn`).
pub fn env_filter() -> EnvFilter {
    let filter = EnvFilter::try_from_env("TAP_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    cap_tungstenite(filter)
}

fn cap_tungstenite(filter: EnvFilter) -> EnvFilter {
    if filter
        .max_level_hint()
        .is_none_or(|l| l > LevelFilter::DEBUG)
    {
        filter.add_directive("tungstenite=debug".parse().expect("a valid directive"))
    } else {
        filter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_is_capped_for_tungstenite_and_quieter_filters_are_left_alone() {
        let capped = cap_tungstenite(EnvFilter::new("trace")).to_string();
        assert!(capped.contains("tungstenite=debug"), "{capped}");
        for quiet in ["info", "warn", "debug"] {
            let f = cap_tungstenite(EnvFilter::new(quiet)).to_string();
            assert!(!f.contains("tungstenite"), "{quiet}: {f}");
        }
    }
}
