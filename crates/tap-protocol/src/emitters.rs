//! Emitters: background commands and scheduled prompts that feed a session's EventStreams
//! (`docs/emitters.md`). What the control plane (`emitters.*`), `tap emitters` and the
//! agent's `tap_*` tools say about them.

use crate::ledger::EventOutcome;
use serde::{Deserialize, Serialize};

/// Where an emitter is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum EmitterStatus {
    /// Created, not started yet.
    Queued,
    /// Between runs (timed), or waiting for the session to go idle.
    Waiting,
    /// A process runs, or a prompt is being delivered.
    Running,
    /// Asked to stop; its process group is being terminated.
    Stopping,
    /// Stopped by a user, the agent or the session's end.
    Stopped,
    /// A continuous command's process ended (and is not restarted).
    Exited,
    /// It ran `maxRuns` times, or a one-time prompt was delivered.
    Completed,
    /// It could not run (spawn failed, bad working directory).
    Error,
}

/// How an emitter is scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Schedule {
    /// A command without `every`: one long-running process.
    Continuous,
    /// `every` a duration: runs at once, then `every` after the previous run ends.
    Timed,
    /// A prompt without `every`: delivered once.
    OneTime,
    /// `every: "idle"` (prompts): runs whenever the session goes idle.
    Idle,
}

/// What an emitter runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum EmitterKind {
    /// A shell command (`bash -lc`) whose output lines feed the stream.
    Command,
    /// A prompt delivered to the session as an `inject`.
    Prompt,
}

/// Who owns an emitter's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Ownership {
    /// From the user's `tap.config.json` (or the panel): changing it needs `force`.
    UserOwned,
    /// Started by the agent.
    ModelOwned,
}

/// How long an emitter's definition lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Lifespan {
    /// This session only.
    Temporary,
    /// Written to the session's `tap.config.json`.
    Persistent,
}

/// One EventFilter rule: the first whose `match` (a case-insensitive regex) matches a line
/// decides its outcome; no match keeps the line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EmitterRule {
    /// The regex.
    #[serde(rename = "match")]
    pub pattern: String,
    /// `drop`, `keep`, `surface` or `inject`.
    pub outcome: EventOutcome,
}

/// Lines by what the filter made of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LineCounts {
    /// Every line read.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub lines: u64,
    /// Kept in the stream.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub kept: u64,
    /// Dropped by the filter (or over the line rate).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub dropped: u64,
    /// Shown in the session's timeline.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub surfaced: u64,
    /// Handed to the agent as a prompt.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub injected: u64,
}

/// An emitter as `emitters.list` and `tap emitters list` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct EmitterInfo {
    /// Unique in its session.
    pub name: String,
    /// The session it runs in.
    pub session_id: String,
    /// Command or prompt.
    pub kind: EmitterKind,
    /// The command line, for a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The prompt, for a prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// How it is scheduled.
    pub schedule: Schedule,
    /// `every` as given (`5m`, `idle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// Where it is now.
    pub status: EmitterStatus,
    /// The stream its lines go to.
    pub stream: String,
    /// Runs started.
    pub run_count: u32,
    /// Lines by outcome, over every run.
    pub counts: LineCounts,
    /// Its filter, in order.
    pub event_filter: Vec<EmitterRule>,
    /// Temporary or persistent.
    pub lifespan: Lifespan,
    /// User- or model-owned.
    pub ownership: Ownership,
    /// RFC 3339 time of the next timed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_at: Option<String>,
    /// The last run's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// What started a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum RunTrigger {
    /// The emitter started.
    Start,
    /// Its schedule (`every`).
    Schedule,
    /// The session went idle.
    Idle,
    /// A restart after a failure (`restart: "on-failure"`).
    Restart,
}

/// One run: a process from start to exit, or one prompt delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct EmitterRun {
    /// 1, 2, 3… per emitter.
    pub run: u32,
    /// What started it.
    pub trigger: RunTrigger,
    /// `running`, `exited` (ended by itself), `stopped`, `error`, `completed` (a prompt).
    pub status: EmitterStatus,
    /// RFC 3339: when it was due.
    pub scheduled_at: String,
    /// RFC 3339: when it started.
    pub started_at: String,
    /// RFC 3339: when it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// How long it took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duration_ms: Option<u64>,
    /// The process's exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended the process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Lines by outcome.
    pub lines: LineCounts,
    /// What went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The run's trace (`traces.get`).
    pub trace_id: String,
}

/// Params of `emitters.list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct EmittersListParams {
    /// Only this session's (every session's when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// Result of `emitters.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct EmittersList {
    /// By session, then name.
    pub emitters: Vec<EmitterInfo>,
    /// Problems with sessions' `tap.config.json` emitter entries, one sentence each.
    pub warnings: Vec<String>,
}

/// Params of `emitters.start`: a new emitter (or a changed one, replacing it), in a live
/// session. Exactly one of `command` and `prompt`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct EmitterStart {
    /// The session.
    pub session_id: String,
    /// Unique in the session: 1–64 of `a-z0-9._-` after normalising.
    pub name: String,
    /// A shell command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// A prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// `30s`, `5m`, `2h`, `1d`, `30 sec`, `every 5m`, or `idle` (prompts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// Working directory, relative to the session's; must stay inside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The stream (default: the emitter's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Route stderr lines too (source `emitter:stderr`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_stderr: Option<bool>,
    /// Stop after this many runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_runs: Option<u32>,
    /// `on-failure`: restart a continuous command that fails (backoff 1 s doubling to 5 min).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<String>,
    /// The EventFilter, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_filter: Option<Vec<EmitterRule>>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Replace a user-owned emitter of the same name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
    /// `persistent`: also written to the session's `tap.config.json`, so the next session
    /// in the project starts it too (default `temporary`: this session only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifespan: Option<Lifespan>,
    /// For a persistent emitter: whether the next session starts it (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_start: Option<bool>,
}

/// Params of `emitters.stop` and `emitters.runs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct EmitterRef {
    /// The session.
    pub session_id: String,
    /// The emitter.
    pub name: String,
    /// For `emitters.stop` of a user-owned emitter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
    /// `persistent` (stop only): also remove its definition from the session's
    /// `tap.config.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifespan: Option<Lifespan>,
}

/// Result of `emitters.runs`: the newest runs first (at most 100 kept per emitter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct EmitterRuns {
    /// The emitter.
    pub name: String,
    /// Its session.
    pub session_id: String,
    /// Newest first.
    pub runs: Vec<EmitterRun>,
}

/// Params of `emitters.testFilter`: which rule matches `line`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FilterTest {
    /// The rules, in order.
    pub event_filter: Vec<EmitterRule>,
    /// A line of output.
    pub line: String,
}

/// Result of `emitters.testFilter`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct FilterTestResult {
    /// The index of the rule that matched; absent when none did (the line is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<u32>,
    /// What becomes of the line.
    pub outcome: EventOutcome,
}
