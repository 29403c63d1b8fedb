// Generated from crates/tap-protocol/src/control.rs by tests/generated_typescript.rs. Do not edit.
import type { AuthParams } from "./AuthParams";
import type { Diagnostics } from "./Diagnostics";
import type { EmitterInfo } from "./EmitterInfo";
import type { EmitterRef } from "./EmitterRef";
import type { EmitterRuns } from "./EmitterRuns";
import type { EmitterStart } from "./EmitterStart";
import type { EmittersList } from "./EmittersList";
import type { EmittersListParams } from "./EmittersListParams";
import type { Empty } from "./Empty";
import type { EventsListParams } from "./EventsListParams";
import type { EventsPage } from "./EventsPage";
import type { FilterTest } from "./FilterTest";
import type { FilterTestResult } from "./FilterTestResult";
import type { GatewayStatus } from "./GatewayStatus";
import type { LedgerSessions } from "./LedgerSessions";
import type { LogsParams } from "./LogsParams";
import type { LogsRecent } from "./LogsRecent";
import type { PairingConfigure } from "./PairingConfigure";
import type { PairingConfigureResult } from "./PairingConfigureResult";
import type { PairingDenyAllResult } from "./PairingDenyAllResult";
import type { PairingId } from "./PairingId";
import type { PairingList } from "./PairingList";
import type { PlaygroundCallParams } from "./PlaygroundCallParams";
import type { PlaygroundCallRef } from "./PlaygroundCallRef";
import type { PlaygroundCallResult } from "./PlaygroundCallResult";
import type { PlaygroundOpenParams } from "./PlaygroundOpenParams";
import type { PlaygroundSession } from "./PlaygroundSession";
import type { PlaygroundSessionRef } from "./PlaygroundSessionRef";
import type { PlaygroundTools } from "./PlaygroundTools";
import type { ProviderId } from "./ProviderId";
import type { SettingsPatch } from "./SettingsPatch";
import type { SettingsResult } from "./SettingsResult";
import type { Snapshot } from "./Snapshot";
import type { StreamsFollowParams } from "./StreamsFollowParams";
import type { StreamsHistory } from "./StreamsHistory";
import type { StreamsHistoryParams } from "./StreamsHistoryParams";
import type { Trace } from "./Trace";
import type { TraceRef } from "./TraceRef";
import type { TracesList } from "./TracesList";
import type { TracesListParams } from "./TracesListParams";
import type { UiLoginResult } from "./UiLoginResult";
import type { UnfollowParams } from "./UnfollowParams";

/** Every control-plane method: its params and its result. */
export type ControlMethods = {
  "auth": { params: AuthParams; result: Snapshot };
  "snapshot": { params: Empty; result: Snapshot };
  "status": { params: Empty; result: GatewayStatus };
  "pairing.list": { params: Empty; result: PairingList };
  "pairing.deny": { params: PairingId; result: Empty };
  "pairing.denyAll": { params: Empty; result: PairingDenyAllResult };
  "pairing.revoke": { params: PairingId; result: Empty };
  "pairing.configure": { params: PairingConfigure; result: PairingConfigureResult };
  "ui.login": { params: Empty; result: UiLoginResult };
  "streams.history": { params: StreamsHistoryParams; result: StreamsHistory };
  "provider.disconnect": { params: ProviderId; result: Empty };
  "diagnostics": { params: Empty; result: Diagnostics };
  "diagnostics.follow": { params: Empty; result: Diagnostics };
  "logs.recent": { params: LogsParams; result: LogsRecent };
  "logs.follow": { params: LogsParams; result: LogsRecent };
  "streams.follow": { params: StreamsFollowParams; result: StreamsHistory };
  "unfollow": { params: UnfollowParams; result: Empty };
  "settings.get": { params: Empty; result: SettingsResult };
  "settings.set": { params: SettingsPatch; result: SettingsResult };
  "traces.list": { params: TracesListParams; result: TracesList };
  "traces.get": { params: TraceRef; result: Trace };
  "traces.follow": { params: Empty; result: Empty };
  "events.list": { params: EventsListParams; result: EventsPage };
  "ledger.sessions": { params: Empty; result: LedgerSessions };
  "emitters.list": { params: EmittersListParams; result: EmittersList };
  "emitters.follow": { params: Empty; result: Empty };
  "emitters.start": { params: EmitterStart; result: EmitterInfo };
  "emitters.stop": { params: EmitterRef; result: EmitterInfo };
  "emitters.runs": { params: EmitterRef; result: EmitterRuns };
  "emitters.testFilter": { params: FilterTest; result: FilterTestResult };
  "playground.open": { params: PlaygroundOpenParams; result: PlaygroundSession };
  "playground.close": { params: PlaygroundSessionRef; result: Empty };
  "playground.tools": { params: PlaygroundSessionRef; result: PlaygroundTools };
  "playground.call": { params: PlaygroundCallParams; result: PlaygroundCallResult };
  "playground.cancel": { params: PlaygroundCallRef; result: Empty };
};

/** Every method name, in declaration order. */
export const CONTROL_METHODS = ["auth","snapshot","status","pairing.list","pairing.deny","pairing.denyAll","pairing.revoke","pairing.configure","ui.login","streams.history","provider.disconnect","diagnostics","diagnostics.follow","logs.recent","logs.follow","streams.follow","unfollow","settings.get","settings.set","traces.list","traces.get","traces.follow","events.list","ledger.sessions","emitters.list","emitters.follow","emitters.start","emitters.stop","emitters.runs","emitters.testFilter","playground.open","playground.close","playground.tools","playground.call","playground.cancel"] as const;

/** The control protocol version this gateway speaks. */
export const CONTROL_PROTOCOL_VERSION = 1;
