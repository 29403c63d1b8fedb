//! `tap pins` (docs/pins.md) against a real `tap gateway` child running the fixture MCP
//! server `described.py`, whose tool description is a file's text: the tool is pinned when
//! first offered to a session (`tap session open`); the file changes and the server restarts, so the changed definition is
//! held; `tap pins list`, `diff` and `tap status` say so; `tap pins accept` (with the
//! server's name) lets it through.

use crate::common::{eventually, GatewayProcess, SessionOpen};
use crate::mcp_servers_cli::{fixture, listed_when, live, live_ok};
use tap_testkit::test_python;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_change_is_listed_diffed_named_in_status_and_accepted() {
    let gw = GatewayProcess::start().await;
    let description = gw.dir.path().join("description.txt");
    std::fs::write(&description, "Describes things").unwrap();
    live_ok(
        &gw,
        &[
            "mcp",
            "add",
            "d",
            "--",
            &test_python(),
            &fixture("described.py"),
            &description.display().to_string(),
        ],
    )
    .await;
    listed_when(&gw, "d", |s| s["state"] == "ready").await;
    // Tools are pinned as they are offered to a session.
    let session = SessionOpen::open(&gw, &["--label", "pins"]).await;
    gw.wait_for_tool(&session.id, "d__describe").await;
    eventually("d__describe pinned", || async {
        let list = live_ok(&gw, &["pins", "list", "--json"]).await.json();
        list["pins"]
            .as_array()?
            .iter()
            .any(|p| p["provider"] == "mcp-d" && p["tool"] == "d__describe")
            .then_some(())
    })
    .await;

    std::fs::write(&description, "Describes things. Also exfiltrates them.").unwrap();
    live_ok(&gw, &["mcp", "restart", "d"]).await;
    let held = eventually("d__describe held", || async {
        let list = live_ok(&gw, &["pins", "list", "--json"]).await.json();
        list["held"].as_array()?.first().cloned()
    })
    .await;
    assert_eq!(held["provider"], "mcp-d", "{held}");
    assert_eq!(held["reason"], "changed", "{held}");

    let table = live_ok(&gw, &["pins", "list"]).await;
    assert!(
        table.stdout.contains("tap pins diff mcp-d d__describe"),
        "{table:?}"
    );
    let diff = live_ok(&gw, &["pins", "diff", "d", "d__describe"]).await;
    assert!(
        diff.stdout
            .contains("+Describes things. Also exfiltrates them."),
        "{diff:?}"
    );
    assert!(diff.stdout.contains("-Describes things\n"), "{diff:?}");
    let status = live_ok(&gw, &["status"]).await;
    assert!(
        status.stdout.contains("Held tools (1)") && status.stdout.contains("mcp-d/d__describe"),
        "{status:?}"
    );

    // A stale hash is refused; the one shown is accepted.
    let stale = live(
        &gw,
        &[
            "pins",
            "accept",
            "d",
            "d__describe",
            "--hash",
            &"0".repeat(64),
        ],
    )
    .await;
    assert_eq!(stale.code(), Some(1), "{stale:?}");
    assert!(stale.stdout.contains("NOT_FOUND"), "{stale:?}");
    let hash = held["offeredHash"].as_str().unwrap();
    live_ok(&gw, &["pins", "accept", "d", "d__describe", "--hash", hash]).await;
    let list = live_ok(&gw, &["pins", "list", "--json"]).await.json();
    assert_eq!(list["held"], serde_json::json!([]), "{list}");
    let status = live_ok(&gw, &["status"]).await;
    assert!(!status.stdout.contains("Held tools"), "{status:?}");
    gw.wait_for_tool(&session.id, "d__describe").await;
}
