//! The gateway's own limits: counts, sizes and rates that bound what one session, provider
//! or user can make the engine hold. Wire limits (what a peer may send) are in
//! [`tap_protocol::limits`]; these are the engine's, in one place, each enforced where it is
//! used and listed in `docs/configuration.md` ("Limits").

/// Emitters one session may have at once.
pub(crate) const MAX_EMITTERS_PER_SESSION: usize = 32;
