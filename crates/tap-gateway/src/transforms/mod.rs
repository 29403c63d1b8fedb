//! Prompt transforms and ambient context (spec: "Transform rules", "Protected prompt
//! sections", `transform.request` / `transform.result`, `context`, `startup_context`).
//!
//! Each provider's transforms and context live here, keyed by (provider id, session) (a
//! provider bound to `"all"` has one entry per session it is registered in), and are
//! replaced by every `hello` (or `session.ready`), changed by `hooks.update` /
//! `context.update`, and forgotten when the binding or the connection ends. A session's registration order is its bind order
//! (`Session::bound`); a provider holds at most one transform per section, so declaration
//! order within one provider never matters for a section.
//!
//! Applying (`prompt.apply` from a session host): every section the host sent goes
//! through the bound providers' transforms for it, in bind order; `append` / `prepend`
//! join with a newline, `replace` sets the text, `callback` asks the provider with
//! `transform.request` and takes its `content` (unchanged after 2 s, on disconnect, or
//! when it unbinds). The protected sections `safety` and `identity` accept only `append`
//! and are transformed after every other section.

pub(crate) mod apply;
