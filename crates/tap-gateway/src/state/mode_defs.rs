//! The declaration of `tap_set_session_mode`, answered by `crate::builtin::session_mode`
//! and listed with [`super::builtin_defs`]'s tools. Its description says the user is asked
//! every time: a model should not retry it in a loop, nor expect it to go through at once.

use serde_json::json;
use tap_protocol::limits::MAX_HOST_REPORT_TEXT_LEN;
use tap_protocol::provider::ToolDef;

pub(crate) const SET_SESSION_MODE: &str = "tap_set_session_mode";

fn set_session_mode() -> ToolDef {
    ToolDef {
        name: SET_SESSION_MODE.into(),
        description: "Switches this session's agent mode (for example 'interactive', 'plan' or 'autopilot'), when the session's host can. Needs the user's confirmation every time: the user is asked (in the Tap tray, panel or CLI, or in the host's own dialog) and the call waits for the answer; a denial or no answer leaves the mode unchanged. tap_get_session_state lists the modes this session's host can switch to (capabilities.modes) and the mode now.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "mode": {"type": "string", "minLength": 1, "maxLength": MAX_HOST_REPORT_TEXT_LEN,
                         "description": "The mode to switch to: one of the host's capabilities.modes."}
            },
            "required": ["mode"],
            "additionalProperties": false
        })
        .into(),
        timeout: None,
        ..Default::default()
    }
}

/// The tool's declaration.
pub(crate) fn all() -> Vec<tap_protocol::provider::ToolDef> {
    vec![set_session_mode()]
}
