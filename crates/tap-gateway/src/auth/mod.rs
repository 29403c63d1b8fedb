//! Secrets: token generation, constant-time comparison, and the 0600 files peers read them from.

pub(crate) mod client_tokens;
pub mod copilot_holder;
pub mod files;
pub(crate) mod login_codes;
pub(crate) mod origin;
pub mod tokens;
