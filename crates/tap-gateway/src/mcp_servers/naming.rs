//! A server's tool names as sessions see them: `<prefix>__<tool>` (the prefix is the
//! server's name unless configured; `""` for none), in the tool-name alphabet every agent
//! runtime accepts, at most 64 characters (a longer one is cut and given a stable suffix
//! from a hash of the whole name, so it is the same on every run).

use sha2::{Digest, Sha256};
use std::collections::HashSet;
use tap_protocol::limits::{MAX_TOOLS_PER_PROVIDER, MAX_TOOL_NAME_LEN};

/// Hex digits of the hash suffix of a shortened name.
const SUFFIX_HEX: usize = 8;

/// Maps a server's tool names to session names.
pub(crate) struct Names {
    prefix: String,
}

/// The tools a listing kept, by session name, and what it refused.
pub(crate) struct Mapped {
    /// (session name, server name), in the server's order.
    pub kept: Vec<(String, String)>,
    /// Each refusal in words.
    pub refused: Vec<String>,
}

impl Names {
    /// `prefix`: the configured one, or `None` for the server's name.
    pub fn new(server: &str, prefix: Option<&str>) -> Self {
        let prefix = match prefix.unwrap_or(server) {
            "" => String::new(),
            p => format!("{p}__"),
        };
        Names { prefix }
    }

    /// What every name of this server starts with (`<prefix>__`, or nothing): its prompts'
    /// too (`mcp/server_items.rs`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The session name of one tool.
    pub fn session_name(&self, tool: &str) -> String {
        let mut name = String::with_capacity(self.prefix.len() + tool.len());
        name.push_str(&self.prefix);
        name.extend(tool.chars().map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        }));
        if name.len() <= MAX_TOOL_NAME_LEN {
            return name;
        }
        let hash = Sha256::digest(name.as_bytes());
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        // The name is ASCII here, so any byte index is a char boundary.
        name.truncate(MAX_TOOL_NAME_LEN - SUFFIX_HEX - 1);
        name.push('_');
        name.push_str(&hex[..SUFFIX_HEX]);
        name
    }

    /// Maps a listing: disabled tools left out, a name that collides with an earlier one
    /// (after mapping) refused, and at most [`MAX_TOOLS_PER_PROVIDER`] kept.
    pub fn map<'a>(
        &self,
        server: &str,
        tools: impl IntoIterator<Item = &'a str>,
        disabled: &[String],
    ) -> Mapped {
        let mut seen = HashSet::new();
        let mut mapped = Mapped {
            kept: Vec::new(),
            refused: Vec::new(),
        };
        let mut over = 0usize;
        for tool in tools {
            if disabled.iter().any(|d| d == tool) {
                continue;
            }
            let name = self.session_name(tool);
            if !seen.insert(name.clone()) {
                mapped.refused.push(format!(
                    "MCP server '{server}': tool '{tool}' is named '{name}' like an earlier tool of the same server; it is left out"
                ));
                continue;
            }
            if mapped.kept.len() == MAX_TOOLS_PER_PROVIDER {
                over += 1;
                continue;
            }
            mapped.kept.push((name, tool.to_string()));
        }
        if over > 0 {
            mapped.refused.push(format!(
                "MCP server '{server}' offers {} tools; a provider may offer {MAX_TOOLS_PER_PROVIDER}, so the last {over} are left out (disable some with 'disabledTools')",
                MAX_TOOLS_PER_PROVIDER + over
            ));
        }
        mapped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_cleans_names() {
        let n = Names::new("everything", None);
        assert_eq!(n.session_name("get-sum"), "everything__get-sum");
        assert_eq!(
            n.session_name("files.read/all"),
            "everything__files_read_all"
        );
        assert_eq!(Names::new("x", Some("")).session_name("echo"), "echo");
        assert_eq!(Names::new("x", Some("gh")).session_name("echo"), "gh__echo");
    }

    #[test]
    fn long_names_are_cut_with_a_stable_suffix() {
        let n = Names::new("server", None);
        let long = "a".repeat(80);
        let a = n.session_name(&long);
        assert_eq!(a.len(), MAX_TOOL_NAME_LEN);
        assert_eq!(a, n.session_name(&long));
        assert_ne!(a, n.session_name(&format!("{long}b")));
    }

    #[test]
    fn collisions_disabled_tools_and_too_many() {
        let n = Names::new("s", None);
        let m = n.map("s", ["a.b", "a_b", "c"], &["c".to_string()]);
        assert_eq!(m.kept, vec![("s__a_b".to_string(), "a.b".to_string())]);
        assert!(m.refused[0].contains("'a_b'"));
        let many: Vec<String> = (0..150).map(|i| format!("t{i}")).collect();
        let m = n.map("s", many.iter().map(String::as_str), &[]);
        assert_eq!(m.kept.len(), MAX_TOOLS_PER_PROVIDER);
        assert!(m.refused[0].contains("the last 50"));
    }
}
