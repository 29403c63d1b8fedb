//! Profiles: the tool set a client's sessions see (`docs/clients.md`, "Profiles"). A
//! session opened with a profile (`tap mcp --profile NAME`, the HTTP endpoint's
//! `tap-profile` header, `session.register`'s `profile`) holds only the tools the profile
//! lets through: the others are never listed and a call to one is refused, on every path,
//! because every path routes through the session's tool map.
//!
//! - `file.rs`: `$TAP_HOME/profiles.json`, read and checked;
//! - `profile.rs`: what one profile sees;
//! - `glob.rs`: tool-name globs.

pub(crate) mod file;
pub(crate) mod glob;
mod profile;

pub(crate) use profile::{Profile, Source, Surface, MCP_SERVER_PROVIDER_PREFIX};
