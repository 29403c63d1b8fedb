//! `${secret:NAME}` in a server's env: the stored secret reaches the server's environment,
//! and a secret that is not stored stops the start with a reason naming it, never a value.
//! The secrets are in `$TAP_HOME/secrets.json` (`secrets_keyring` off): the tests never
//! touch the machine's keyring.

use super::{fixture, gateway_with, server_in};
use serde_json::json;
use std::time::Duration;
use tap_gateway::RestartPolicy;

const VALUE: &str = "s3cret-value-4417";

#[tokio::test]
async fn a_referenced_secret_reaches_the_server_and_a_missing_one_is_named() {
    // The server compares its TOKEN with EXPECTED (a plain value: env values are never
    // shown either) and says on stderr whether they match, then runs good.py.
    let good = fixture("good.py", &[]);
    let mut argv = vec![
        "-c".to_string(),
        r#"if [ "$TOKEN" = "$EXPECTED" ]; then echo "token: matches" >&2; else echo "token: differs" >&2; fi; exec "$0" "$@""#
            .to_string(),
    ];
    argv.push(good["command"].as_str().unwrap().to_string());
    argv.extend(
        good["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    let mut missing = fixture("good.py", &[]);
    missing["env"] = json!({"TOKEN": "${secret:missing.TOKEN}"});
    let gw = gateway_with(
        json!({
            "good": {"command": "sh", "args": argv, "env": {"TOKEN": "${secret:good.TOKEN}", "EXPECTED": VALUE}},
            "missing": missing,
        }),
        |c| {
            c.secrets_keyring = false;
            tap_secrets::store_secret(
                &tap_secrets::MemoryBackend::new(),
                &c.data_dir,
                "good.TOKEN",
                VALUE,
                false,
            )
            .unwrap();
            c.project_restart = RestartPolicy {
                backoff: Duration::from_millis(10),
                backoff_max: Duration::from_millis(20),
                stable_run: Duration::from_secs(60),
                max_quick_failures: 2,
            };
        },
    )
    .await;

    server_in(&gw, "good", "ready").await;
    let ready = super::server_when(&gw, "good", |s| {
        s["stderrTail"].to_string().contains("token: ")
    })
    .await
    .to_string();
    assert!(ready.contains("token: matches"), "{ready}");

    let parked = server_in(&gw, "missing", "parked").await;
    let why = parked["lastError"].as_str().unwrap();
    assert!(
        why.contains("env TOKEN") && why.contains("'missing.TOKEN'") && why.contains("not stored"),
        "{why}"
    );
    // No value anywhere the gateway shows.
    let list = serde_json::to_string(&gw.handle.gateway().mcp_servers_list()).unwrap();
    assert!(!list.contains(VALUE), "{list}");
}
