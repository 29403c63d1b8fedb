//! Taking a connection slot and upgrading: the one way any WebSocket is accepted.

use crate::diagnostics::Limit;
use crate::socket::slots::{Pool, Taken};
use crate::socket::upgrade::{self, WsStream};
use crate::state::Core;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use std::future::Future;
use std::sync::Arc;

pub(crate) use crate::socket::kind::Kind;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::socket::accept";

// The kind's slot pool and limit live here, with the accepting that uses them; the kind
// itself is in `kind.rs`, which needs nothing of the gateway's state.
impl Kind {
    fn limit(self) -> Limit {
        match self {
            Kind::Provider => Limit::ProviderConnections,
            Kind::Host => Limit::HostConnections,
            Kind::Control => Limit::ControlConnections,
        }
    }

    fn slots(self, core: &Core) -> &Pool {
        match self {
            Kind::Provider => &core.slots.providers,
            Kind::Host => &core.slots.hosts,
            Kind::Control => &core.slots.control,
        }
    }
}

/// Upgrades if a connection slot is free, or can be freed by closing the oldest
/// connection of this kind that has not authenticated (`slots`). The slot is taken
/// before the upgrade, so a connection over the limit is refused with a plain HTTP 503
/// and never costs a WebSocket; it is released when the socket ends.
pub(crate) fn limited_upgrade<F, Fut>(
    req: Request,
    core: &Arc<Core>,
    kind: Kind,
    serve: F,
) -> Response
where
    F: FnOnce(WsStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Some((ticket, taken)) = kind.slots(core).take() else {
        tracing::warn!(target: LOG_TARGET, kind = kind.name(), "connection refused: limit reached");
        core.diagnostics.limit_hit(kind.limit());
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("Too many {} connections\n", kind.name()),
        )
            .into_response();
    };
    if taken == Taken::Displaced {
        tracing::info!(target: LOG_TARGET, kind = kind.name(),
            "connection limit reached: closed the oldest unauthenticated connection to make room"
        );
        core.diagnostics.limit_hit(kind.limit());
    }
    // Opening and closing change the connection states the diagnostics show.
    core.diagnostics.changed();
    let recorder = core.diagnostics.clone();
    let counter = core.diagnostics.clone();
    let over_budget = move || counter.limit_hit(Limit::PreAuthBytes);
    upgrade::accept(
        req,
        core.tasks.clone(),
        ticket,
        over_budget,
        // A combinator, not an async block: a block would keep the socket it hands on
        // (see `conn::run`).
        move |ws| serve(ws).map(move |()| recorder.changed()),
    )
}
