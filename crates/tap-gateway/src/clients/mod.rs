//! What clients see (`docs/clients.md`): every tool the gateway offers, what its
//! definition costs in a client's context (`context_cost.rs`: tokens and bytes), and what
//! each profile lets through (`offered_tools.rs`). The profiles themselves are `profiles/`.
//! The `tap` entry in each MCP client's own file, as the panel's Clients page connects and
//! disconnects it (`client_files.rs`), and each client's recent sessions
//! (`client_sessions.rs`).

pub(crate) mod client_files;
pub(crate) mod client_sessions;
pub(crate) mod context_cost;
pub(crate) mod offered_tools;
