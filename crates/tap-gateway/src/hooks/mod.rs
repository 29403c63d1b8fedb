//! Pre-tool-use hook rules (spec: "Hook rules — declarative API", "Gate timeout behavior:
//! fail closed", "Regex execution safety").
//!
//! - `rules`: validation and compilation of `onPreToolUse` rules (from `hello.hooks` and
//!   `hooks.update`), stored per (provider, session) on the provider's registry entry.
//! - `gates`: the `gate.check` → `gate.result` round trips pending on one provider link.
//! - `decide`: `pre_tool_use`, the one decision a
//!   session host asks for before each tool use.

pub(crate) mod decide;
