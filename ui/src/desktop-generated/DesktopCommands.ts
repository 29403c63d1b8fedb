// Generated from crates/tap-desktop-core/src/ipc.rs by its tests. Do not edit.
import type { AutostartArgs } from "./AutostartArgs";
import type { Endpoint } from "./Endpoint";
import type { FitPopupArgs } from "./FitPopupArgs";
import type { NoArgs } from "./NoArgs";
import type { OpenUrlArgs } from "./OpenUrlArgs";
import type { PopupShowsArgs } from "./PopupShowsArgs";

/** Every desktop IPC command: its args and its result (a failure rejects with an `IpcError`). */
export type DesktopCommands = {
  "control_endpoint": { args: NoArgs; result: Endpoint };
  "get_autostart": { args: NoArgs; result: boolean };
  "set_autostart": { args: AutostartArgs; result: null };
  "secret_storage_notice": { args: NoArgs; result: string | null };
  "open_panel": { args: NoArgs; result: null };
  "hide_window": { args: NoArgs; result: null };
  "fit_popup": { args: FitPopupArgs; result: null };
  "popup_shows": { args: PopupShowsArgs; result: null };
  "page_rendered": { args: NoArgs; result: null };
  "open_url": { args: OpenUrlArgs; result: null };
};

/** Every command's name, by the name of the panel's bridge method for it. */
export const DesktopCommand = {
  controlEndpoint: "control_endpoint",
  getAutostart: "get_autostart",
  setAutostart: "set_autostart",
  secretStorageNotice: "secret_storage_notice",
  openPanel: "open_panel",
  hideWindow: "hide_window",
  fitPopup: "fit_popup",
  popupShows: "popup_shows",
  pageRendered: "page_rendered",
  openUrl: "open_url",
} as const satisfies Record<string, keyof DesktopCommands>;
