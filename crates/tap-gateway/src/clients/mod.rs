//! What clients see (`docs/clients.md`): every tool the gateway offers, what its
//! definition costs in a client's context (`context_cost.rs`: tokens and bytes), and what
//! each profile lets through (`offered_tools.rs`). The profiles themselves are `profiles/`.

pub(crate) mod context_cost;
pub(crate) mod offered_tools;
