//! A call waits for room in the ledger before it starts (`crate::tools::ledger_backpressure`),
//! seen from a session host: the ledger's writer is stalled and calls over a real host socket
//! queue behind it, boundedly.

use crate::config::History;
use crate::host_protocol::test_peer::{connect, frame, next};
use crate::ledger::record::Record;
use crate::ledger::tests::stall;
use crate::limits::LEDGER_QUEUE_BYTES;
use serde_json::{json, Value};
use std::time::SystemTime;

/// One record that takes the queue's whole byte budget. Its bytes come back only when
/// the writer commits it, so the queue stays full however many records the (stalled)
/// writer has taken off the channel. Filling it record by record made the outcome
/// depend on which bound a record's size reached first, and on the writer's timing.
fn filler() -> Record {
    Record::SessionEnded {
        id: "filler".into(),
        reason: "x".repeat(LEDGER_QUEUE_BYTES),
        at: SystemTime::now(),
    }
}

/// With the writer stalled and the queue full, a call waits (and is counted as a wait)
/// instead of running and leaving its spans to wait; once the writer goes on, the call
/// runs and its span is written.
#[tokio::test]
async fn a_call_waits_while_the_ledger_is_full_then_runs() {
    let dir = tempfile::tempdir().unwrap();
    let core = crate::state::test_core(dir.path(), |c| c.history = History::Memory);
    let (mut conn, mut rx) = connect(&core);
    frame(
        &mut conn,
        json!({"type": "auth", "token": "htk-test", "protocolVersion": 1}),
    );
    next(&mut rx, "auth.ok").await;
    frame(
        &mut conn,
        json!({"type": "session.register", "requestId": "r", "sessionId": "s", "cwd": "/tmp"}),
    );
    next(&mut rx, "session.registered").await;
    core.ledger.flush().await;

    let release = stall(&core.ledger);
    assert!(
        core.ledger.try_write(filler()).is_ok(),
        "the queue was empty"
    );
    assert!(!core.ledger.has_room());
    let waits = core.ledger.waits();
    frame(
        &mut conn,
        json!({"type": "tool.invoke", "callId": "c1", "sessionId": "s", "tool": "tap_list_streams", "args": {}}),
    );
    while core.ledger.waits() == waits {
        tokio::task::yield_now().await;
    }
    while let Some(m) = rx.try_recv() {
        let v: Value = serde_json::from_str(m.to_text().unwrap()).unwrap();
        assert_ne!(
            v["type"], "tool.result",
            "answered while the ledger was full: {v}"
        );
    }

    drop(release);
    let result = next(&mut rx, "tool.result").await;
    assert_eq!(result["callId"], "c1");
    assert!(result.get("error").is_none(), "{result}");
    core.ledger.flush().await;
    let spans: i64 = core
        .ledger
        .read(|c| {
            c.query_row(
                "SELECT count(*) FROM spans WHERE name = 'tool.call'",
                [],
                |r| r.get(0),
            )
        })
        .unwrap();
    assert_eq!(spans, 1);
    core.stopping.cancel();
}
