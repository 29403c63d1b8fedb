//! The legacy HTTP+SSE transport of MCP 2024-11-05 (`"type": "sse"`), client side, as an
//! rmcp `Transport` (rmcp 3.11 has only Streamable HTTP). The server's event stream
//! (`GET url`) first names, in an `endpoint` event, where messages go; each JSON-RPC message
//! is then one `POST` there, and the server's messages come back as `message` events on the
//! stream. Servers built on the older SDKs (and `server-everything sse`) still speak it.
//!
//! Everything the server controls is bounded: the endpoint must be on the URL's origin (as
//! must every redirect), an event may be at most [`MCP_SERVER_MESSAGE_BYTES`], a POST has
//! [`MCP_SSE_POST_TIMEOUT`], and waiting for the endpoint shares the initialize deadline.
//! The stream is parsed here rather than with `sse-stream` (which rmcp brings): that crate
//! buffers an unfinished event without bound and ends the stream at a field it does not
//! know, where the SSE spec ignores it.

use super::connect::LOG_TARGET;
use super::line_limit::Cut;
use crate::limits::{MCP_SERVER_MESSAGE_BYTES, MCP_SSE_POST_TIMEOUT};
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Response, Url};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// Why sending a message failed (the call that sent it gets this error).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SseError {
    #[error("posting a message to {endpoint} failed: {source}")]
    Post {
        endpoint: Url,
        source: reqwest::Error,
    },
    #[error("{endpoint} answered {status} to a message")]
    Status {
        endpoint: Url,
        status: reqwest::StatusCode,
    },
    #[error("a message could not be encoded: {0}")]
    Encode(#[from] serde_json::Error),
}

/// A connected server: its stream and where its messages go.
pub(crate) struct LegacySse {
    http: reqwest::Client,
    endpoint: Url,
    /// The open event stream; `None` once it has ended.
    stream: Option<Response>,
    parser: Parser,
    ready: VecDeque<Event>,
    /// Told why the stream ended, so the run fails at once rather than at its next call.
    dropped: Option<oneshot::Sender<String>>,
    /// Told when an event is over the limit, so the calls in flight fail as for a stdio
    /// server's oversized line (`PAYLOAD_TOO_LARGE`, not retryable: a retry would get the
    /// same answer).
    cut: Arc<Cut>,
}

/// Opens the event stream of `url` and waits, for at most `within`, for its `endpoint`
/// event. `Err`: why, in words for the user. The receiver hears why the stream dropped, if
/// it does.
pub(crate) async fn connect(
    url: &str,
    headers: HeaderMap,
    within: Duration,
    cut: Arc<Cut>,
) -> Result<(LegacySse, oneshot::Receiver<String>), String> {
    let base = Url::parse(url).map_err(|e| format!("its URL {url} is not valid: {e}"))?;
    let origin = base.origin();
    // A redirect to another origin would carry the configured headers (credentials) there.
    let same_origin = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.url().origin() == origin && attempt.previous().len() < 10 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .redirect(same_origin)
        .build()
        .map_err(|e| format!("no HTTP client: {e}"))?;
    let (tx, rx) = oneshot::channel();
    let mut sse = LegacySse {
        http,
        endpoint: base.clone(),
        stream: None,
        parser: Parser::default(),
        ready: VecDeque::new(),
        dropped: Some(tx),
        cut,
    };
    let ms = within.as_millis();
    match tokio::time::timeout(within, sse.open(&base)).await {
        Ok(Ok(endpoint)) => {
            sse.endpoint = endpoint;
            Ok((sse, rx))
        }
        Ok(Err(why)) => Err(why),
        Err(_) if sse.stream.is_some() => Err(format!(
            "its event stream sent no `endpoint` event within {ms} ms (the initialize deadline)"
        )),
        Err(_) => Err(format!(
            "{base} did not open its event stream within {ms} ms (the initialize deadline)"
        )),
    }
}

impl LegacySse {
    /// GETs the stream and reads it up to the `endpoint` event; returns the endpoint.
    async fn open(&mut self, base: &Url) -> Result<Url, String> {
        let response = self
            .http
            .get(base.clone())
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .send()
            .await
            .map_err(|e| format!("cannot reach {base}: {}", chain(&e)))?;
        let status = response.status();
        let kind = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_string();
        if !status.is_success() || !kind.starts_with("text/event-stream") {
            // Streamable HTTP servers answer a GET without a session with a JSON-RPC error.
            let hint = match kind.starts_with("application/json") {
                true => " (is it a Streamable HTTP server? then use \"type\": \"http\")",
                false => "",
            };
            return Err(format!(
                "{base} answered {status} with Content-Type {kind}, not an event stream{hint}"
            ));
        }
        let stream_url = response.url().clone();
        self.stream = Some(response);
        loop {
            let event = self.next_event().await?;
            if event.name != "endpoint" {
                continue;
            }
            let endpoint = stream_url
                .join(event.data.trim())
                .map_err(|e| format!("its endpoint '{}' is not a URL: {e}", event.data))?;
            if endpoint.origin() != base.origin() {
                return Err(format!(
                    "its endpoint {endpoint} is on another origin than {base}; refused (messages, and the headers sent with them, go only to the server's own origin)"
                ));
            }
            return Ok(endpoint);
        }
    }

    /// The next complete event; `Err` when the stream ended, failed or sent too much.
    async fn next_event(&mut self) -> Result<Event, String> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Ok(event);
            }
            let Some(stream) = self.stream.as_mut() else {
                return Err("its event stream has ended".into());
            };
            let chunk = match stream.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return Err(self.end("its event stream ended".into())),
                Err(e) => {
                    let why = format!("its event stream dropped: {}", chain(&e));
                    return Err(self.end(why));
                }
            };
            if let Err(too_big) = self.parser.feed(&chunk, &mut self.ready) {
                self.cut.cut(too_big.clone());
                return Err(self.end(too_big));
            }
        }
    }

    fn end(&mut self, why: String) -> String {
        self.stream = None;
        why
    }
}

impl Transport<RoleClient> for LegacySse {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let endpoint = self.endpoint.clone();
        let request = serde_json::to_vec(&item).map(|body| {
            self.http
                .post(endpoint.clone())
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .timeout(MCP_SSE_POST_TIMEOUT)
                .body(body)
        });
        async move {
            let response = request?.send().await.map_err(|source| SseError::Post {
                endpoint: endpoint.clone(),
                source,
            })?;
            // The answer comes on the stream; the POST's own body (`Accepted`) says nothing.
            match response.status() {
                s if s.is_success() => Ok(()),
                status => Err(SseError::Status { endpoint, status }),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let event = match self.next_event().await {
                Ok(event) => event,
                Err(why) => {
                    if let Some(tx) = self.dropped.take() {
                        let _ = tx.send(why);
                    }
                    return None;
                }
            };
            if event.name != "message" {
                continue;
            }
            match serde_json::from_str(&event.data) {
                Ok(message) => return Some(message),
                Err(e) => {
                    tracing::warn!(target: LOG_TARGET, endpoint = %self.endpoint, error = %e, "ignored a message event that is not JSON-RPC")
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing the stream ends the server's session; there is nothing to say first.
        self.stream = None;
        Ok(())
    }
}

/// A reqwest error with its causes ("error sending request" alone says little).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// One dispatched event: its type (`message` when it names none) and its data.
#[derive(Debug, PartialEq)]
struct Event {
    name: String,
    data: String,
}

/// The event stream format (html.spec.whatwg.org, "Parsing an event stream"), as far as
/// MCP uses it: `event` and `data` fields; `id`, `retry`, comments and unknown fields are
/// ignored. At most [`MCP_SERVER_MESSAGE_BYTES`] of one event (its unfinished line, type and
/// data) are held.
#[derive(Default)]
struct Parser {
    line: Vec<u8>,
    name: String,
    data: String,
    /// The last chunk ended in `\r`: a `\n` starting the next one ends no second line.
    after_cr: bool,
}

impl Parser {
    /// Reads `chunk`, adding each event it completes to `out`. `Err` once the event being
    /// read is over the limit (the stream is unusable then).
    fn feed(&mut self, mut chunk: &[u8], out: &mut VecDeque<Event>) -> Result<(), String> {
        if std::mem::take(&mut self.after_cr) && chunk.first() == Some(&b'\n') {
            chunk = &chunk[1..];
        }
        while let Some(end) = chunk.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.line.extend_from_slice(&chunk[..end]);
            self.check()?;
            let line = std::mem::take(&mut self.line);
            self.on_line(&line, out);
            let cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            if cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        self.line.extend_from_slice(chunk);
        self.check()
    }

    fn check(&self) -> Result<(), String> {
        let held = self.line.len() + self.name.len() + self.data.len();
        if held > MCP_SERVER_MESSAGE_BYTES {
            return Err(format!(
                "{}; its event stream was closed",
                super::line_limit::over_limit(MCP_SERVER_MESSAGE_BYTES)
            ));
        }
        Ok(())
    }

    fn on_line(&mut self, line: &[u8], out: &mut VecDeque<Event>) {
        if line.is_empty() {
            let name = std::mem::take(&mut self.name);
            let mut data = std::mem::take(&mut self.data);
            // An event with no data line is not dispatched (the spec's rule).
            if data.pop() == Some('\n') {
                let name = if name.is_empty() {
                    "message".into()
                } else {
                    name
                };
                out.push_back(Event { name, data });
            }
            return;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some(("", _)) => return, // a comment (servers send them to keep the stream open)
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "event" => self.name = value.to_string(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<Event> {
        let mut parser = Parser::default();
        let mut out = VecDeque::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out).unwrap();
        }
        out.into()
    }

    fn event(name: &str, data: &str) -> Event {
        Event {
            name: name.into(),
            data: data.into(),
        }
    }

    #[test]
    fn reads_events_split_anywhere_with_any_line_ending() {
        let whole = b": ping\r\nevent: endpoint\r\ndata: /messages/?session_id=1\r\n\r\ndata: {\"a\":\ndata:1}\n\nid: 7\rretry: 10\revent:message\rdata: x\r\r";
        let expected = vec![
            event("endpoint", "/messages/?session_id=1"),
            event("message", "{\"a\":\n1}"),
            event("message", "x"),
        ];
        assert_eq!(events(&[whole]), expected);
        // Every split point, including between `\r` and `\n`.
        for at in 0..whole.len() {
            assert_eq!(
                events(&[&whole[..at], &whole[at..]]),
                expected,
                "split at {at}"
            );
        }
    }

    #[test]
    fn ignores_unknown_fields_comments_and_events_without_data() {
        let got = events(&[b"foo: bar\nnocolon\n\nevent: endpoint\n\n: c\n\ndata\n\n"]);
        assert_eq!(got, vec![event("message", "")]);
    }

    #[test]
    fn an_event_over_the_limit_is_refused_before_it_is_held() {
        let mut parser = Parser::default();
        let mut out = VecDeque::new();
        let line = vec![b'x'; 1024 * 1024];
        parser.feed(b"data: ", &mut out).unwrap();
        let mut refused = None;
        for i in 0..=MCP_SERVER_MESSAGE_BYTES / line.len() {
            if let Err(e) = parser.feed(&line, &mut out) {
                refused = Some((i, e));
                break;
            }
        }
        let (i, e) = refused.expect("refused");
        assert_eq!(i, MCP_SERVER_MESSAGE_BYTES / line.len() - 1, "{e}");
        assert!(e.contains("over 16 MiB"), "{e}");
        // Many events, each well under the limit, are fine however much they add up to.
        let mut parser = Parser::default();
        let small = b"data: 1\n\n".repeat(1024 * 1024);
        for _ in 0..3 {
            parser.feed(&small, &mut out).unwrap();
            out.clear();
        }
    }
}
