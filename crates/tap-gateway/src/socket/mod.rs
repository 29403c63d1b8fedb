//! The one connection type: accepting a WebSocket within its kind's slot limit
//! (`accept`), the handshake and frame limits (`upgrade`), the pre-auth byte budget
//! (`metered`), the slots and who gives one up at the limit (`slots`), how fast new
//! connections are taken while some never authenticate (`pacing`), frames (`frame`), the
//! bounded outbound queue (`outbound`), and the connection loop every protocol handler
//! runs on (`conn`).

pub(crate) mod conn;
pub(crate) mod frame;
pub(crate) mod kind;
pub(crate) mod metered;
pub(crate) mod outbound;
pub(crate) mod pacing;
pub(crate) mod slots;
pub(crate) mod upgrade;
