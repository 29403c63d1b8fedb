//! Regular expressions that peers and users hand the gateway (hook rules' `match.args`,
//! stream filters, emitter event filters): compiled with bounded size, and refused when
//! their matching cost could blow up (`cost`).

pub(crate) mod cost;
pub(crate) mod rules;
