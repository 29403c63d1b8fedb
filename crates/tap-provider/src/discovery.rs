//! Where the gateway is and which token to show it, the documented ways
//! (`docs/write-a-provider.md`), in this order:
//!
//! - URL: `TAP_GATEWAY_URL`; else the `address` in `$TAP_HOME/gateway.json` (the gateway
//!   running for this user, on whatever port); else `ws://127.0.0.1:9400`.
//! - Token: `TAP_PROVIDER_TOKEN`; else the file named by `TAP_PROVIDER_TOKEN_FILE`; else, when
//!   the URL came from `gateway.json`, `$TAP_HOME/provider-token` (the same gateway's);
//!   else `<COPILOT_HOME>/extensions/tap/.provider-token` (`~/.copilot` by default, the
//!   spec's path); else `$TAP_HOME/provider-token`.
//!
//! `TAP_HOME` defaults to the platform data directory (`~/.local/share/tap` on Linux).
//! Read again on every reconnect: the gateway makes a new token each time it starts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The gateway's default address.
pub const DEFAULT_URL: &str = "ws://127.0.0.1:9400";

/// Where to connect and the token to authenticate with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `ws://IP:PORT`.
    pub url: String,
    /// The provider token.
    pub token: String,
}

/// No token could be found.
#[derive(Debug, thiserror::Error)]
#[error("no provider token: set TAP_PROVIDER_TOKEN, or start the gateway (`tap gateway` or the app); looked in {looked}")]
pub struct NoToken {
    /// The places tried, for the message.
    pub looked: String,
}

/// The environment discovery reads (the process's, or a test's).
pub trait Env {
    /// A variable, `None` when unset or empty.
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
}

impl Env for HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).filter(|v| !v.is_empty()).cloned()
    }
}

fn tap_home(env: &impl Env) -> Option<PathBuf> {
    env.var("TAP_HOME")
        .map(PathBuf::from)
        .or_else(|| dirs::data_dir().map(|d| d.join("tap")))
}

fn read_token(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

fn gateway_json_url(home: &Path) -> Option<String> {
    let text = std::fs::read_to_string(home.join("gateway.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("address")?.as_str().map(str::to_string)
}

/// Finds the gateway and token in `env` and the files it names.
pub fn discover(env: &impl Env) -> Result<Endpoint, NoToken> {
    let home = tap_home(env);
    let (url, from_gateway_json) = match env.var("TAP_GATEWAY_URL") {
        Some(u) => (u, false),
        None => match home.as_deref().and_then(gateway_json_url) {
            Some(u) => (u, true),
            None => (DEFAULT_URL.to_string(), false),
        },
    };
    let mut looked = vec!["TAP_PROVIDER_TOKEN".to_string()];
    if let Some(token) = env.var("TAP_PROVIDER_TOKEN") {
        return Ok(Endpoint { url, token });
    }
    let mut files = Vec::new();
    if let Some(f) = env.var("TAP_PROVIDER_TOKEN_FILE") {
        files.push(PathBuf::from(f));
    }
    let home_token = home.as_ref().map(|h| h.join("provider-token"));
    if from_gateway_json {
        files.extend(home_token.clone());
    }
    let copilot = env
        .var("COPILOT_HOME")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".copilot")));
    files.extend(copilot.map(|c| c.join("extensions/tap/.provider-token")));
    if !from_gateway_json {
        files.extend(home_token);
    }
    for f in &files {
        if let Some(token) = read_token(f) {
            return Ok(Endpoint { url, token });
        }
        looked.push(f.display().to_string());
    }
    Err(NoToken {
        looked: looked.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_environment_wins() {
        let e = env(&[
            ("TAP_GATEWAY_URL", "ws://127.0.0.1:1"),
            ("TAP_PROVIDER_TOKEN", "ptk-a"),
        ]);
        assert_eq!(
            discover(&e).unwrap(),
            Endpoint {
                url: "ws://127.0.0.1:1".into(),
                token: "ptk-a".into()
            }
        );
    }

    #[test]
    fn gateway_json_gives_the_url_and_its_own_token_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let copilot = dir.path().join("copilot/extensions/tap");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&copilot).unwrap();
        std::fs::write(
            home.join("gateway.json"),
            r#"{"address": "ws://127.0.0.1:9555"}"#,
        )
        .unwrap();
        std::fs::write(home.join("provider-token"), "ptk-home\n").unwrap();
        // Another gateway's copy in COPILOT_HOME must not be preferred over the running one's.
        std::fs::write(copilot.join(".provider-token"), "ptk-other").unwrap();
        let e = env(&[
            ("TAP_HOME", home.to_str().unwrap()),
            ("COPILOT_HOME", dir.path().join("copilot").to_str().unwrap()),
        ]);
        assert_eq!(
            discover(&e).unwrap(),
            Endpoint {
                url: "ws://127.0.0.1:9555".into(),
                token: "ptk-home".into()
            }
        );
    }

    #[test]
    fn without_gateway_json_the_spec_path_comes_before_tap_home() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let copilot = dir.path().join("copilot/extensions/tap");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&copilot).unwrap();
        std::fs::write(home.join("provider-token"), "ptk-home").unwrap();
        std::fs::write(copilot.join(".provider-token"), "ptk-spec").unwrap();
        let e = env(&[
            ("TAP_HOME", home.to_str().unwrap()),
            ("COPILOT_HOME", dir.path().join("copilot").to_str().unwrap()),
        ]);
        let found = discover(&e).unwrap();
        assert_eq!(
            (found.url.as_str(), found.token.as_str()),
            (DEFAULT_URL, "ptk-spec")
        );
        let file = dir.path().join("token");
        std::fs::write(&file, "ptk-file").unwrap();
        let mut e = e;
        e.insert("TAP_PROVIDER_TOKEN_FILE".into(), file.display().to_string());
        assert_eq!(discover(&e).unwrap().token, "ptk-file");
    }

    #[test]
    fn no_token_names_every_place_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let e = env(&[
            ("TAP_HOME", dir.path().join("h").to_str().unwrap()),
            ("COPILOT_HOME", dir.path().join("c").to_str().unwrap()),
        ]);
        let err = discover(&e).unwrap_err().to_string();
        assert!(
            err.contains("TAP_PROVIDER_TOKEN") && err.contains(".provider-token"),
            "{err}"
        );
    }
}
