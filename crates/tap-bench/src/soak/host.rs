//! The soak's session host: a raw WebSocket client that keeps its own table of calls in
//! flight, so that a dropped socket loses nothing on this side. `HostClient` wakes every
//! waiting call with `Closed` when its socket drops and numbers call ids from 1 on each
//! connection, so it cannot carry calls across a resume; this client can: after a drop it
//! authenticates again with its `resumeToken`, lists the `callId`s it still waits on
//! (`pendingCalls`) and keeps waiting for them: the gateway answers each one exactly once,
//! from the host's outbox, from the answers it keeps, or `DISCONNECTED`
//! (docs/session-host-protocol.md, Resume).

use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tap_protocol::host::{
    HostAuth, HostAuthOk, HostEvent, HostRequest, SessionRegister, SessionTools, ToolInvoke,
};
use tap_protocol::HOST_PROTOCOL_VERSION;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Calls in flight through the one host socket (issue 14: 64).
pub const IN_FLIGHT: usize = 64;
/// The echo tool's declared timeout: the gateway ends a call with `TIMEOUT` after it. Short
/// so that a call that does hang is found quickly; an echo on loopback answers in
/// milliseconds even on a loaded 2-core machine.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(5);
/// A call without a terminal result this long after the tool's timeout is hung: the gateway
/// promised one by `TOOL_TIMEOUT`, and this leaves room for a host drop and resume.
pub const HANG_MARGIN: Duration = Duration::from_secs(5);
/// How often the calls in flight are checked against their deadlines.
const HANG_CHECK_EVERY: Duration = Duration::from_millis(250);
/// Connecting and authenticating (a fresh host or a resume) must take less than this.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Tries at resuming before the soak gives up; each waits `RESUME_BACKOFF` more than the
/// last, all well inside the gateway's 30 s resume grace (`limits::HOST_RESUME_GRACE`).
const RESUME_ATTEMPTS: u32 = 10;
const RESUME_BACKOFF: Duration = Duration::from_millis(100);

/// What became of every call, counted.
#[derive(Debug, Default)]
pub struct Tally {
    pub issued: u64,
    pub ok: u64,
    /// Terminal results with an `errorCode` (and `error` answers to a `tool.invoke`), by code.
    pub errors: BTreeMap<String, u64>,
    /// A second terminal result for a call that already had one.
    pub duplicates: u64,
    /// A result for a `callId` this host never sent.
    pub unknown: u64,
    /// Calls in flight at a host drop that got no result by their deadline.
    pub lost: u64,
    /// Other calls that got no result by their deadline.
    pub hung: u64,
    /// Host drops the chaos asked for, and drops nobody asked for.
    pub host_drops: u64,
    pub unexpected_drops: u64,
    /// The calls to the MCP server's tool among the above, by outcome (`ok` or the code).
    pub mcp: BTreeMap<String, u64>,
}

impl Tally {
    /// Calls that got exactly one terminal result.
    pub fn terminal(&self) -> u64 {
        self.ok + self.errors.values().sum::<u64>()
    }
}

pub struct Host {
    ws: Option<Ws>,
    url: String,
    token: String,
    resume_token: String,
    session: String,
    next_call: u64,
    /// Providers' tools in the session's latest `session.tools`.
    pub tools_now: usize,
    /// `callId` → deadline.
    pending: HashMap<String, Instant>,
    /// Calls that were in flight at a host drop (told apart from other hung calls).
    at_drop: HashSet<String>,
    /// Calls given up on, so that a late result is not taken for an unknown one.
    given_up: HashSet<String>,
    /// The calls of `pending` that went to the MCP server's tool, and how many they are
    /// (read by the chaos, which kills the server only while one is in flight).
    mcp_pending: HashSet<String>,
    pub mcp_in_flight: Arc<AtomicUsize>,
}

impl Host {
    pub async fn connect(url: &str, token: &str) -> Result<Self, String> {
        let (ws, ok) = authenticate(url, token, None, None).await?;
        Ok(Self {
            ws: Some(ws),
            url: url.to_string(),
            token: token.to_string(),
            resume_token: ok.resume_token,
            session: String::new(),
            next_call: 0,
            tools_now: 0,
            pending: HashMap::new(),
            at_drop: HashSet::new(),
            given_up: HashSet::new(),
            mcp_pending: HashSet::new(),
            mcp_in_flight: Arc::default(),
        })
    }

    fn ws(&mut self) -> &mut Ws {
        self.ws.as_mut().expect("connected between resumes")
    }

    /// Registers the session the providers bind to, with the id `id`.
    pub async fn register(&mut self, id: &str) -> Result<(), String> {
        let req = HostRequest::SessionRegister(SessionRegister {
            request_id: "reg-soak".into(),
            session_id: Some(id.into()),
            label: Some(id.into()),
            cwd: Some(std::env::temp_dir().display().to_string()),
            foreground: true,
            ..SessionRegister::default()
        });
        send(self.ws(), &req).await?;
        self.session = id.to_string();
        let deadline = Instant::now() + CONNECT_TIMEOUT;
        loop {
            match self.next_event(deadline).await? {
                HostEvent::SessionRegistered(_) => return Ok(()),
                HostEvent::Error(e) => return Err(format!("session.register: {e:?}")),
                _ => {}
            }
        }
    }

    /// Reads events until the session lists `n` tools (every provider bound).
    pub async fn wait_tools(&mut self, n: usize, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        while self.tools_now != n {
            if let HostEvent::SessionTools(t) = self.next_event(deadline).await? {
                self.tools_now = echo_tools(&t);
            }
        }
        Ok(())
    }

    async fn next_event(&mut self, deadline: Instant) -> Result<HostEvent, String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = tokio::time::timeout(left, self.ws().next())
                .await
                .map_err(|_| "the gateway did not answer in time".to_string())?;
            match frame {
                Some(Ok(Message::Text(t))) => {
                    if let Ok(event) = serde_json::from_str::<HostEvent>(&t) {
                        return Ok(event);
                    }
                }
                Some(Ok(_)) => {}
                _ => return Err("the host socket closed".into()),
            }
        }
    }

    /// Makes `calls` calls, `IN_FLIGHT` at a time, to `tools` in turn, and waits for each
    /// one's terminal result (or its deadline). A message on `drops` closes the socket at
    /// once (no close frame) and resumes.
    pub async fn drive(
        &mut self,
        calls: u64,
        tools: &[String],
        tally: &mut Tally,
        drops: &mut mpsc::UnboundedReceiver<()>,
    ) -> Result<(), String> {
        let mut issued = 0;
        let mut check = tokio::time::interval(HANG_CHECK_EVERY);
        loop {
            let mut broken = false;
            while self.pending.len() < IN_FLIGHT && issued < calls {
                let n = self.next_call;
                self.next_call += 1;
                issued += 1;
                tally.issued += 1;
                let id = format!("c{n}");
                let tool = &tools[(n % tools.len() as u64) as usize];
                // The MCP server's tool declares its input (`text`, required).
                let args = match tool == super::mcp::TOOL {
                    true => {
                        self.mcp_pending.insert(id.clone());
                        self.mcp_in_flight
                            .store(self.mcp_pending.len(), Ordering::Relaxed);
                        json!({ "text": n.to_string() })
                    }
                    false => json!({ "n": n }),
                };
                let req = HostRequest::ToolInvoke(ToolInvoke {
                    call_id: id.clone(),
                    session_id: self.session.clone(),
                    tool: tool.clone(),
                    args,
                    traceparent: None,
                });
                let text = serde_json::to_string(&req).expect("serializes");
                // Pending before it is written: if the write fails the call may or may
                // not have reached the gateway, and either way it is owed a result.
                self.pending
                    .insert(id, Instant::now() + TOOL_TIMEOUT + HANG_MARGIN);
                if self.ws().feed(Message::text(text)).await.is_err() {
                    broken = true;
                    break;
                }
            }
            if broken || self.ws().flush().await.is_err() {
                tally.unexpected_drops += 1;
                self.resume().await?;
                continue;
            }
            if issued == calls && self.pending.is_empty() {
                return Ok(());
            }
            let ws = self.ws.as_mut().expect("connected");
            tokio::select! {
                frame = ws.next() => match frame {
                    Some(Ok(Message::Text(t))) => self.on_frame(&t, tally),
                    Some(Ok(_)) => {}
                    _ => {
                        tally.unexpected_drops += 1;
                        self.resume().await?;
                    }
                },
                Some(()) = drops.recv() => {
                    tally.host_drops += 1;
                    self.at_drop.extend(self.pending.keys().cloned());
                    self.resume().await?;
                }
                _ = check.tick() => self.give_up_overdue(tally),
            }
        }
    }

    fn on_frame(&mut self, text: &str, tally: &mut Tally) {
        let Ok(event) = serde_json::from_str::<HostEvent>(text) else {
            return;
        };
        match event {
            HostEvent::ToolResult(r) => {
                // Told apart in the summary: calls a drop kept from running (never read, or
                // read from the old socket after the resume), which the resume answered.
                let unsent = r
                    .error
                    .as_deref()
                    .is_some_and(|e| e.contains("it never ran"));
                let code = r.error_code.map(|c| match unsent {
                    true => format!("{c} (never ran, at a drop)"),
                    false => c.to_string(),
                });
                self.settle(&r.call_id, code, tally);
            }
            // The only `error` for a `tool.invoke` is a refusal, which ends the call.
            HostEvent::Error(e) => match e.request_id {
                Some(id) => self.settle(&id, Some(format!("error {}", e.code)), tally),
                None => *tally.errors.entry(format!("error {}", e.code)).or_default() += 1,
            },
            HostEvent::SessionTools(t) => self.tools_now = echo_tools(&t),
            _ => {}
        }
    }

    fn settle(&mut self, id: &str, code: Option<String>, tally: &mut Tally) {
        if self.pending.remove(id).is_some() {
            self.at_drop.remove(id);
            if self.mcp_pending.remove(id) {
                self.mcp_in_flight
                    .store(self.mcp_pending.len(), Ordering::Relaxed);
                let outcome = code.clone().unwrap_or_else(|| "ok".into());
                *tally.mcp.entry(outcome).or_default() += 1;
            }
            match code {
                None => tally.ok += 1,
                Some(c) => *tally.errors.entry(c).or_default() += 1,
            }
        } else if self.given_up.contains(id) {
            // Already counted as hung or lost; a late answer does not redeem it.
        } else if id.starts_with('c') && id[1..].parse::<u64>().is_ok_and(|n| n < self.next_call) {
            tally.duplicates += 1;
        } else {
            tally.unknown += 1;
        }
    }

    fn give_up_overdue(&mut self, tally: &mut Tally) {
        let now = Instant::now();
        let overdue: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, d)| **d < now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in overdue {
            self.pending.remove(&id);
            if self.mcp_pending.remove(&id) {
                self.mcp_in_flight
                    .store(self.mcp_pending.len(), Ordering::Relaxed);
                *tally.mcp.entry("hung".into()).or_default() += 1;
            }
            if self.at_drop.remove(&id) {
                tally.lost += 1;
            } else {
                tally.hung += 1;
            }
            self.given_up.insert(id);
        }
    }

    /// Drops the socket without a close frame and takes the session back with the resume
    /// token. What the gateway buffered meanwhile arrives on the new socket first.
    async fn resume(&mut self) -> Result<(), String> {
        drop(self.ws.take());
        let mut wait = RESUME_BACKOFF;
        for attempt in 1..=RESUME_ATTEMPTS {
            // Every call still owed: the gateway answers each exactly once, including
            // those whose answer the dropped socket lost unread.
            let pending = self.pending.keys().cloned().collect();
            match authenticate(
                &self.url,
                &self.token,
                Some(&self.resume_token),
                Some(pending),
            )
            .await
            {
                Ok((ws, ok)) if ok.resumed.contains(&self.session) => {
                    self.ws = Some(ws);
                    return Ok(());
                }
                Ok((_, ok)) => {
                    return Err(format!(
                        "resume did not take session {} back (resumed: {:?})",
                        self.session, ok.resumed
                    ))
                }
                Err(e) if attempt == RESUME_ATTEMPTS => return Err(format!("resume: {e}")),
                // A backoff between attempts, not a wait for readiness.
                Err(_) => tokio::time::sleep(wait).await,
            }
            wait += RESUME_BACKOFF;
        }
        unreachable!("the last attempt returns")
    }

    /// Closes the socket with a close frame (the end of the soak).
    pub async fn close(mut self) {
        if let Some(ws) = self.ws.as_mut() {
            let _ = tokio::time::timeout(CONNECT_TIMEOUT, ws.close(None)).await;
        }
    }
}

/// The providers' and the MCP server's tools in a tool set (the gateway adds tools of its
/// own).
fn echo_tools(t: &SessionTools) -> usize {
    t.tools
        .iter()
        .filter(|t| t.name.starts_with("echo_") || t.name == super::mcp::TOOL)
        .count()
}

async fn send(ws: &mut Ws, req: &HostRequest) -> Result<(), String> {
    let text = serde_json::to_string(req).expect("serializes");
    ws.send(Message::text(text))
        .await
        .map_err(|e| format!("host send: {e}"))
}

async fn authenticate(
    url: &str,
    token: &str,
    resume_token: Option<&str>,
    pending_calls: Option<Vec<String>>,
) -> Result<(Ws, HostAuthOk), String> {
    let attempt = async {
        let (mut ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .map_err(|e| format!("connect {url}: {e}"))?;
        let auth = HostRequest::Auth(HostAuth {
            token: token.to_string(),
            protocol_version: HOST_PROTOCOL_VERSION,
            host_name: Some("tap-soak".into()),
            resume_token: resume_token.map(str::to_string),
            pending_calls,
        });
        send(&mut ws, &auth).await?;
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(t))) => match serde_json::from_str::<HostEvent>(&t) {
                    Ok(HostEvent::AuthOk(ok)) => return Ok((ws, ok)),
                    other => return Err(format!("auth answered {other:?}")),
                },
                Some(Ok(_)) => {}
                _ => return Err("closed during auth".into()),
            }
        }
    };
    tokio::time::timeout(CONNECT_TIMEOUT, attempt)
        .await
        .map_err(|_| "auth timed out".to_string())?
}
