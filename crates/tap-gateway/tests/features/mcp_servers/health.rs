//! What the panel, `tap mcp list` and the tray read of a server's health: the memory its
//! process holds while it runs, and whether it is failing (and how often in a row).

use super::{fixture, gateway_with, server_in, server_when};
use serde_json::json;
use std::time::Duration;

/// `VmRSS` of `pid` in bytes, read here the way a person would check it.
fn rss_of(pid: u64) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    kib * 1024
}

#[tokio::test]
async fn a_running_server_reports_its_memory_and_a_parked_one_is_failing() {
    let gw = gateway_with(
        json!({"good": fixture("good.py", &[]), "exits": fixture("exits.py", &[])}),
        |c| {
            c.project_restart.backoff = Duration::from_millis(10);
            c.project_restart.backoff_max = Duration::from_millis(20);
            c.project_restart.max_quick_failures = 2;
        },
    )
    .await;

    let good = server_in(&gw, "good", "ready").await;
    let pid = good["pid"].as_u64().expect("a pid");
    let memory = good["memoryBytes"].as_u64().expect("memoryBytes");
    // A Python interpreter holds megabytes; the gateway read its own process's figure,
    // which moves a little between two reads.
    assert!(memory > 1024 * 1024, "{good}");
    let now = rss_of(pid);
    assert!(memory.abs_diff(now) < now / 2, "{memory} vs {now}");
    assert_eq!(good["failing"], false, "{good}");
    assert_eq!(good["failures"], 0, "{good}");

    // Parked after two quick failures: failing, with the count, no process and no memory.
    let exits = server_in(&gw, "exits", "parked").await;
    assert_eq!(exits["failing"], true, "{exits}");
    assert_eq!(exits["failures"], 2, "{exits}");
    assert!(exits.get("pid").is_none(), "{exits}");
    assert!(exits.get("memoryBytes").is_none(), "{exits}");

    // Restarted by the user: the count starts again.
    gw.handle
        .gateway()
        .mcp_servers_restart(&tap_protocol::mcp_servers::McpServerRef {
            name: "exits".into(),
            session_id: None,
        })
        .unwrap();
    server_when(&gw, "exits", |s| s["state"] != "parked").await;
    let again = server_in(&gw, "exits", "parked").await;
    assert_eq!(again["failures"], 2, "{again}");
    // The good one was never failing.
    assert_eq!(server_in(&gw, "good", "ready").await["failing"], false);
}
