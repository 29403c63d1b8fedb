//! Provider connections (TAP Provider Interface v2 over WebSocket): the per-connection
//! state machine (`connection/`), the registry entry other parts of the gateway see
//! (`entry`, `link`, `binding`), identities and validation, and provider processes.

pub(crate) mod acks;
pub(crate) mod reconnect;
pub(crate) mod registry;
pub(crate) mod spawned;
pub(crate) mod validate;
