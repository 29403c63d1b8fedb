//! What a host reports of its session's agent beyond busy/idle (`mode`, `model`,
//! `capabilities` in `session.register` and `session.state`): checked against the wire
//! limits, kept on the session, read by `tap_get_session_state` and by whoever needs the
//! host to ask its user something.

use crate::error::Error;
use crate::state::Core;
use tap_protocol::host::{HostCapabilities, HostClient, UiCapabilities};
use tap_protocol::limits::{MAX_HOST_MODES, MAX_HOST_REPORT_TEXT_LEN};
use tap_protocol::ErrorCode;

/// The last mode, model and capabilities a host reported (each absent until it does).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HostReport {
    pub mode: Option<String>,
    pub model: Option<String>,
    pub capabilities: Option<HostCapabilities>,
}

impl HostReport {
    /// A report, checked: every text at most `MAX_HOST_REPORT_TEXT_LEN` characters, at most
    /// `MAX_HOST_MODES` modes. A host past them is told (`PAYLOAD_TOO_LARGE`) and nothing of
    /// the message is applied.
    pub fn checked(
        mode: Option<String>,
        model: Option<String>,
        capabilities: Option<HostCapabilities>,
    ) -> Result<Self, Error> {
        text("mode", mode.as_deref())?;
        text("model", model.as_deref())?;
        if let Some(c) = &capabilities {
            if c.modes.len() > MAX_HOST_MODES {
                return Err(Error::new(
                    ErrorCode::PayloadTooLarge,
                    format!(
                        "'capabilities.modes' lists {} modes; at most {MAX_HOST_MODES}",
                        c.modes.len()
                    ),
                ));
            }
            for m in &c.modes {
                text("capabilities.modes[]", Some(m))?;
            }
            if let Some(client) = &c.client {
                text("capabilities.client.name", Some(&client.name))?;
                text("capabilities.client.version", client.version.as_deref())?;
            }
        }
        Ok(Self {
            mode,
            model,
            capabilities,
        })
    }

    /// Applies a later report: what it names replaces what was reported, the rest stays.
    pub fn update(&mut self, later: HostReport) {
        if later.mode.is_some() {
            self.mode = later.mode;
        }
        if later.model.is_some() {
            self.model = later.model;
        }
        if later.capabilities.is_some() {
            self.capabilities = later.capabilities;
        }
    }
}

/// What an MCP client said of itself in `initialize` (its `clientInfo`, whether it
/// declared `elicitation`) becomes its session's host report. Its texts are cut to the
/// limit rather than refused: the client is not a session host that could be told why.
pub(crate) fn from_mcp_client(
    core: &Core,
    session_id: &str,
    name: &str,
    version: &str,
    elicitation: bool,
) {
    let cut = |t: &str| t.chars().take(MAX_HOST_REPORT_TEXT_LEN).collect::<String>();
    let report = HostReport {
        mode: None,
        model: None,
        capabilities: Some(HostCapabilities {
            ui: UiCapabilities {
                confirm: false,
                elicitation,
            },
            modes: Vec::new(),
            client: Some(HostClient {
                name: cut(name),
                version: (!version.is_empty()).then(|| cut(version)),
            }),
        }),
    };
    if let Some(s) = core.state().sessions.get_mut(session_id) {
        s.report.update(report);
    }
}

fn text(field: &str, value: Option<&str>) -> Result<(), Error> {
    match value {
        Some(v) if v.chars().count() > MAX_HOST_REPORT_TEXT_LEN => Err(Error::new(
            ErrorCode::PayloadTooLarge,
            format!("'{field}' is longer than {MAX_HOST_REPORT_TEXT_LEN} characters"),
        )),
        _ => Ok(()),
    }
}
