//! `tap gateway --exit-when-idle SECS`: the spec's process model for an on-demand
//! gateway ("Gateway exits when the last session disconnects, after a grace period").

use crate::common::{GatewayProcess, SessionOpen};

#[tokio::test]
async fn an_on_demand_gateway_exits_once_its_last_session_has_been_gone_for_the_grace() {
    let mut gw = GatewayProcess::start_with(&["--exit-when-idle", "3"]).await;
    let session = SessionOpen::open(&gw, &["--label", "only"]).await;
    // A session registered in time: the gateway serves it.
    let status = gw.status().await;
    assert_eq!(status["sessions"][0]["id"], session.id.as_str());
    assert!(gw.proc.exited().is_none(), "exited with a session open");

    let (ended, _) = session.interrupt().await;
    assert!(ended.success(), "tap session open: {ended}");
    // The last session ended: after the grace the gateway stops cleanly on its own.
    let status = gw.proc.wait().await;
    assert!(
        status.success(),
        "gateway exit: {status}\n{}",
        gw.proc.log()
    );
    assert!(
        gw.proc.log().contains("--exit-when-idle"),
        "says why it stopped:\n{}",
        gw.proc.log()
    );
    gw.assert_files_removed();
}
