//! `tap ui` and the panel served by `tap gateway` (docs/cli.md): against a real
//! `tap gateway` child, with plain HTTP over TCP as the browser would speak it.

use crate::common;
use crate::common::{eventually, tap_command, CliOut, GatewayProcess, Proc, PATIENCE};
use serde_json::{json, Value};
use std::path::Path;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const INDEX: &str = "<!doctype html><title>panel from TAP_UI_DIR</title>\n";

/// A `tap gateway --listen 127.0.0.1:0` child like [`Gateway::start`], with extra
/// environment variables.
async fn gateway_with_env(env: &[(&str, &str)]) -> GatewayProcess {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let copilot_home = dir.path().join("copilot");
    let mut cmd = tap_command(&home, &copilot_home);
    cmd.args(["gateway", "--listen", "127.0.0.1:0"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut proc = Proc::spawn("gateway", cmd, dir.path(), false);
    let state_file = home.join("gateway.json");
    let state: Value = eventually("gateway.json", || {
        let exited = proc.exited();
        let state_file = &state_file;
        async move {
            if let Some(status) = exited {
                panic!("the gateway exited early with {status}");
            }
            serde_json::from_str(&std::fs::read_to_string(state_file).ok()?).ok()
        }
    })
    .await;
    let url = state["address"].as_str().unwrap().to_string();
    let addr = url.strip_prefix("ws://").unwrap().to_string();
    GatewayProcess {
        proc,
        home,
        copilot_home,
        url,
        addr,
        dir,
    }
}

/// `(status, body)` of one HTTP/1.1 request sent exactly as written.
async fn http(addr: &str, head: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let req = format!(
        "{head}\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(PATIENCE, s.read_to_end(&mut raw))
        .await
        .expect("no HTTP response in time")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("header block");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

/// `POST /api/login {"code"}` with the panel's own Origin.
async fn post_login(gw: &GatewayProcess, code: &str) -> (u16, String) {
    let head = format!(
        "POST /api/login HTTP/1.1\r\nOrigin: http://{}\r\nContent-Type: application/json",
        gw.addr
    );
    http(&gw.addr, &head, &json!({ "code": code }).to_string()).await
}

/// The one stdout line of a successful `tap ui`, and the code in it.
fn login_line(gw: &GatewayProcess, out: &CliOut) -> (String, String) {
    assert_eq!(out.code(), Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {out:?}");
    assert!(out.stdout.ends_with('\n'));
    let prefix = format!("http://{}/#login=", gw.addr);
    assert!(gw.addr.starts_with("127.0.0.1:"), "{}", gw.addr);
    let code = lines[0]
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{} does not start with {prefix}", lines[0]));
    assert_eq!(code.len(), 43, "{code}");
    (lines[0].to_string(), code.to_string())
}

fn control_token(gw: &GatewayProcess) -> String {
    std::fs::read_to_string(gw.home.join("control-token"))
        .unwrap()
        .trim()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_ui_no_open_prints_a_one_time_login_link() {
    // Debug logging on, to show that even then neither the code nor the token is logged.
    let gw = gateway_with_env(&[("TAP_LOG", "debug")]).await;
    let out = gw.run(&["ui", "--no-open"]).await;
    let (_, code) = login_line(&gw, &out);
    assert_eq!(out.stderr, "", "{out:?}");

    let (status, body) = post_login(&gw, &code).await;
    assert_eq!(status, 200, "{body}");
    let token = control_token(&gw);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({ "controlToken": token })
    );
    let (status, _) = post_login(&gw, &code).await;
    assert_eq!(status, 401, "a used code");

    // Every run gives a new code.
    let (_, second) = login_line(&gw, &gw.run(&["ui", "--no-open"]).await);
    assert_ne!(second, code);

    let log = gw.proc.log();
    assert!(log.contains("panel login link issued"), "{log}");
    assert!(log.contains("panel logged in"), "{log}");
    for secret in [&code, &second, &token] {
        assert!(
            !log.contains(secret.as_str()),
            "a secret is in the log:\n{log}"
        );
    }
}

#[tokio::test]
async fn tap_ui_without_a_gateway_is_disconnected() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tap_command(&dir.path().join("home"), &dir.path().join("copilot"));
    cmd.args(["ui", "--no-open"]);
    let out = common::run(cmd).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    let v = out.json();
    assert_eq!(v["errorCode"], "DISCONNECTED", "{out:?}");
    assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    assert_eq!(v.as_object().unwrap().len(), 2, "{v}");
}

/// A fake `xdg-open` in its own directory that records its argument in `opened` and
/// exits with `exit`.
fn fake_opener(dir: &Path, exit: i32) {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("xdg-open");
    let opened = dir.join("opened");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" > '{}'\necho noise-on-stdout\nexit {exit}\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `tap ui ARGS` with PATH = only `bin`, and `display` as DISPLAY (unset when `None`).
async fn tap_ui_with(
    gw: &GatewayProcess,
    bin: &Path,
    display: Option<&str>,
    args: &[&str],
) -> CliOut {
    let mut cmd = gw.tap();
    cmd.arg("ui")
        .args(args)
        .env("PATH", bin)
        .env_remove("WAYLAND_DISPLAY");
    match display {
        Some(d) => cmd.env("DISPLAY", d),
        None => cmd.env_remove("DISPLAY"),
    };
    common::run(cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_ui_opens_the_link_with_xdg_open_only_when_there_is_a_display() {
    let gw = GatewayProcess::start().await;
    let bin = tempfile::tempdir().unwrap();
    let opened = bin.path().join("opened");
    fake_opener(bin.path(), 0);

    let out = tap_ui_with(&gw, bin.path(), Some(":0"), &[]).await;
    let (line, _) = login_line(&gw, &out);
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap(),
        format!("{line}\n")
    );
    assert_eq!(out.stderr, "", "{out:?}");

    // --no-open, or no display: the opener is not run.
    std::fs::remove_file(&opened).unwrap();
    login_line(
        &gw,
        &tap_ui_with(&gw, bin.path(), Some(":0"), &["--no-open"]).await,
    );
    login_line(&gw, &tap_ui_with(&gw, bin.path(), None, &[]).await);
    assert!(!opened.exists());

    // Wayland alone counts as a display.
    let mut cmd = gw.tap();
    cmd.arg("ui")
        .env("PATH", bin.path())
        .env_remove("DISPLAY")
        .env("WAYLAND_DISPLAY", "wayland-0");
    let out = common::run(cmd).await;
    let (line, _) = login_line(&gw, &out);
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap(),
        format!("{line}\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_or_missing_opener_is_a_note_not_an_error() {
    let gw = GatewayProcess::start().await;
    let failing = tempfile::tempdir().unwrap();
    fake_opener(failing.path(), 3);
    let out = tap_ui_with(&gw, failing.path(), Some(":0"), &[]).await;
    login_line(&gw, &out);
    assert!(out.stderr.contains("xdg-open failed"), "{out:?}");

    let empty = tempfile::tempdir().unwrap();
    let out = tap_ui_with(&gw, empty.path(), Some(":0"), &[]).await;
    login_line(&gw, &out);
    assert!(out.stderr.contains("could not start xdg-open"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_gateway_serves_the_panel_in_tap_ui_dir() {
    let ui = tempfile::tempdir().unwrap();
    std::fs::write(ui.path().join("index.html"), INDEX).unwrap();
    std::fs::create_dir(ui.path().join("assets")).unwrap();
    std::fs::write(ui.path().join("assets").join("app.js"), "let x = 1;\n").unwrap();
    let gw = gateway_with_env(&[("TAP_UI_DIR", ui.path().to_str().unwrap())]).await;

    let (status, body) = http(&gw.addr, "GET / HTTP/1.1", "").await;
    assert_eq!((status, body.as_str()), (200, INDEX));
    let (status, body) = http(&gw.addr, "GET /assets/app.js HTTP/1.1", "").await;
    assert_eq!((status, body.as_str()), (200, "let x = 1;\n"));
    let (status, _) = http(&gw.addr, "GET /assets/../index.html HTTP/1.1", "").await;
    assert_eq!(status, 404);
    eventually("the panel log line", || async {
        gw.proc.log().contains("serving the panel").then_some(())
    })
    .await;

    // A TAP_UI_DIR without a built panel: the plain-text note.
    let empty = tempfile::tempdir().unwrap();
    let gw = gateway_with_env(&[("TAP_UI_DIR", empty.path().to_str().unwrap())]).await;
    let (status, body) = http(&gw.addr, "GET / HTTP/1.1", "").await;
    assert_eq!(status, 200);
    assert!(body.contains("npm run build"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_gateway_serves_the_panel_built_into_tap_without_tap_ui_dir() {
    // Empty means unset: nothing on disk is configured, so the page must come from the
    // binary (a `tap` copied elsewhere or installed serves the same).
    let gw = gateway_with_env(&[("TAP_UI_DIR", "")]).await;
    let (status, index) = http(&gw.addr, "GET / HTTP/1.1", "").await;
    assert_eq!(status, 200, "{index}");
    assert!(index.contains("<title>Tap panel</title>"), "{index}");
    assert!(index.contains("<div id=\"app\">"), "{index}");
    assert!(!index.contains("not available"), "{index}");
    // The built page (Vite's hashed bundle, not ui/index.html's /src/main.tsx), and the
    // bundle it loads is served too.
    let script = index
        .split("src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no script in {index}"));
    assert!(
        script.starts_with("/assets/") && script.ends_with(".js"),
        "{script}"
    );
    let (status, js) = http(&gw.addr, &format!("GET {script} HTTP/1.1"), "").await;
    assert_eq!(status, 200);
    assert!(js.len() > 1000, "a real bundle: {} bytes", js.len());
    eventually("the panel log line", || async {
        gw.proc
            .log()
            .contains("serving the panel built into tap")
            .then_some(())
    })
    .await;
    // And `tap ui` links to it.
    let out = gw.run(&["ui", "--no-open"]).await;
    login_line(&gw, &out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_ui_refuses_when_the_gateway_serves_no_panel() {
    // TAP_UI_DIR is an override: a directory without index.html is no panel, not a
    // fallback to the built-in one.
    let empty = tempfile::tempdir().unwrap();
    let gw = gateway_with_env(&[("TAP_UI_DIR", empty.path().to_str().unwrap())]).await;
    let out = gw.run(&["ui", "--no-open"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(!out.stdout.contains("#login="), "no link: {out:?}");
    let err = out.json();
    assert_eq!(err["errorCode"], "NOT_FOUND", "{out:?}");
    let message = err["error"].as_str().unwrap();
    assert!(message.contains("serves no panel"), "{message}");
    assert!(message.contains("TAP_UI_DIR"), "{message}");
    eventually("the no-panel warning", || async {
        gw.proc
            .log()
            .contains("no panel to serve: no index.html in TAP_UI_DIR")
            .then_some(())
    })
    .await;
}
