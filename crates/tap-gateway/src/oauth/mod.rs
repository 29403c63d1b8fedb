//! Signing in to remote MCP servers (OAuth 2.1, as the MCP authorization spec describes
//! it; `docs/mcp-servers.md`, "Remote servers and sign-in"). rmcp's `auth` does the
//! protocol; this room keeps what the gateway adds around it:
//!
//! - `vault.rs`: the tokens, per server URL, in the OS keyring or the 0600 secrets file,
//!   cached in memory (rmcp reads them before every request);
//! - `challenge.rs`: a server's `401`/`403` found in rmcp's errors;
//! - `sign_in.rs`: started sign-ins waiting for the browser, and the callback that ends
//!   them (state single use, PKCE, bounded in number and time);
//! - `sign_out.rs`: revocation (RFC 7009) and forgetting;
//! - `client_spec.rs`: the server's `"oauth"` entry (pre-registered client, scopes, CIMD).
//!
//! It knows nothing of servers' lives: `mcp_servers` asks it, and the HTTP router hands it
//! the callback through the façade.

pub(crate) mod challenge;
pub mod client_spec;
pub(crate) mod sign_in;
pub(crate) mod sign_out;
pub(crate) mod vault;

pub use client_spec::ClientSpec;
pub use sign_in::{Callback, CALLBACK_PATH};
