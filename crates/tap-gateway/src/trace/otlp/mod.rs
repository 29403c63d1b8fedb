//! Spans exported over OTLP/HTTP (protobuf), so Jaeger, Tempo or any OpenTelemetry
//! collector shows the gateway's traces next to those of the tools around it.
//!
//! - On only when an endpoint is configured ([`crate::GatewayConfig::otlp_endpoint`],
//!   usually from the standard variables through [`otlp_endpoint_from_env`]). Any host is
//!   allowed because the user chose it; spans carry span names, session ids, provider and
//!   tool names, stream names and error messages, never tool arguments or results.
//! - The ledger stays the record: the export is a copy offered on the side. Finishing a
//!   span never waits for it: the copy goes into a bounded queue ([`OTLP_QUEUE`]) with
//!   `try_send`, and when the queue is full the copy is dropped and counted (the ledger
//!   still has the span). A slow or absent receiver costs spans in the export, never
//!   latency in a tool call or a push.
//! - `send`: the task that batches, POSTs, retries and ends with the gateway;
//!   `encode`: rows as OTLP messages.

mod encode;
mod send;

use crate::error::Error;
use crate::ledger::record::SpanRow;
use crate::limits::OTLP_QUEUE;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tap_protocol::diagnostics::OtlpExport;
use tap_protocol::ErrorCode;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The standard variables, in the order the OpenTelemetry spec gives them precedence.
const TRACES_ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
const ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// Where spans go according to the standard OpenTelemetry variables, for
/// [`crate::GatewayConfig::otlp_endpoint`]: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is,
/// else `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL such as `http://localhost:4318`) with
/// `/v1/traces` appended. `None` when neither is set, or when `OTEL_SDK_DISABLED=true` or
/// `OTEL_TRACES_EXPORTER=none` turn exporting off. `tap gateway` and the desktop app
/// both call this, so they read the same variables the same way.
pub fn otlp_endpoint_from_env() -> Option<String> {
    endpoint_from(|name| std::env::var(name).ok())
}

fn endpoint_from(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| {
        var(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"))
    {
        return None;
    }
    if let Some(url) = set(TRACES_ENDPOINT_VAR) {
        return Some(url);
    }
    set(ENDPOINT_VAR).map(|base| format!("{}/v1/traces", base.trim_end_matches('/')))
}

/// A configured endpoint, checked once at start. User info in the URL is left out (never
/// sent, never shown); a query is sent but not shown, as it may hold a key.
struct Endpoint {
    /// What is connected to, and the `Host` header: `host` or `host:port`.
    authority: String,
    /// The request target: path and query.
    path: String,
    /// `http://<authority><path>` (`?…` for a query), for logs and diagnostics.
    shown: String,
}

impl Endpoint {
    /// Only `http://`: the export is meant for a collector or agent on this machine or
    /// network (Jaeger, an OpenTelemetry Collector), and TLS would put a TLS stack in the
    /// engine for it. A collector forwards to remote HTTPS backends.
    fn parse(url: &str) -> Result<Self, Error> {
        let uri: hyper::Uri = url.parse().map_err(|e| {
            Error::new(ErrorCode::InvalidJson, format!("'{url}' is not a URL: {e}"))
        })?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(Error::invalid(
                    "https endpoints are not supported; point it at a local collector over http://",
                ))
            }
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidJson,
                    format!("'{url}' is not an http:// URL"),
                ))
            }
        }
        let authority = uri
            .authority()
            .ok_or_else(|| Error::invalid("the URL has no host"))?;
        let authority = match authority.port_u16() {
            Some(port) => format!("{}:{port}", authority.host()),
            None => authority.host().to_string(),
        };
        let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
        let query = if uri.query().is_some() { "?…" } else { "" };
        let shown = format!("http://{authority}{}{query}", uri.path());
        Ok(Self {
            authority,
            path,
            shown,
        })
    }

    /// Where to connect: the authority with HTTP's default port when it has none.
    fn address(&self) -> String {
        // An IPv6 literal is bracketed, so a port is the text after its last ':' only
        // outside the brackets.
        match self.authority.rsplit_once(':') {
            Some((_, port)) if !port.contains(']') => self.authority.clone(),
            _ => format!("{}:80", self.authority),
        }
    }
}

/// The export's side of the tracer: a queue into the exporter task. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Exporter {
    tx: mpsc::Sender<SpanRow>,
    counters: Arc<Counters>,
}

/// What the exporter counts, for Diagnostics.
struct Counters {
    endpoint: String,
    capacity: usize,
    exported: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
    last_error: Mutex<Option<String>>,
}

impl Counters {
    fn set_error(&self, error: Option<String>) {
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = error;
    }
}

impl Exporter {
    /// Starts exporting to `url` on `tasks`; the task ends when `stopping` is cancelled,
    /// after one last, short attempt at what is queued. `None` (logged) when `url` cannot
    /// be used: the gateway runs without the export rather than not at all.
    pub fn start(url: &str, tasks: &TaskTracker, stopping: CancellationToken) -> Option<Self> {
        match Endpoint::parse(url) {
            Ok(endpoint) => {
                tracing::info!(endpoint = %endpoint.shown, "exporting spans over OTLP/HTTP");
                Some(Self::start_with(endpoint, OTLP_QUEUE, tasks, stopping))
            }
            Err(e) => {
                tracing::warn!(error = %e, "OTLP endpoint not usable; spans are not exported");
                None
            }
        }
    }

    fn start_with(
        endpoint: Endpoint,
        capacity: usize,
        tasks: &TaskTracker,
        stopping: CancellationToken,
    ) -> Self {
        let (tx, rx) = mpsc::channel(capacity);
        let counters = Arc::new(Counters {
            endpoint: endpoint.shown.clone(),
            capacity,
            exported: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            last_error: Mutex::new(None),
        });
        tasks.spawn(send::run(
            rx,
            endpoint,
            counters.clone(),
            tasks.clone(),
            stopping,
        ));
        Self { tx, counters }
    }

    /// Offers a copy of a finished span; never waits. The copy is only made when there is
    /// room, so a full queue costs one atomic increment.
    pub fn offer(&self, row: &SpanRow) {
        match self.tx.try_reserve() {
            Ok(permit) => permit.send(row.clone()),
            // Full, or closed (the gateway stopped and the task ended).
            Err(_) => {
                self.counters.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The counters since the start, for Diagnostics.
    pub(crate) fn stats(&self) -> OtlpExport {
        let c = &self.counters;
        OtlpExport {
            endpoint: c.endpoint.clone(),
            queue_capacity: c.capacity as u32,
            exported: c.exported.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
            last_error: c
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(vars: &[(&str, &str)]) -> Option<String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        endpoint_from(|k| vars.get(k).cloned())
    }

    #[test]
    fn the_standard_variables_resolve_as_the_spec_says() {
        assert_eq!(from(&[]), None);
        assert_eq!(
            from(&[(ENDPOINT_VAR, "http://localhost:4318")]).as_deref(),
            Some("http://localhost:4318/v1/traces")
        );
        assert_eq!(
            from(&[(ENDPOINT_VAR, "http://collector:4318/base/")]).as_deref(),
            Some("http://collector:4318/base/v1/traces")
        );
        // The signal-specific one is used as it is, and wins.
        assert_eq!(
            from(&[
                (ENDPOINT_VAR, "http://localhost:4318"),
                (TRACES_ENDPOINT_VAR, "http://127.0.0.1:9999/custom")
            ])
            .as_deref(),
            Some("http://127.0.0.1:9999/custom")
        );
        assert_eq!(from(&[(ENDPOINT_VAR, "  ")]), None, "blank is unset");
        assert_eq!(
            from(&[
                (ENDPOINT_VAR, "http://localhost:4318"),
                ("OTEL_SDK_DISABLED", "TRUE")
            ]),
            None
        );
        assert_eq!(
            from(&[
                (ENDPOINT_VAR, "http://localhost:4318"),
                ("OTEL_TRACES_EXPORTER", "none")
            ]),
            None
        );
    }

    fn row() -> SpanRow {
        SpanRow {
            trace_id: 1,
            span_id: 2,
            parent_id: None,
            remote_parent: false,
            name: "push",
            start: std::time::SystemTime::now(),
            duration: std::time::Duration::ZERO,
            status: tap_protocol::ledger::SpanStatus::Ok,
            error_code: None,
            message: None,
            session_id: None,
            provider: None,
            tool: None,
            attributes: Vec::new(),
            events: Vec::new(),
        }
    }

    /// A receiver that takes connections and never answers.
    async fn mute_receiver() -> (Endpoint, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        (Endpoint::parse(&url).unwrap(), held)
    }

    #[tokio::test]
    async fn a_full_queue_drops_from_the_export_counts_and_never_waits() {
        let (endpoint, held) = mute_receiver().await;
        let tasks = TaskTracker::new();
        let stopping = CancellationToken::new();
        let exporter = Exporter::start_with(endpoint, 4, &tasks, stopping.clone());
        // A current-thread runtime: the exporter task cannot run during this loop, so
        // exactly the queue's capacity gets in and every other offer returns at once.
        for _ in 0..100 {
            exporter.offer(&row());
        }
        let s = exporter.stats();
        assert_eq!((s.dropped, s.exported, s.failed), (96, 0, 0), "{s:?}");
        assert_eq!(s.queue_capacity, 4);
        // Stop while the receiver sits on the batch: the task ends after its short final
        // try, the four count as failed, and later offers as dropped.
        stopping.cancel();
        tasks.close();
        tokio::time::timeout(2 * crate::limits::OTLP_FINAL_FLUSH, tasks.wait())
            .await
            .expect("the exporter ends promptly at stop");
        exporter.offer(&row());
        let s = exporter.stats();
        assert_eq!((s.dropped, s.exported, s.failed), (97, 0, 4), "{s:?}");
        assert!(s.last_error.is_some());
        held.abort();
    }

    #[test]
    fn endpoints_are_http_urls_shown_without_user_info() {
        let e = Endpoint::parse("http://user:secret@localhost:4318/v1/traces").unwrap();
        assert_eq!(e.shown, "http://localhost:4318/v1/traces");
        assert_eq!(e.path, "/v1/traces");
        assert_eq!(e.address(), "localhost:4318");
        assert_eq!(
            Endpoint::parse("http://collector/x?y=1").unwrap().address(),
            "collector:80"
        );
        let with_key = Endpoint::parse("http://collector/x?key=secret").unwrap();
        assert_eq!(with_key.path, "/x?key=secret", "sent");
        assert_eq!(with_key.shown, "http://collector/x?…", "not shown");
        assert_eq!(
            Endpoint::parse("http://[::1]:4318/").unwrap().address(),
            "[::1]:4318"
        );
        assert_eq!(
            Endpoint::parse("http://[::1]/").unwrap().address(),
            "[::1]:80"
        );
        assert!(Endpoint::parse("https://collector:4318/v1/traces").is_err());
        assert!(Endpoint::parse("localhost:4318").is_err());
        assert!(Endpoint::parse("not a url").is_err());
    }
}
