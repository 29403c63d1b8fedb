//! Secrets of MCP servers (docs/mcp-servers.md, "Secrets"): `tap mcp add -e KEY=@secret`
//! (or `-H 'Name: @secret'`) reads the value from standard input (without echo on a
//! terminal), keeps it with `tap-secrets` (the OS keyring, else `$TAP_HOME/secrets.json`)
//! as `<server>.<KEY>`, and writes `${secret:<server>.<KEY>}` into the file. The gateway
//! puts the value in when it starts the server. `tap mcp remove` forgets the server's own
//! secrets (those named `<server>.…`).
//!
//! No value is printed, in any message.

use serde_json::{Map, Value};
use std::io::{BufRead, IsTerminal};
use std::path::Path;
use tap_gateway::mcp_servers::secrets::{reference, references};

/// The value of `-e KEY=@secret` and `-H 'Name: @secret'`.
pub const ASK: &str = "@secret";

/// The key of an http server's OAuth client secret in its `"oauth"` entry.
const CLIENT_SECRET: &str = "clientSecret";

/// The secret name a server's variable or header is stored under.
pub fn secret_name(server: &str, key: &str) -> String {
    format!("{server}.{key}")
}

fn keyring_allowed() -> bool {
    !tap_secrets::keyring_disabled_by_env()
}

/// The `env` or `headers` keys of `entry` whose value is `@secret`, with which of the two;
/// and its `oauth.clientSecret` (`"oauth"`) unless it is a reference already: a client
/// secret is always kept as a secret, given on the command line or not.
pub fn asked(entry: &Map<String, Value>) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(secret) = entry
        .get("oauth")
        .and_then(|o| o.get(CLIENT_SECRET))
        .and_then(Value::as_str)
    {
        if references(secret).is_empty() {
            out.push(("oauth", CLIENT_SECRET.to_string()));
        }
    }
    for (field, what) in [("env", "env"), ("headers", "header")] {
        if let Some(Value::Object(pairs)) = entry.get(field) {
            for (k, v) in pairs {
                if v.as_str() == Some(ASK) {
                    out.push((what, k.clone()));
                }
            }
        }
    }
    out
}

/// Whether each asked key can name a secret; the error names the key, never a value.
pub fn check_asked(server: &str, entry: &Map<String, Value>) -> Result<(), String> {
    for (what, key) in asked(entry) {
        if !tap_secrets::valid_secret_name(&secret_name(server, &key)) {
            return Err(format!(
                "{what} {key}: @secret needs a name of letters, digits, '_', '-' and '.' (it is stored as '{server}.{key}')"
            ));
        }
    }
    Ok(())
}

/// Reads each `@secret` value (in the order of `asked`), stores it, and puts the reference
/// in `entry`. Returns a line per secret saying where it went.
pub fn take(
    home: &Path,
    server: &str,
    entry: &mut Map<String, Value>,
) -> Result<Vec<String>, String> {
    let asked = asked(entry);
    if asked.is_empty() {
        return Ok(Vec::new());
    }
    let backend = tap_secrets::OsKeyring::default();
    let terminal = std::io::stdin().is_terminal();
    let mut stdin = std::io::stdin().lock();
    let mut said = Vec::new();
    for (what, key) in asked {
        let literal = match what {
            "oauth" => entry
                .get("oauth")
                .and_then(|o| o.get(CLIENT_SECRET))
                .and_then(Value::as_str)
                .filter(|v| *v != ASK)
                .map(str::to_string),
            _ => None,
        };
        let value = if let Some(literal) = literal {
            literal
        } else if terminal {
            rpassword::prompt_password(format!(
                "Value of {what} {key} for '{server}' (not shown): "
            ))
            .map_err(|e| format!("cannot read the value of {what} {key}: {e}"))?
        } else {
            let mut line = String::new();
            let n = stdin.read_line(&mut line).map_err(|e| {
                format!("cannot read the value of {what} {key} from standard input: {e}")
            })?;
            if n == 0 {
                return Err(format!(
                    "{what} {key} is @secret but standard input ended before its value (one line per @secret, in order)"
                ));
            }
            line.trim_end_matches(['\n', '\r']).to_string()
        };
        if value.is_empty() {
            return Err(format!("the value of {what} {key} is empty"));
        }
        if value.contains(['\r', '\n', '\0']) {
            return Err(format!(
                "the value of {what} {key} holds a line break or NUL"
            ));
        }
        let name = secret_name(server, &key);
        let place = tap_secrets::store_secret(&backend, home, &name, &value, keyring_allowed())
            .map_err(|e| format!("cannot store the secret '{name}': {e}"))?;
        said.push(match place {
            tap_secrets::SecretPlace::Keyring => {
                format!("Secret '{name}' ({what} {key}) is in the OS keyring.")
            }
            tap_secrets::SecretPlace::File { reason } => format!(
                "Secret '{name}' ({what} {key}) is in {} (readable only by you; the OS keyring was not used: {reason}).",
                tap_secrets::secrets_file(home).display()
            ),
        });
        let field = match what {
            "env" => "env",
            "oauth" => "oauth",
            _ => "headers",
        };
        if let Some(Value::Object(pairs)) = entry.get_mut(field) {
            pairs.insert(key, Value::from(reference(&name)));
        }
    }
    Ok(said)
}

/// The secrets `entry` references that belong to `server` (named `<server>.…`).
pub fn own(server: &str, entry: &Value) -> Vec<String> {
    let prefix = format!("{server}.");
    let mut out: Vec<String> = Vec::new();
    for field in ["env", "headers", "oauth"] {
        if let Some(Value::Object(pairs)) = entry.get(field) {
            for v in pairs.values().filter_map(Value::as_str) {
                for name in references(v) {
                    if name.starts_with(&prefix) && !out.iter().any(|n| n == name) {
                        out.push(name.to_string());
                    }
                }
            }
        }
    }
    out
}

/// Forgets each of `names` (a failure is a warning: the entry is already gone).
pub fn forget(home: &Path, names: &[String]) {
    if names.is_empty() {
        return;
    }
    let backend = tap_secrets::OsKeyring::default();
    for name in names {
        match tap_secrets::forget_secret(&backend, home, name, keyring_allowed()) {
            Ok(()) => println!("Forgot the secret '{name}'."),
            Err(e) => eprintln!("tap: warning: cannot forget the secret '{name}': {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_servers_own_references_are_found() {
        let entry = json!({"env": {"A": "${secret:gh.A}", "B": "x ${secret:shared} ${secret:gh.B}", "C": "plain"}});
        assert_eq!(own("gh", &entry), ["gh.A", "gh.B"]);
        let asked_entry = json!({"headers": {"Authorization": "@secret", "X": "y"}});
        assert_eq!(
            asked(asked_entry.as_object().unwrap()),
            [("header", "Authorization".to_string())]
        );
    }
}
