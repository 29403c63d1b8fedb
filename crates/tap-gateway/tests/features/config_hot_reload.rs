//! A session's `tap.config.json` edited while the session runs (issue 40, "Configuration
//! written for the reference keeps working"): providers, emitters and MCP servers added,
//! changed and removed take effect in the same session within a second; a bad edit is a
//! `session.warning` and the previous configuration stays; a reference-style file
//! (`streams` as a list, in `.github/`) loads. Real gateway, real session host, real
//! provider processes (tests/fixtures/project_provider.py), real files.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tap_client::HostClient;
use tap_protocol::host::{HostEvent, SessionRegister, SessionWarning};
use tap_testkit::*;

/// What the gateway controls of an edit (noticing it, stopping, listing) must be done in
/// this; a process it starts adds its own start-up time on top.
const WITHIN: Duration = Duration::from_secs(1);

fn python() -> String {
    std::env::var("TAP_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/project_provider.py")
        .display()
        .to_string()
}

/// The fixture provider as a config entry, reporting its starts to `probe`.
fn probe_entry(name: &str, probe: &Path, extra: &str) -> Value {
    json!({"name": name, "command": python(), "args": ["-u", fixture()],
           "env": {"PROBE_DIR": probe.display().to_string(), "PROBE_EXTRA": extra,
                   "PROVIDER_NAME": name}})
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

async fn session_at(host: &HostClient, cwd: &Path) -> String {
    host.register_session(SessionRegister {
        label: Some("reload".into()),
        cwd: Some(cwd.display().to_string()),
        foreground: true,
        ..Default::default()
    })
    .await
    .unwrap()
    .id
}

/// The next tool set of `session` for which `pred` holds of its tool names.
async fn tools_until(host: &mut HostClient, session: &str, pred: impl Fn(&[String]) -> bool) {
    next_host_event(host, |e| match e {
        HostEvent::SessionTools(t) if t.session_id == session => {
            let names: Vec<String> = t.tools.iter().map(|x| x.name.clone()).collect();
            pred(&names)
        }
        _ => false,
    })
    .await;
}

async fn warning(host: &mut HostClient, pred: impl Fn(&SessionWarning) -> bool) -> SessionWarning {
    match next_host_event(
        host,
        |e| matches!(e, HostEvent::SessionWarning(w) if pred(w)),
    )
    .await
    {
        HostEvent::SessionWarning(w) => w,
        _ => unreachable!(),
    }
}

fn starts(probe: &Path) -> Vec<Value> {
    std::fs::read_to_string(probe.join("starts.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn emitter_names(gw: &TestGateway, session: &str) -> Vec<String> {
    gw.handle
        .gateway()
        .emitters_list(Some(session))
        .emitters
        .into_iter()
        .filter(|e| {
            let status = serde_json::to_value(e.status).unwrap();
            status != "stopped" && status != "stopping"
        })
        .map(|e| e.name)
        .collect()
}

fn project_servers(gw: &TestGateway, session: &str) -> Vec<String> {
    gw.handle
        .gateway()
        .mcp_servers_list()
        .servers
        .into_iter()
        .filter(|s| s.session_id.as_deref() == Some(session))
        .map(|s| s.name)
        .collect()
}

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    probe: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let probe = root.join("probe");
        std::fs::create_dir(&probe).unwrap();
        Self {
            _dir: dir,
            root,
            probe,
        }
    }
}

#[tokio::test]
async fn edits_add_change_and_remove_providers_emitters_and_servers_in_the_running_session() {
    let p = Project::new();
    let config = p.root.join("tap.config.json");
    write(
        &config,
        &json!({"providers": [probe_entry("probe", &p.probe, "first")]}),
    );
    let gw = TestGateway::for_emitters().await;
    let mut host = gw.host().await;
    let s = session_at(&host, &p.root).await;
    tools_until(&mut host, &s, |t| t.iter().any(|n| n == "echo")).await;
    assert_eq!(starts(&p.probe).len(), 1);

    // Added: an emitter and an MCP server (listed as soon as the gateway applies the
    // edit), with the provider unchanged (not restarted).
    let edited = Instant::now();
    write(
        &config,
        &json!({"providers": [probe_entry("probe", &p.probe, "first")],
                "emitters": [{"name": "tick", "command": "echo tick", "every": "1h"}],
                "mcpServers": {"idle": {"command": "sleep", "args": ["600"]}}}),
    );
    eventually("the emitter and the server are there", || {
        let ok = emitter_names(&gw, &s).contains(&"tick".to_string())
            && project_servers(&gw, &s).contains(&"idle".to_string());
        std::future::ready(ok.then_some(()))
    })
    .await;
    assert!(edited.elapsed() < WITHIN, "took {:?}", edited.elapsed());

    // A bad edit: a warning, and everything stays.
    let edited = Instant::now();
    std::fs::write(&config, "{ \"providers\": [ not json").unwrap();
    let w = warning(&mut host, |w| w.message.contains("previous configuration")).await;
    assert!(edited.elapsed() < WITHIN, "took {:?}", edited.elapsed());
    assert_eq!(
        w.config.as_deref(),
        Some(config.display().to_string().as_str())
    );
    assert!(w.message.contains("not valid JSON"), "{}", w.message);
    let r = host.invoke(&s, "echo", json!({"still": 1})).await.unwrap();
    assert_eq!(r.data, Some(json!({"still": 1})), "{r:?}");
    assert!(emitter_names(&gw, &s).contains(&"tick".to_string()));
    assert!(project_servers(&gw, &s).contains(&"idle".to_string()));
    assert_eq!(starts(&p.probe).len(), 1, "no provider was restarted");

    // Changed: the provider's env differs, so it runs again with the new one (after the
    // old run's connection is gone: its name is free for the new hello).
    write(
        &config,
        &json!({"providers": [probe_entry("probe", &p.probe, "second")],
                "emitters": [{"name": "tick", "command": "echo tick", "every": "1h"}],
                "mcpServers": {"idle": {"command": "sleep", "args": ["600"]}}}),
    );
    let second = eventually("the provider runs again", || {
        let s = starts(&p.probe);
        std::future::ready((s.len() == 2).then(|| s[1].clone()))
    })
    .await;
    assert_eq!(second["extra"], "second");
    let first_pid = starts(&p.probe)[0]["pid"].as_u64().unwrap();
    eventually("the first run is gone", || {
        std::future::ready((!Path::new(&format!("/proc/{first_pid}")).exists()).then_some(()))
    })
    .await;
    eventually("the new run serves echo", || {
        let (host, s) = (&host, s.clone());
        async move {
            let r = host.invoke(&s, "echo", json!({"n": 2})).await.ok()?;
            (r.data == Some(json!({"n": 2}))).then_some(())
        }
    })
    .await;

    // Removed: the provider's tools leave the session, the emitter and the server stop.
    let edited = Instant::now();
    write(&config, &json!({"note": "everything removed"}));
    tools_until(&mut host, &s, |t| !t.iter().any(|n| n == "echo")).await;
    eventually("the emitter and the server are gone", || {
        let ok = !emitter_names(&gw, &s).contains(&"tick".to_string())
            && project_servers(&gw, &s).is_empty();
        std::future::ready(ok.then_some(()))
    })
    .await;
    assert!(edited.elapsed() < WITHIN, "took {:?}", edited.elapsed());
    let second_pid = second["pid"].as_u64().unwrap();
    eventually("the second run is gone", || {
        std::future::ready((!Path::new(&format!("/proc/{second_pid}")).exists()).then_some(()))
    })
    .await;
}

#[tokio::test]
async fn a_reference_style_config_in_github_with_a_streams_list_loads() {
    let p = Project::new();
    std::fs::create_dir(p.root.join(".github")).unwrap();
    let config = p.root.join(".github/tap.config.json");
    write(
        &config,
        &json!({
            "providers": [probe_entry("probe", &p.probe, "github")],
            "streams": [{"name": "ci", "description": "CI runs",
                         "sessionInjector": {"enabled": true, "delivery": "inject"}}],
            "emitters": [{"name": "ci-watch", "command": "echo green", "every": "1h",
                          "stream": "ci"}]
        }),
    );
    let gw = TestGateway::for_emitters().await;
    let mut host = gw.host().await;
    let sub = p.root.join("src");
    std::fs::create_dir(&sub).unwrap();
    let s = session_at(&host, &sub).await;
    tools_until(&mut host, &s, |t| t.iter().any(|n| n == "echo")).await;
    // Relative paths are the project's, not .github's: the provider runs in the project.
    let start = &starts(&p.probe)[0];
    assert_eq!(start["extra"], "github");
    assert_eq!(
        Path::new(start["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        p.root
    );
    eventually("the emitter runs", || {
        std::future::ready(
            emitter_names(&gw, &s)
                .contains(&"ci-watch".to_string())
                .then_some(()),
        )
    })
    .await;
    // The list's entry set the stream's injector, as the object form does.
    let stream = eventually("the ci stream is listed with its injector", || {
        let (host, s) = (&host, s.clone());
        async move {
            let r = host.invoke(&s, "tap_list_streams", json!({})).await.ok()?;
            let data = r.data?;
            let found = data["streams"]
                .as_array()?
                .iter()
                .find(|st| st["key"] == "ci@emitters")?
                .clone();
            Some(found)
        }
    })
    .await;
    assert_eq!(stream["sessionInjector"]["enabled"], true, "{stream}");
    assert_eq!(stream["sessionInjector"]["delivery"], "inject", "{stream}");
    let warnings = gw.handle.gateway().emitters_list(Some(&s)).warnings;
    assert!(warnings.is_empty(), "{warnings:?}");

    // A root file beside it wins, and the .github one is named as not read.
    write(
        &p.root.join("tap.config.json"),
        &json!({"emitters": [{"name": "root-one", "command": "echo root", "every": "1h"}]}),
    );
    let w = warning(&mut host, |w| w.message.contains("is not read")).await;
    assert_eq!(
        w.config.as_deref(),
        Some(config.display().to_string().as_str())
    );
    tools_until(&mut host, &s, |t| !t.iter().any(|n| n == "echo")).await;
    eventually("the root file's emitter runs", || {
        std::future::ready(
            emitter_names(&gw, &s)
                .contains(&"root-one".to_string())
                .then_some(()),
        )
    })
    .await;
}
