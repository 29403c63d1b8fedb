//! The exporter task: takes spans off the queue in batches, POSTs each batch as one
//! `ExportTraceServiceRequest`, retries a failed one a few times, and ends when the
//! gateway stops.

use super::{encode, Counters, Endpoint};
use crate::ledger::record::SpanRow;
use crate::limits::{
    OTLP_ATTEMPTS, OTLP_BATCH_WAIT, OTLP_FINAL_FLUSH, OTLP_MAX_ANSWER_BYTES, OTLP_MAX_BATCH,
    OTLP_REQUEST_TIMEOUT, OTLP_RETRY_BACKOFF,
};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1;
use hyper::header::{CONTENT_TYPE, HOST, USER_AGENT};
use hyper_util::rt::TokioIo;
use prost::Message;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Why a POST did not succeed.
enum Failure {
    /// Worth another try: no connection, a timeout, 429, 502, 503, 504 (the OTLP spec's
    /// retryable answers).
    Retry(String),
    /// The receiver refused the batch for good (another 4xx, a 5xx it does not retry).
    Refused(String),
}

struct Sender {
    endpoint: Endpoint,
    /// The connection kept open between batches. Only one request is ever on it, and it
    /// is only kept after a complete exchange: after any failure the next try connects
    /// afresh rather than wait behind an answer that may never come.
    conn: Option<CollectorConn>,
    counters: Arc<Counters>,
    tasks: TaskTracker,
    stopping: CancellationToken,
    /// Exports are failing: the first failure of a streak is logged, the rest are not.
    failing: bool,
}

/// An HTTP/1.1 connection: hyper's request half, and the task driving the socket. The
/// task is the gateway's (tracked) and ends with this value, so nothing the exporter opened
/// outlives it, not even a socket a mute receiver never answers on.
struct CollectorConn {
    send: http1::SendRequest<Full<Bytes>>,
    driver: JoinHandle<()>,
}

impl Drop for CollectorConn {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Runs until `stopping` is cancelled (or every sender is gone).
pub(super) async fn run(
    mut rx: mpsc::Receiver<SpanRow>,
    endpoint: Endpoint,
    counters: Arc<Counters>,
    tasks: TaskTracker,
    stopping: CancellationToken,
) {
    let mut sender = Sender {
        endpoint,
        conn: None,
        counters,
        tasks,
        stopping: stopping.clone(),
        failing: false,
    };
    let mut batch = Vec::with_capacity(OTLP_MAX_BATCH);
    loop {
        let got = tokio::select! {
            biased;
            () = stopping.cancelled() => break,
            n = rx.recv_many(&mut batch, OTLP_MAX_BATCH) => n,
        };
        if got == 0 {
            return; // Every sender is gone: nothing can come any more.
        }
        let deadline = Instant::now() + OTLP_BATCH_WAIT;
        while batch.len() < OTLP_MAX_BATCH {
            let room = OTLP_MAX_BATCH - batch.len();
            tokio::select! {
                biased;
                () = stopping.cancelled() => break,
                () = tokio::time::sleep_until(deadline) => break,
                n = rx.recv_many(&mut batch, room) => if n == 0 { break },
            }
        }
        if !sender.export(&batch).await {
            break; // Stopping; the batch goes with the final flush.
        }
        batch.clear();
    }
    // The gateway stops: what is queued gets one short try, then the queue closes (later
    // offers count as dropped).
    rx.close();
    while let Ok(row) = rx.try_recv() {
        batch.push(row);
    }
    let deadline = Instant::now() + OTLP_FINAL_FLUSH;
    for chunk in batch.chunks(OTLP_MAX_BATCH) {
        let n = chunk.len() as u64;
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, sender.post(chunk)).await {
            Ok(Ok(())) => sender.succeeded(n),
            Ok(Err(Failure::Retry(e) | Failure::Refused(e))) => sender.failed(n, e),
            Err(_) => sender.failed(n, "no answer before the gateway stopped".into()),
        }
    }
}

impl Sender {
    /// Sends one batch, retrying with backoff; counts it as exported or failed. `false`
    /// when the gateway began stopping first (the batch is then neither).
    async fn export(&mut self, batch: &[SpanRow]) -> bool {
        let n = batch.len() as u64;
        let mut backoff = OTLP_RETRY_BACKOFF;
        for attempt in 1..=OTLP_ATTEMPTS {
            let stopping = self.stopping.clone();
            let outcome = tokio::select! {
                biased;
                () = stopping.cancelled() => return false,
                outcome = self.post(batch) => outcome,
            };
            match outcome {
                Ok(()) => {
                    self.succeeded(n);
                    return true;
                }
                Err(Failure::Refused(e)) => {
                    self.failed(n, e);
                    return true;
                }
                Err(Failure::Retry(e)) if attempt == OTLP_ATTEMPTS => {
                    self.failed(n, e);
                    return true;
                }
                Err(Failure::Retry(e)) => {
                    self.note(&e);
                    tokio::select! {
                        biased;
                        () = self.stopping.cancelled() => return false,
                        () = tokio::time::sleep(backoff) => {}
                    }
                    backoff *= 2;
                }
            }
        }
        true
    }

    /// One POST of `batch`, connecting first when needed, the answer read, all within
    /// [`OTLP_REQUEST_TIMEOUT`]. Cancelled (the gateway stops), it drops its connection.
    async fn post(&mut self, batch: &[SpanRow]) -> Result<(), Failure> {
        let body = Bytes::from(encode::request(batch).encode_to_vec());
        let request = hyper::Request::post(self.endpoint.path.as_str())
            .header(HOST, self.endpoint.authority.as_str())
            .header(CONTENT_TYPE, "application/x-protobuf")
            .header(
                USER_AGENT,
                concat!("tap-gateway/", env!("CARGO_PKG_VERSION")),
            )
            .body(Full::new(body))
            .map_err(|e| Failure::Refused(format!("cannot build the request: {e}")))?;
        let kept = self.conn.take().filter(|c| !c.send.is_closed());
        let exchange = async {
            let mut conn = match kept {
                Some(conn) => conn,
                None => self.connect().await?,
            };
            let retry = |e: hyper::Error| Failure::Retry(e.to_string());
            conn.send.ready().await.map_err(retry)?;
            let answer = conn.send.send_request(request).await.map_err(retry)?;
            let status = answer.status();
            let body = Limited::new(answer.into_body(), OTLP_MAX_ANSWER_BYTES)
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            if status.is_success() {
                return Ok(conn);
            }
            let detail = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
            let text = format!("HTTP {status} {detail}").trim_end().to_string();
            Err(match status.as_u16() {
                429 | 502 | 503 | 504 => Failure::Retry(text),
                _ => Failure::Refused(text),
            })
        };
        match tokio::time::timeout(OTLP_REQUEST_TIMEOUT, exchange).await {
            Ok(Ok(conn)) => {
                self.conn = Some(conn);
                Ok(())
            }
            Ok(Err(failure)) => Err(failure),
            Err(_) => Err(Failure::Retry(format!(
                "no answer within {}s",
                OTLP_REQUEST_TIMEOUT.as_secs()
            ))),
        }
    }

    /// A new connection to the endpoint, its driver on the gateway's task tracker.
    async fn connect(&self) -> Result<CollectorConn, Failure> {
        let address = self.endpoint.address();
        let stream = tokio::net::TcpStream::connect(address.as_str())
            .await
            .map_err(|e| Failure::Retry(format!("cannot connect to {address}: {e}")))?;
        let _ = stream.set_nodelay(true);
        let (send, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| Failure::Retry(format!("HTTP handshake with {address}: {e}")))?;
        let driver = self.tasks.spawn(async move {
            // When it ends (the receiver closed the connection), `send.is_closed()` says so.
            let _ = connection.await;
        });
        Ok(CollectorConn { send, driver })
    }

    fn succeeded(&mut self, n: u64) {
        self.counters.exported.fetch_add(n, Ordering::Relaxed);
        if self.failing {
            self.failing = false;
            self.counters.set_error(None);
            tracing::info!(endpoint = %self.endpoint.shown, "OTLP span export works again");
        }
    }

    fn failed(&mut self, n: u64, error: String) {
        self.note(&error);
        self.counters.failed.fetch_add(n, Ordering::Relaxed);
    }

    /// A failed try: logged when it starts a streak (with the endpoint, which never has
    /// user info), kept for Diagnostics always.
    fn note(&mut self, error: &str) {
        if !self.failing {
            self.failing = true;
            tracing::warn!(
                endpoint = %self.endpoint.shown,
                %error,
                "OTLP span export failing; spans stay in the ledger (logged once until it works again)"
            );
        } else {
            tracing::debug!(endpoint = %self.endpoint.shown, %error, "OTLP span export failed again");
        }
        self.counters.set_error(Some(error.to_string()));
    }
}
