//! Edits to a session's `tap.config.json` while it runs (issue 12, "Streams and config"):
//! an added entry starts, a changed one restarts with its new definition, a removed one
//! stops; emitters started for the session only are left alone; an edit that breaks the
//! file changes nothing and says so.

use serde_json::{json, Value};
use std::path::Path;
use tap_protocol::host::{HostEvent, SessionRegister};
use tap_testkit::*;

async fn gateway() -> TestGateway {
    TestGateway::for_emitters().await
}

fn write(path: &Path, v: Value) {
    // Another size each time as well as another time: the poll compares both.
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// `(name, command, status)` of each emitter of the session, once `done` holds.
async fn emitters_until(
    gw: &TestGateway,
    session: &str,
    what: &str,
    done: impl Fn(&[(String, String, String)]) -> bool,
) -> Vec<(String, String, String)> {
    let g = gw.handle.gateway();
    eventually(what, || {
        let now: Vec<(String, String, String)> = g
            .emitters_list(Some(session))
            .emitters
            .into_iter()
            .map(|e| {
                let status = serde_json::to_value(e.status).unwrap();
                (
                    e.name,
                    e.command.unwrap_or_default(),
                    status.as_str().unwrap().to_string(),
                )
            })
            .collect();
        let ok = done(&now);
        async move { ok.then_some(now) }
    })
    .await
}

fn has(list: &[(String, String, String)], name: &str, command: &str, live: bool) -> bool {
    list.iter()
        .any(|(n, c, s)| n == name && c == command && (s != "stopped" && s != "stopping") == live)
}

#[tokio::test]
async fn edits_to_the_config_start_restart_and_stop_emitters_while_the_session_runs() {
    let gw = gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let config = project.join("tap.config.json");
    write(
        &config,
        json!({"emitters": [{"name": "a", "command": "echo one", "every": "1h"}]}),
    );
    let mut host = gw.host().await;
    let s = host
        .register_session(SessionRegister {
            label: Some("edits".into()),
            cwd: Some(project.display().to_string()),
            foreground: true,
            ..Default::default()
        })
        .await
        .unwrap();
    emitters_until(&gw, &s.id, "a starts", |l| has(l, "a", "echo one", true)).await;
    // One the user starts for this session only: no edit touches it.
    let (mut c, _) = Control::authed(&gw).await;
    c.ok(
        "emitters.start",
        json!({"sessionId": s.id, "name": "mine", "command": "sleep 600"}),
    )
    .await;

    write(
        &config,
        json!({"emitters": [
            {"name": "a", "command": "echo two", "every": "1h"},
            {"name": "b", "command": "echo bee", "every": "1h"}
        ]}),
    );
    emitters_until(
        &gw,
        &s.id,
        "a restarts with its new command, b starts",
        |l| has(l, "a", "echo two", true) && has(l, "b", "echo bee", true),
    )
    .await;

    write(
        &config,
        json!({"emitters": [{"name": "b", "command": "echo bee", "every": "1h"}],
               "note": "a is gone"}),
    );
    let l = emitters_until(&gw, &s.id, "a stops", |l| has(l, "a", "echo two", false)).await;
    assert!(has(&l, "b", "echo bee", true), "b unchanged: {l:?}");
    assert!(
        has(&l, "mine", "sleep 600", true),
        "the session's own: {l:?}"
    );

    // A broken edit changes nothing and is a session warning.
    std::fs::write(&config, "{ not json").unwrap();
    let w = next_host_event(&mut host, |e| matches!(e, HostEvent::SessionWarning(_))).await;
    let HostEvent::SessionWarning(w) = w else {
        unreachable!()
    };
    assert!(w.message.contains("nothing was changed"), "{}", w.message);
    let l = emitters_until(&gw, &s.id, "listed", |_| true).await;
    assert!(has(&l, "b", "echo bee", true), "{l:?}");
}
