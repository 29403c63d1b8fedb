//! The kinds of connection. Kept apart from `accept` (their slot pools, which need the
//! gateway's state) so the outbound queue, which the state holds, can name them.

/// The kinds of connection, each with its own slot pool, limit and outbound gauge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Provider,
    Host,
    Control,
}

impl Kind {
    /// For logs and refusals.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Provider => "provider",
            Kind::Host => "session-host",
            Kind::Control => "control",
        }
    }
}
