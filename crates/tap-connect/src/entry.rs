//! What `tap connect` writes: the entry named `tap` that makes a client launch
//! `<this tap> mcp --session <client> [--profile NAME]`, in the client's own shape.

use crate::clients::Client;
use serde_json::{json, Value};
use std::path::Path;

/// The name of the entry in every client's file.
pub const NAME: &str = "tap";

/// `exe` as an entry must name it: absolute, symlinks resolved (a client launches it
/// from any directory, long after a package manager has moved a link).
pub fn program_path(exe: &Path) -> Result<String, String> {
    let exe = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    exe.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("the path of tap is not UTF-8: {}", exe.display()))
}

/// The arguments after the `tap` path.
pub fn args(client: Client, profile: Option<&str>) -> Vec<String> {
    let mut args = vec!["mcp".into(), "--session".into(), client.word().into()];
    if let Some(p) = profile {
        args.extend(["--profile".into(), p.into()]);
    }
    args
}

/// The entry's value, as JSON (Codex's TOML table has the same keys).
pub fn value(client: Client, tap: &str, profile: Option<&str>) -> Value {
    let args = args(client, profile);
    match client {
        // https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
        Client::Vscode => json!({ "type": "stdio", "command": tap, "args": args }),
        // `claude mcp add --scope user` writes `"type": "stdio"` too.
        Client::ClaudeCode => json!({ "type": "stdio", "command": tap, "args": args }),
        // https://opencode.ai/docs/mcp-servers/: the command and its arguments in one array.
        Client::Opencode => {
            let mut command = vec![tap.to_string()];
            command.extend(args);
            json!({ "type": "local", "command": command, "enabled": true })
        }
        _ => json!({ "command": tap, "args": args }),
    }
}

/// The `--profile` of an entry written by `tap connect`, when it has one: for messages.
pub fn profile_of(entry: &Value) -> Option<String> {
    let words: Vec<&str> = match entry.get("args") {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => entry
            .get("command")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default(),
    };
    let at = words.iter().position(|w| *w == "--profile")?;
    words.get(at + 1).map(|s| s.to_string())
}

/// The program an entry launches: `command`, or the first word of opencode's array.
pub fn program_of(entry: &Value) -> Option<String> {
    match entry.get("command") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(a)) => a.first().and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

/// Why an existing entry differs from `wanted`, in a few words.
pub fn drift_reason(found: &Value, wanted: &Value) -> String {
    let (fp, wp) = (program_of(found), program_of(wanted));
    if fp != wp {
        return match fp {
            Some(p) => format!("it launches {p}, not this tap"),
            None => "it launches no command".into(),
        };
    }
    let (fprof, wprof) = (profile_of(found), profile_of(wanted));
    if fprof != wprof {
        let name = |p: &Option<String>| match p {
            Some(p) => format!("profile {p}"),
            None => "no profile".into(),
        };
        return format!("it has {}, not {}", name(&fprof), name(&wprof));
    }
    "its entry differs from what tap connect writes".into()
}

/// A profile name: 1–64 of letters, digits, `_`, `-`, `.` (clap's value parser).
pub fn parse_profile(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(s.to_string())
    } else {
        Err("a profile name is 1 to 64 letters, digits, '_', '-' or '.'".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_names_the_session_and_profile() {
        let v = value(Client::Opencode, "/t/tap", Some("web"));
        assert_eq!(
            v,
            json!({"type": "local", "command": ["/t/tap", "mcp", "--session", "opencode", "--profile", "web"], "enabled": true})
        );
        assert_eq!(profile_of(&v).as_deref(), Some("web"));
        assert_eq!(program_of(&v).as_deref(), Some("/t/tap"));
        let c = value(Client::Cursor, "/t/tap", None);
        assert_eq!(
            c,
            json!({"command": "/t/tap", "args": ["mcp", "--session", "cursor"]})
        );
        let old = value(Client::Cursor, "/old/tap", None);
        assert_eq!(drift_reason(&old, &c), "it launches /old/tap, not this tap");
        let other = value(Client::Cursor, "/t/tap", Some("x"));
        assert_eq!(drift_reason(&other, &c), "it has profile x, not no profile");
        assert!(parse_profile("a b").is_err() && parse_profile("ok-1.2").is_ok());
    }
}
