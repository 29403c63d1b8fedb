//! `approvals.history` (issue 39: "every decision is in the ledger and the call's trace"):
//! the decisions read back from the tool calls' traces, newest first, with who decided (the
//! user, a grant, a rule), what asked and the approval id; the defaults' silent allows left
//! out; paged with `nextBeforeUs`. Real control connection, real host and provider sockets.

use serde_json::{json, Value};
use tap_testkit::*;

fn destructive(name: &str) -> Value {
    let mut t = tool(name);
    t["annotations"] = json!({"destructiveHint": true});
    t
}

/// The history once the ledger holds `n` decisions (spans are committed a moment after the
/// call: each `traces.changed` says "look again").
async fn history_of(panel: &mut Control, n: usize) -> Value {
    loop {
        let h = panel.ok("approvals.history", json!({})).await;
        if h["decisions"].as_array().unwrap().len() >= n {
            return h;
        }
        panel.event_of("traces.changed").await;
    }
}

#[tokio::test]
async fn the_history_says_who_decided_each_call_newest_first_without_the_defaults_allows() {
    let gw = TestGateway::start().await;
    let (mut panel, _) = Control::authed(&gw).await;
    panel.ok("traces.follow", json!({})).await;
    let (host, info) = gw.host_with_session().await;
    let mut p = gw
        .bound("files", &info.id, json!([destructive("rm"), tool("ls")]))
        .await;

    // Allowed by default: not in the history.
    let rx = invoke(&host, &info.id, "ls", json!({}));
    let c = p.expect("tool.call").await;
    answer(&mut p, &c, json!("listed")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("listed")));

    // Asked by default, approved by the user for the session.
    let rx = invoke(&host, &info.id, "rm", json!({"path": "/tmp/x"}));
    let waiting = panel.event_of("approval.waiting").await;
    let id = waiting["call"]["id"].as_str().unwrap().to_string();
    let answered = panel
        .ok("approvals.approve", json!({"id": id, "for": "session"}))
        .await;
    let grant = answered["grant"]["id"].as_str().unwrap().to_string();
    let c = p.expect("tool.call").await;
    answer(&mut p, &c, json!("gone")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("gone")));

    // Allowed by the grant.
    let rx = invoke(&host, &info.id, "rm", json!({"path": "/tmp/y"}));
    let c = p.expect("tool.call").await;
    answer(&mut p, &c, json!("gone too")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("gone too")));

    // Denied by a rule.
    panel
        .ok(
            "policy.set",
            json!({"rule": {"id": "no-ls", "action": "deny", "match": {"tool": "ls"}}}),
        )
        .await;
    let r = result_of(invoke(&host, &info.id, "ls", json!({}))).await;
    assert_eq!(code(&r), Some("DENIED"));

    let h = history_of(&mut panel, 3).await;
    let d = h["decisions"].as_array().unwrap();
    let seen: Vec<_> = d
        .iter()
        .map(|x| {
            (
                x["tool"].as_str().unwrap(),
                x["decision"].as_str().unwrap(),
                x["by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("ls", "deny", "rule"),
            ("rm", "allow", "grant"),
            ("rm", "allow", "user")
        ],
        "{h}"
    );
    assert_eq!(d[0]["rule"], "no-ls");
    // A call refused before dispatch reached no provider: its trace names none.
    assert_eq!(d[1]["provider"], "files");
    assert_eq!(d[0]["sessionId"], info.id.as_str());
    assert_eq!(d[1]["grant"], grant.as_str());
    assert_eq!(d[2]["asked"], "default");
    assert_eq!(d[2]["approvalId"], id.as_str());
    assert_eq!(d[2]["grant"], grant.as_str());
    assert!(d[2]["traceId"].as_str().unwrap().len() == 32, "{h}");
    assert!(h.get("nextBeforeUs").is_none(), "{h}");

    // Paged: one at a time, newest first, each page's end the next one's start.
    let first = panel.ok("approvals.history", json!({"limit": 1})).await;
    assert_eq!(first["decisions"][0]["traceId"], d[0]["traceId"]);
    let before = first["nextBeforeUs"].as_u64().expect("a next page");
    let second = panel
        .ok("approvals.history", json!({"limit": 1, "beforeUs": before}))
        .await;
    assert_eq!(
        second["decisions"][0]["traceId"], d[1]["traceId"],
        "{second}"
    );
    // A bad page size is refused like any bad params.
    panel
        .err(
            "approvals.history",
            json!({"limit": "many"}),
            "INVALID_JSON",
        )
        .await;
}
