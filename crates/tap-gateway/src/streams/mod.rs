//! EventStreams: the newest events each provider pushed, per session and stream.

mod store;

pub(crate) use store::{Stored, StreamStore};
