//! The one logging setup of every process that hosts the engine (`tap gateway`, the
//! desktop app): the `TAP_LOG` filter ([`env_filter`]), a formatter on stderr (colours only
//! on a terminal) and the panel's log ring, in that order. The desktop app adds one layer of
//! its own after them ([`install_with`]).

use super::{env_filter, LogBuffer, LogLayer};
use std::io::IsTerminal;
use tracing_subscriber::fmt::format::{DefaultFields, Format};
use tracing_subscriber::layer::{Identity, Layered, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

type Filtered = Layered<EnvFilter, Registry>;
type StderrLayer =
    tracing_subscriber::fmt::Layer<Filtered, DefaultFields, Format, fn() -> std::io::Stderr>;

/// The subscriber [`install_with`] puts its extra layer on: the filter, stderr, the ring.
pub type Base = Layered<LogLayer, Layered<StderrLayer, Filtered>>;

/// Installs the process's `tracing` subscriber and returns the ring, for
/// [`crate::GatewayConfig::logs`]. Call once, before anything logs.
pub fn install() -> LogBuffer {
    install_with(Identity::new())
}

/// [`install`], with `extra` added after the ring.
pub fn install_with<L: Layer<Base> + Send + Sync + 'static>(extra: L) -> LogBuffer {
    let (subscriber, logs) = subscriber(extra);
    subscriber.init();
    logs
}

fn subscriber<L: Layer<Base>>(extra: L) -> (Layered<L, Base>, LogBuffer) {
    let logs = LogBuffer::new(LogBuffer::DEFAULT_CAPACITY);
    let stderr: fn() -> std::io::Stderr = std::io::stderr;
    let subscriber = tracing_subscriber::registry()
        .with(env_filter())
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(stderr)
                .with_ansi(std::io::stderr().is_terminal()),
        )
        .with(logs.layer())
        .with(extra);
    (subscriber, logs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Count(Arc<AtomicUsize>);

    impl<S: tracing::Subscriber> Layer<S> for Count {
        fn on_event(&self, _: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn records_reach_the_ring_and_the_extra_layer() {
        let seen = Arc::new(AtomicUsize::new(0));
        let (subscriber, logs) = subscriber(Count(seen.clone()));
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "tap_gateway::test", "install test record");
        });
        let recent = logs.recent(None, None);
        assert_eq!(recent.len(), 1);
        assert_eq!(recent[0].message, "install test record");
        assert_eq!(seen.load(Ordering::SeqCst), 1);
    }
}
