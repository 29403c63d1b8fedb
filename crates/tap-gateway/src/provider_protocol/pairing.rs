//! AwaitPairing: `auth {mode: "pair"}` opens a request whose code the user reads from the
//! gateway's own surfaces; `auth.confirm` with that code pairs the provider.

use super::{ProviderConn, GOODBYE};
use crate::auth::tokens;
use crate::diagnostics::Limit;
use crate::events::GatewayEvent;
use crate::socket::conn::Step;
use crate::state::provider_entry::Trust;
use tap_protocol::limits::{MAX_PAIRING_ATTEMPTS_PER_MINUTE, PAIRING_CODE_TTL};
use tap_protocol::provider::{Auth, AuthConfirm, AuthPairing, GatewayMessage, ProviderMessage};
use tap_protocol::ErrorCode;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::connection::pairing";

impl ProviderConn {
    /// `auth {mode: "pair"}`: a pending request with a fresh code the user reads from the
    /// gateway's surfaces. The provider only gets a prompt; the code never goes over
    /// this socket.
    pub(super) fn on_pair(&mut self, auth: Auth) -> Step {
        let name = auth
            .name
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty());
        if name.as_ref().is_some_and(|n| {
            n.chars().count() > crate::limits::MAX_PAIRING_NAME_CHARS
                || n.chars().any(char::is_control)
        }) {
            self.error(
                ErrorCode::InvalidJson,
                format!(
                    "'name' must be at most {} characters, without control characters",
                    crate::limits::MAX_PAIRING_NAME_CHARS
                ),
                Some("auth"),
            );
            return Step::Continue;
        }
        let request = crate::state::pairing_registry::Request {
            origin: self.origin.clone(),
            remote: self.remote.to_string(),
            name,
            metadata: auth.metadata,
            link: self.link.clone(),
        };
        let until = Instant::now() + PAIRING_CODE_TTL;
        let mut state = self.core.state();
        let entry = match state.pairing.request(request, PAIRING_CODE_TTL) {
            Ok(entry) => entry,
            Err(message) => {
                drop(state);
                tracing::warn!(target: LOG_TARGET, remote = %self.remote, "pairing request refused: too many pending");
                self.core.diagnostics.limit_hit(Limit::PendingPairings);
                self.error(ErrorCode::RateLimited, message.message, Some("auth"));
                return Step::Close(CloseCode::Policy, "too many pending pairing requests");
            }
        };
        // Under the lock: a deny's `error` cannot overtake the prompt.
        self.send(&GatewayMessage::AuthPairing(AuthPairing {
            prompt: crate::pairing::external_trust::PROMPT.into(),
        }));
        drop(state);
        // Never log the code.
        tracing::info!(target: LOG_TARGET, remote = %self.remote, pairing = %entry.id, origin = ?entry.origin, name = ?entry.name, "pairing requested");
        let mut span = self.core.tracer.start("pairing.request", None);
        span.set("pairing.id", entry.id.as_str());
        if let Some(name) = &entry.name {
            span.provider(name);
        }
        if let Some(origin) = &entry.origin {
            span.set("origin", origin.as_str());
        }
        self.pairing_span = Some(span);
        crate::pairing::api::audit(
            &self.core,
            "requested",
            (&entry.id, entry.name.as_deref(), entry.origin.as_deref()),
            "provider",
        );
        self.pairing = Some(entry.id.clone());
        self.core
            .events
            .emit(GatewayEvent::PairingChanged(Box::new(entry)));
        Step::WaitUntil(until)
    }

    /// AwaitPairing: `auth.confirm` is what the state expects; `goodbye` withdraws the
    /// request and closes. Any other known message gets `UNAUTHORIZED` and the request
    /// stays pending (the user may still be reading the code).
    pub(super) fn on_pairing_message(&mut self, msg: ProviderMessage) -> Step {
        match msg {
            ProviderMessage::AuthConfirm(c) => self.on_confirm(c),
            ProviderMessage::Goodbye(_) => GOODBYE,
            other => {
                self.error(
                    ErrorCode::Unauthorized,
                    format!(
                        "Pairing is pending: only 'auth.confirm' is accepted until the code is confirmed, not '{}'",
                        other.type_name()
                    ),
                    Some(other.type_name()),
                );
                Step::Continue
            }
        }
    }

    /// `auth.confirm {code}`. Attempts count against one gateway-wide limit, so opening
    /// more connections does not buy more guesses. A wrong code ends the request.
    pub(super) fn on_confirm(&mut self, c: AuthConfirm) -> Step {
        let pid = self.pairing.clone().expect("only called in AwaitPairing");
        let mut state = self.core.state();
        if !state.pairing.get(&pid).is_some_and(|p| p.is_pending()) {
            drop(state);
            self.pairing = None;
            return self.fatal(
                ErrorCode::AuthFailed,
                "This pairing request no longer exists",
                Some("auth.confirm"),
            );
        }
        if let Err(wait) = state.pairing.attempt(Instant::now()) {
            drop(state);
            tracing::warn!(target: LOG_TARGET, remote = %self.remote, pairing = %pid, "pairing attempt rate-limited");
            self.core.diagnostics.limit_hit(Limit::PairingAttempts);
            self.error(
                ErrorCode::RateLimited,
                format!(
                    "More than {MAX_PAIRING_ATTEMPTS_PER_MINUTE} pairing attempts a minute on this gateway; retry in {} s",
                    wait.as_secs().max(1)
                ),
                Some("auth.confirm"),
            );
            return Step::Continue;
        }
        if !state
            .pairing
            .get(&pid)
            .is_some_and(|p| p.code_matches(&c.code))
        {
            state.pairing.remove(&pid);
            drop(state);
            self.pairing = None;
            tracing::warn!(target: LOG_TARGET, remote = %self.remote, pairing = %pid, "wrong pairing code");
            self.core.events.emit(GatewayEvent::PairingRemoved {
                id: pid,
                reason: "failed".into(),
            });
            return self.fatal(
                ErrorCode::AuthFailed,
                "Wrong pairing code",
                Some("auth.confirm"),
            );
        }
        let token = tokens::generate("ext-");
        // Unless the user chose a session, the provider is limited to the one in the
        // foreground now.
        let foreground = crate::pairing::scope::foreground(&state);
        if let Some(p) = state.pairing.get_mut(&pid) {
            if p.session.is_none() {
                p.session = foreground;
            }
        }
        let entry = state
            .pairing
            .pair(&pid, crate::state::pairing_registry::hash_token(&token))
            .expect("checked pending above");
        let id = self.admit(
            &mut state,
            Trust::External,
            Some(pid.clone()),
            Some(token),
            None,
        );
        drop(state);
        self.id = Some(id.clone());
        self.pairing = None;
        crate::pairing::api::save(&self.core);
        tracing::info!(target: LOG_TARGET, remote = %self.remote, provider = %id, pairing = %pid, "pairing confirmed");
        crate::pairing::api::audit(
            &self.core,
            "approved",
            (&pid, entry.name.as_deref(), entry.origin.as_deref()),
            "user (code typed)",
        );
        if let Some(mut span) = self.pairing_span.take() {
            span.set("provider.id", id.as_str());
            span.ok();
        }
        self.core
            .events
            .emit(GatewayEvent::PairingChanged(Box::new(entry)));
        Step::Authed
    }
}
