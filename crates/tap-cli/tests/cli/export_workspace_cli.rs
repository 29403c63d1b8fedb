//! `tap streams export --jsonl` into a file or into the session's workspace (issue 40: the
//! reference kept a session's records as JSONL files in its workspace): a real `tap
//! gateway`, a session opened with `tap session open --cwd`, a provider's pushes in the
//! ledger, and the file the export writes there.

use crate::common::{eventually, GatewayProcess, SessionOpen};
use serde_json::{json, Value};

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_a_sessions_events_as_jsonl_into_its_workspace_or_a_file() {
    let gw = GatewayProcess::start().await;
    let workspace = gw.dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    let session = SessionOpen::open(
        &gw,
        &["--label", "exported", "--cwd", workspace.to_str().unwrap()],
    )
    .await;
    let id = session.id.clone();
    let mut p = gw.bound("prov", &id, json!([])).await;
    for text in ["first event", "second event"] {
        p.send(json!({"type": "push", "level": "keep", "stream": "ci", "event": text}))
            .await;
    }
    eventually("the pushes in the ledger", || async {
        let out = gw
            .run(&["streams", "history", "--session", &id, "--json"])
            .await;
        (out.json().as_array().map(Vec::len) == Some(2)).then_some(())
    })
    .await;

    let out = gw
        .run(&[
            "streams",
            "export",
            "--jsonl",
            "--session",
            &id,
            "--into-workspace",
        ])
        .await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "the events go to the file: {out:?}");
    let file = workspace
        .join(".tap")
        .join("records")
        .join(format!("{id}.jsonl"));
    assert!(
        out.stderr.contains(&format!("to {}", file.display())),
        "{out:?}"
    );
    let events = lines(&file);
    let texts: Vec<&str> = events.iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["first event", "second event"], "oldest first");
    assert!(events.iter().all(|e| e["sessionId"] == id.as_str()));

    // --out FILE; a second export replaces the file rather than appending.
    let other = gw.dir.path().join("out.jsonl");
    for _ in 0..2 {
        let out = gw
            .run(&[
                "streams",
                "export",
                "--session",
                &id,
                "--out",
                other.to_str().unwrap(),
            ])
            .await;
        assert_eq!(out.code(), Some(0), "{out:?}");
    }
    assert_eq!(lines(&other).len(), 2);

    // Usage: the workspace is a session's; a session must be known.
    let out = gw.run(&["streams", "export", "--into-workspace"]).await;
    assert_eq!(out.code(), Some(2), "needs --session: {out:?}");
    let out = gw
        .run(&["streams", "export", "--session", "nope", "--into-workspace"])
        .await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("no session 'nope'"), "{out:?}");
    let out = gw
        .run(&[
            "streams",
            "export",
            "--session",
            &id,
            "--into-workspace",
            "--out",
            "x",
        ])
        .await;
    assert_eq!(out.code(), Some(2), "one target: {out:?}");
    drop(session);
}
