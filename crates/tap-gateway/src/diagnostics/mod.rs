//! Diagnostics (control method `diagnostics`, the panel's Diagnostics page): how many
//! `error`s went to providers by code, how often each limit was hit, the newest failures,
//! and every connection's state.
//!
//! The counters are fed from the few places errors leave and limits trip: the provider
//! connection's one error path (`Recorder::note_provider_error`), and a `limit_hit` call where each
//! limit is enforced. Connection states are read from the registry when asked, not
//! counted. Every change schedules a `diagnostics.changed` event, at most one per
//! `EVENT_INTERVAL`, so a flood of bad frames cannot flood the panel.

pub(crate) mod limit_hits;
pub(crate) mod recorder;
mod throttle;

pub(crate) use limit_hits::Limit;
pub(crate) use throttle::{Coalesced, Publish};
