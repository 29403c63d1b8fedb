//! AwaitAuth: the first message must be `auth` with a token (gateway, project or paired)
//! or `mode: "pair"`; an authenticated connection is registered and told the sessions.

use super::ProviderConn;
use crate::auth::tokens;
use crate::diagnostics::Limit;
use crate::events::GatewayEvent;
use crate::socket::conn::auth_timeout_message;
use crate::socket::conn::Step;
use crate::state::provider_entry::{Phase, ProviderEntry, Trust};
use crate::state::State;
use std::sync::Arc;
use std::time::SystemTime;
use tap_protocol::provider::{Auth, GatewayMessage, ProviderMessage, Sessions};
use tap_protocol::{decode, ErrorCode};

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::connection::auth";

impl ProviderConn {
    pub(super) fn on_unauthenticated(&mut self, bytes: &[u8]) -> Step {
        match decode::<ProviderMessage>(bytes, ProviderMessage::TYPES) {
            Ok(msg) if self.pairing.is_some() => self.on_pairing_message(msg),
            Ok(ProviderMessage::Auth(auth)) => self.on_auth(auth),
            Ok(other) => self.fatal(
                ErrorCode::AuthFailed,
                &format!(
                    "The first message must be 'auth', got '{}'",
                    other.type_name()
                ),
                Some(other.type_name()),
            ),
            Err(e) => {
                // Non-fatal, as the spec's table says; the byte budget and the auth
                // timeout bound how long an unauthenticated peer can keep this up.
                self.error(e.code(), e.message(), e.type_name());
                Step::Continue
            }
        }
    }

    pub(super) fn on_auth(&mut self, auth: Auth) -> Step {
        if auth.mode.as_deref() == Some("pair") {
            return self.on_pair(auth);
        }
        let Some(token) = auth.token else {
            return self.fatal(
                ErrorCode::AuthFailed,
                "'auth' needs a 'token'",
                Some("auth"),
            );
        };
        let mut state = self.core.state();
        // The pairing lookup and the registration happen under one lock, so a concurrent
        // revoke either sees this connection or has already killed the token.
        let mut scope = None;
        let (trust, paired) = if tokens::matches(&token, &self.core.secrets.gateway_token) {
            (Trust::Project, None)
        } else if let Some((session, name)) = crate::project::start::authenticate(&state, &token) {
            // A project provider's own token (tap.config.json): scoped to its session.
            tracing::info!(target: LOG_TARGET, remote = %self.remote, %session, provider = %name, "project provider token");
            scope = Some(session);
            (Trust::Project, None)
        } else if let Some(entry) = state.pairing.authenticate(&token) {
            (Trust::External, Some(entry))
        } else {
            drop(state);
            return self.fatal(ErrorCode::AuthFailed, "Invalid token", Some("auth"));
        };
        let scoped = scope.clone();
        let id = self.admit(
            &mut state,
            trust,
            paired.as_ref().map(|e| e.id.clone()),
            None,
            scope,
        );
        if let Some(session) = scoped {
            crate::project::start::note_connection(&mut state, &session, &token, &id);
        }
        drop(state);
        self.id = Some(id.clone());
        tracing::info!(target: LOG_TARGET, remote = %self.remote, provider = %id, trust = trust.as_str(), "provider authenticated");
        if let Some(entry) = paired {
            self.core
                .events
                .emit(GatewayEvent::PairingChanged(Box::new(entry)));
        }
        Step::Authed
    }

    /// Registers the authenticated connection and sends `sessions`, under the lock so no
    /// `sessions.updated` can overtake it.
    pub(crate) fn admit(
        &self,
        state: &mut State,
        trust: Trust,
        pairing: Option<String>,
        token: Option<String>,
        scope: Option<String>,
    ) -> String {
        let id = crate::ids::short("p");
        let active =
            crate::project::start::visible_sessions(state, pairing.as_deref(), scope.as_deref());
        state.providers.insert(
            id.clone(),
            ProviderEntry {
                id: id.clone(),
                name: None,
                instance: None,
                metadata: None,
                trust,
                phase: Phase::AwaitHello,
                session: None,
                tools: Arc::default(),
                hooks: Arc::default(),
                subscribe: Vec::new(),
                link: self.link.clone(),
                remote: self.remote,
                connected_at: SystemTime::now(),
                pairing,
                scope,
                all: None,
                updates: Default::default(),
            },
        );
        self.send(&GatewayMessage::Sessions(Sessions { token, active }));
        id
    }

    /// The auth timeout fired, or, in AwaitPairing, the pairing code expired.
    pub(super) fn auth_deadline(&mut self) {
        let Some(pid) = self.pairing.take() else {
            self.core.diagnostics.limit_hit(Limit::AuthTimeout);
            self.fatal(ErrorCode::AuthFailed, &auth_timeout_message(), None);
            return;
        };
        if let Some(span) = self.pairing_span.take() {
            span.fail("EXPIRED", "the pairing code expired unconfirmed");
        }
        if self.core.state().pairing.remove_pending(&pid) {
            crate::pairing::api::audit(&self.core, "expired", (&pid, None, None), "gateway");
            tracing::info!(target: LOG_TARGET, remote = %self.remote, pairing = %pid, "pairing code expired");
            self.core.events.emit(GatewayEvent::PairingRemoved {
                id: pid,
                reason: "expired".into(),
            });
        }
        self.fatal(
            ErrorCode::AuthFailed,
            "Pairing code expired; request pairing again",
            None,
        );
    }
}
