//! What the modules share: the gateway's endpoint, a tool, invoking from the host, waiting
//! for an event.

use std::future::Future;
use tap_client::HostClient;
use tap_provider::{json, Builder, Endpoint, Event, Provider, Tool, Value};
use tap_testkit::{TestGateway, PATIENCE};

pub fn endpoint(gw: &TestGateway) -> Endpoint {
    Endpoint {
        url: gw.url(),
        token: gw.token(),
    }
}

/// A builder for `name` pointed at `gw` with the `greet` tool.
pub fn builder(gw: &TestGateway, name: &str) -> Builder {
    Provider::builder(name).tool(greet()).endpoint(endpoint(gw))
}

pub fn greet() -> Tool {
    Tool::new(
        "greet",
        "Says hello",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        |args, _| async move { Ok(format!("Hello, {}!", args["name"].as_str().unwrap())) },
    )
    .unwrap()
}

/// `fut`, or a failure naming `what` after [`PATIENCE`].
pub async fn soon<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, fut)
        .await
        .unwrap_or_else(|_| panic!("{what} in time"))
}

/// Invokes `tool`; returns `(data, errorCode, error)`.
pub async fn invoke(
    host: &HostClient,
    session: &str,
    tool: &str,
    args: Value,
) -> (Option<Value>, Option<String>, String) {
    let r = soon("a result", host.invoke(session, tool, args))
        .await
        .expect("tool.result");
    (
        r.data,
        r.error_code.map(|c| c.to_string()),
        r.error.unwrap_or_default(),
    )
}

/// The next event matching `what`.
pub async fn next_event(
    rx: &mut tokio::sync::broadcast::Receiver<Event>,
    what: impl Fn(&Event) -> bool,
) -> Event {
    loop {
        let e = soon("an event", rx.recv()).await.unwrap();
        if what(&e) {
            return e;
        }
    }
}
