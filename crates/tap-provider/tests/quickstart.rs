//! The quick start in docs/sdk/rust.md is `examples/quickstart.rs`, byte for byte, and it
//! runs: found through the environment, it binds to a real gateway's session, answers a
//! call, and ends with the session.

mod quickstart {
    include!("../examples/quickstart.rs");

    /// The example's `main`, reachable from the test.
    pub fn run() -> Result<(), tap_provider::Error> {
        main()
    }
}

use serde_json::json;
use std::path::Path;

const QUICKSTART_LINES: usize = 10;

#[test]
fn the_docs_quick_start_is_the_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("../../docs/sdk/rust.md")).unwrap();
    let block = doc
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a rust code block");
    let example = std::fs::read_to_string(root.join("examples/quickstart.rs")).unwrap();
    assert_eq!(
        block, example,
        "docs/sdk/rust.md's quick start differs from examples/quickstart.rs"
    );
    // The issue's promise: a provider in ten lines.
    assert!(
        example.lines().count() <= QUICKSTART_LINES,
        "a quick start stays short: {} lines",
        example.lines().count()
    );
}

#[test]
fn the_quick_start_answers_a_call_and_ends_with_its_session() {
    // The gateway and the session host run on a runtime of their own; the example starts
    // its own (`run_forever`) on this thread, as a real program would.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (gw, host, session) = rt.block_on(async {
        let gw = tap_testkit::TestGateway::start().await;
        let (host, session) = gw.host_with_session().await;
        (gw, host, session)
    });
    // The discovery the example relies on: TAP_GATEWAY_URL and TAP_PROVIDER_TOKEN. This
    // test binary has no other test that reads them.
    std::env::set_var("TAP_GATEWAY_URL", gw.url());
    std::env::set_var("TAP_PROVIDER_TOKEN", gw.token());
    let provider = std::thread::spawn(|| quickstart::run().map_err(|e| e.to_string()));
    rt.block_on(async {
        let result = tap_testkit::eventually("the greeter answers", || async {
            let r = host
                .invoke(&session.id, "greet", json!({"name": "Ada"}))
                .await
                .ok()?;
            r.data
        })
        .await;
        assert_eq!(result, json!("Hello, Ada!"));
        host.end_session(&session.id).await.unwrap();
    });
    provider.join().unwrap().expect("the example returns Ok");
    drop(gw);
}
