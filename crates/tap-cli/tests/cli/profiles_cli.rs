//! `tap profiles` and `tap mcp --profile` against a real `tap gateway` child running the
//! fixture MCP server `good.py`: a profile made with `tap profiles set` hides a tool from a
//! real MCP client launching `tap mcp --profile`, which cannot call it either; `tap
//! profiles` counts what each profile costs, `show` lists its tools.

use crate::common::{tap_bin, GatewayProcess};
use crate::mcp_servers_cli::{fixture, listed_when, live, live_ok};
use serde_json::json;
use std::path::Path;
use tap_testkit::{test_python, McpClient};

/// A gateway child with the fixture server `good` added and ready.
async fn gateway_with_good() -> GatewayProcess {
    let gw = GatewayProcess::start().await;
    live_ok(
        &gw,
        &[
            "mcp",
            "add",
            "good",
            "--",
            &test_python(),
            &fixture("good.py"),
        ],
    )
    .await;
    listed_when(&gw, "good", |s| s["state"] == "ready").await;
    gw
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_made_with_the_cli_hides_a_tool_from_tap_mcp() {
    let gw = gateway_with_good().await;
    live_ok(
        &gw,
        &[
            "profiles",
            "set",
            "lean",
            "--server",
            "good",
            "--hide-tool",
            "good__fails",
            "--description",
            "no failures",
        ],
    )
    .await;

    let (mut c, _) = McpClient::python_stdio_profile(
        Path::new(tap_bin()),
        &gw.home,
        "lean-client",
        "lean",
        gw.log_dir(),
    )
    .await;
    let names = c.tool_names().await;
    assert!(names.contains(&"good__echo".to_string()), "{names:?}");
    assert!(!names.contains(&"good__fails".to_string()), "{names:?}");
    let refused = c.call("1", "good__fails", json!({})).await;
    assert_eq!(refused["op"], "error", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("profile 'lean'"),
        "{refused}"
    );
    let echo = c.call("2", "good__echo", json!({"message": "hi"})).await;
    assert_eq!(echo["isError"], false, "{echo}");

    let list = live_ok(&gw, &["profiles", "--json"]).await.json();
    let lean = list["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "lean")
        .unwrap();
    assert_eq!(lean["def"]["description"], "no failures");
    assert!(
        lean["tokens"].as_u64().unwrap() < list["tokens"].as_u64().unwrap(),
        "{list}"
    );
    let shown = live_ok(&gw, &["profiles", "show", "lean"]).await;
    assert!(
        shown.stdout.contains("good__echo") && !shown.stdout.contains("good__fails"),
        "{shown:?}"
    );
    let table = live_ok(&gw, &["profiles"]).await;
    assert!(
        table.stdout.contains("(no profile)") && table.stdout.contains("o200k_base"),
        "{table:?}"
    );

    // A client token held to the profile: printed once, listed without its value, revoked.
    let made = live_ok(&gw, &["tokens", "create", "editor", "--profile", "lean"]).await;
    let token = made.stdout.trim().to_string();
    assert!(token.starts_with("mtk-"), "{made:?}");
    let tokens = live_ok(&gw, &["tokens", "list", "--json"]).await.json();
    assert_eq!(tokens["tokens"][0]["client"], "editor", "{tokens}");
    assert_eq!(tokens["tokens"][0]["profile"], "lean", "{tokens}");
    assert!(!tokens.to_string().contains(&token), "{tokens}");
    let id = tokens["tokens"][0]["id"].as_str().unwrap().to_string();
    live_ok(&gw, &["tokens", "revoke", &id]).await;
    let again = live(&gw, &["tokens", "revoke", &id]).await;
    assert!(again.stdout.contains("NOT_FOUND"), "{again:?}");

    // A name that cannot be a profile, and one that is not there: refused, the contract's codes.
    let bad = live(&gw, &["profiles", "set", "no spaces"]).await;
    assert_eq!(bad.code(), Some(1), "{bad:?}");
    assert!(bad.stdout.contains("INVALID_JSON"), "{bad:?}");
    live_ok(&gw, &["profiles", "remove", "lean"]).await;
    let gone = live(&gw, &["profiles", "show", "lean"]).await;
    assert!(gone.stdout.contains("NOT_FOUND"), "{gone:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_profile_gives_tap_mcp_the_two_search_tools() {
    let gw = gateway_with_good().await;
    live_ok(
        &gw,
        &[
            "profiles",
            "set",
            "finder",
            "--server",
            "good",
            "--surface",
            "search",
        ],
    )
    .await;
    let bad = live(&gw, &["profiles", "set", "x", "--surface", "list"]).await;
    assert_eq!(bad.code(), Some(2), "{bad:?}");

    let (mut c, _) = McpClient::python_stdio_profile(
        Path::new(tap_bin()),
        &gw.home,
        "finder-client",
        "finder",
        gw.log_dir(),
    )
    .await;
    let names = c.tool_names().await;
    assert!(
        names.contains(&"tap_find_tools".to_string())
            && names.contains(&"tap_call_tool".to_string()),
        "{names:?}"
    );
    assert!(!names.contains(&"good__echo".to_string()), "{names:?}");
    let found = c
        .call("1", "tap_find_tools", json!({"query": "echo a message"}))
        .await;
    assert!(
        found["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"name\":\"good__echo\""),
        "{found}"
    );
    let echo = c
        .call(
            "2",
            "tap_call_tool",
            json!({"name": "good__echo", "arguments": {"message": "hi"}}),
        )
        .await;
    assert_eq!(echo["isError"], false, "{echo}");
    assert_eq!(echo["content"][0]["text"], "hi", "{echo}");

    let shown = live_ok(&gw, &["profiles", "show", "finder"]).await;
    assert!(
        shown.stdout.contains("good__echo") && shown.stdout.contains("Search surface"),
        "{shown:?}"
    );
    let table = live_ok(&gw, &["profiles"]).await;
    assert!(table.stdout.contains("search"), "{table:?}");
}
