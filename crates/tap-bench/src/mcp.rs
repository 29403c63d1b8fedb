//! S7: sequential MCP `tools/call` over Streamable HTTP, in each MCP generation (one
//! kept-alive connection each, as MCP clients run it), against the same call through the
//! session-host WebSocket (S1b's path), interleaved in the same run.

use crate::scenarios::{call_via_host, Rig};
use crate::stats::{Latencies, Sampler};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

/// S7's latency series: MCP in each generation, and the host socket.
pub struct McpResults {
    pub legacy: Latencies,
    pub stateless: Latencies,
    pub host: Latencies,
}

/// The stateless generation's protocol version.
const STATELESS: &str = "2026-07-28";

/// An MCP client of the `initialize` generation on one HTTP/1.1 connection.
struct McpHttp {
    send: SendRequest<Full<Bytes>>,
    authority: String,
    path: String,
    token: String,
    session: Option<String>,
    /// The 2026-07-28 generation: no `initialize`, the version on every request.
    stateless: bool,
    next_id: u64,
}

impl McpHttp {
    async fn connect(
        addr: std::net::SocketAddr,
        token: &str,
        session: &str,
        stateless: bool,
    ) -> Result<Self, String> {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| format!("HTTP handshake: {e}"))?;
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                eprintln!("tap-bench: S7's HTTP connection failed: {e}");
            }
        });
        let mut client = Self {
            send,
            authority: addr.to_string(),
            path: format!("/mcp/{session}"),
            token: token.to_string(),
            session: None,
            stateless,
            next_id: 0,
        };
        if stateless {
            return Ok(client);
        }
        client
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "tap-bench", "version": "1"}}),
            )
            .await?;
        client.notify("notifications/initialized").await?;
        Ok(client)
    }

    fn post(&self, body: Value) -> Result<Request<Full<Bytes>>, String> {
        // The stateless generation routes on headers that repeat the body's method and
        // name (SEP-2243).
        let method = body["method"].as_str().unwrap_or_default().to_string();
        let name = body["params"]["name"].as_str().map(str::to_string);
        let mut req = Request::post(&self.path)
            .header("host", &self.authority)
            .header("authorization", format!("Bearer {}", self.token))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if self.stateless {
            req = req
                .header("mcp-protocol-version", STATELESS)
                .header("mcp-method", method);
            if let Some(name) = name {
                req = req.header("mcp-name", name);
            }
        }
        req.body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| e.to_string())
    }

    /// The connection takes the next request only once the previous exchange is over.
    async fn ready(&mut self) -> Result<(), String> {
        self.send
            .ready()
            .await
            .map_err(|e| format!("connection: {e}"))
    }

    async fn notify(&mut self, method: &str) -> Result<(), String> {
        let req = self.post(json!({"jsonrpc": "2.0", "method": method}))?;
        self.ready().await?;
        let res = self
            .send
            .send_request(req)
            .await
            .map_err(|e| e.to_string())?;
        res.into_body().collect().await.map_err(|e| e.to_string())?;
        Ok(())
    }

    /// One request; the result of its response (an SSE stream carrying it, or JSON).
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut params = params;
        if self.stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS,
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        let req =
            self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        self.ready().await?;
        let res = self
            .send
            .send_request(req)
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        if !res.status().is_success() {
            let status = res.status();
            let body = res.into_body().collect().await.map(|b| b.to_bytes());
            let body = body.map(|b| String::from_utf8_lossy(&b).into_owned());
            return Err(format!(
                "{method}: HTTP {status}: {}",
                body.unwrap_or_default()
            ));
        }
        if let Some(s) = res.headers().get("mcp-session-id") {
            self.session = Some(s.to_str().map_err(|e| e.to_string())?.to_string());
        }
        let body = res
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        let text = std::str::from_utf8(&body).map_err(|e| e.to_string())?;
        let message = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .chain(std::iter::once(text.trim()))
            .find_map(|d| {
                serde_json::from_str::<Value>(d)
                    .ok()
                    .filter(|v| v["id"] == id)
            })
            .ok_or_else(|| format!("{method}: no response in {text:?}"))?;
        match message.get("result") {
            Some(r) => Ok(r.clone()),
            None => Err(format!("{method}: {}", message["error"])),
        }
    }

    async fn call(&mut self, tool: &str) -> Result<(), String> {
        let r = self
            .request("tools/call", json!({"name": tool, "arguments": {"n": 1}}))
            .await?;
        if r["isError"] == true || r["structuredContent"] != json!({"ok": true}) {
            return Err(format!("tools/call answered {r}"));
        }
        Ok(())
    }
}

/// `n` MCP calls and `n` host calls of `echo` in `session`, after `warmup` of each,
/// alternating in `rounds` rounds.
pub async fn s7(
    rig: &Rig,
    session: &str,
    warmup: usize,
    n: usize,
    rounds: usize,
) -> Result<McpResults, String> {
    let gw = rig.gateway();
    let host = rig.host();
    let mut legacy = McpHttp::connect(gw.address(), gw.host_token(), session, false).await?;
    let mut stateless = McpHttp::connect(gw.address(), gw.host_token(), session, true).await?;
    for _ in 0..warmup {
        legacy.call("echo").await?;
        stateless.call("echo").await?;
        call_via_host(&host, session, "echo").await?;
    }
    let (mut l, mut s, mut h) = (Sampler::new(n), Sampler::new(n), Sampler::new(n));
    let per_round = n.div_ceil(rounds.max(1));
    let mut left = n;
    while left > 0 {
        let k = per_round.min(left);
        left -= k;
        l.begin();
        for _ in 0..k {
            l.time(legacy.call("echo")).await?;
        }
        l.end();
        s.begin();
        for _ in 0..k {
            s.time(stateless.call("echo")).await?;
        }
        s.end();
        h.begin();
        for _ in 0..k {
            h.time(call_via_host(&host, session, "echo")).await?;
        }
        h.end();
    }
    Ok(McpResults {
        legacy: l.finish(),
        stateless: s.finish(),
        host: h.finish(),
    })
}
