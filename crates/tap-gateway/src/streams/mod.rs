//! EventStreams: the newest events each provider pushed, per session and stream, and the
//! filters and push budgets applied before a push is stored (`filter`, `budget`), and the
//! live tail of what is stored (`tail`, for `streams.follow`).

mod budget;
mod filter;
mod store;
mod tail;

pub(crate) use budget::StreamControls;
pub(crate) use filter::set as set_filter;
pub(crate) use store::{Stored, StreamStore};
pub(crate) use tail::{TailEntry, TailReceiver};
