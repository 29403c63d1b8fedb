//! The control plane pushes each change the panel shows (issue 42, "live without polling"):
//! a page asks again on an event, never on a timer, so every change needs one. This file
//! covers the kinds with no test of their own elsewhere: the approval policy
//! (`policy.changed` for rules set or removed and for answers remembered or revoked, from
//! whichever client made them) and an MCP server's state changing by itself (its process
//! died: `status.changed`, with `mcpServers.list` showing the new process afterwards).
//! Sessions and providers (`control_plane.rs`), traces and emitters
//! (`followed_changes.rs`), approvals waiting (`approvals_control.rs`) and settings
//! (`settings.rs`) have theirs.

use crate::mcp_servers::{fixture, gateway_with, server_in};
use serde_json::{json, Value};
use tap_testkit::*;

fn destructive(name: &str) -> Value {
    let mut t = tool(name);
    t["annotations"] = json!({"destructiveHint": true});
    t
}

/// The kinds of the events `watcher` receives up to the next `settings.changed`, which
/// `actor` causes now: everything the gateway sent before it is in order before it, so
/// an event missing from the list was not sent.
async fn kinds_until_a_marker(watcher: &mut Control, actor: &mut Control) -> Vec<String> {
    actor
        .ok("settings.set", json!({"notifications": true}))
        .await;
    let mut kinds = Vec::new();
    loop {
        let e = watcher.event().await;
        let kind = e["event"]["kind"].as_str().unwrap().to_string();
        if kind == "settings.changed" {
            return kinds;
        }
        kinds.push(kind);
    }
}

#[tokio::test]
async fn every_change_to_the_approval_policy_is_pushed_to_every_control_client() {
    let gw = TestGateway::start().await;
    let (mut watcher, _) = Control::authed(&gw).await;
    let (mut actor, _) = Control::authed(&gw).await;

    // A rule set by another client (as `tap policy set` does): the watcher is told and
    // `policy.list` has it.
    let rule = json!({"rule": {"id": "r", "match": {"tool": "rm"}, "action": "deny"}});
    actor.ok("policy.set", rule).await;
    assert_eq!(
        watcher.event_of("policy.changed").await,
        json!({"kind": "policy.changed"})
    );
    let list = watcher.ok("policy.list", json!({})).await;
    assert_eq!(list["rules"][0]["id"], "r", "{list}");
    actor.ok("policy.remove", json!({"id": "r"})).await;
    watcher.event_of("policy.changed").await;
    let list = watcher.ok("policy.list", json!({})).await;
    assert_eq!(list["rules"], json!([]), "{list}");

    // A refused change changes nothing and tells nothing.
    let bad = json!({"rule": {"id": "", "action": "ask"}});
    actor.err("policy.set", bad, "INVALID_JSON").await;
    actor
        .err("policy.remove", json!({"id": "nope"}), "NOT_FOUND")
        .await;
    let kinds = kinds_until_a_marker(&mut watcher, &mut actor).await;
    assert!(!kinds.contains(&"policy.changed".into()), "{kinds:?}");

    let (host, info) = gw.host_with_session().await;
    let mut p = gw
        .bound("files", &info.id, json!([destructive("rm")]))
        .await;
    // Approved once: nothing is remembered, so the policy did not change.
    let rx = invoke(&host, &info.id, "rm", json!({}));
    let id = watcher.event_of("approval.waiting").await["call"]["id"].clone();
    actor
        .ok("approvals.approve", json!({"id": id, "for": "call"}))
        .await;
    let c = p.expect("tool.call").await;
    answer(&mut p, &c, json!("ran")).await;
    result_of(rx).await;
    let kinds = kinds_until_a_marker(&mut watcher, &mut actor).await;
    assert!(kinds.contains(&"approval.resolved".into()), "{kinds:?}");
    assert!(!kinds.contains(&"policy.changed".into()), "{kinds:?}");

    // Approved for the session: a grant is made, and the Grants list is told.
    let rx = invoke(&host, &info.id, "rm", json!({}));
    let id = watcher.event_of("approval.waiting").await["call"]["id"].clone();
    let made = actor
        .ok("approvals.approve", json!({"id": id, "for": "session"}))
        .await;
    let grant = made["grant"]["id"].as_str().unwrap().to_string();
    watcher.event_of("policy.changed").await;
    let grants = watcher.ok("approvals.grants", json!({})).await;
    assert_eq!(grants["grants"][0]["id"], grant.as_str(), "{grants}");
    let c = p.expect("tool.call").await;
    answer(&mut p, &c, json!("ran")).await;
    result_of(rx).await;

    // Revoked: told; the next call waits again, and a deny remembered always is told too.
    actor.ok("approvals.revoke", json!({"grant": grant})).await;
    watcher.event_of("policy.changed").await;
    assert_eq!(
        watcher.ok("approvals.grants", json!({})).await["grants"],
        json!([])
    );
    let rx = invoke(&host, &info.id, "rm", json!({}));
    let id = watcher.event_of("approval.waiting").await["call"]["id"].clone();
    actor
        .ok("approvals.deny", json!({"id": id, "remember": "always"}))
        .await;
    watcher.event_of("policy.changed").await;
    assert_eq!(code(&result_of(rx).await), Some("DENIED"));
    let grants = watcher.ok("approvals.grants", json!({})).await;
    assert_eq!(grants["grants"][0]["decision"], "deny", "{grants}");
}

#[tokio::test]
async fn a_server_whose_process_dies_is_pushed_as_a_status_change_until_it_is_ready_again() {
    let gw = gateway_with(json!({"good": fixture("good.py", &[])}), |_| {}).await;
    let first = server_in(&gw, "good", "ready").await;
    let pid = first["pid"].as_u64().expect("a pid");
    let (mut watcher, _) = Control::authed(&gw).await;

    // Nobody asked for this change: only an event can tell an open page.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    // Refreshing on each `status.changed` (as the Servers page does) reaches the server
    // ready in a new process; `event_of` fails the test when no event comes.
    loop {
        watcher.event_of("status.changed").await;
        let list = watcher.ok("mcpServers.list", json!({})).await;
        let good = &list["servers"][0];
        if good["state"] == "ready" && good["pid"].as_u64() != Some(pid) {
            assert!(good["restarts"].as_u64() >= Some(1), "{good}");
            break;
        }
    }
}
