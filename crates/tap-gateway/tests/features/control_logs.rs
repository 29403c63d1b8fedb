//! The gateway's log over the control plane (`logs.recent`, `logs.follow`, the `log` and
//! `follow.lagged` events): records from the real engine, level filters, a follower that
//! falls behind, and no secret in any record even when a provider prints its token.
//!
//! Each test installs the log layer as its thread's subscriber; `#[tokio::test]` runs the
//! gateway's tasks on that same thread, so they log into it.

use tap_testkit::*;

use serde_json::{json, Value};
use tap_gateway::logs::LogBuffer;
use tap_gateway::SpawnSpec;
use tracing_subscriber::layer::SubscriberExt;

/// A gateway logging into a fresh ring of `capacity`; keep the guard for the test.
async fn logged_gateway(
    capacity: usize,
    tweak: impl FnOnce(&mut tap_gateway::GatewayConfig),
) -> (TestGateway, tracing::subscriber::DefaultGuard) {
    let buffer = LogBuffer::new(capacity);
    let guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(buffer.layer()));
    let gw = TestGateway::start_with(|c| {
        c.logs = Some(buffer);
        tweak(c);
    })
    .await;
    (gw, guard)
}

fn messages(records: &Value) -> Vec<String> {
    records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["message"].as_str().unwrap().to_string())
        .collect()
}

fn field<'a>(record: &'a Value, name: &str) -> Option<&'a str> {
    record["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .map(|f| f["value"].as_str().unwrap())
}

#[tokio::test]
async fn logs_recent_returns_the_engine_records_oldest_first_filtered_by_level_and_count() {
    let (gw, _log) = logged_gateway(500, |_| {}).await;
    let (mut c, _) = Control::authed(&gw).await;
    tracing::warn!(target: "e2e", "a warning from the test");

    let all = c.ok("logs.recent", json!({})).await;
    assert_eq!(all["enabled"], true);
    assert_eq!(all["capacity"], 500);
    let records = all["records"].as_array().unwrap();
    let listening = records
        .iter()
        .find(|r| r["message"] == "gateway listening")
        .unwrap_or_else(|| panic!("no 'gateway listening' in {all}"));
    assert_eq!(listening["level"], "info");
    assert_eq!(listening["target"], "tap_gateway::handle");
    assert_eq!(
        field(listening, "address"),
        Some(gw.handle.gateway().address().to_string().as_str())
    );
    assert!(listening["ts"].as_str().unwrap().ends_with('Z'));
    // Oldest first, numbered in order.
    let seqs: Vec<u64> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert_eq!(
        records.last().unwrap()["message"],
        "a warning from the test"
    );

    let warnings = c.ok("logs.recent", json!({"level": "warn"})).await;
    assert_eq!(messages(&warnings["records"]), ["a warning from the test"]);
    let last = c.ok("logs.recent", json!({"limit": 2})).await;
    assert_eq!(last["records"].as_array().unwrap().len(), 2);
    assert_eq!(last["records"][1]["message"], "a warning from the test");
    c.err("logs.recent", json!({"level": "loud"}), "INVALID_JSON")
        .await;
}

#[tokio::test]
async fn logs_follow_sends_each_new_record_at_or_above_its_level() {
    let (gw, _log) = logged_gateway(500, |_| {}).await;
    let (mut c, _) = Control::authed(&gw).await;
    let before = c.ok("logs.follow", json!({"level": "info"})).await;
    assert!(
        messages(&before["records"]).contains(&"control client authenticated".to_string()),
        "{before}"
    );

    let (_p, _) = gw.authed().await;
    let e = c.event_of("log").await;
    let record = &e["record"];
    assert_eq!(record["message"], "provider authenticated", "{e}");
    assert_eq!(record["level"], "info");
    assert_eq!(record["target"], "tap_gateway::providers::connection::auth");
    assert_eq!(field(record, "trust"), Some("project"), "{record}");
    assert!(
        field(record, "provider").is_some_and(|p| p.starts_with('p')),
        "{record}"
    );
    assert!(
        field(record, "remote").is_some_and(|r| r.starts_with("127.0.0.1:")),
        "{record}"
    );

    // Below the followed level: not sent.
    tracing::debug!(target: "e2e", "debug detail");
    tracing::info!(target: "e2e", "info line");
    let e = c.event_of("log").await;
    assert_eq!(e["record"]["message"], "info line", "{e}");
    assert!(
        c.ok("logs.recent", json!({"level": "debug", "limit": 2}))
            .await["records"][0]["message"]
            == "debug detail",
        "the ring kept the debug record"
    );
}

#[tokio::test]
async fn a_follower_that_falls_behind_is_told_how_many_records_it_missed() {
    let (gw, _log) = logged_gateway(5000, |_| {}).await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("logs.follow", json!({})).await;
    // The runtime is single-threaded: the connection cannot forward while this loop logs.
    for i in 0..3000 {
        tracing::info!(target: "e2e", "flood {i}");
    }
    let lagged = c.event_of("follow.lagged").await;
    assert_eq!(lagged["topic"], "logs", "{lagged}");
    let missed = lagged["missed"].as_u64().unwrap();
    assert_eq!(missed, 3000 - 1024, "{lagged}");
    let next = c.event_of("log").await;
    assert_eq!(
        next["record"]["message"],
        format!("flood {missed}"),
        "{next}"
    );
    // The ring itself kept them all.
    let kept = c.ok("logs.recent", json!({"limit": 3000})).await;
    assert_eq!(kept["records"][0]["message"], "flood 0");
}

#[tokio::test]
async fn no_record_holds_a_token_even_when_a_provider_prints_one() {
    let (gw, _log) = logged_gateway(500, |c| {
        // `ui.login` needs a panel to link to.
        c.embedded_panel = Some(tap_gateway::EmbeddedPanel::new(&[("index.html", b"<p>")]));
        c.spawn = vec![SpawnSpec::shell(
            "echo \"token=$TAP_PROVIDER_TOKEN\"; echo \"url=$TAP_GATEWAY_URL\"",
        )];
    })
    .await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("ui.login", json!({})).await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let records = loop {
        let r = c.ok("logs.recent", json!({})).await;
        if messages(&r["records"])
            .iter()
            .any(|m| m.starts_with("url="))
        {
            break r;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the provider's output was never logged: {r}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    let printed = messages(&records["records"])
        .into_iter()
        .find(|m| m.starts_with("token="))
        .expect("the provider's line was logged");
    assert_eq!(printed, "token=ptk-<redacted>");
    let text = records.to_string();
    let g = gw.handle.gateway();
    for secret in [g.provider_token(), g.host_token(), g.control_token()] {
        assert!(!text.contains(secret), "a token is in the log: {text}");
    }
    assert!(text.contains("panel login link issued"), "{text}");
}

#[tokio::test]
async fn without_a_log_ring_the_log_is_empty_and_says_so() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    for method in ["logs.recent", "logs.follow"] {
        assert_eq!(
            c.ok(method, json!({})).await,
            json!({"records": [], "capacity": 0, "enabled": false}),
            "{method}"
        );
    }
}
