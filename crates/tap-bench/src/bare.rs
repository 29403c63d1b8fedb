//! E0: a bare tokio-tungstenite echo server, and the client loops every scenario shares.
//!
//! The server is the floor the gateway is compared against: accept, WebSocket handshake,
//! echo each text frame. It never parses JSON. Frames that start like a `push` are read and
//! dropped instead of echoed, so the same server is also the baseline for S3 (ingest).

use crate::stats::{rate, Latencies};
use crate::wire::{self, Ws, PATIENCE};
use futures_util::{SinkExt, StreamExt};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::{JoinHandle, JoinSet};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

/// A small JSON text the size of a real `tool.call`.
pub const PAYLOAD: &str = r#"{"type":"tool.call","id":"c-5f0e8a4c2b1d9e77-1","sessionId":"s-1f2e3d4c","tool":"echo","args":{"n":1}}"#;

/// Frames starting with this are swallowed by the bare server (the S3 baseline).
const SINK_PREFIX: &str = r#"{"type":"push""#;

/// The bare echo server; stops when dropped.
pub struct BareEcho {
    addr: SocketAddr,
    accept: JoinHandle<()>,
}

impl BareEcho {
    pub async fn start() -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("bind: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let accept = tokio::spawn(async move {
            // Owned here, so aborting the accept loop also ends every connection.
            let mut conns = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                while conns.try_join_next().is_some() {}
                if wire::nodelay() {
                    let _ = stream.set_nodelay(true);
                }
                conns.spawn(async move {
                    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
                        return;
                    };
                    wire::serve_batched(&mut ws, |m| match m {
                        Message::Text(t) if !t.starts_with(SINK_PREFIX) => Some(Message::Text(t)),
                        _ => None,
                    })
                    .await;
                });
            }
        });
        Ok(Self { addr, accept })
    }

    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }
}

impl Drop for BareEcho {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// One round trip of `payload`: send, wait for the echo.
pub async fn round_trip(ws: &mut Ws, payload: &Utf8Bytes) -> Result<(), String> {
    wire::send_text(ws, payload.clone()).await?;
    let echo = wire::recv_text(ws).await?;
    if echo.len() != payload.len() {
        return Err(format!("bad echo: {echo}"));
    }
    Ok(())
}

/// `n` round trips with up to `in_flight` outstanding on one socket; round trips/s.
pub async fn pipelined(url: &str, n: usize, in_flight: usize) -> Result<f64, String> {
    let (mut sink, mut stream) = wire::connect(url).await?.split();
    let window = Arc::new(Semaphore::new(in_flight));
    let payload = Utf8Bytes::from_static(PAYLOAD);
    let start = Instant::now();
    let w = window.clone();
    let writer = tokio::spawn(async move {
        for _ in 0..n {
            match w.try_acquire() {
                Ok(p) => p.forget(),
                Err(_) => {
                    // Window full: put what is batched on the wire, then wait for room.
                    sink.flush().await?;
                    w.acquire().await.expect("never closed").forget();
                }
            }
            sink.feed(Message::Text(payload.clone())).await?;
        }
        sink.flush().await?;
        Ok::<_, tokio_tungstenite::tungstenite::Error>(sink)
    });
    for got in 0..n {
        match tokio::time::timeout(PATIENCE, stream.next()).await {
            Ok(Some(Ok(Message::Text(_)))) => window.add_permits(1),
            Ok(Some(Ok(_))) => continue,
            other => {
                writer.abort();
                return Err(format!("echo stopped after {got} of {n}: {other:?}"));
            }
        }
    }
    let elapsed = start.elapsed();
    let mut sink = writer
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let _ = sink.close().await;
    Ok(rate(n, elapsed))
}

/// Writes every frame of `frames`, then `sync`, and reads until `done` accepts an answer.
/// Returns the time from the first write to that answer. Because a WebSocket server reads
/// one connection's frames in order, the answer to `sync` proves every frame before it
/// was processed.
pub async fn ingest(
    ws: &mut Ws,
    frames: Vec<String>,
    sync: String,
    mut done: impl FnMut(&str) -> Result<bool, String>,
) -> Result<Duration, String> {
    let start = Instant::now();
    for f in frames {
        ws.feed(Message::text(f))
            .await
            .map_err(|e| format!("send failed: {e}"))?;
    }
    ws.feed(Message::text(sync))
        .await
        .map_err(|e| format!("send failed: {e}"))?;
    ws.flush().await.map_err(|e| format!("send failed: {e}"))?;
    loop {
        let text = wire::recv_text(ws).await?;
        if done(&text)? {
            return Ok(start.elapsed());
        }
    }
}

/// Bare connection churn: connect, one echo, close.
pub async fn churn_once(url: &str) -> Result<(), String> {
    let mut ws = wire::connect(url).await?;
    round_trip(&mut ws, &Utf8Bytes::from_static(PAYLOAD)).await?;
    ws.close(None)
        .await
        .map_err(|e| format!("close failed: {e}"))?;
    wire::drain_until_closed(&mut ws).await
}

/// Runs `total` operations on `workers` concurrent tasks, each taking the next operation
/// as soon as its previous one ends. `op(worker, k)` gets its worker index and a running
/// operation number. Returns the latencies of every operation, with the wall time of the
/// whole run; the first error aborts it.
pub async fn run_workers<F, Fut>(total: usize, workers: usize, op: F) -> Result<Latencies, String>
where
    F: Fn(usize, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let left = Arc::new(AtomicI64::new(total as i64));
    let op = Arc::new(op);
    let start = Instant::now();
    let mut set: JoinSet<Result<Vec<u64>, String>> = JoinSet::new();
    for w in 0..workers {
        let (left, op) = (left.clone(), op.clone());
        set.spawn(async move {
            let mut samples = Vec::with_capacity(total / workers + 1);
            loop {
                let k = left.fetch_sub(1, Ordering::Relaxed);
                if k <= 0 {
                    return Ok(samples);
                }
                let t = Instant::now();
                op(w, k as usize).await?;
                samples.push(t.elapsed().as_nanos() as u64);
            }
        });
    }
    let mut samples = Vec::with_capacity(total);
    while let Some(joined) = set.join_next().await {
        samples.extend(joined.map_err(|e| format!("worker panicked: {e}"))??);
    }
    Ok(Latencies::new(samples, start.elapsed()))
}
