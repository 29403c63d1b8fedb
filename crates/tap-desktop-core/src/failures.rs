//! Provider failures, as the engine reports them: warnings and errors it logs about
//! providers (a spawned provider process that exited or could not start, a provider
//! disconnected for malformed results, …). The engine has no failure event, so the app
//! listens to its log through this `tracing` layer. Pairing warnings (wrong code, rate
//! limit) are the pairing flow working, not failures, and are left out.

use std::fmt::Write as _;
use tokio::sync::mpsc::UnboundedSender;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// One failure, as a sentence for a notification (no secrets: the engine never logs them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderFailure(pub String);

/// Forwards provider failures to a channel.
pub struct FailureLayer {
    tx: UnboundedSender<ProviderFailure>,
}

impl FailureLayer {
    /// A layer sending each failure to `tx`.
    pub fn new(tx: UnboundedSender<ProviderFailure>) -> Self {
        Self { tx }
    }
}

/// Whether an event from `target` at `level` with `message` is a provider failure.
pub fn is_provider_failure(target: &str, level: Level, message: &str) -> bool {
    level <= Level::WARN
        && target.starts_with("tap_gateway::providers")
        && !message.contains("pairing")
}

#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            let _ = write!(self.rest, "{}{}: {value}", sep(&self.rest), field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            let _ = write!(self.rest, "{}{}: {value:?}", sep(&self.rest), field.name());
        }
    }
}

fn sep(s: &str) -> &'static str {
    if s.is_empty() {
        ""
    } else {
        ", "
    }
}

impl<S: Subscriber> Layer<S> for FailureLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if *meta.level() > Level::WARN || !meta.target().starts_with("tap_gateway::providers") {
            return;
        }
        let mut f = Fields::default();
        event.record(&mut f);
        if !is_provider_failure(meta.target(), *meta.level(), &f.message) {
            return;
        }
        let text = if f.rest.is_empty() {
            f.message
        } else {
            format!("{} ({})", f.message, f.rest)
        };
        let _ = self.tx.send(ProviderFailure(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    fn capture(emit: impl FnOnce()) -> Vec<ProviderFailure> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let subscriber = tracing_subscriber::registry().with(FailureLayer::new(tx));
        tracing::subscriber::with_default(subscriber, emit);
        let mut out = Vec::new();
        while let Ok(f) = rx.try_recv() {
            out.push(f);
        }
        out
    }

    #[test]
    fn provider_warnings_and_errors_are_failures_with_their_fields() {
        let got = capture(|| {
            tracing::warn!(target: "tap_gateway::providers::spawn", command = "node p.mjs", status = "exit status: 1", "provider process exited");
            tracing::error!(target: "tap_gateway::providers::spawn", command = "nope", error = "No such file", "cannot start provider process");
        });
        assert_eq!(
            got,
            vec![
                ProviderFailure(
                    "provider process exited (command: node p.mjs, status: exit status: 1)".into()
                ),
                ProviderFailure(
                    "cannot start provider process (command: nope, error: No such file)".into()
                ),
            ]
        );
    }

    #[test]
    fn pairing_warnings_other_modules_and_info_are_not_failures() {
        let got = capture(|| {
            tracing::warn!(target: "tap_gateway::providers::connection", remote = "127.0.0.1:5", "wrong pairing code");
            tracing::warn!(target: "tap_gateway::server", "connection refused: limit reached");
            tracing::info!(target: "tap_gateway::providers::spawn", "provider process started");
        });
        assert_eq!(got, vec![]);
        assert!(is_provider_failure(
            "tap_gateway::providers::connection",
            Level::ERROR,
            "malformed message with several calls pending; disconnecting provider"
        ));
    }
}
