//! Servers that misbehave: each is reported (state, last error, stderr) and none takes the
//! gateway, another server or another call down with it.

use super::super::mcp::{client, text_of, wait_listed};
use super::{fixture, gateway_with, impatient, server_in, server_when};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn servers_that_never_start_are_parked_with_the_reason() {
    let gw = gateway_with(
        json!({
            "silent": fixture("silent.py", &[]),
            "exits": fixture("exits.py", &[]),
            "missing": {"command": "/nonexistent/mcp-server"},
            "good": fixture("good.py", &[]),
        }),
        impatient,
    )
    .await;
    let silent = server_in(&gw, "silent", "parked").await;
    assert!(
        silent["lastError"]
            .as_str()
            .unwrap()
            .contains("did not answer initialize"),
        "{silent}"
    );
    let exits = server_in(&gw, "exits", "parked").await;
    assert!(
        exits["lastError"].as_str().unwrap().contains("exited"),
        "{exits}"
    );
    let tail = exits["stderrTail"].to_string();
    assert!(tail.contains("exits: failing on purpose"), "{exits}");
    let missing = server_in(&gw, "missing", "parked").await;
    assert!(
        missing["lastError"]
            .as_str()
            .unwrap()
            .contains("cannot start"),
        "{missing}"
    );
    // The others are not held back.
    server_in(&gw, "good", "ready").await;

    // The user restarts a parked one: it is tried again (and parked again).
    let restarted = gw
        .handle
        .gateway()
        .mcp_servers_restart(&tap_protocol::mcp_servers::McpServerRef {
            name: "exits".into(),
            session_id: None,
        })
        .unwrap();
    assert_eq!(restarted.name, "exits");
    server_when(&gw, "exits", |s| s["state"] != "parked").await;
    server_in(&gw, "exits", "parked").await;
}

#[tokio::test]
async fn a_crash_mid_call_ends_that_call_once_and_the_server_comes_back() {
    let gw = gateway_with(json!({"crash": fixture("crash_mid_call.py", &[])}), |c| {
        c.project_restart.backoff = Duration::from_millis(10);
    })
    .await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "crash__boom").await;
    let boom = c.call("1", "crash__boom", json!({})).await;
    assert_eq!(boom["isError"], true, "{boom}");
    assert!(text_of(&boom).starts_with("DISCONNECTED"), "{boom}");
    let back = server_when(&gw, "crash", |s| {
        s["state"] == "ready" && s["restarts"] == 1
    })
    .await;
    assert!(
        back["lastError"].as_str().unwrap().contains("exited"),
        "{back}"
    );
    wait_listed(&mut c, "crash__ok").await;
    let ok = c.call("2", "crash__ok", json!({})).await;
    assert_eq!(text_of(&ok), "ok", "{ok}");

    // Its life is in the ledger: two starts, one exit that failed and was restarted.
    gw.handle.gateway().flush_history().await;
    let (mut control, _) = tap_testkit::Control::authed(&gw).await;
    let traces = control
        .ok("traces.list", json!({"provider": "mcp-crash"}))
        .await;
    let named = |name: &str, status: &str| {
        traces["traces"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"] == name && t["status"] == status)
            .count()
    };
    assert_eq!(named("mcp_server.start", "ok"), 2, "{traces}");
    assert_eq!(named("mcp_server.exit", "error"), 1, "{traces}");
}

#[tokio::test]
async fn noise_on_stdout_too_many_tools_and_a_huge_result_are_survived() {
    let gw = gateway_with(
        json!({
            "flood": fixture("flood.py", &[]),
            "many": fixture("many_tools.py", &[]),
            "huge": fixture("huge_result.py", &[]),
        }),
        // Long: the huge answer must end its call by itself, long before this.
        |c| c.default_tool_timeout = Duration::from_secs(600),
    )
    .await;
    let many = server_in(&gw, "many", "ready").await;
    assert_eq!(many["tools"].as_array().unwrap().len(), 100, "{many}");
    assert!(
        many["warnings"].to_string().contains("offers 1000 tools"),
        "{many}"
    );

    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "flood__echo").await;
    let echo = c
        .call("1", "flood__echo", json!({"message": "through the noise"}))
        .await;
    assert_eq!(text_of(&echo), "through the noise", "{echo}");

    // A 50 MB answer is over what is read from a server (16 MiB a message): the call ends
    // at once with an error that names the limit (the client would give up waiting long
    // before the call's 600 s timeout), and the server is started again and serves.
    wait_listed(&mut c, "huge__small").await;
    let first = server_in(&gw, "huge", "ready").await;
    let huge = c.call("2", "huge__huge", json!({})).await;
    assert_eq!(huge["isError"], true, "{huge}");
    let text = text_of(&huge);
    assert!(
        text.contains("over 16 MiB") && text.contains("limit of one message"),
        "{huge}"
    );
    let again = server_when(&gw, "huge", |s| {
        s["state"] == "ready" && s["restarts"].as_u64() >= Some(1)
    })
    .await;
    assert_ne!(again["pid"], first["pid"], "{again}");
    wait_listed(&mut c, "huge__small").await;
    let small = c.call("3", "huge__small", json!({})).await;
    assert_eq!(text_of(&small), "small", "{small}");
}

#[tokio::test]
async fn stopping_the_gateway_kills_what_a_server_started() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("leaked.pid");
    let mut entry = fixture("leaks_children.py", &[]);
    entry["env"] = json!({"LEAK_PID_FILE": pid_file.display().to_string()});
    let gw = gateway_with(json!({"leaky": entry}), |_| {}).await;
    server_in(&gw, "leaky", "ready").await;
    let pid: i32 = tap_testkit::eventually("the leaked child's pid", || {
        let read = std::fs::read_to_string(&pid_file).ok();
        async move { read.and_then(|p| p.trim().parse().ok()) }
    })
    .await;
    assert!(alive(pid));
    let tap_testkit::TestGateway { handle, dir: _home } = gw;
    handle.stop().await.unwrap();
    tap_testkit::eventually("the leaked child gone", || {
        let gone = !alive(pid);
        async move { gone.then_some(()) }
    })
    .await;
}

/// Whether `pid` runs (a zombie, reaped by no one in a test, counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .split(") ")
            .nth(1)
            .is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[tokio::test]
async fn a_tool_name_taken_by_another_server_is_refused_for_the_later_one_only() {
    let mut first = fixture("collide.py", &["--tools", "a,b"]);
    first["prefix"] = json!("");
    let mut second = fixture("collide.py", &["--tools", "a,c"]);
    second["prefix"] = json!("");
    let gw = gateway_with(json!({"first": first}), |_| {}).await;
    server_in(&gw, "first", "ready").await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "b").await;
    // The second server arrives later (as after `tap mcp add`).
    super::write_user_file(
        &gw.dir.path().join("home"),
        &json!({"first": first, "second": second}),
    );
    gw.handle.gateway().mcp_servers_reload();
    let second = server_when(&gw, "second", |s| {
        s["state"] == "ready" && s["warnings"].to_string().contains("'a'")
    })
    .await;
    assert_eq!(second["tools"], json!(["c"]), "{second}");
    let names = wait_listed(&mut c, "c").await;
    assert_eq!(names.iter().filter(|n| *n == "a").count(), 1, "{names:?}");
    let a = c.call("1", "a", json!({})).await;
    assert_eq!(text_of(&a), "from collide: a", "{a}");
}

#[tokio::test]
async fn a_server_flooding_notifications_gets_its_call_answered_and_keeps_serving() {
    let gw = gateway_with(json!({"chatty": fixture("chatty.py", &[])}), |_| {}).await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "chatty__spam").await;
    // 20,000 list changes, log entries and progress notes before the answer: the list
    // changes coalesce, the rest beyond the queue are dropped, the call still ends once.
    c.start_call("1", "chatty__spam", json!({"count": 20000}), true)
        .await;
    let done = c.outcome("1").await;
    assert_eq!(text_of(&done), "done", "{done}");
    let pong = c.call("2", "chatty__ping_tool", json!({})).await;
    assert_eq!(text_of(&pong), "pong", "{pong}");
    let entry = server_in(&gw, "chatty", "ready").await;
    assert_eq!(entry["restarts"], 0, "{entry}");
}
