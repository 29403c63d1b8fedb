//! S10's remote servers and the gateway's home for them (`s10.rs` says what S10 measures):
//! [`HttpEcho`] runs `tap-bench mcp-echo-server --http` (`mcp_echo_http.rs`) and reads its
//! counts, [`write_home`] writes the `mcp.json` that names them and the sign-in the gateway
//! would have stored for the one that requires a token.

use crate::mcp_echo_http::{BEARER_OPTION, COUNTS_PATH, HTTP_OPTION, MCP_PATH};
use crate::s9_paths::ECHO_MODE;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};

/// The access token the signed-in server requires and the gateway holds.
pub const TOKEN: &str = "tap-bench-s10-access-token";

/// A running `mcp-echo-server --http`: killed when dropped, and it exits when its stdin
/// (held here) ends.
pub struct HttpEcho {
    pub child: Child,
    _stdin: ChildStdin,
    pub addr: SocketAddr,
}

/// What the server counted (`GET /bench/counts`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests to `/mcp` answered (with a token required: authorized).
    pub posts: u64,
    pub calls: u64,
    /// `401`s.
    pub refused: u64,
    /// TCP connections accepted (the counts' own `GET` among them).
    pub connections: u64,
}

impl HttpEcho {
    /// `exe mcp-echo-server --http`, requiring `bearer` when given, once it said its port.
    pub async fn spawn(exe: &Path, bearer: Option<&str>) -> Result<Self, String> {
        let mut cmd = Command::new(exe);
        cmd.args([ECHO_MODE, HTTP_OPTION]);
        if let Some(token) = bearer {
            cmd.args([BEARER_OPTION, token]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start the HTTP echo server: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (mut line, mut stdout) = (String::new(), BufReader::new(stdout));
        let read = stdout.read_line(&mut line);
        match tokio::time::timeout(Duration::from_secs(10), read).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(format!("the HTTP echo server's stdout: {e}")),
            Err(_) => return Err("the HTTP echo server did not say its port".into()),
        }
        let port: u16 = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("the HTTP echo server said {line:?}, not PORT n"))?;
        Ok(Self {
            child,
            _stdin: stdin,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        })
    }

    /// Its MCP endpoint's URL, as the gateway's `mcp.json` names it.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    pub fn pid(&self) -> Vec<u32> {
        self.child.id().into_iter().collect()
    }

    pub async fn counts(&self) -> Result<Counts, String> {
        let v = get_json(self.addr, COUNTS_PATH).await?;
        let n = |k: &str| v[k].as_u64().ok_or(format!("counts: {v}"));
        Ok(Counts {
            posts: n("posts")?,
            calls: n("calls")?,
            refused: n("refused")?,
            connections: n("connections")?,
        })
    }
}

/// `GET path` on `addr` (HTTP/1.0, one connection), its body as JSON.
pub async fn get_json(addr: SocketAddr, path: &str) -> Result<Value, String> {
    let exchange = async {
        let mut tcp = tokio::net::TcpStream::connect(addr).await?;
        let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
        tcp.write_all(request.as_bytes()).await?;
        let mut text = Vec::new();
        tcp.read_to_end(&mut text).await?;
        Ok::<_, std::io::Error>(text)
    };
    let text = tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .map_err(|_| format!("GET {path}: no answer"))?
        .map_err(|e| format!("GET {path}: {e}"))?;
    let text = String::from_utf8_lossy(&text);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("GET {path}: {text:?}"))?;
    if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
        return Err(format!("GET {path}: {head}"));
    }
    serde_json::from_str(body).map_err(|e| format!("GET {path}: {e}: {body}"))
}

/// The name of the secret holding the sign-in for `url`, as the gateway's vault names it
/// (`oauth/vault.rs`): `oauth.` and the first 16 bytes of the URL's SHA-256 in hex.
pub fn secret_name(url: &str) -> String {
    let digest = Sha256::digest(url.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("oauth.{hex}")
}

/// rmcp's `StoredCredentials` as the gateway keeps them after a sign-in to `token`'s
/// server: a bearer token valid for an hour from now, no refresh token.
pub fn stored_credentials(token: &str) -> Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    json!({
        "client_id": "tap-bench",
        "token_response": {"access_token": token, "token_type": "bearer", "expires_in": 3600},
        "granted_scopes": [],
        "token_received_at": now,
        "issuer": null,
    })
}

/// `home/mcp.json` with `open` (no auth) and `signed` (a token required) as remote
/// servers, and the sign-in for `signed` in `home/secrets.json` (0600), where the gateway
/// keeps it with `TAP_KEYRING=off`.
pub fn write_home(home: &Path, open: &str, signed: &str) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let servers = json!({"mcpServers": {
        "open": {"type": "http", "url": open},
        "signed": {"type": "http", "url": signed},
    }});
    let path = home.join("mcp.json");
    std::fs::write(&path, servers.to_string()).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut secrets = serde_json::Map::new();
    let creds = stored_credentials(TOKEN).to_string();
    secrets.insert(secret_name(signed), Value::from(creds));
    let path = tap_secrets_file(home);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    use std::io::Write;
    file.write_all(Value::Object(secrets).to_string().as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `$TAP_HOME/secrets.json` (`tap-secrets`' file, read when the keyring is off).
fn tap_secrets_file(home: &Path) -> std::path::PathBuf {
    home.join("secrets.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_the_vaults() {
        // The gateway's own test vector would need its crate-private function; this is
        // SHA-256("abc")'s first 16 bytes, the standard test vector.
        assert_eq!(secret_name("abc"), "oauth.ba7816bf8f01cfea414140de5dae2223");
        let creds = stored_credentials("T");
        assert_eq!(creds["token_response"]["access_token"], "T");
    }
}
