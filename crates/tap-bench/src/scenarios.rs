//! S1–S4 against a gateway running in this process (`GatewayHandle::start` on
//! 127.0.0.1:0), with bench providers and a `HostClient` over real loopback sockets.

use crate::bare::{self, run_workers};
use crate::provider;
use crate::stats::{rate, Latencies, Sampler};
use crate::tempdir::TempDir;
use crate::wire;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tap_client::HostClient;
use tap_gateway::{CallRequest, Gateway, GatewayConfig, GatewayHandle, History};
use tap_protocol::host::SessionRegister;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// A running gateway with one session host, and the provider tasks the bench started.
pub struct Rig {
    handle: GatewayHandle,
    _dir: TempDir,
    host: Arc<HostClient>,
    responders: Vec<JoinHandle<()>>,
}

impl Rig {
    /// A gateway with its own temp `TAP_HOME`, keeping history as `history` says (with
    /// `History::File`, in `$TAP_HOME/history.sqlite3`, as the product does by default).
    pub async fn start(history: History) -> Result<Self, String> {
        Self::start_prepared(history, |_| Ok(())).await
    }

    /// [`Rig::start`], with `prepare` writing files into `TAP_HOME` first (S11's
    /// `policy.json` and `grants.json`).
    pub async fn start_prepared(
        history: History,
        prepare: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> Result<Self, String> {
        let dir = TempDir::new("inproc")?;
        prepare(&dir.path().join("home")).map_err(|e| format!("prepare TAP_HOME: {e}"))?;
        Self::start_in(dir, history, |_| {}).await
    }

    /// [`Rig::start`] with the configuration changed by `tweak` (S12 turns the activity
    /// rollup off), in `dir` (whose `home` may hold files already: S12's week of calls).
    pub async fn start_in(
        dir: TempDir,
        history: History,
        tweak: impl FnOnce(&mut GatewayConfig),
    ) -> Result<Self, String> {
        let mut config = GatewayConfig::new(dir.path().join("home"));
        config.history = history;
        tweak(&mut config);
        // Providers here never answer shutdown.pending; do not wait 10 s for them at stop.
        config.shutdown_deadline = Duration::from_millis(200);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("bind: {e}"))?;
        let handle = GatewayHandle::start(listener, config)
            .await
            .map_err(|e| format!("gateway start: {e}"))?;
        let gw = handle.gateway();
        let host = HostClient::connect(
            &format!("ws://{}/session", gw.address()),
            gw.host_token(),
            "tap-bench",
            None,
        )
        .await
        .map_err(|e| format!("host connect: {e}"))?;
        Ok(Self {
            handle,
            _dir: dir,
            host: Arc::new(host),
            responders: Vec::new(),
        })
    }

    pub fn gateway(&self) -> Gateway {
        self.handle.gateway().clone()
    }

    pub fn host(&self) -> Arc<HostClient> {
        self.host.clone()
    }

    pub fn url(&self) -> String {
        format!("ws://{}/", self.handle.gateway().address())
    }

    pub fn token(&self) -> String {
        self.handle.gateway().provider_token().to_string()
    }

    pub async fn session(&self, label: &str) -> Result<String, String> {
        register(&self.host, label).await
    }

    /// A session working in `cwd` (S6's emitter runs there).
    pub async fn session_in(&self, label: &str, cwd: &Path) -> Result<String, String> {
        register_in(&self.host, label, cwd).await
    }

    /// Binds an answering provider named `name` with `tools` into `session`.
    pub async fn provider(
        &mut self,
        name: &str,
        session: &str,
        tools: &[String],
    ) -> Result<(), String> {
        let ws = provider::bind(&self.url(), &self.token(), name, session, tools).await?;
        self.responders.push(tokio::spawn(provider::respond(ws)));
        Ok(())
    }

    pub async fn stop(self) {
        for r in &self.responders {
            r.abort();
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), self.handle.stop()).await;
    }
}

pub async fn register(host: &HostClient, label: &str) -> Result<String, String> {
    register_in(host, label, Path::new("/tmp")).await
}

/// A session whose working directory (where its command emitters run) is `cwd`.
pub async fn register_in(host: &HostClient, label: &str, cwd: &Path) -> Result<String, String> {
    let info = host
        .register_session(SessionRegister {
            label: Some(label.into()),
            cwd: Some(cwd.display().to_string()),
            foreground: true,
            ..Default::default()
        })
        .await
        .map_err(|e| format!("session.register: {e}"))?;
    Ok(info.id)
}

fn ok_data() -> Value {
    json!({"ok": true})
}

pub async fn call_in_process(gw: &Gateway, session: &str, tool: &str) -> Result<(), String> {
    let data = gw
        .call_tool(CallRequest {
            session_id: session.to_string(),
            tool: tool.to_string(),
            args: json!({"n": 1}),
            ..Default::default()
        })
        .await
        .map_err(|e| format!("call_tool: {}: {}", e.code, e.message))?;
    if data != ok_data() {
        return Err(format!("call_tool returned {data}"));
    }
    Ok(())
}

pub async fn call_via_host(host: &HostClient, session: &str, tool: &str) -> Result<(), String> {
    let r = host
        .invoke(session, tool, json!({"n": 1}))
        .await
        .map_err(|e| format!("tool.invoke: {e}"))?;
    if r.data != Some(ok_data()) || r.error.is_some() {
        return Err(format!("tool.invoke answered {r:?}"));
    }
    Ok(())
}

/// Sequential latencies of E0 and, per rig, S1a and S1b.
pub struct SequentialResults {
    pub echo: Latencies,
    /// S1a (`call_tool`) and S1b (host invoke), one pair per rig, in the order given.
    pub gateways: Vec<(Latencies, Latencies)>,
}

/// E0 sequential, then for each rig S1a (`Gateway::call_tool`, one hop) and S1b
/// (`HostClient::invoke`, two hops), each `n` round trips after `warmup`, interleaved over
/// `rounds` rounds so that a slow moment of the machine weighs on all of them alike. A
/// rig's ledger is flushed after each of its rounds, outside the timed part, so one rig's
/// writer does not carry its backlog into the next one's round.
pub async fn sequential_suite(
    echo_url: &str,
    rigs: &[(&Rig, &str)],
    warmup: usize,
    n: usize,
    rounds: usize,
) -> Result<SequentialResults, String> {
    let mut ws = wire::connect(echo_url).await?;
    let payload = Utf8Bytes::from_static(bare::PAYLOAD);
    let gws: Vec<(Gateway, Arc<HostClient>, &str)> = rigs
        .iter()
        .map(|(r, s)| (r.gateway(), r.host(), *s))
        .collect();
    for _ in 0..warmup {
        bare::round_trip(&mut ws, &payload).await?;
        for (gw, host, session) in &gws {
            call_in_process(gw, session, "echo").await?;
            call_via_host(host, session, "echo").await?;
        }
    }
    for (gw, _, _) in &gws {
        gw.flush_history().await;
    }
    let mut echo = Sampler::new(n);
    let mut samplers: Vec<(Sampler, Sampler)> = gws
        .iter()
        .map(|_| (Sampler::new(n), Sampler::new(n)))
        .collect();
    let per_round = n.div_ceil(rounds.max(1));
    let mut left = n;
    while left > 0 {
        let k = per_round.min(left);
        left -= k;
        echo.begin();
        for _ in 0..k {
            echo.time(bare::round_trip(&mut ws, &payload)).await?;
        }
        echo.end();
        for ((gw, host, session), (a, b)) in gws.iter().zip(&mut samplers) {
            a.begin();
            for _ in 0..k {
                a.time(call_in_process(gw, session, "echo")).await?;
            }
            a.end();
            b.begin();
            for _ in 0..k {
                b.time(call_via_host(host, session, "echo")).await?;
            }
            b.end();
            gw.flush_history().await;
        }
    }
    let _ = ws.close(None).await;
    Ok(SequentialResults {
        echo: echo.finish(),
        gateways: samplers
            .into_iter()
            .map(|(a, b)| (a.finish(), b.finish()))
            .collect(),
    })
}

/// The 10 tools of the fan-out session, one per provider.
pub fn fan_tools() -> Vec<String> {
    (0..10).map(|i| format!("fan_{i}")).collect()
}

/// S2: `n` calls, `in_flight` at a time, spread over the 10 providers; calls/s.
pub async fn s2_in_process(
    rig: &Rig,
    session: &str,
    n: usize,
    in_flight: usize,
) -> Result<Latencies, String> {
    let (gw, session, tools) = (rig.gateway(), session.to_string(), Arc::new(fan_tools()));
    run_workers(n, in_flight, move |w, k| {
        let (gw, session, tools) = (gw.clone(), session.clone(), tools.clone());
        async move { call_in_process(&gw, &session, &tools[(w + k) % tools.len()]).await }
    })
    .await
}

/// S2 through the session-host socket (information only).
pub async fn s2_host(
    rig: &Rig,
    session: &str,
    n: usize,
    in_flight: usize,
) -> Result<Latencies, String> {
    let (host, session, tools) = (rig.host(), session.to_string(), Arc::new(fan_tools()));
    run_workers(n, in_flight, move |w, k| {
        let (host, session, tools) = (host.clone(), session.clone(), tools.clone());
        async move { call_via_host(&host, &session, &tools[(w + k) % tools.len()]).await }
    })
    .await
}

/// S3: `n` keep-level pushes from one provider, closed by a `stream.query` whose answer
/// must show the last push as the newest event; pushes/s.
pub async fn s3_pushes(rig: &Rig, session: &str, n: usize, run: usize) -> Result<f64, String> {
    let name = "pusher";
    let mut ws = provider::bind(&rig.url(), &rig.token(), name, session, &[]).await?;
    let frames = (0..n)
        .map(|i| format!(r#"{{"type":"push","level":"keep","event":"r{run}-e{i}"}}"#))
        .collect();
    let elapsed = push_and_sync(&mut ws, name, frames, &format!("r{run}-e{}", n - 1)).await?;
    let _ = ws.close(None).await;
    Ok(rate(n, elapsed))
}

/// Writes the `push` frames of provider `name` (bound as `name`, pushing to its own
/// stream), then a `stream.query` whose answer must show `want` as the newest event. The
/// gateway handles a connection's frames in order, so that answer proves every push before
/// it was taken. Returns the time from the first write to that answer.
pub async fn push_and_sync(
    ws: &mut wire::Ws,
    name: &str,
    frames: Vec<String>,
    want: &str,
) -> Result<Duration, String> {
    let sync = r#"{"type":"stream.query","queryId":"sync","last":1}"#.to_string();
    let key = format!("{name}@{name}");
    bare::ingest(ws, frames, sync, |text| {
        let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        match v["type"].as_str() {
            Some("stream.history") if v["queryId"] == "sync" => {
                let newest = &v["streams"][&key][0]["event"];
                if newest != want {
                    return Err(format!("newest event is {newest}, expected {want}"));
                }
                Ok(true)
            }
            Some("error") => Err(format!("gateway refused a push: {v}")),
            _ => Ok(false),
        }
    })
    .await
}

/// S3 baseline: the same frames into the bare server, which reads and drops them.
pub async fn bare_ingest(url: &str, n: usize) -> Result<f64, String> {
    let mut ws = wire::connect(url).await?;
    let frames = (0..n)
        .map(|i| format!(r#"{{"type":"push","level":"keep","event":"e{i}"}}"#))
        .collect();
    let sync = r#"{"type":"stream.query","queryId":"sync","last":1}"#.to_string();
    let expect = sync.clone();
    let elapsed = bare::ingest(&mut ws, frames, sync, |t| Ok(t == expect)).await?;
    let _ = ws.close(None).await;
    Ok(rate(n, elapsed))
}

/// S4: `n` provider connections (connect, auth, hello with one tool, goodbye, closed by
/// the gateway) on `workers` concurrent clients; connections/s.
pub async fn s4_churn(
    rig: &Rig,
    session: &str,
    n: usize,
    workers: usize,
) -> Result<Latencies, String> {
    let (url, token, session) = (rig.url(), rig.token(), session.to_string());
    run_workers(n, workers, move |w, _| {
        let (url, token, session) = (url.clone(), token.clone(), session.clone());
        async move {
            let name = format!("churn-{w}");
            let mut ws =
                provider::bind(&url, &token, &name, &session, &[format!("churn_{w}")]).await?;
            wire::send_json(&mut ws, &json!({"type": "goodbye", "reason": "bench"})).await?;
            wire::drain_until_closed(&mut ws).await
        }
    })
    .await
}

/// S4 baseline: connect, one echo, close, against the bare server.
pub async fn bare_churn(url: &str, n: usize, workers: usize) -> Result<Latencies, String> {
    let url = url.to_string();
    run_workers(n, workers, move |_, _| {
        let url = url.clone();
        async move { bare::churn_once(&url).await }
    })
    .await
}
