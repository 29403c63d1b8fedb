//! Opening a web page in the user's own browser (the panel's `open_url` command): the page
//! a remote MCP server's sign-in starts at. The webview does not open other windows, and a
//! sign-in belongs in the browser the user trusts, where their accounts and password
//! manager are, not in the app's webview.
//!
//! Only `http` and `https` URLs are opened: the panel's word is not enough to hand the
//! system's opener a `file:` path, a `javascript:` URL or a custom scheme that starts some
//! other program. The opener is the desktop's own (`xdg-open` on Linux, as `tap ui` uses),
//! started without a shell and without the variables the app set for its own GTK
//! ([`crate::gtk_env`]).

use crate::ipc::{IpcError, IpcErrorCode};
use std::process::{Child, Command, Stdio};

/// The program that opens a URL in the user's default browser.
#[cfg(target_os = "macos")]
pub const OPENER: &str = "open";
/// The program that opens a URL in the user's default browser.
#[cfg(not(target_os = "macos"))]
pub const OPENER: &str = "xdg-open";

/// The longest URL opened. An authorization page's address with PKCE, `state`, scopes and
/// `resource` is a few hundred bytes; this only keeps a runaway string off a command line.
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// `url` when it is an absolute `http` or `https` URL with a host, in one piece (no
/// whitespace or control characters); otherwise why not, in words.
pub fn check(url: &str) -> Result<&str, String> {
    if url.len() > MAX_URL_BYTES {
        return Err(format!("the URL is longer than {MAX_URL_BYTES} bytes"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the URL contains spaces or control characters".into());
    }
    let lower = url.to_ascii_lowercase();
    let rest = ["https://", "http://"]
        .iter()
        .find_map(|scheme| lower.strip_prefix(scheme))
        .ok_or("only http and https URLs are opened")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Err("the URL has no host".into());
    }
    Ok(url)
}

/// Opens `url` in the user's browser with [`OPENER`]: refused ([`IpcErrorCode::UrlRefused`])
/// unless [`check`] accepts it, [`IpcErrorCode::OpenFailed`] when the opener cannot be
/// started. The opener is not waited for (some stay until the browser closes); its exit is
/// collected on a thread of its own, and a failure logged.
pub fn open(url: &str) -> Result<(), IpcError> {
    open_with(OPENER, url)
}

/// [`open`] with another opener program (tests).
pub fn open_with(opener: &str, url: &str) -> Result<(), IpcError> {
    let mut child = start(opener, url)?;
    let opener = opener.to_string();
    let reaped = std::thread::Builder::new()
        .name("tap-open-url".into())
        .spawn(move || match child.wait() {
            Ok(status) if status.success() => {}
            Ok(status) => tracing::warn!(%opener, %status, "the browser opener failed"),
            Err(e) => tracing::warn!(%opener, error = %e, "the browser opener failed"),
        });
    if let Err(e) = reaped {
        tracing::warn!(error = %e, "could not start the thread that waits for the browser opener");
    }
    tracing::info!("opened a page in the browser");
    Ok(())
}

/// Starts `opener URL` once [`check`] accepts `url`.
fn start(opener: &str, url: &str) -> Result<Child, IpcError> {
    let url = check(url).map_err(|why| IpcError::new(IpcErrorCode::UrlRefused, why))?;
    let mut command = Command::new(opener);
    command
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for key in crate::gtk_env::applied() {
        command.env_remove(key);
    }
    command.spawn().map_err(|e| {
        IpcError::new(
            IpcErrorCode::OpenFailed,
            format!("could not start {opener} to open the browser: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_urls_with_a_host_are_opened() {
        for ok in [
            "https://auth.example.com/authorize?client_id=x&state=y",
            "http://127.0.0.1:8123/authorize",
            "HTTPS://Example.com",
            "https://user@example.com/",
        ] {
            assert_eq!(check(ok), Ok(ok));
        }
        for (bad, why) in [
            ("file:///etc/passwd", "only http and https"),
            ("javascript:alert(1)", "only http and https"),
            ("vscode://open?x", "only http and https"),
            ("-https://example.com", "only http and https"),
            ("https://", "no host"),
            ("https:///path", "no host"),
            ("https://:443/", "no host"),
            ("https://example.com/a b", "spaces"),
            ("https://example.com/\n--flag", "spaces or control"),
        ] {
            let refused = check(bad).unwrap_err();
            assert!(refused.contains(why), "{bad}: {refused}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(check(&long).unwrap_err().contains("longer than"));
    }

    #[test]
    fn a_refused_url_never_reaches_the_opener_and_a_missing_opener_says_so() {
        // `false` would fail if it ran; the refusal comes first.
        let e = open_with("false", "file:///etc/passwd").unwrap_err();
        assert_eq!(e.code, IpcErrorCode::UrlRefused);
        let e = open_with("/nonexistent/opener", "https://example.com/").unwrap_err();
        assert_eq!(e.code, IpcErrorCode::OpenFailed);
        assert!(e.message.contains("/nonexistent/opener"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn the_opener_gets_the_url_as_its_one_argument() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("args");
        let script = dir.path().join("opener");
        let body = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$#\" \"$1\" > '{}'\n",
            out.display()
        );
        std::fs::write(&script, body).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let url = "https://auth.example.com/authorize?a=1&b=$(touch%20x);c";
        let status = start(script.to_str().unwrap(), url)
            .unwrap()
            .wait()
            .unwrap();
        assert!(status.success());
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            format!("1\n{url}\n")
        );
        // `open` itself does not wait for it.
        open_with(script.to_str().unwrap(), url).unwrap();
    }
}
