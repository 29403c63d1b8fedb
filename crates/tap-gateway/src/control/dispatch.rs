//! What each control method does: a thin mapping onto the engine's API, one function per
//! method with the method's own result type (`ControlHandler`), so the compiler checks
//! every answer against the protocol. The connection owns the socket and the event stream.

use super::follow::Follows;
use super::playground::Playground;
use crate::gateway::Gateway;
use tap_protocol::activity::{ActivityQuery, ActivityReport};
use tap_protocol::approvals::{
    ApprovalAnswered, ApprovalApprove, ApprovalDeny, ApprovalsHistory, ApprovalsHistoryParams,
    ApprovalsList, GrantRef, GrantsList, PolicyList, PolicyRuleRef, PolicySet,
};
use tap_protocol::clients::{
    ClientChange, ClientConnect, ClientDisconnect, ClientsList, SkillsList,
};
use tap_protocol::control::{
    AuthParams, ControlError, ControlHandler, Empty, Later, PairingConfigure,
    PairingConfigureResult, PairingDenyAllResult, PairingId, PairingList, PlaygroundCallParams,
    PlaygroundCallRef, PlaygroundCallResult, PlaygroundOpenParams, PlaygroundSession,
    PlaygroundSessionRef, PlaygroundTools, ProviderId, Snapshot, StreamsFollowParams,
    StreamsHistory, StreamsHistoryParams, UiLoginResult, UnfollowParams,
};
use tap_protocol::diagnostics::Diagnostics;
use tap_protocol::emitters::{
    EmitterInfo, EmitterRef, EmitterRuns, EmitterStart, EmittersList, EmittersListParams,
    FilterTest, FilterTestResult,
};
use tap_protocol::host::GatewayStatus;
use tap_protocol::ledger::{
    EventsListParams, EventsPage, LedgerSessions, Trace, TraceRef, TracesList, TracesListParams,
};
use tap_protocol::logs::{LogsParams, LogsRecent};
use tap_protocol::mcp_servers::{McpServerInfo, McpServerRef, McpServersList, McpSignInStart};
use tap_protocol::pins::{PinRef, PinsEnabled, PinsList};
use tap_protocol::profiles::{
    ClientTokenCreate, ClientTokenCreated, ClientTokenRef, ClientTokensList, ProfileRef,
    ProfileSet, ProfilesList,
};
use tap_protocol::settings::{SettingsPatch, SettingsResult};
use tap_protocol::ErrorCode;

/// The methods of one authenticated client: `request_id` is the request being answered
/// (an `@later` method answers it itself); `seq` is the last event seq sent on its
/// connection (for `snapshot`); `follows` is what it follows (for the `*.follow` methods);
/// `playground` what it holds and calls (for `playground.*`).
pub(super) struct Methods<'a> {
    pub gw: &'a Gateway,
    pub request_id: &'a str,
    pub seq: u64,
    pub follows: &'a mut Follows,
    pub playground: &'a mut Playground,
}

type Answer<T> = Result<T, ControlError>;

impl ControlHandler for Methods<'_> {
    fn auth(&mut self, _: AuthParams) -> Answer<Snapshot> {
        Err(ControlError::new(
            ErrorCode::Unauthorized,
            "Already authenticated",
        ))
    }

    fn snapshot(&mut self, _: Empty) -> Answer<Snapshot> {
        Ok(Snapshot {
            status: self.gw.status(),
            pairings: self.gw.pairing_list(),
            files: self.gw.file_locations(),
            seq: self.seq,
        })
    }

    fn status(&mut self, _: Empty) -> Answer<GatewayStatus> {
        Ok(self.gw.status())
    }

    fn pairing_list(&mut self, _: Empty) -> Answer<PairingList> {
        Ok(PairingList {
            pairings: self.gw.pairing_list(),
        })
    }

    fn pairing_deny(&mut self, p: PairingId) -> Answer<Empty> {
        self.gw.pairing_deny(&p.id).map_err(ControlError::from)?;
        Ok(Empty {})
    }

    fn pairing_deny_all(&mut self, _: Empty) -> Answer<PairingDenyAllResult> {
        Ok(PairingDenyAllResult {
            denied: self.gw.pairing_deny_all(),
        })
    }

    fn pairing_revoke(&mut self, p: PairingId) -> Answer<Empty> {
        self.gw.pairing_revoke(&p.id).map_err(ControlError::from)?;
        Ok(Empty {})
    }

    fn pairing_configure(&mut self, p: PairingConfigure) -> Answer<PairingConfigureResult> {
        let pairing = self
            .gw
            .pairing_configure(&p.id, p.session, p.remember)
            .map_err(ControlError::from)?;
        Ok(PairingConfigureResult { pairing })
    }

    fn ui_login(&mut self, _: Empty) -> Answer<UiLoginResult> {
        // A link to the plain-text note would look like success and lead nowhere.
        if !self.gw.serves_panel() {
            return Err(ControlError::new(
                ErrorCode::NotFound,
                "This gateway serves no panel: TAP_UI_DIR names a directory without a built \
                 panel (index.html), or the program was built without one. Unset TAP_UI_DIR \
                 to use the built-in panel, or point it at a built ui/dist, then restart the gateway",
            ));
        }
        Ok(self.gw.ui_login())
    }

    fn streams_history(&mut self, p: StreamsHistoryParams) -> Answer<StreamsHistory> {
        self.gw
            .streams_history(&p.session_id, p.stream.as_deref(), p.last)
            .map_err(ControlError::from)
    }

    fn provider_disconnect(&mut self, p: ProviderId) -> Answer<Empty> {
        if !self.gw.provider_disconnect(&p.id) {
            return Err(ControlError::new(
                ErrorCode::NotFound,
                format!("No provider '{}' is connected", p.id),
            ));
        }
        Ok(Empty {})
    }

    fn diagnostics(&mut self, _: Empty) -> Answer<Diagnostics> {
        Ok(self.gw.diagnostics())
    }

    fn diagnostics_follow(&mut self, _: Empty) -> Answer<Diagnostics> {
        self.follows.diagnostics = true;
        Ok(self.gw.diagnostics())
    }

    fn logs_recent(&mut self, p: LogsParams) -> Answer<LogsRecent> {
        Ok(match self.gw.core().config.logs.as_ref() {
            Some(buffer) => LogsRecent {
                records: buffer.recent(p.limit, p.level),
                capacity: buffer.capacity(),
                enabled: true,
            },
            None => LogsRecent {
                records: Vec::new(),
                capacity: 0,
                enabled: false,
            },
        })
    }

    fn logs_follow(&mut self, p: LogsParams) -> Answer<LogsRecent> {
        Ok(self.follows.logs(self.gw.core(), p))
    }

    fn streams_follow(&mut self, p: StreamsFollowParams) -> Answer<StreamsHistory> {
        self.follows.streams(self.gw.core(), p.session_id)
    }

    fn unfollow(&mut self, p: UnfollowParams) -> Answer<Empty> {
        self.follows.stop(p.topic);
        Ok(Empty {})
    }

    fn settings_get(&mut self, _: Empty) -> Answer<SettingsResult> {
        self.gw.settings().map_err(ControlError::from)
    }

    fn settings_set(&mut self, patch: SettingsPatch) -> Answer<SettingsResult> {
        self.gw.set_settings(&patch).map_err(ControlError::from)
    }

    fn playground_open(&mut self, p: PlaygroundOpenParams) -> Answer<PlaygroundSession> {
        self.playground.open(self.gw.core(), p)
    }

    fn playground_close(&mut self, p: PlaygroundSessionRef) -> Answer<Empty> {
        self.playground.close(&p.session_id)?;
        Ok(Empty {})
    }

    fn playground_tools(&mut self, p: PlaygroundSessionRef) -> Answer<PlaygroundTools> {
        Playground::tools(self.gw.core(), &p.session_id)
    }

    fn playground_call(&mut self, p: PlaygroundCallParams) -> Answer<Later<PlaygroundCallResult>> {
        self.playground.call(self.gw, self.request_id, p)
    }

    fn playground_cancel(&mut self, p: PlaygroundCallRef) -> Answer<Empty> {
        self.playground.cancel(&p.call_id)?;
        Ok(Empty {})
    }

    // The ledger's reads are indexed and paged (at most 1000 rows), so they are answered
    // in line like the other methods.
    fn traces_list(&mut self, p: TracesListParams) -> Answer<TracesList> {
        self.gw.traces_list(&p).map_err(ControlError::from)
    }

    fn traces_get(&mut self, p: TraceRef) -> Answer<Trace> {
        self.gw
            .trace(&p.trace_id)
            .map_err(ControlError::from)?
            .ok_or_else(|| {
                ControlError::new(
                    ErrorCode::NotFound,
                    format!("No trace '{}' in the history", p.trace_id),
                )
            })
    }

    fn traces_follow(&mut self, _: Empty) -> Answer<Empty> {
        self.follows
            .changes(self.gw.core(), crate::events::Changed::Traces);
        Ok(Empty {})
    }

    fn activity_query(&mut self, p: ActivityQuery) -> Answer<ActivityReport> {
        self.gw.activity(&p).map_err(ControlError::from)
    }

    fn events_list(&mut self, p: EventsListParams) -> Answer<EventsPage> {
        self.gw.events_list(&p).map_err(ControlError::from)
    }

    fn ledger_sessions(&mut self, _: Empty) -> Answer<LedgerSessions> {
        self.gw.ledger_sessions().map_err(ControlError::from)
    }

    fn mcp_servers_list(&mut self, _: Empty) -> Answer<McpServersList> {
        Ok(self.gw.mcp_servers_list())
    }

    fn mcp_servers_reload(&mut self, _: Empty) -> Answer<McpServersList> {
        Ok(self.gw.mcp_servers_reload())
    }

    fn mcp_servers_restart(&mut self, p: McpServerRef) -> Answer<McpServerInfo> {
        self.gw.mcp_servers_restart(&p).map_err(ControlError::from)
    }

    fn client_tokens_list(&mut self, _: Empty) -> Answer<ClientTokensList> {
        Ok(self.gw.client_tokens_list())
    }

    fn client_tokens_create(&mut self, p: ClientTokenCreate) -> Answer<ClientTokenCreated> {
        self.gw.client_tokens_create(&p).map_err(ControlError::from)
    }

    fn client_tokens_revoke(&mut self, p: ClientTokenRef) -> Answer<ClientTokensList> {
        self.gw
            .client_tokens_revoke(&p.id)
            .map_err(ControlError::from)
    }

    // Small files in the user's home, read and written in line like profiles.json.
    fn clients_list(&mut self, _: Empty) -> Answer<ClientsList> {
        self.gw.clients_list().map_err(ControlError::from)
    }

    fn clients_connect(&mut self, p: ClientConnect) -> Answer<ClientChange> {
        self.gw.clients_connect(&p).map_err(ControlError::from)
    }

    fn clients_disconnect(&mut self, p: ClientDisconnect) -> Answer<ClientChange> {
        self.gw.clients_disconnect(&p).map_err(ControlError::from)
    }

    // The skills are the MCP prompts' files; where each is installed is a few small files.
    fn skills_list(&mut self, _: Empty) -> Answer<SkillsList> {
        let dirs = self.gw.core().config.client_dirs.as_ref();
        Ok(crate::mcp::skills::list(dirs.map(|d| d.copilot.as_path())))
    }

    fn pins_list(&mut self, _: Empty) -> Answer<PinsList> {
        Ok(self.gw.pins_list())
    }

    fn pins_accept(&mut self, p: PinRef) -> Answer<PinsList> {
        let (tool, hash) = (p.tool.as_deref(), p.hash.as_deref());
        self.gw
            .pins_change(&p.provider, |pins, provider| {
                pins.accept(provider, tool, hash).map(drop)
            })
            .map_err(ControlError::from)
    }

    fn pins_forget(&mut self, p: PinRef) -> Answer<PinsList> {
        let tool = p.tool.as_deref();
        self.gw
            .pins_change(&p.provider, |pins, provider| {
                pins.forget(provider, tool).map(drop)
            })
            .map_err(ControlError::from)
    }

    fn pins_set_enabled(&mut self, p: PinsEnabled) -> Answer<PinsList> {
        self.gw
            .pins_change(&p.provider, |pins, provider| {
                pins.set_enabled(provider, p.enabled)
            })
            .map_err(ControlError::from)
    }

    fn profiles_list(&mut self, _: Empty) -> Answer<ProfilesList> {
        Ok(self.gw.profiles_list())
    }

    // Approvals: only an authenticated control connection gets here (the token, and the
    // one `Origin` check of every control upgrade), as for pairing approvals.
    fn approvals_list(&mut self, _: Empty) -> Answer<ApprovalsList> {
        Ok(self.gw.approvals_list())
    }

    fn approvals_approve(&mut self, p: ApprovalApprove) -> Answer<ApprovalAnswered> {
        self.gw.approvals_approve(&p).map_err(ControlError::from)
    }

    fn approvals_deny(&mut self, p: ApprovalDeny) -> Answer<ApprovalAnswered> {
        self.gw.approvals_deny(&p).map_err(ControlError::from)
    }

    fn approvals_grants(&mut self, _: Empty) -> Answer<GrantsList> {
        Ok(self.gw.approvals_grants())
    }

    fn approvals_revoke(&mut self, p: GrantRef) -> Answer<GrantsList> {
        self.gw
            .approvals_revoke(&p.grant)
            .map_err(ControlError::from)
    }

    fn approvals_history(&mut self, p: ApprovalsHistoryParams) -> Answer<ApprovalsHistory> {
        self.gw.approvals_history(&p).map_err(ControlError::from)
    }

    fn policy_list(&mut self, _: Empty) -> Answer<PolicyList> {
        Ok(self.gw.policy_list())
    }

    fn policy_set(&mut self, p: PolicySet) -> Answer<PolicyList> {
        self.gw.policy_set(p.rule).map_err(ControlError::from)
    }

    fn policy_remove(&mut self, p: PolicyRuleRef) -> Answer<PolicyList> {
        self.gw.policy_remove(&p.id).map_err(ControlError::from)
    }

    fn profiles_set(&mut self, p: ProfileSet) -> Answer<ProfilesList> {
        self.gw.profiles_set(&p).map_err(ControlError::from)
    }

    fn profiles_remove(&mut self, p: ProfileRef) -> Answer<ProfilesList> {
        self.gw.profiles_remove(&p.name).map_err(ControlError::from)
    }

    fn mcp_servers_sign_in(&mut self, p: McpServerRef) -> Answer<Later<McpSignInStart>> {
        let gw = self.gw.clone();
        let work = async move { gw.mcp_servers_sign_in(&p).await };
        Ok(self.playground.answer_later(self.gw, self.request_id, work))
    }

    fn mcp_servers_sign_out(&mut self, p: McpServerRef) -> Answer<Later<McpServerInfo>> {
        let gw = self.gw.clone();
        let work = async move { gw.mcp_servers_sign_out(&p).await };
        Ok(self.playground.answer_later(self.gw, self.request_id, work))
    }

    fn emitters_list(&mut self, p: EmittersListParams) -> Answer<EmittersList> {
        Ok(self.gw.emitters_list(p.session_id.as_deref()))
    }

    fn emitters_follow(&mut self, _: Empty) -> Answer<Empty> {
        self.follows
            .changes(self.gw.core(), crate::events::Changed::Emitters);
        Ok(Empty {})
    }

    fn emitters_start(&mut self, p: EmitterStart) -> Answer<EmitterInfo> {
        self.gw.emitters_start(&p).map_err(ControlError::from)
    }

    fn emitters_stop(&mut self, p: EmitterRef) -> Answer<EmitterInfo> {
        self.gw.emitters_stop(&p).map_err(ControlError::from)
    }

    fn emitters_runs(&mut self, p: EmitterRef) -> Answer<EmitterRuns> {
        self.gw.emitters_runs(&p).map_err(ControlError::from)
    }

    fn emitters_test_filter(&mut self, p: FilterTest) -> Answer<FilterTestResult> {
        self.gw.emitters_test_filter(&p).map_err(ControlError::from)
    }
}
