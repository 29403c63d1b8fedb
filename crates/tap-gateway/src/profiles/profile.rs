//! One profile: which tools a client's sessions see. Empty lists mean "no restriction":
//! a profile that names nothing sees everything.
//!
//! A tool is seen when its provider is allowed (`servers` names MCP servers, `providers`
//! names providers; when either list is given, a tool must come from one they name), its
//! name matches one of `tools` (when given), and no `hideTools` glob matches it. The
//! gateway's own `tap_*` tools are seen unless hidden: they belong to every session.

use super::glob;
pub use tap_protocol::profiles::Surface;

/// What an MCP server's provider is named: this and the server's name
/// (`mcp_servers::registration` names them so).
pub const MCP_SERVER_PROVIDER_PREFIX: &str = "mcp-";

/// Where a tool comes from, as a profile tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source<'a> {
    /// The gateway's own `tap_*` tools (and the generated `list_<name>_instances`).
    Gateway,
    /// A provider, by its `hello.name` (an MCP server's is `mcp-<server>`).
    Provider(&'a str),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Profile {
    /// Its name in `profiles.json`.
    pub name: String,
    /// For people.
    pub description: Option<String>,
    /// MCP servers (by name) whose tools it sees; empty: no restriction by this list.
    pub servers: Vec<String>,
    /// Providers (by `hello.name`) whose tools it sees; empty: no restriction by this list.
    pub providers: Vec<String>,
    /// Globs a tool's name must match one of; empty: any name.
    pub tools: Vec<String>,
    /// Globs of tools it never sees.
    pub hide_tools: Vec<String>,
    /// How the tools it sees are offered: listed, or found through `tap_find_tools`.
    pub surface: Surface,
    /// Its sessions' approvals are also asked in the calling MCP client when it declared
    /// elicitation (`approvalsInClient`).
    pub approvals_in_client: bool,
}

impl Profile {
    /// Whether a session with this profile sees the tool `tool` from `source`.
    pub fn sees(&self, source: Source<'_>, tool: &str) -> bool {
        if self.hide_tools.iter().any(|g| glob::matches(g, tool)) {
            return false;
        }
        match source {
            Source::Gateway => true,
            Source::Provider(provider) => {
                self.provider_allowed(provider)
                    && (self.tools.is_empty() || self.tools.iter().any(|g| glob::matches(g, tool)))
            }
        }
    }

    /// Whether a provider's tools may be seen at all (its list tool too).
    pub fn allows_provider(&self, provider: &str) -> bool {
        self.provider_allowed(provider)
    }

    fn provider_allowed(&self, provider: &str) -> bool {
        if self.servers.is_empty() && self.providers.is_empty() {
            return true;
        }
        match provider.strip_prefix(MCP_SERVER_PROVIDER_PREFIX) {
            Some(server) => self.servers.iter().any(|s| s == server),
            None => self.providers.iter().any(|p| p == provider),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_profile_sees() {
        let p = Source::Provider;
        let all = Profile::default();
        assert!(all.sees(p("mcp-github"), "github__create_issue"));

        let review = Profile {
            name: "review".into(),
            description: None,
            servers: vec!["github".into()],
            providers: vec!["ci".into()],
            tools: vec![],
            hide_tools: vec!["github__delete_*".into(), "tap_emitter_*".into()],
            surface: Surface::Tools,
            approvals_in_client: false,
        };
        assert!(review.sees(p("mcp-github"), "github__create_issue"));
        assert!(!review.sees(p("mcp-github"), "github__delete_repo"));
        assert!(!review.sees(p("mcp-linear"), "linear__create_issue"));
        assert!(review.sees(p("ci"), "ci_status"));
        assert!(!review.sees(p("browser"), "page_text"));
        assert!(review.sees(Source::Gateway, "tap_stream_history"));
        assert!(!review.sees(Source::Gateway, "tap_emitter_start"));

        let only = Profile {
            tools: vec!["*_status".into()],
            ..Profile::default()
        };
        assert!(only.sees(p("ci"), "ci_status"));
        assert!(!only.sees(p("ci"), "ci_rerun"));
        assert!(only.sees(Source::Gateway, "tap_stream_history"));
    }
}
