//! Tool dispatch: the in-process call path every session host uses (`call`: route, slot,
//! dispatch), routing from a session's tool map (`route`), concurrency limits, the table
//! of calls in flight on each provider connection, file results, and progress handed on
//! ahead of a call's outcome (`progress`).

pub(crate) mod call;
pub(crate) mod concurrency;
pub(crate) mod file_result;
pub(crate) mod limits;
pub(crate) mod list_instances;
pub(crate) mod progress;
pub(crate) mod request;
pub(crate) mod route;
pub(crate) mod schema;
pub(crate) mod table;
pub(crate) mod traced;
