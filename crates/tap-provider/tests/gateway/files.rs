//! File results: a handler answers with a file in its `persistDir`; the gateway copies it
//! and the caller gets the copy's path, type and size. A file outside is refused.

use crate::common::*;
use std::time::Duration;
use tap_provider::{json, FileResult, Provider, Tool};
use tap_testkit::TestGateway;

#[tokio::test]
async fn a_handler_answers_with_a_file_the_caller_can_read() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let report = Tool::new("report", "", json!({}), |_, ctx| async move {
        ctx.write_file("line 1\nline 2\n", "text/plain").await
    })
    .unwrap();
    let own = Tool::new("own", "", json!({}), |_, ctx| async move {
        // A file the handler wrote itself, kept for a minute.
        let path = ctx.persist_dir().unwrap().join("shot.png");
        tokio::fs::write(&path, [0x89, b'P', b'N', b'G']).await?;
        Ok(FileResult::new(path, "image/png")?.ttl(Duration::from_secs(60)))
    })
    .unwrap();
    let elsewhere = gw.dir.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "not mine to give").unwrap();
    let outside = Tool::new("outside", "", json!({}), move |_, _| {
        let path = elsewhere.clone();
        async move { Ok(FileResult::new(path, "text/plain")?) }
    })
    .unwrap();
    let p = Provider::builder("files")
        .tool(report)
        .tool(own)
        .tool(outside)
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    assert!(
        p.persist_dir().is_some(),
        "a project provider has a persistDir"
    );

    let (data, code, msg) = invoke(&host, &session.id, "report", json!({})).await;
    assert_eq!(code, None, "{msg}");
    let file = &data.unwrap()["file"];
    assert_eq!(
        (file["mimeType"].as_str(), file["size"].as_u64()),
        (Some("text/plain"), Some(14))
    );
    let copy = std::fs::read_to_string(file["path"].as_str().unwrap()).unwrap();
    assert_eq!(copy, "line 1\nline 2\n");

    let (data, code, msg) = invoke(&host, &session.id, "own", json!({})).await;
    assert_eq!(code, None, "{msg}");
    let file = &data.unwrap()["file"];
    assert_eq!(file["mimeType"], "image/png");
    assert_eq!(
        std::fs::read(file["path"].as_str().unwrap()).unwrap(),
        b"\x89PNG"
    );

    let (_, code, msg) = invoke(&host, &session.id, "outside", json!({})).await;
    assert_eq!(code.as_deref(), Some("UNAUTHORIZED"), "{msg}");
}
