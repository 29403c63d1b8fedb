//! The MCP facade: any MCP client is a session of this gateway (`docs/mcp.md`).
//!
//! `http`: the `/mcp/<session>` endpoint (auth, `Origin`), Streamable HTTP through rmcp (a
//! plain `tools/call` answered by the endpoint itself: `fast` for the stateless generation,
//! `fast_session` for a session of the `initialize` one, listed in `sessions`) or a WebSocket for
//! `tap mcp` (`ws`). `handler`: the MCP server over one `binding`, the
//! gateway session the client named, joined or registered by `attach`, watched by `watch`
//! for changes that `notify` (or `subscriptions/listen`) passes on, ended by `ending`. `tools`,
//! `calls`, `content`, `resources` and `prompts` answer the requests (the gateway's own
//! `tap_*` tools are in the session's tool set: `crate::builtin`).

mod asks;
pub(crate) mod attach;
mod calls;
mod content;
mod cors;
mod ending;
mod errors;
mod fast;
mod fast_session;
mod handler;
pub(crate) mod http;
mod notify;
mod prompts;
mod resources;
mod server_items;
mod sessions;
pub(crate) mod skills;
mod tools;
mod watch;
mod ws;
