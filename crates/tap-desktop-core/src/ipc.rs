//! What the Tauri IPC commands hand the panel (`ui/src/transport.ts`): the control endpoint,
//! and `{code, message}` when a command fails. The panel's TypeScript for these types is
//! generated from them (`ui/src/desktop-generated/`, checked by the test below).

use serde::Serialize;
use std::net::SocketAddr;

/// Where the panel connects, and with what (`control_endpoint`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Endpoint {
    /// `ws://127.0.0.1:PORT/control`.
    pub url: String,
    /// The control token.
    pub token: String,
}

impl Endpoint {
    /// The control endpoint of the gateway at `address`.
    pub fn new(address: SocketAddr, token: &str) -> Self {
        Self {
            url: format!("ws://{address}/control"),
            token: token.to_string(),
        }
    }
}

/// Why a command failed: a stable code for the panel to act on, a sentence for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct IpcError {
    /// What failed.
    pub code: IpcErrorCode,
    /// What went wrong, as the OS or Tauri said it.
    pub message: String,
}

/// The codes of [`IpcError`]. New codes may be added; existing ones keep their spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum IpcErrorCode {
    /// The login item could not be read or changed (`get_autostart`, `set_autostart`).
    AutostartFailed,
    /// A window could not be shown or hidden (`hide_window`).
    WindowFailed,
}

impl IpcError {
    /// An error with `code` and `message`.
    pub fn new(code: IpcErrorCode, message: impl std::fmt::Display) -> Self {
        Self {
            code,
            message: message.to_string(),
        }
    }
}

impl std::fmt::Display for IpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for IpcError {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use ts_rs::TS;

    const REGENERATE: &str = "TAP_UPDATE_TS=1 cargo test -p tap-desktop-core ipc::";
    const NOTE: &str =
        "// Generated from crates/tap-desktop-core/src/ipc.rs by its tests. Do not edit.\n";

    #[test]
    fn errors_are_code_and_message() {
        let e = IpcError::new(IpcErrorCode::AutostartFailed, "no home directory");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"code": "AUTOSTART_FAILED", "message": "no home directory"})
        );
        assert_eq!(e.to_string(), "no home directory");
        assert_eq!(
            serde_json::to_value(IpcErrorCode::WindowFailed).unwrap(),
            "WINDOW_FAILED"
        );
    }

    #[test]
    fn the_endpoint_is_the_control_websocket() {
        let e = Endpoint::new("127.0.0.1:9400".parse().unwrap(), "ctk-1");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"url": "ws://127.0.0.1:9400/control", "token": "ctk-1"})
        );
    }

    fn generated_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/desktop-generated")
    }

    fn render() -> BTreeMap<String, String> {
        let cfg = ts_rs::Config::new();
        let mut files = BTreeMap::new();
        let mut index = String::from(NOTE);
        let mut add = |name: String, text: String| {
            index.push_str(&format!("export type {{ {name} }} from \"./{name}\";\n"));
            files.insert(format!("{name}.ts"), text);
        };
        add(
            Endpoint::ident(&cfg),
            Endpoint::export_to_string(&cfg).unwrap(),
        );
        add(
            IpcError::ident(&cfg),
            IpcError::export_to_string(&cfg).unwrap(),
        );
        add(
            IpcErrorCode::ident(&cfg),
            IpcErrorCode::export_to_string(&cfg).unwrap(),
        );
        files.insert("index.ts".into(), index);
        files
    }

    /// The committed TypeScript matches these types (regenerate with `REGENERATE`).
    #[test]
    fn generated_typescript_is_up_to_date() {
        let dir = generated_dir();
        let want = render();
        if std::env::var_os("TAP_UPDATE_TS").is_some_and(|v| v == "1") {
            std::fs::create_dir_all(&dir).unwrap();
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                if !want.contains_key(&name) {
                    std::fs::remove_file(path).unwrap();
                }
            }
            for (name, text) in &want {
                std::fs::write(dir.join(name), text).unwrap();
            }
            return;
        }
        let mut problems = Vec::new();
        for (name, text) in &want {
            match std::fs::read_to_string(dir.join(name)) {
                Err(_) => problems.push(format!("missing: {name}")),
                Ok(t) if &t != text => problems.push(format!("stale: {name}")),
                Ok(_) => {}
            }
        }
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let name = entry.unwrap().file_name().to_string_lossy().to_string();
            if !want.contains_key(&name) {
                problems.push(format!("not generated any more: {name}"));
            }
        }
        assert!(
            problems.is_empty(),
            "ui/src/desktop-generated/ does not match crates/tap-desktop-core/src/ipc.rs:\n  {}\nRegenerate with:\n  {REGENERATE}\nand commit the result.",
            problems.join("\n  ")
        );
    }
}
