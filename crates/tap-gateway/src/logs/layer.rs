//! The `tracing` layer that formats records into a [`LogBuffer`].

use super::redact::redact;
use super::LogBuffer;
use std::fmt::{self, Write};
use tap_protocol::logs::{LogField, LogLevel};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::Layer;

/// Fills a [`LogBuffer`] with every `debug`-or-more-severe event the subscriber lets
/// through. It filters nothing for other layers: trace records are only skipped here.
pub struct LogLayer {
    buffer: LogBuffer,
}

impl LogLayer {
    pub(super) fn new(buffer: LogBuffer) -> Self {
        Self { buffer }
    }
}

impl<S: Subscriber> Layer<S> for LogLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        let level = match *meta.level() {
            Level::ERROR => LogLevel::Error,
            Level::WARN => LogLevel::Warn,
            Level::INFO => LogLevel::Info,
            Level::DEBUG => LogLevel::Debug,
            // Trace records of the WebSocket stack carry whole frames (tokens, codes).
            _ => return,
        };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let target = fields.log_target.as_deref().unwrap_or(meta.target());
        self.buffer
            .push(level, target, fields.message, fields.fields);
    }
}

#[derive(Default)]
struct Fields {
    message: String,
    fields: Vec<LogField>,
    /// A record bridged from the `log` crate (tungstenite logs that way) comes with the
    /// target `log` and its real one in this field.
    log_target: Option<String>,
}

impl Fields {
    fn add(&mut self, field: &Field, value: &str) {
        let value = redact(value).into_owned();
        match field.name() {
            "message" => self.message = value,
            "log.target" => self.log_target = Some(value),
            // The rest of a bridged record's call site; the target says enough.
            name if name.starts_with("log.") => {}
            name => self.fields.push(LogField {
                name: name.to_string(),
                value,
            }),
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.add(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        // `provider = ?id` of an `Option<String>` reads `Some("p-1")`; the panel shows `p-1`.
        let shown = text
            .strip_prefix("Some(\"")
            .and_then(|t| t.strip_suffix("\")"))
            .filter(|t| !t.contains('"'))
            .unwrap_or(&text);
        self.add(field, shown);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn records_keep_fields_in_order_unwrap_options_and_mask_secrets() {
        let buffer = LogBuffer::new(10);
        let subscriber = tracing_subscriber::registry().with(buffer.layer());
        tracing::subscriber::with_default(subscriber, || {
            let id = Some("p-1".to_string());
            let none: Option<String> = None;
            let token = "ptk-3q2Zk9vXbL0aYwR7mN5tJ8cF1hG4dS6eU2iO0pK_-xQ";
            tracing::info!(provider = ?id, other = ?none, count = 3, "hello {token}");
            tracing::trace!("never kept");
        });
        let records = buffer.recent(None, None);
        assert_eq!(records.len(), 1);
        let r = &records[0];
        assert_eq!(r.level, LogLevel::Info);
        assert_eq!(r.message, "hello ptk-<redacted>");
        let fields: Vec<(&str, &str)> = r
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.value.as_str()))
            .collect();
        assert_eq!(
            fields,
            [("provider", "p-1"), ("other", "None"), ("count", "3")]
        );
        assert!(r.target.ends_with("logs::layer::tests"), "{}", r.target);
    }
}
