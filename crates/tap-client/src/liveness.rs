//! Is a Tap gateway already running? Asked by `tap gateway` and the desktop app before
//! they start one, so two gateways never share a `TAP_HOME` or fight over a port.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long a holder of the port may take to answer `GET /healthz`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The address in `home`'s `gateway.json` when a Tap gateway answers there. Reads the
/// address only, not the tokens: a liveness check must not touch the keyring.
pub async fn running_gateway(home: &Path) -> Option<SocketAddr> {
    let text = std::fs::read_to_string(home.join("gateway.json")).ok()?;
    let state: serde_json::Value = serde_json::from_str(&text).ok()?;
    let addr: SocketAddr = state
        .get("address")?
        .as_str()?
        .strip_prefix("ws://")?
        .parse()
        .ok()?;
    is_tap_gateway(addr).await.then_some(addr)
}

/// Asks whatever listens on `addr` whether it is a Tap gateway (`GET /healthz`).
pub async fn is_tap_gateway(addr: SocketAddr) -> bool {
    let probe = async {
        let mut s = TcpStream::connect(addr).await.ok()?;
        s.write_all(b"GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .await
            .ok()?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.ok()?;
        Some(String::from_utf8_lossy(&buf).contains("\"tap-gateway\""))
    };
    tokio::time::timeout(PROBE_TIMEOUT, probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}
