//! Settings over the control plane (`settings.get`, `settings.set`, `settings.changed`)
//! and on disk (`$TAP_HOME/settings.json`, 0600): round trip, what is refused, and the
//! engine API the desktop app reads them with.

use tap_testkit::*;

use serde_json::{json, Value};
use tap_gateway::settings::{self, Settings};

fn home(gw: &TestGateway) -> std::path::PathBuf {
    gw.dir.path().join("home")
}

fn running_port(gw: &TestGateway) -> u16 {
    gw.handle.gateway().address().port()
}

#[tokio::test]
async fn without_a_file_the_defaults_are_returned_and_nothing_is_written() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let r = c.ok("settings.get", json!({})).await;
    let port = running_port(&gw);
    assert_eq!(
        r,
        json!({
            "settings": {"port": 9400, "notifications": true, "historyDays": 30, "historyMaxMib": 1024},
            "file": home(&gw).join("settings.json").display().to_string(),
            "runningPort": port,
            "restartRequired": port != 9400,
        })
    );
    assert!(!home(&gw).join("settings.json").exists());
}

#[tokio::test]
async fn settings_set_saves_0600_tells_every_client_and_round_trips() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let (mut other, _) = Control::authed(&gw).await;
    let r = c.ok("settings.set", json!({"port": 9555})).await;
    assert_eq!(
        r["settings"],
        json!({"port": 9555, "notifications": true, "historyDays": 30, "historyMaxMib": 1024})
    );
    assert_eq!(r["restartRequired"], true, "{r}");

    let path = home(&gw).join("settings.json");
    let on_disk: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        on_disk,
        json!({"port": 9555, "notifications": true, "historyDays": 30, "historyMaxMib": 1024})
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
    }
    assert_eq!(
        settings::load(&home(&gw)).unwrap(),
        Settings {
            port: 9555,
            notifications: true,
            ..Settings::default()
        }
    );

    let changed = other.event_of("settings.changed").await;
    assert_eq!(
        changed,
        json!({"kind": "settings.changed", "settings": {"port": 9555, "notifications": true, "historyDays": 30, "historyMaxMib": 1024}})
    );

    // One key at a time; the other keeps its value. The running port needs no restart.
    let port = running_port(&gw);
    let r = c
        .ok(
            "settings.set",
            json!({"notifications": false, "port": port}),
        )
        .await;
    assert_eq!(
        r["settings"],
        json!({"port": port, "notifications": false, "historyDays": 30, "historyMaxMib": 1024})
    );
    assert_eq!(r["restartRequired"], false, "{r}");
    assert_eq!(c.ok("settings.get", json!({})).await, r);
    assert_eq!(
        other.event_of("settings.changed").await["settings"]["notifications"],
        false
    );
}

#[tokio::test]
async fn unknown_keys_and_bad_values_are_refused_and_change_nothing() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("settings.set", json!({"port": 9444})).await;
    let path = home(&gw).join("settings.json");
    let before = std::fs::read_to_string(&path).unwrap();

    let e = c
        .err("settings.set", json!({"colour": "red"}), "INVALID_JSON")
        .await;
    assert!(e["message"].as_str().unwrap().contains("colour"), "{e}");
    let e = c
        .err(
            "settings.set",
            json!({"port": 9445, "startAtLogin": true}),
            "INVALID_JSON",
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("startAtLogin"),
        "{e}"
    );
    for bad in [
        json!({"port": 0}),
        json!({"port": 65536}),
        json!({"port": -1}),
        json!({"port": "9400"}),
        json!({"notifications": "yes"}),
    ] {
        let e = c.err("settings.set", bad.clone(), "INVALID_JSON").await;
        assert!(e["message"].is_string(), "{bad}: {e}");
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    assert_eq!(
        c.ok("settings.get", json!({})).await["settings"]["port"],
        9444
    );
}

#[tokio::test]
async fn a_malformed_file_is_reported_by_get_and_replaced_by_set() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let path = home(&gw).join("settings.json");
    std::fs::write(&path, "{\"port\": ").unwrap();
    let e = c.err("settings.get", json!({}), "INTERNAL").await;
    assert!(
        e["message"].as_str().unwrap().contains("settings.json"),
        "{e}"
    );
    let r = c
        .ok(
            "settings.set",
            json!({"notifications": false, "historyDays": 30, "historyMaxMib": 1024}),
        )
        .await;
    assert_eq!(
        r["settings"],
        json!({"port": 9400, "notifications": false, "historyDays": 30, "historyMaxMib": 1024})
    );
    assert_eq!(
        settings::load(&home(&gw)).unwrap(),
        Settings {
            port: 9400,
            notifications: false,
            ..Settings::default()
        }
    );
}
