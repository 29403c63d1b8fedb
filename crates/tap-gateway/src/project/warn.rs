//! Problems with a session's project providers reach its host as `session.warning`.

use crate::state::Core;
use tap_protocol::host::{HostEvent, SessionWarning};

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::project::warn";

/// Logs a problem with a session's project providers and tells the session's host.
pub(crate) fn warn_session(
    core: &Core,
    session_id: &str,
    message: String,
    config: Option<String>,
    provider: Option<String>,
) {
    tracing::warn!(target: LOG_TARGET, session = %session_id, config = ?config, provider = ?provider, "{message}");
    let warning = HostEvent::SessionWarning(SessionWarning {
        session_id: session_id.to_string(),
        message,
        config,
        provider,
    });
    core.state().send_to_session_host(session_id, &warning);
}

/// A `hello` from connection `provider_id` was refused. When that connection is a project
/// provider (its token is scoped to a session), the refusal is a problem with the session's
/// `tap.config.json` (a name another provider already holds, a tool conflict), so the
/// session's host hears it too; otherwise only the provider's own socket does.
pub(crate) fn hello_refused(
    core: &Core,
    provider_id: Option<&str>,
    code: &tap_protocol::ErrorCode,
    message: &str,
) {
    let Some(id) = provider_id else { return };
    let found = core
        .state()
        .providers
        .get(id)
        .and_then(|e| Some((e.scope.clone()?, e.name.clone())));
    let Some((session, name)) = found else { return };
    let who = name
        .as_deref()
        .map(|n| format!(" '{n}'"))
        .unwrap_or_default();
    warn_session(
        core,
        &session,
        format!("Project provider{who} was refused at hello ({code}): {message}"),
        None,
        name,
    );
}
