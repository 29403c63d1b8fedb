//! The close handshake, as a real WebSocket client sees it: the gateway answers a client's
//! close frame (so the client sees its own code, not 1006), and when the gateway ends a
//! connection it says why, with a code and a reason.

use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tap_protocol::limits::HARD_FRAME_CAP_BYTES;
use tap_testkit::*;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

/// The close frame the gateway sends, skipping data frames; `None` when the socket ends
/// without one (what a client reports as 1006).
async fn close_frame(p: &mut Provider) -> Option<CloseFrame> {
    loop {
        match tokio::time::timeout(PATIENCE, p.ws.next())
            .await
            .expect("timed out waiting for the close")
        {
            Some(Ok(Message::Close(frame))) => return frame,
            Some(Ok(_)) => continue,
            None | Some(Err(_)) => return None,
        }
    }
}

async fn client_closes(p: &mut Provider) -> Option<CloseFrame> {
    p.ws.close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: "bye".into(),
    }))
    .await
    .expect("close frame sent");
    close_frame(p).await
}

#[tokio::test]
async fn a_client_close_is_answered_on_every_endpoint() {
    let gw = TestGateway::start().await;
    let (mut provider, _) = gw.authed().await;
    let mut host = raw_host(&gw).await;
    let (mut control, _) = Control::authed(&gw).await;
    for (name, p) in [
        ("provider", &mut provider),
        ("session host", &mut host),
        ("control", &mut control.sock),
    ] {
        let answer = client_closes(p).await;
        assert_eq!(
            answer.map(|f| f.code),
            Some(CloseCode::Normal),
            "{name}: the gateway must answer the client's close frame"
        );
    }
}

#[tokio::test]
async fn goodbye_closes_with_1000_and_says_so() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("bye", &session.id, json!([])).await;
    p.send(json!({"type": "goodbye", "reason": "done"})).await;
    let frame = close_frame(&mut p).await.expect("a close frame");
    assert_eq!(frame.code, CloseCode::Normal);
    assert_eq!(frame.reason, "goodbye");
}

#[tokio::test]
async fn an_auth_failure_closes_with_1008() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    p.send(json!({"type": "auth", "token": "ptk-wrong"})).await;
    p.expect_error("AUTH_FAILED").await;
    let frame = close_frame(&mut p).await.expect("a close frame");
    assert_eq!(frame.code, CloseCode::Policy);
    assert_eq!(frame.reason, "authentication failed");
}

#[tokio::test]
async fn a_frame_above_the_hard_cap_closes_with_1009() {
    let gw = TestGateway::start().await;
    let (mut p, _) = gw.authed().await;
    let huge = format!(
        "{{\"type\":\"push\",\"event\":\"{}\"}}",
        "x".repeat(HARD_FRAME_CAP_BYTES)
    );
    // The gateway may close while the frame is still being written.
    let _ = p.ws.send(Message::text(huge)).await;
    let frame = close_frame(&mut p).await.expect("a close frame");
    assert_eq!(frame.code, CloseCode::Size);
    assert_eq!(frame.reason, "frame too large");
}

#[tokio::test]
async fn a_gateway_stop_closes_with_1001() {
    let gw = TestGateway::start().await;
    let (mut p, _) = gw.authed().await;
    let TestGateway { handle, dir } = gw;
    let stopping = tokio::spawn(handle.stop());
    let frame = close_frame(&mut p).await.expect("a close frame");
    assert_eq!(frame.code, CloseCode::Away);
    assert_eq!(frame.reason, "gateway stopping");
    stopping.await.unwrap().unwrap();
    drop(dir);
}
