use futures_util::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use std::sync::atomic::{AtomicU64, Ordering};
use tap_protocol::control::{
    AuthParams, ClientFrame, ControlCall, ControlError, ControlRequest, Empty, EventFrame, Outcome,
    PairingConfigure, PairingConfigureResult, PairingDenyAllResult, PairingId, PairingList,
    ProviderId, ServerFrame, Snapshot, StreamsHistory, StreamsHistoryParams, UiLoginResult,
};
use tap_protocol::host::GatewayStatus;
use tap_protocol::pairing::PairingEntry;
use tap_protocol::Json;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// Why a control-plane request failed.
#[derive(Debug, thiserror::Error)]
pub enum ControlClientError {
    /// The socket could not be opened or broke.
    #[error("cannot reach the gateway: {0}")]
    Connect(String),
    /// The gateway refused the request.
    #[error("{0}")]
    Refused(ControlError),
    /// The connection closed before the answer came.
    #[error("the gateway closed the connection")]
    Closed,
    /// The gateway answered something this client did not expect.
    #[error("unexpected answer from the gateway: {0}")]
    Unexpected(String),
}

type Waiters = crate::mux::Waiters<Outcome>;

/// A connected, authenticated control-plane client (`ws://…/control`).
///
/// Responses are matched to requests by id, so requests may run concurrently; events
/// arrive, in order and numbered, on [`ControlClient::next_event`].
pub struct ControlClient {
    out: crate::outbox::Outbox,
    waiters: Waiters,
    events: mpsc::UnboundedReceiver<EventFrame>,
    next_id: AtomicU64,
}

impl ControlClient {
    /// Connects to `url` (`ws://…/control`) and authenticates with the control token.
    /// Returns the client and the gateway's snapshot; events numbered above
    /// [`Snapshot::seq`] follow on [`ControlClient::next_event`].
    pub async fn connect(url: &str, token: &str) -> Result<(Self, Snapshot), ControlClientError> {
        let (ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
            .await
            .map_err(|e| ControlClientError::Connect(e.to_string()))?;
        let (mut sink, mut stream) = ws.split();
        let auth = ClientFrame::Request(ControlRequest {
            id: "auth".into(),
            call: ControlCall::Auth(AuthParams {
                token: token.to_string(),
            }),
        });
        sink.send(Message::text(
            serde_json::to_string(&auth).expect("serializes"),
        ))
        .await
        .map_err(|e| ControlClientError::Connect(e.to_string()))?;
        let snapshot: Snapshot = loop {
            match stream.next().await {
                Some(Ok(Message::Text(t))) => match serde_json::from_str::<ServerFrame>(&t) {
                    Ok(ServerFrame::Response(r)) if r.id.as_deref() == Some("auth") => {
                        break parse(r.outcome)?
                    }
                    Ok(ServerFrame::Response(r)) => match r.outcome {
                        Outcome::Error(e) => return Err(ControlClientError::Refused(e)),
                        Outcome::Result(_) => {
                            return Err(ControlClientError::Unexpected(t.to_string()))
                        }
                    },
                    _ => return Err(ControlClientError::Unexpected(t.to_string())),
                },
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(ControlClientError::Connect(e.to_string())),
                None => return Err(ControlClientError::Closed),
            }
        };
        let (mux, events) = crate::mux::start(sink, stream, classify);
        let client = Self {
            out: mux.out,
            waiters: mux.waiters,
            events,
            next_id: AtomicU64::new(1),
        };
        Ok((client, snapshot))
    }

    /// The next event; `None` once the connection is closed.
    pub async fn next_event(&mut self) -> Option<EventFrame> {
        self.events.recv().await
    }

    /// Sends one request and waits for its result.
    pub async fn request(&self, call: ControlCall) -> Result<Json, ControlClientError> {
        let id = format!("r{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().unwrap().insert(id.clone(), tx);
        let frame = ClientFrame::Request(ControlRequest {
            id: id.clone(),
            call,
        });
        let text = serde_json::to_string(&frame).expect("serializes");
        if self.out.send(Message::text(text)).is_err() {
            self.waiters.lock().unwrap().remove(&id);
            return Err(ControlClientError::Closed);
        }
        match rx.await {
            Ok(Outcome::Result(v)) => Ok(v),
            Ok(Outcome::Error(e)) => Err(ControlClientError::Refused(e)),
            Err(_) => Err(ControlClientError::Closed),
        }
    }

    /// Sends one request and parses its result as `T`.
    pub async fn call<T: DeserializeOwned>(
        &self,
        call: ControlCall,
    ) -> Result<T, ControlClientError> {
        parse(Outcome::Result(self.request(call).await?))
    }

    /// A fresh snapshot; events above its `seq` are newer.
    pub async fn snapshot(&self) -> Result<Snapshot, ControlClientError> {
        self.call(ControlCall::Snapshot(Empty {})).await
    }

    /// The gateway status.
    pub async fn status(&self) -> Result<GatewayStatus, ControlClientError> {
        self.call(ControlCall::Status(Empty {})).await
    }

    /// Pending pairing requests, then paired providers.
    pub async fn pairing_list(&self) -> Result<Vec<PairingEntry>, ControlClientError> {
        let list: PairingList = self.call(ControlCall::PairingList(Empty {})).await?;
        Ok(list.pairings)
    }

    /// Denies a pending pairing request.
    pub async fn pairing_deny(&self, id: &str) -> Result<(), ControlClientError> {
        let call = ControlCall::PairingDeny(PairingId { id: id.into() });
        self.call::<Empty>(call).await.map(drop)
    }

    /// Denies every pending request; returns how many there were.
    pub async fn pairing_deny_all(&self) -> Result<usize, ControlClientError> {
        let r: PairingDenyAllResult = self.call(ControlCall::PairingDenyAll(Empty {})).await?;
        Ok(r.denied)
    }

    /// Revokes a paired provider.
    pub async fn pairing_revoke(&self, id: &str) -> Result<(), ControlClientError> {
        let call = ControlCall::PairingRevoke(PairingId { id: id.into() });
        self.call::<Empty>(call).await.map(drop)
    }

    /// Changes a pairing's session or whether it is remembered.
    pub async fn pairing_configure(
        &self,
        id: &str,
        session: Option<String>,
        remember: Option<bool>,
    ) -> Result<PairingEntry, ControlClientError> {
        let call = ControlCall::PairingConfigure(PairingConfigure {
            id: id.into(),
            session,
            remember,
        });
        let r: PairingConfigureResult = self.call(call).await?;
        Ok(r.pairing)
    }

    /// A one-time login link for the panel (`http://127.0.0.1:PORT/#login=CODE`, single
    /// use, valid 120 s). The URL is a secret until used: do not log it.
    pub async fn ui_login(&self) -> Result<UiLoginResult, ControlClientError> {
        self.call(ControlCall::UiLogin(Empty {})).await
    }

    /// A session's stored stream events, newest first (`stream`: `name` or
    /// `name@provider`; `last`: newest N per stream).
    pub async fn streams_history(
        &self,
        session_id: &str,
        stream: Option<&str>,
        last: Option<usize>,
    ) -> Result<StreamsHistory, ControlClientError> {
        let call = ControlCall::StreamsHistory(StreamsHistoryParams {
            session_id: session_id.into(),
            stream: stream.map(str::to_string),
            last,
        });
        self.call(call).await
    }

    /// Closes a provider's connection (`NOT_FOUND` if no such provider is connected).
    pub async fn provider_disconnect(&self, id: &str) -> Result<(), ControlClientError> {
        let call = ControlCall::ProviderDisconnect(ProviderId { id: id.into() });
        self.call::<Empty>(call).await.map(drop)
    }
}

fn parse<T: DeserializeOwned>(outcome: Outcome) -> Result<T, ControlClientError> {
    match outcome {
        Outcome::Result(v) => {
            serde_json::from_value(v).map_err(|e| ControlClientError::Unexpected(e.to_string()))
        }
        Outcome::Error(e) => Err(ControlClientError::Refused(e)),
    }
}

/// Responses go to the request with their id (one nobody waits for is dropped); events
/// are events. A frame this client does not understand (a newer gateway's event kind)
/// is skipped rather than fatal.
fn classify(text: &str) -> Option<crate::mux::Frame<Outcome, EventFrame>> {
    match serde_json::from_str::<ServerFrame>(text).ok()? {
        ServerFrame::Event(e) => Some(crate::mux::Frame::Event(e)),
        ServerFrame::Response(r) => Some(crate::mux::Frame::Answer {
            key: r.id?,
            answer: r.outcome,
            unclaimed: |_| None,
        }),
    }
}
