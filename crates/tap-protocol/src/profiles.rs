//! Profiles (`docs/clients.md`, "Profiles"): the tool set a client's sessions see, and what
//! it costs in the model's context. What `profiles.*` on the control plane, `tap profiles`
//! and the panel's Clients page say and send.

use serde::{Deserialize, Serialize};

/// One profile as `$TAP_HOME/profiles.json` holds it. Empty lists: no restriction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ProfileDef {
    /// MCP servers (by name) whose tools it sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Optional in TypeScript as on the wire: absent means none.
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub servers: Vec<String>,
    /// Providers (by name) whose tools it sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Optional in TypeScript as on the wire: absent means none.
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub providers: Vec<String>,
    /// Globs a tool's name must match one of (`*`, `?`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Optional in TypeScript as on the wire: absent means none.
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub tools: Vec<String>,
    /// Globs of tools it never sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Optional in TypeScript as on the wire: absent means none.
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub hide_tools: Vec<String>,
    /// For people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// How its clients' `tools/list` offers the tools it lets through: each listed
    /// (`tools`, the default), or found and called through `tap_find_tools` and
    /// `tap_call_tool` (`search`).
    #[serde(default, skip_serializing_if = "Surface::is_tools")]
    // Optional in TypeScript as on the wire: absent means `tools`.
    #[cfg_attr(feature = "ts", ts(as = "Option<Surface>", optional))]
    pub surface: Surface,
    /// Its sessions' tool-call approvals are also asked in the MCP client that made the
    /// call, when that client declared elicitation (`docs/approvals.md`, "Answering in the
    /// client"): opt-in, as a client that accepts every elicitation by itself would then
    /// approve every call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    // Optional in TypeScript as on the wire: absent means false.
    #[cfg_attr(feature = "ts", ts(as = "Option<bool>", optional))]
    pub approvals_in_client: bool,
}

/// How a profile's tools reach its clients' `tools/list` (`docs/clients.md`, "Search
/// surface: what it costs").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Surface {
    /// Every tool the profile lets through is listed.
    #[default]
    Tools,
    /// Only the gateway's own `tap_*` tools are listed, with `tap_find_tools` (a search
    /// over the profile's tools) and `tap_call_tool` (calls one of them).
    Search,
}

impl Surface {
    /// Whether it is the default, [`Surface::Tools`] (not written to the file).
    pub fn is_tools(&self) -> bool {
        *self == Surface::Tools
    }

    /// Its name in `profiles.json` and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            Surface::Tools => "tools",
            Surface::Search => "search",
        }
    }
}

/// One tool the gateway offers now, and what its definition costs a client that lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ToolCost {
    /// Its name, as sessions see it.
    pub name: String,
    /// The provider offering it (`tap` for the gateway's own; `mcp-<server>` for an MCP
    /// server's).
    pub provider: String,
    /// The MCP server it comes from, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Its `tools/list` entry (name, description, input schema, annotations), in tokens of
    /// the tokenizer named in [`ProfilesList::tokenizer`].
    pub tokens: u32,
    /// The same entry's size in bytes (compact JSON).
    pub bytes: u32,
}

/// One profile with what it lets through now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ProfileInfo {
    /// Its name.
    pub name: String,
    /// Its definition (absent when it could not be read: see `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub def: Option<ProfileDef>,
    /// Why it cannot be used (a bad key, a wrong type), naming the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tools of [`ProfilesList::tools`] it lets through, by name.
    #[serde(default)]
    pub visible: Vec<String>,
    /// What its clients' `tools/list` holds, in tokens: with the `tools` surface, the
    /// visible tools' entries together; with `search`, the gateway's own tools it lets
    /// through and the two search tools' entries (the rest is found on demand).
    pub tokens: u32,
    /// The same list's bytes.
    pub bytes: u32,
    /// With the `search` surface: what listing every visible tool would cost instead, in
    /// tokens (the `tools` surface's figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_tokens: Option<u32>,
    /// Its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_bytes: Option<u32>,
}

/// The result of `profiles.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProfilesList {
    /// Every profile in the file, by name.
    pub profiles: Vec<ProfileInfo>,
    /// Every tool the gateway offers now (its own, the providers' and MCP servers' in any
    /// live session, a stopped lazy server's last known ones), by name: what a client
    /// without a profile lists.
    pub tools: Vec<ToolCost>,
    /// The `search` surface's two tools (`tap_find_tools`, `tap_call_tool`) and their
    /// entries' cost: listed instead of the profile's tools for a search profile.
    #[serde(default)]
    pub search_tools: Vec<ToolCost>,
    /// All of [`ProfilesList::tools`] together: the cost without a profile.
    pub tokens: u32,
    /// Their bytes together.
    pub bytes: u32,
    /// The tokenizer the counts come from (`o200k_base`: GPT-4o and later; other models'
    /// tokenizers count differently, within some tens of percent).
    pub tokenizer: String,
    /// The file's path.
    pub path: String,
    /// Problems with the file itself.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// Params of `profiles.set`: create or replace one profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProfileSet {
    /// Its name (1 to 64 letters, digits, `_`, `-`, `.`).
    pub name: String,
    /// What it lets through.
    pub def: ProfileDef,
}

/// Params of `profiles.remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProfileRef {
    /// Its name.
    pub name: String,
}

/// A client token of the MCP HTTP endpoint (`docs/clients.md`, "Client tokens"). Never the
/// token itself: it is shown once, by `clientTokens.create`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ClientTokenInfo {
    /// Its id (to revoke it).
    pub id: String,
    /// The client it was made for.
    pub client: String,
    /// The profile it holds its client to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// RFC 3339 time it was made.
    pub created: String,
}

/// The result of `clientTokens.list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ClientTokensList {
    /// Every token, oldest first.
    pub tokens: Vec<ClientTokenInfo>,
}

/// Params of `clientTokens.create`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ClientTokenCreate {
    /// The client it is for (1 to 64 letters, digits, `_`, `-`, `.`).
    pub client: String,
    /// A profile (in `profiles.json`) to hold the client to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

/// The result of `clientTokens.create`: the token, shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ClientTokenCreated {
    /// What was made.
    pub info: ClientTokenInfo,
    /// The token (`mtk-…`), for the client's `Authorization: Bearer` header.
    pub token: String,
}

/// Params of `clientTokens.revoke`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ClientTokenRef {
    /// Its id.
    pub id: String,
}
