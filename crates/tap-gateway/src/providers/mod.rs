//! Provider connections (TAP Provider Interface v2 over WebSocket): the per-connection
//! state machine (`connection/`), the registry entry other parts of the gateway see
//! (`entry`, `link`, `binding`), identities and validation, and provider processes.

pub(crate) mod acks;
pub(crate) mod activity;
pub(crate) mod binding;
pub(crate) mod connection;
pub(crate) mod entry;
pub(crate) mod identity;
pub(crate) mod link;
pub(crate) mod local;
pub(crate) mod processes;
pub(crate) mod project;
pub(crate) mod reconnect;
pub(crate) mod registry;
pub(crate) mod spawn;
pub(crate) mod validate;
