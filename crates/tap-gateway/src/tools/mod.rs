//! Tool dispatch: the in-process call path every session host uses (`call`: route, approval,
//! slot, dispatch), the approval of each call (`approval`: `crate::approvals` decides, the
//! call waits for the user when asked), routing from a session's tool map (`route`), concurrency limits, the table
//! of calls in flight on each provider connection, file results, progress handed on ahead
//! of a call's outcome (`progress`), and the wait for room in the ledger (`ledger_backpressure`).

mod approval;
pub(crate) mod call;
pub(crate) mod concurrency;
pub(crate) mod file_result;
mod ledger_backpressure;
pub(crate) mod list_instances;
pub(crate) mod progress;
pub(crate) mod route;
pub(crate) mod traced;
