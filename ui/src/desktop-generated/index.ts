// Generated from crates/tap-desktop-core/src/ipc.rs by its tests. Do not edit.
export type { Endpoint } from "./Endpoint";
export type { IpcError } from "./IpcError";
export type { IpcErrorCode } from "./IpcErrorCode";
