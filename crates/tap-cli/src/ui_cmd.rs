//! `tap ui [--no-open]`: a one-time login link for the panel the running gateway serves.
//!
//! The link carries a single-use code (valid 120 s) in its fragment; the page trades it
//! for the control token. It is printed on stdout only (never logged), so it can be
//! piped to whatever opens a browser.

use crate::output::{connect_control as connect, control_fail};
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::time::Duration;
use tokio::process::Command;

/// How long `tap ui` waits for `xdg-open` to report; it may keep running after that.
const OPEN_WAIT: Duration = Duration::from_secs(5);

/// `tap ui [--no-open]`.
pub async fn run(home: &Path, no_open: bool) -> ExitCode {
    let client = match connect(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let login = match client.ui_login().await {
        Ok(l) => l,
        Err(e) => return control_fail(e),
    };
    println!("{}", login.url);
    if !no_open && has_display() {
        open(&login.url).await;
    }
    ExitCode::SUCCESS
}

/// A graphical session to open a browser in.
pub(crate) fn has_display() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()))
}

/// `xdg-open URL`, best effort: a failure is a note on stderr, not an error (the URL is
/// already on stdout). Its output is discarded so stdout stays the one line.
pub(crate) async fn open(url: &str) {
    let child = Command::new("xdg-open")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tap: could not start xdg-open ({e}); open the link above in a browser");
            return;
        }
    };
    match tokio::time::timeout(OPEN_WAIT, child.wait()).await {
        Ok(Ok(status)) if status.success() => {}
        Ok(Ok(status)) => {
            eprintln!("tap: xdg-open failed ({status}); open the link above in a browser")
        }
        Ok(Err(e)) => eprintln!("tap: xdg-open failed ({e}); open the link above in a browser"),
        // Still running (some openers wait for the browser): leave it be.
        Err(_) => {}
    }
}
