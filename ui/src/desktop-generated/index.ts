// Generated from crates/tap-desktop-core/src/ipc.rs by its tests. Do not edit.
export type { AutostartArgs } from "./AutostartArgs";
export type { Endpoint } from "./Endpoint";
export type { FitPopupArgs } from "./FitPopupArgs";
export type { IpcError } from "./IpcError";
export type { IpcErrorCode } from "./IpcErrorCode";
export type { NoArgs } from "./NoArgs";
export type { OpenUrlArgs } from "./OpenUrlArgs";
export type { PopupContent } from "./PopupContent";
export type { PopupShowsArgs } from "./PopupShowsArgs";
export type { DesktopCommands } from "./DesktopCommands";
export { DesktopCommand } from "./DesktopCommands";
