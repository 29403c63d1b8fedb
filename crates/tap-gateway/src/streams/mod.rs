//! EventStreams: the newest events each provider pushed, per session and stream, and the
//! filters and push budgets applied before a push is stored (`filter`, `budget`), and the
//! live tail of what is stored (`tail`, for `streams.follow`).

pub(crate) mod budget;
pub(crate) mod filter;
pub(crate) mod store;
pub(crate) mod tail;
