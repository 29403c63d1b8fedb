//! EventStreams: the newest events each provider pushed, per session and stream, and the
//! filters and push budgets applied before a push is stored (`filter`, `budget`).

mod budget;
mod filter;
mod store;

pub(crate) use budget::StreamControls;
pub(crate) use filter::set as set_filter;
pub(crate) use store::{Stored, StreamStore};
