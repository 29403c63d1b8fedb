//! What a provider or a host writes reaches the other side with its object keys in the
//! order written: a tool's `parameters` as the host sees them, a call's `args`, a result's
//! `data`, and a shared tool's `args` once the gateway has taken its `target` out. A model
//! reads a schema's properties in that order, and fills them in it.

use serde_json::{json, Value};
use tap_testkit::*;

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// A tool whose properties are declared out of alphabetical order.
fn find() -> Value {
    json!({"name": "find", "description": "Finds",
           "parameters": {"type": "object",
                          "properties": {"query": {"type": "string"},
                                         "limit": {"type": "integer"},
                                         "after": {"type": "string"}}}})
}

#[tokio::test]
async fn parameters_args_and_data_keep_the_order_they_were_written_in() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([find()])).await;

    let published = tools_published(&mut host, &s.id, &["find"]).await;
    assert_eq!(
        keys(&published.tools[0].parameters.to_value()["properties"]),
        ["query", "limit", "after"]
    );

    let rx = invoke(
        &host,
        &s.id,
        "find",
        json!({"query": "q", "limit": 5, "after": "a"}),
    );
    let call = p.expect("tool.call").await;
    assert_eq!(keys(&call["args"]), ["query", "limit", "after"]);
    answer(&mut p, &call, json!({"zeta": 1, "alpha": 2, "mid": 3})).await;
    let data = result_of(rx).await.data.expect("data");
    assert_eq!(keys(&data), ["zeta", "alpha", "mid"]);
}

#[tokio::test]
async fn a_shared_tools_args_keep_their_order_without_the_gateways_target() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut a, _) = gw
        .bind("tabs", &s.id, json!({"instance": "a", "tools": [find()]}))
        .await;
    let (_b, _) = gw
        .bind("tabs", &s.id, json!({"instance": "b", "tools": [find()]}))
        .await;

    let rx = invoke(
        &host,
        &s.id,
        "find",
        json!({"query": "q", "target": "a", "limit": 5, "after": "x"}),
    );
    let call = a.expect("tool.call").await;
    assert_eq!(keys(&call["args"]), ["query", "limit", "after"]);
    answer(&mut a, &call, json!(null)).await;
    result_of(rx).await;
}
