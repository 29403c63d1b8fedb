//! MCP servers as providers (`docs/mcp-servers.md`): the servers in the user's
//! `$TAP_HOME/mcp.json` and in a workspace's `tap.config.json` (`mcpServers`), each run
//! (a stdio child process) or reached (Streamable HTTP) by the gateway and offered to
//! sessions as an in-process provider, so hooks, gates, concurrency, timeouts, traces and
//! the panel apply to their tools as to any provider's.
//!
//! - `config.rs`: the `mcpServers` shape, read and checked entry by entry.
//! - `hub.rs`: which servers run: the user's at start and on reload, a session's project
//!   servers while it lives.
//! - `supervise.rs`: one server's life (start, restart with backoff, park, stop).
//! - `connect.rs`, `client.rs`: reaching a server and the gateway's side of MCP;
//!   `legacy_sse.rs`: the 2024-11-05 HTTP+SSE transport (`"type": "sse"`).
//! - `secrets.rs`: `${secret:NAME}` in env and header values, put in at each start.
//! - `streamable.rs`: a Streamable HTTP server's transport, with its OAuth sign-in;
//!   `remote_auth.rs`: signing in and out, and what the list says about it (`oauth/`
//!   does the protocol).
//! - `bridge.rs`, `catalog.rs`, `naming.rs`: a run as a provider: its tools and names;
//!   `server_calls.rs`: its calls, progress, cancellation; `registration.rs`: the provider that carries them,
//!   kept while a lazy or idle server's process is stopped; `tool_cache.rs`: the tools
//!   each server offered last.
//! - `server.rs`: what `mcpServers.list` shows; `life_spans.rs`: its life in the ledger.

// MCP's newest revision (SEP-2577) deprecates roots and logging; the servers users run
// today speak the 2025-11-25 generation, which has both, so the gateway still answers them.
#[allow(deprecated)]
mod bridge;
mod catalog;
#[allow(deprecated)]
mod client;
pub mod config;
mod connect;
mod hub;
mod in_flight;
mod legacy_sse;
mod life_spans;
mod line_limit;
mod naming;
mod ordered_progress;
mod peers;
mod registration;
mod remote_auth;
pub mod secrets;
mod server;
mod server_calls;
mod streamable;
mod supervise;
mod tool_cache;

pub(crate) use hub::McpHub;
