//! Spans exported over OTLP/HTTP (`GatewayConfig::otlp_endpoint`,
//! `docs/configuration.md#export-to-opentelemetry-otlphttp`): a real HTTP receiver on
//! 127.0.0.1:0 decodes each POST as a collector would, and the tests check the spans, their
//! parents, and that a dead or mute receiver never costs the gateway anything but the export.

use tap_testkit::*;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{any_value::Value as AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{status::StatusCode, Span};
use prost::Message;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tap_client::HostClient;
use tap_protocol::host::HostEvent;
use tap_protocol::ledger::TracesListParams;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// An OTLP/HTTP receiver: answers every `POST /v1/traces` with 200 and hands the decoded
/// request to the test.
struct Receiver {
    url: String,
    requests: mpsc::UnboundedReceiver<ExportTraceServiceRequest>,
    /// Connections accepted so far.
    connections: Arc<AtomicUsize>,
}

impl Receiver {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        let (tx, requests) = mpsc::unbounded_channel();
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let tx = tx.clone();
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let tx = tx.clone();
                    async move {
                        assert_eq!(req.method(), hyper::Method::POST);
                        assert_eq!(req.uri().path(), "/v1/traces");
                        assert_eq!(
                            req.headers()[hyper::header::CONTENT_TYPE],
                            "application/x-protobuf"
                        );
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let decoded = ExportTraceServiceRequest::decode(body).unwrap();
                        let _ = tx.send(decoded);
                        let answer = ExportTraceServiceResponse::default().encode_to_vec();
                        Ok::<_, hyper::Error>(
                            hyper::Response::builder()
                                .header(hyper::header::CONTENT_TYPE, "application/x-protobuf")
                                .body(Full::new(Bytes::from(answer)))
                                .unwrap(),
                        )
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service),
                );
            }
        });
        Self {
            url,
            requests,
            connections,
        }
    }

    /// Spans as they arrive until `done` says the set is complete.
    async fn spans_until(&mut self, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let mut spans = Vec::new();
        while !done(&spans) {
            let req = tokio::time::timeout(PATIENCE, self.requests.recv())
                .await
                .unwrap_or_else(|_| panic!("no export within {PATIENCE:?}; got {spans:#?}"))
                .expect("the receiver runs");
            let rs = &req.resource_spans[0];
            assert_eq!(
                string(&rs.resource.as_ref().unwrap().attributes, "service.name"),
                Some("tap-gateway")
            );
            let scope = &rs.scope_spans[0];
            assert_eq!(scope.scope.as_ref().unwrap().name, "tap-gateway");
            spans.extend(scope.spans.iter().cloned());
        }
        spans
    }
}

fn string<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| match a.value.as_ref()?.value.as_ref()? {
            AnyValue::StringValue(s) => Some(s.as_str()),
            _ => None,
        })
}

/// A URL where nothing listens: a port bound, then released.
fn refused_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}/v1/traces")
}

async fn next_delivery(host: &mut HostClient) -> String {
    match next_host_event(host, |e| matches!(e, HostEvent::Delivery(_))).await {
        HostEvent::Delivery(d) => d.event,
        _ => unreachable!(),
    }
}

/// `n` surface pushes from one provider, each delivered (a `push` span with a `delivery`
/// child each).
async fn pushes(gw: &TestGateway, n: usize) {
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("ci-watcher", &session.id, json!([])).await;
    for i in 0..n {
        p.send(
            json!({"type": "push", "level": "surface", "event": format!("e{i}"), "stream": "ci"}),
        )
        .await;
    }
    for i in 0..n {
        assert_eq!(next_delivery(&mut host).await, format!("e{i}"));
    }
}

#[tokio::test]
async fn a_push_and_its_delivery_reach_the_receiver_as_one_trace() {
    let mut receiver = Receiver::start().await;
    let url = receiver.url.clone();
    let gw = TestGateway::start_with(|c| c.otlp_endpoint = Some(url)).await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("ci-watcher", &session.id, json!([])).await;
    p.send(json!({"type": "push", "level": "surface", "event": "build failed", "stream": "ci"}))
        .await;
    assert_eq!(next_delivery(&mut host).await, "build failed");

    let spans = receiver
        .spans_until(|s| {
            s.iter().any(|s| s.name == "push") && s.iter().any(|s| s.name == "delivery")
        })
        .await;
    let push = spans.iter().find(|s| s.name == "push").unwrap();
    let delivery = spans.iter().find(|s| s.name == "delivery").unwrap();
    assert_eq!(push.trace_id.len(), 16);
    assert_eq!(push.span_id.len(), 8);
    assert!(push.parent_span_id.is_empty(), "the push is the root");
    assert_eq!(delivery.trace_id, push.trace_id, "one trace");
    assert_eq!(
        delivery.parent_span_id, push.span_id,
        "the delivery's parent"
    );
    assert_ne!(delivery.span_id, push.span_id);

    assert_eq!(
        string(&push.attributes, "session.id"),
        Some(session.id.as_str())
    );
    assert_eq!(
        string(&push.attributes, "provider.name"),
        Some("ci-watcher")
    );
    assert_eq!(string(&push.attributes, "stream"), Some("ci"));
    assert_eq!(string(&push.attributes, "level"), Some("surface"));
    assert_eq!(
        string(&delivery.attributes, "session.id"),
        Some(session.id.as_str())
    );
    for s in [push, delivery] {
        assert_eq!(
            s.status.as_ref().unwrap().code,
            StatusCode::Ok as i32,
            "{s:?}"
        );
        assert!(s.start_time_unix_nano > 0 && s.end_time_unix_nano >= s.start_time_unix_nano);
    }

    // The same trace id the ledger (and the panel) show.
    let g = gw.handle.gateway();
    g.flush_history().await;
    let hex: String = push.trace_id.iter().map(|b| format!("{b:02x}")).collect();
    let traces = g.traces_list(&TracesListParams::default()).unwrap().traces;
    assert!(
        traces.iter().any(|t| t.trace_id == hex),
        "{hex} in {traces:?}"
    );

    let stats = eventually("the export counted", || async {
        g.diagnostics().otlp.filter(|o| o.exported >= 2)
    })
    .await;
    assert_eq!(stats.endpoint, receiver.url);
    assert_eq!((stats.dropped, stats.failed), (0, 0));
    assert_eq!(stats.last_error, None);

    // The next batch goes over the same, kept-alive connection.
    p.send(json!({"type": "push", "level": "surface", "event": "fixed", "stream": "ci"}))
        .await;
    assert_eq!(next_delivery(&mut host).await, "fixed");
    let more = receiver.spans_until(|s| s.len() >= 2).await;
    assert!(
        more.iter().all(|s| s.trace_id != push.trace_id),
        "a new trace"
    );
    assert_eq!(receiver.connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_an_endpoint_nothing_is_exported_and_diagnostics_say_so() {
    let gw = TestGateway::start().await;
    pushes(&gw, 1).await;
    assert_eq!(gw.handle.gateway().diagnostics().otlp, None);
}

#[tokio::test]
async fn a_receiver_that_is_down_costs_the_export_only() {
    let gw = TestGateway::start_with(|c| c.otlp_endpoint = Some(refused_url())).await;
    // Every push is delivered as if nothing were configured.
    pushes(&gw, 5).await;
    let g = gw.handle.gateway();
    // The batch is retried, then given up on and counted; the ledger has every span.
    let stats = eventually("the failed batch counted", || async {
        g.diagnostics().otlp.filter(|o| o.failed >= 10)
    })
    .await;
    // The pushes' 10 spans at least (the session's start is a span too).
    assert_eq!((stats.exported, stats.dropped), (0, 0), "{stats:?}");
    assert!(stats.failed >= 10, "{stats:?}");
    let error = stats.last_error.expect("the failure is shown");
    assert!(error.to_lowercase().contains("connect"), "{error}");
    g.flush_history().await;
    let pushes_only = TracesListParams {
        name: Some("push".into()),
        ..Default::default()
    };
    let traces = g.traces_list(&pushes_only).unwrap().traces;
    assert_eq!(traces.len(), 5, "{traces:?}");
    // And the gateway still serves.
    pushes(&gw, 1).await;
}

#[tokio::test]
async fn a_mute_receiver_neither_slows_the_gateway_nor_delays_its_stop() {
    // Takes connections and the requests on them, and never answers; says when the
    // exporter closes one.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let (accepted_tx, mut accepted) = mpsc::unbounded_channel();
    let (closed_tx, mut closed) = mpsc::unbounded_channel();
    let mute = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let _ = accepted_tx.send(());
            let closed_tx = closed_tx.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while socket.read(&mut buf).await.is_ok_and(|n| n > 0) {}
                let _ = closed_tx.send(());
            });
        }
    });
    let gw = TestGateway::start_with(|c| c.otlp_endpoint = Some(url)).await;
    pushes(&gw, 3).await;
    // The exporter is now waiting on the receiver...
    tokio::time::timeout(PATIENCE, accepted.recv())
        .await
        .expect("the exporter connects");
    // ...and the gateway serves all the same.
    pushes(&gw, 2).await;
    let g = gw.handle.gateway().clone();
    let before = g.diagnostics().otlp.unwrap();
    assert_eq!((before.exported, before.failed), (0, 0), "{before:?}");
    // A stop does not wait for the receiver past the exporter's short final flush (the
    // stop's own wait for tasks is 5 s: a hung exporter would reach it).
    tokio::time::timeout(Duration::from_secs(4), gw.handle.stop())
        .await
        .expect("the stop is not held up by the receiver")
        .unwrap();
    let after = g.diagnostics().otlp.unwrap();
    let spans: u64 = g
        .traces_list(&TracesListParams {
            limit: Some(1000),
            ..Default::default()
        })
        .unwrap()
        .traces
        .iter()
        .map(|t| u64::from(t.spans))
        .sum();
    assert_eq!(
        (after.exported, after.dropped, after.failed),
        (0, 0, spans),
        "every span the ledger has (the pushes', the session's) given up on at the stop: {after:?}"
    );
    // Nothing the exporter opened outlives the gateway: every connection it made is closed.
    let mut opened = 1;
    while accepted.try_recv().is_ok() {
        opened += 1;
    }
    for _ in 0..opened {
        tokio::time::timeout(PATIENCE, closed.recv())
            .await
            .expect("the exporter's connections close with the gateway");
    }
    mute.abort();
}
