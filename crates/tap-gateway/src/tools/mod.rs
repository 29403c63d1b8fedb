//! Tool dispatch: the in-process call path that every session host uses, and the table of
//! calls in flight on each provider connection.

pub(crate) mod call;
pub(crate) mod concurrency;
pub(crate) mod file_result;
mod table;

pub use call::{CallError, CallRequest};
pub(crate) use table::{CallTable, PendingCall};
