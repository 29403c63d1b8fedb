//! MCP clients on this machine and the `tap` entry in their own configuration files
//! (`docs/clients.md`): what `clients.*` on the control plane and the panel's Clients page
//! say and send. The states are `tap connect --json`'s.

use serde::{Deserialize, Serialize};

/// Where a client stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum ClientState {
    /// Neither its file, its configuration directory nor its command is there.
    NotInstalled,
    /// Installed, without an entry named `tap`.
    Installed,
    /// Its `tap` entry is what connecting would write now.
    Connected,
    /// An entry named `tap` that differs (another `tap` path, another profile).
    Drifted,
    /// Its file cannot be read as its format: nothing is written to it.
    Invalid,
}

/// A session of a client: its entry runs `tap mcp --session <client>`, so its sessions
/// are labelled with the client's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ClientSession {
    /// The session's id.
    pub id: String,
    /// Whether it is open now.
    pub live: bool,
    /// RFC 3339 time it registered (absent for a live session the history does not hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// RFC 3339 time it ended; absent while it runs (or when a gateway was killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
}

/// One client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    /// As `tap connect` spells it (`cursor`, `claude-code`, …); also its sessions' label.
    pub id: String,
    /// For people.
    pub name: String,
    /// Where it stands.
    pub state: ClientState,
    /// The file its entry is in.
    pub file: String,
    /// The profile its entry names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Why it drifted, or why its file cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The command that connects it.
    pub command: String,
    /// Whether `clients.connect`/`clients.disconnect` can change it (`false`: only its
    /// command can). Every client is today, the Copilot CLI's extension included.
    pub editable: bool,
    /// Its live session first, then the latest ones of the history, newest first (at most
    /// `CLIENT_RECENT_SESSIONS`).
    pub sessions: Vec<ClientSession>,
}

/// `clients.list`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ClientsList {
    /// Every client, in `tap connect`'s order.
    pub clients: Vec<ClientInfo>,
    /// The `tap` program the entries launch (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tap: Option<String>,
    /// Why there is none: connecting is refused until there is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tap_missing: Option<String>,
}

/// `clients.connect`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ClientConnect {
    /// The client's id.
    pub client: String,
    /// The profile its sessions use (one of `profiles.list`); none: every tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Answer the change as a diff; write nothing.
    #[serde(default)]
    // Optional in TypeScript as on the wire: absent means false.
    #[cfg_attr(feature = "ts", ts(as = "Option<bool>", optional))]
    pub dry_run: bool,
}

/// `clients.disconnect`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ClientDisconnect {
    /// The client's id.
    pub client: String,
    /// Answer the change as a diff; write nothing.
    #[serde(default)]
    // Optional in TypeScript as on the wire: absent means false.
    #[cfg_attr(feature = "ts", ts(as = "Option<bool>", optional))]
    pub dry_run: bool,
}

/// What `clients.connect` / `clients.disconnect` did, or (dry run) would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ClientChange {
    /// The client as it stands now (after the change; unchanged by a dry run).
    pub client: ClientInfo,
    /// The change as a unified diff of its file: empty when nothing changes.
    pub diff: String,
    /// Whether the file was written (never on a dry run).
    pub written: bool,
    /// Where the previous file is kept, when one was written over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<String>,
    /// Something the user should know that did not stop the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `skills.list`'s result: the agent skills this gateway ships (`skills/` in its source,
/// docs/skills.md), each served to MCP sessions as a prompt and installed as a client's own
/// skill where the client has skills (the Copilot CLI, by `tap install copilot`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SkillsList {
    /// In the gateway's order (goal, loop, monitor, orchestrate).
    pub skills: Vec<SkillInfo>,
}

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SkillInfo {
    /// Its name (`tap-goal`, …): also its MCP prompt's name.
    pub name: String,
    /// Its front matter's description: what a model reads to choose it.
    pub description: String,
    /// Where a client could have it as its own skill, and whether it does.
    pub installed: Vec<SkillInstall>,
}

/// A skill's place in one client's skills.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SkillInstall {
    /// The client, as `clients.list` names it (`copilot`).
    pub client: String,
    /// The skill's file there.
    pub path: String,
    /// Whether the file there is this gateway's skill.
    pub state: SkillInstallState,
}

/// Whether a client has the skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum SkillInstallState {
    /// This gateway's text is there.
    Installed,
    /// Another tap's text, or edited: connecting the client again replaces it.
    Outdated,
    /// Not there: connecting the client installs it.
    Missing,
    /// A file tap did not write is there: the client's agent gets that one instead.
    Shadowed,
}
