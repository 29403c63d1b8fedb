//! Pairing of external providers (spec: "External providers"): a browser tab or a script
//! that holds no token asks with `auth {mode: "pair"}`, the user reads a 6-digit code from
//! the gateway's own surfaces (tray, panel, `tap pairing list`) and types it into the
//! provider, which sends it back in `auth.confirm`. The code never travels over the
//! provider's socket. A confirmed provider gets an `ext-…` token (trust "external") that
//! works until it is revoked or the gateway stops, or, if the user chose to remember it,
//! across restarts (only its SHA-256 hash is stored).
//!
//! - `registry`: pending requests and paired providers. It lives in the gateway's
//!   [`State`], so pairing decisions and the provider registry change under one lock:
//!   a revoke cannot miss a connection that is authenticating at the same moment.
//! - `store`: `$TAP_HOME/paired-providers.json`, the remembered pairings.
//! - `api`: what the control plane calls (list, deny, revoke, configure).
//! - `provider`: the provider-side steps the connection task calls.
//! - `scope`: which sessions a paired provider may see and bind to.
//!
//! Session scope: an external provider may bind to one session, its pairing's `session`.
//! By default that is the foreground session when the code is confirmed. When that
//! session is gone (ended, or after a gateway restart) the provider may bind to whatever
//! session is in the foreground at its next `hello`, and is pinned there again.

pub(crate) mod api;
pub(crate) mod external_trust;
pub(crate) mod scope;
