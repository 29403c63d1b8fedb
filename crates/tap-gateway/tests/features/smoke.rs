use serde_json::json;
use tap_testkit::*;

#[tokio::test]
async fn a_bound_provider_answers_a_call_from_a_session_host() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = gw
        .bound("greeter", &session.id, json!([tool("greet")]))
        .await;
    let call = tokio::spawn(async move {
        host.invoke(&session.id, "greet", json!({"name": "Ada"}))
            .await
    });
    let c = p.expect("tool.call").await;
    assert_eq!(c["tool"], "greet");
    assert_eq!(c["args"]["name"], "Ada");
    p.send(json!({"type": "tool.result", "id": c["id"], "data": "Hello, Ada!"}))
        .await;
    let r = call.await.unwrap().unwrap();
    assert_eq!(r.data, Some(json!("Hello, Ada!")));
}
