//! A project provider (`tap.config.json`) whose `hello` is refused: the refusal reaches the
//! session's host as `session.warning`, like every other problem with the config, instead of
//! only the gateway log and the provider's own socket.

use serde_json::json;
use std::path::Path;
use tap_protocol::host::{HostEvent, SessionRegister, SessionWarning};
use tap_testkit::*;

#[tokio::test]
async fn a_project_provider_refused_for_duplicate_instance_is_a_session_warning() {
    let gw = TestGateway::start().await;
    let (mut host, first) = gw.host_with_session().await;
    // Another connection already holds the name `probe` (in another session: identity is
    // the gateway's, not the session's).
    let _holder = gw.bound("probe", &first.id, json!([tool("t")])).await;

    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("probe");
    std::fs::create_dir(&probe).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/project_provider.py");
    let python = std::env::var("TAP_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let config = json!({"providers": [{"name": "probe", "command": python,
        "args": ["-u", fixture.display().to_string()],
        "env": {"PROBE_DIR": probe.display().to_string()}}]});
    std::fs::write(dir.path().join("tap.config.json"), config.to_string()).unwrap();
    let s = host
        .register_session(SessionRegister {
            cwd: Some(dir.path().display().to_string()),
            ..Default::default()
        })
        .await
        .unwrap();

    let w = match next_host_event(&mut host, |e| matches!(e, HostEvent::SessionWarning(_))).await {
        HostEvent::SessionWarning(w) => w,
        _ => unreachable!(),
    };
    let SessionWarning {
        session_id,
        message,
        ..
    } = w;
    assert_eq!(session_id, s.id);
    assert!(message.contains("Provider 'probe'"), "{message}");
    assert!(message.contains("DUPLICATE_INSTANCE"), "{message}");
    assert!(message.contains("already connected"), "{message}");
}
