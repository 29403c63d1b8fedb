//! Project providers (spec: "Project providers"): the `providers` of the `tap.config.json`
//! nearest to a session's `cwd` are spawned for that session with their own session-scoped
//! token, restarted when they crash, and stopped when the session ends. Real child
//! processes (tests/fixtures/project_provider.py, the spec's own Python example) driven
//! through a real session host.
//!
//! Needs a Python with `websockets` (`TAP_TEST_PYTHON`, else `python3`), as the tap-cli
//! spec-provider tests do.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tap_client::HostClient;
use tap_gateway::RestartPolicy;
use tap_protocol::host::{HostEvent, SessionRegister, SessionWarning};
use tap_protocol::provider::SessionInfo;
use tap_testkit::*;

fn python() -> String {
    std::env::var("TAP_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/project_provider.py")
        .display()
        .to_string()
}

/// A project directory with a `tap.config.json` and a probe directory the fixture reports to.
struct Project {
    dir: tempfile::TempDir,
    probe: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let probe = dir.path().join("probe");
        std::fs::create_dir(&probe).unwrap();
        Self { dir, probe }
    }

    fn with_config(config: Value) -> Self {
        let p = Self::new();
        p.write(&config.to_string());
        p
    }

    /// One fixture provider named `probe` with `env` added to its environment.
    fn probe(env: Value) -> Self {
        let p = Self::new();
        let mut full = json!({"PROBE_DIR": p.probe.display().to_string(),
                              "PROBE_EXTRA": "from-config"});
        full.as_object_mut()
            .unwrap()
            .extend(env.as_object().unwrap().clone());
        let config = json!({"providers": [{"name": "probe", "command": python(),
                                           "args": ["-u", fixture()], "env": full}]});
        p.write(&config.to_string());
        p
    }

    fn config_path(&self) -> PathBuf {
        self.dir.path().join("tap.config.json")
    }

    fn write(&self, text: &str) {
        std::fs::write(self.config_path(), text).unwrap();
    }

    fn cwd(&self) -> String {
        self.dir.path().display().to_string()
    }

    /// The starts the fixture recorded so far, oldest first.
    fn starts(&self) -> Vec<Value> {
        std::fs::read_to_string(self.probe.join("starts.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    async fn wait_for_starts(&self, n: usize) -> Vec<Value> {
        eventually(|| {
            let s = self.starts();
            (s.len() >= n).then_some(s)
        })
        .await
    }
}

/// Polls the synchronous check `f` with the kit's deadline until it yields a value.
async fn eventually<T>(mut f: impl FnMut() -> Option<T>) -> T {
    tap_testkit::eventually("the condition", || std::future::ready(f())).await
}

async fn session_at(host: &HostClient, cwd: &str) -> SessionInfo {
    host.register_session(SessionRegister {
        label: Some("project".into()),
        cwd: Some(cwd.into()),
        foreground: true,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// The revision of the first tool set of `session` that contains `tool`, after `after`.
async fn tools_with(host: &mut HostClient, session: &str, tool: &str, after: u64) -> u64 {
    let e = next_host_event(host, |e| {
        matches!(e, HostEvent::SessionTools(t) if t.session_id == session
            && t.revision > after && t.tools.iter().any(|x| x.name == tool))
    })
    .await;
    let HostEvent::SessionTools(t) = e else {
        unreachable!()
    };
    t.revision
}

async fn warning(host: &mut HostClient) -> SessionWarning {
    match next_host_event(host, |e| matches!(e, HostEvent::SessionWarning(_))).await {
        HostEvent::SessionWarning(w) => w,
        _ => unreachable!(),
    }
}

/// Whether a process is alive (a zombie waiting for its reaper counts as dead).
fn alive(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Ok(status) => !status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z')),
        Err(_) => false,
    }
}

fn fast_restarts(c: &mut tap_gateway::GatewayConfig) {
    c.project_restart = RestartPolicy {
        backoff: Duration::from_millis(50),
        backoff_max: Duration::from_millis(200),
        max_quick_failures: 3,
        ..RestartPolicy::default()
    };
}

#[tokio::test]
async fn a_project_provider_is_spawned_for_its_session_binds_and_serves_tools() {
    let project = Project::probe(json!({}));
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    // A subdirectory: the nearest tap.config.json above the session's cwd counts.
    let sub = project.dir.path().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let s = session_at(&host, &sub.display().to_string()).await;
    tools_with(&mut host, &s.id, "echo", 0).await;

    let r = host.invoke(&s.id, "echo", json!({"x": 1})).await.unwrap();
    assert_eq!(r.data, Some(json!({"x": 1})), "{r:?}");
    let start = &project.starts()[0];
    let token = start["token"].as_str().unwrap();
    assert!(token.starts_with("ptk-"), "{token}");
    assert_ne!(token, gw.token(), "its own token, not the gateway token");
    assert_eq!(start["url"], gw.url());
    assert_eq!(start["extra"], "from-config", "env from the config");
    // Its working directory defaults to the config's directory.
    assert_eq!(
        Path::new(start["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        project.dir.path().canonicalize().unwrap()
    );
    let status = host.status().await.unwrap();
    let p = status
        .providers
        .iter()
        .find(|p| p.name.as_deref() == Some("probe"))
        .unwrap();
    assert_eq!(p.trust, "project");
    assert_eq!(p.session.as_deref(), Some(s.id.as_str()));
}

#[tokio::test]
async fn the_spec_python_example_runs_unchanged_as_a_project_provider() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/providers/python/minimal_v2.py")
        .canonicalize()
        .unwrap();
    let project = Project::with_config(json!({"providers": {"calc": {
        "command": python(), "args": ["-u", example.display().to_string()]}}}));
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &project.cwd()).await;
    tools_with(&mut host, &s.id, "compute", 0).await;
    let r = host
        .invoke(&s.id, "compute", json!({"expr": "6*7"}))
        .await
        .unwrap();
    assert_eq!(r.data, Some(json!(42)), "{r:?}");
}

#[tokio::test]
async fn a_hello_without_session_is_stamped_with_the_spawning_session() {
    let project = Project::probe(json!({"OMIT_SESSION": "1"}));
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &project.cwd()).await;
    tools_with(&mut host, &s.id, "echo", 0).await;
    let r = host.invoke(&s.id, "echo", json!({})).await.unwrap();
    assert_eq!(r.data, Some(json!({})));
}

#[tokio::test]
async fn a_crashed_project_provider_is_restarted_with_a_fresh_token() {
    let project = Project::probe(json!({}));
    let gw = TestGateway::start_with(fast_restarts).await;
    let mut host = gw.host().await;
    let s = session_at(&host, &project.cwd()).await;
    let rev = tools_with(&mut host, &s.id, "echo", 0).await;

    let r = host.invoke(&s.id, "crash", json!({})).await.unwrap();
    assert_eq!(
        r.error_code.as_ref().map(|c| c.as_str()),
        Some("DISCONNECTED")
    );
    let starts = project.wait_for_starts(2).await;
    assert_ne!(starts[0]["pid"], starts[1]["pid"]);
    assert_ne!(
        starts[0]["token"], starts[1]["token"],
        "each run gets its own token"
    );
    tools_with(&mut host, &s.id, "echo", rev).await;
    let r = host
        .invoke(&s.id, "echo", json!({"again": true}))
        .await
        .unwrap();
    assert_eq!(r.data, Some(json!({"again": true})));

    // The crashed run's token died with it.
    let mut p = gw.provider().await;
    p.send(json!({"type": "auth", "token": starts[0]["token"]}))
        .await;
    p.expect_error("AUTH_FAILED").await;
}

#[tokio::test]
async fn project_providers_are_stopped_when_the_session_ends() {
    let project = Project::probe(json!({}));
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &project.cwd()).await;
    tools_with(&mut host, &s.id, "echo", 0).await;
    let pid = project.starts()[0]["pid"].as_u64().unwrap();
    assert!(alive(pid));

    let ended = host.end_session(&s.id).await.unwrap();
    assert_eq!(ended.session_id, s.id);
    eventually(|| (!alive(pid)).then_some(())).await;
    assert_eq!(
        project.starts().len(),
        1,
        "not restarted after the session ended"
    );
}

#[tokio::test]
async fn project_providers_are_stopped_with_the_gateway() {
    let project = Project::probe(json!({}));
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &project.cwd()).await;
    tools_with(&mut host, &s.id, "echo", 0).await;
    let pid = project.starts()[0]["pid"].as_u64().unwrap();
    gw.handle.stop().await.unwrap();
    assert!(!alive(pid), "stopped (and reaped) before stop returns");
}

#[tokio::test]
async fn a_project_token_binds_only_its_own_session() {
    let project = Project::probe(json!({}));
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let a = session_at(&host, &project.cwd()).await;
    tools_with(&mut host, &a.id, "echo", 0).await;
    let b = session_at(&host, "/").await;
    let token = project.starts()[0]["token"].clone();

    let mut p = gw.provider().await;
    p.send(json!({"type": "auth", "token": token})).await;
    let sessions = p.expect("sessions").await;
    let ids: Vec<&str> = sessions["active"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [a.id.as_str()], "only its own session is listed");
    p.send(json!({"type": "hello", "name": "intruder", "protocolVersion": 2, "session": b.id}))
        .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "hello");
    assert!(e["message"].as_str().unwrap().contains(&a.id), "{e}");
    p.send(json!({"type": "hello", "name": "intruder", "protocolVersion": 2, "session": "all"}))
        .await;
    p.expect_error("UNAUTHORIZED").await;
    p.send(json!({"type": "hello", "name": "intruder", "protocolVersion": 2, "session": a.id}))
        .await;
    let ack = p.expect("hello.ack").await;
    assert_eq!(ack["sessionId"], a.id);
    assert!(
        ack["persistDir"].is_string(),
        "project trust gets a persistDir"
    );
}

#[tokio::test]
async fn a_project_token_is_revoked_when_its_session_ends() {
    let project = Project::probe(json!({}));
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &project.cwd()).await;
    tools_with(&mut host, &s.id, "echo", 0).await;
    let token = project.starts()[0]["token"].clone();
    host.end_session(&s.id).await.unwrap();

    let mut p = gw.provider().await;
    p.send(json!({"type": "auth", "token": token})).await;
    p.expect_error("AUTH_FAILED").await;
    p.expect_closed().await;
}

#[tokio::test]
async fn an_invalid_tap_config_is_reported_to_the_session_host() {
    let project = Project::with_config(json!({}));
    project.write("{ \"providers\": [ ");
    let gw = TestGateway::start().await;
    let (mut host, _) = gw.host_with_session().await;
    let s = session_at(&host, &project.cwd()).await;
    let w = warning(&mut host).await;
    assert_eq!(w.session_id, s.id);
    assert_eq!(
        w.config.as_deref(),
        Some(project.config_path().display().to_string().as_str())
    );
    assert!(w.message.contains("not valid JSON"), "{}", w.message);
    assert!(
        w.message.contains("nothing in it was started"),
        "{}",
        w.message
    );
    // The session itself works.
    let mut p = gw.bound("plain", &s.id, json!([tool("t")])).await;
    let (_, rx) = host.start_invoke(&s.id, "t", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "ok"}))
        .await;
    assert_eq!(result_of(rx).await.data, Some(json!("ok")));
}

#[tokio::test]
async fn an_invalid_provider_entry_is_reported_and_the_others_start() {
    let good = Project::probe(json!({}));
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(good.config_path()).unwrap()).unwrap();
    config["providers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "broken", "args": ["x"]}));
    good.write(&config.to_string());
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &good.cwd()).await;
    let w = warning(&mut host).await;
    assert_eq!(w.session_id, s.id);
    assert!(
        w.message
            .contains("providers[1]: 'command' is missing; skipped"),
        "{}",
        w.message
    );
    tools_with(&mut host, &s.id, "echo", 0).await;
}

#[tokio::test]
async fn a_tap_config_anyone_may_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let project = Project::probe(json!({}));
    std::fs::set_permissions(
        project.config_path(),
        std::fs::Permissions::from_mode(0o666),
    )
    .unwrap();
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    session_at(&host, &project.cwd()).await;
    let w = warning(&mut host).await;
    assert!(w.message.contains("any user may write it"), "{}", w.message);
    assert!(project.starts().is_empty(), "nothing started");
}

#[tokio::test]
async fn a_project_provider_that_cannot_start_is_reported() {
    let project = Project::with_config(
        json!({"providers": [{"name": "ghost", "command": "/nonexistent/provider"}]}),
    );
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &project.cwd()).await;
    let w = warning(&mut host).await;
    assert_eq!(w.session_id, s.id);
    assert_eq!(w.provider.as_deref(), Some("ghost"));
    assert!(w.message.contains("cannot start"), "{}", w.message);
}

#[tokio::test]
async fn a_project_provider_that_keeps_failing_is_given_up_and_reported() {
    let project = Project::probe(json!({"MODE": "fail-now"}));
    let gw = TestGateway::start_with(fast_restarts).await;
    let mut host = gw.host().await;
    let s = session_at(&host, &project.cwd()).await;
    let w = warning(&mut host).await;
    assert_eq!(w.session_id, s.id);
    assert_eq!(w.provider.as_deref(), Some("probe"));
    assert!(
        w.message.contains("failed 3 times in a row"),
        "{}",
        w.message
    );
    assert!(w.message.contains("exit status: 3"), "{}", w.message);
    assert_eq!(project.starts().len(), 3, "started 3 times, then given up");
}

#[tokio::test]
async fn a_project_provider_that_exits_cleanly_is_not_restarted() {
    let project = Project::probe(json!({"MODE": "exit-clean"}));
    let gw = TestGateway::start_with(fast_restarts).await;
    let mut host = gw.host().await;
    session_at(&host, &project.cwd()).await;
    let w = warning(&mut host).await;
    assert!(w.message.contains("is not restarted"), "{}", w.message);
    assert_eq!(project.starts().len(), 1);
}

#[tokio::test]
async fn a_session_without_tap_config_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &dir.path().display().to_string()).await;
    // Something observable after the (absent) config load: a bound provider's tool set.
    let _p = gw.bound("plain", &s.id, json!([tool("t")])).await;
    let e = next_host_event(&mut host, |e| {
        matches!(e, HostEvent::SessionWarning(_))
            || matches!(e, HostEvent::SessionTools(t) if !t.tools.is_empty())
    })
    .await;
    assert!(matches!(e, HostEvent::SessionTools(_)), "{e:?}");
    let status = host.status().await.unwrap();
    assert_eq!(status.providers.len(), 1);
}

/// Collects `tap::provider` log lines.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        let _ = write!(self.0, "{}={:?} ", f.name(), v);
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, e: &tracing::Event<'_>) {
        if e.metadata().target() == "tap::provider" {
            let mut f = Fields(String::new());
            e.record(&mut f);
            self.0.lock().unwrap().push(f.0);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test]
async fn project_provider_output_goes_to_the_log_line_by_line() {
    // Global, not per thread: tracing caches per call site whether anyone listens, and the
    // other tests of this binary run the same call sites on other threads at the same time.
    // They log into the capture too; this test looks only at its own session's lines.
    static CAPTURE: std::sync::OnceLock<Capture> = std::sync::OnceLock::new();
    let capture = CAPTURE
        .get_or_init(|| {
            let c = Capture::default();
            tracing::subscriber::set_global_default(c.clone()).unwrap();
            c
        })
        .clone();
    let project = Project::probe(json!({}));
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &project.cwd()).await;
    tools_with(&mut host, &s.id, "echo", 0).await;
    let lines = eventually(|| {
        let lines = capture.0.lock().unwrap().clone();
        let mine: Vec<String> = lines
            .into_iter()
            .filter(|l| l.contains(&format!("session={} ", s.id)))
            .collect();
        let both = mine.iter().any(|l| l.contains("probe started on stdout"))
            && mine.iter().any(|l| l.contains("probe started on stderr"));
        both.then_some(mine)
    })
    .await;
    let out = lines
        .iter()
        .find(|l| l.contains("probe started on stdout"))
        .unwrap();
    assert!(out.contains("provider=probe"), "{out}");
    assert!(out.contains(&format!("session={}", s.id)), "{out}");
    assert!(out.contains("stream=\"stdout\""), "{out}");
}
