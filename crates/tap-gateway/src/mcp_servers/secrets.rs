//! `${secret:NAME}` in an `env` or header value: the secret `NAME`, stored with
//! `tap mcp add -e KEY=@secret` in the OS keyring or `$TAP_HOME/secrets.json` (the crate
//! `tap-secrets`), put in at each start so the configuration file never holds it. A value
//! may hold several references and other text (`"Bearer ${secret:linear.token}"`); text
//! that is not a complete reference with a valid name is left as it is.
//!
//! A missing secret stops the start with a reason naming it (and the variable or header);
//! no value is ever part of a message.

use std::path::Path;

/// What a reference starts with: `${secret:NAME}`.
pub const OPENING: &str = "${secret:";

/// The names of the secrets `value` references, in order (`tap mcp remove` forgets a
/// server's own).
pub fn references(value: &str) -> Vec<&str> {
    pieces(value)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Secret(name) => Some(name),
            Piece::Text(_) => None,
        })
        .collect()
}

/// The reference to the secret `name`, as it is written in a value.
pub fn reference(name: &str) -> String {
    format!("{OPENING}{name}}}")
}

enum Piece<'a> {
    Text(&'a str),
    Secret(&'a str),
}

fn pieces(value: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find(OPENING) {
        let after = &rest[at + OPENING.len()..];
        match after.find('}') {
            Some(end) if tap_secrets::valid_secret_name(&after[..end]) => {
                if at > 0 {
                    out.push(Piece::Text(&rest[..at]));
                }
                out.push(Piece::Secret(&after[..end]));
                rest = &after[end + 1..];
            }
            _ => {
                out.push(Piece::Text(&rest[..at + OPENING.len()]));
                rest = after;
            }
        }
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

/// `pairs` (a server's `env`, its headers, or its `oauth.clientSecret`: `what` is `"env"`,
/// `"header"` or `"oauth"`) with every
/// reference replaced by its secret, read from `data_dir`'s store (the OS keyring too when
/// `keyring`). Pairs without references are returned as they are, without touching a store.
pub(crate) async fn resolve(
    data_dir: &Path,
    keyring: bool,
    what: &'static str,
    pairs: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    if pairs.iter().all(|(_, v)| !v.contains(OPENING)) {
        return Ok(pairs.to_vec());
    }
    let (data_dir, pairs) = (data_dir.to_path_buf(), pairs.to_vec());
    // The keyring's calls block (D-Bus, maybe an unlock prompt): not on a runtime worker.
    tokio::task::spawn_blocking(move || resolve_blocking(&data_dir, keyring, what, &pairs))
        .await
        .map_err(|e| format!("reading its secrets failed: {e}"))?
}

fn resolve_blocking(
    data_dir: &Path,
    keyring: bool,
    what: &str,
    pairs: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let backend = tap_secrets::OsKeyring::with_timeout(crate::limits::SECRETS_KEYRING_TIMEOUT);
    let mut out = Vec::with_capacity(pairs.len());
    for (key, value) in pairs {
        let mut resolved = String::with_capacity(value.len());
        for piece in pieces(value) {
            match piece {
                Piece::Text(t) => resolved.push_str(t),
                Piece::Secret(name) => {
                    match tap_secrets::read_secret(&backend, data_dir, name, keyring) {
                        Ok(Some(secret)) => resolved.push_str(&secret),
                        Ok(None) => {
                            let flag = match what {
                                "env" => format!("-e {key}=@secret"),
                                "oauth" => "--client-id ID --client-secret @secret".to_string(),
                                _ => format!("-H '{key}: @secret'"),
                            };
                            return Err(format!(
                                "{what} {key} references the secret '{name}', which is not stored (in the OS keyring or {}): store it with `tap mcp add --force {flag} …`, or edit the entry",
                                tap_secrets::secrets_file(data_dir).display()
                            ));
                        }
                        Err(e) => {
                            return Err(format!(
                                "{what} {key} references the secret '{name}', which cannot be read: {e}"
                            ))
                        }
                    }
                }
            }
        }
        out.push((key.clone(), resolved));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_found_and_anything_else_is_text() {
        assert_eq!(references("${secret:gh.TOKEN}"), ["gh.TOKEN"]);
        assert_eq!(
            references("Bearer ${secret:a} and ${secret:b-2}!"),
            ["a", "b-2"]
        );
        assert!(references("${secret:}").is_empty());
        assert!(references("${secret:not valid}").is_empty());
        assert!(references("${secret:open").is_empty());
        assert!(references("$HOME ${env:X}").is_empty());
    }

    #[tokio::test]
    async fn secrets_are_put_in_and_a_missing_one_is_named_without_values() {
        let dir = tempfile::tempdir().unwrap();
        let backend = tap_secrets::MemoryBackend::new();
        tap_secrets::store_secret(&backend, dir.path(), "s.K", "v4lue", false).unwrap();
        let pairs = vec![
            ("A".to_string(), "x-${secret:s.K}-${secret:s.K}".to_string()),
            ("B".to_string(), "plain ${secret:".to_string()),
        ];
        let out = resolve(dir.path(), false, "env", &pairs).await.unwrap();
        assert_eq!(out[0].1, "x-v4lue-v4lue");
        assert_eq!(out[1].1, "plain ${secret:");

        let missing = vec![
            ("A".to_string(), "${secret:s.K}".to_string()),
            ("Authorization".to_string(), "${secret:nope}".to_string()),
        ];
        let why = resolve(dir.path(), false, "header", &missing)
            .await
            .unwrap_err();
        assert!(
            why.contains("header Authorization") && why.contains("'nope'"),
            "{why}"
        );
        assert!(!why.contains("v4lue"), "{why}");
    }
}
