//! Which tool-call arguments an approval prompt masks, defined once. The user decides from
//! the prompt, and it is on screen (and in screenshots, and in an MCP client's form): a token
//! the agent passes to a tool must not be shown in the clear, but the user must still see that
//! one is there. The gateway compiles these patterns for the prompts it sends (an MCP client's
//! elicitation form, a session host's `approval.ask`); the panel's and the tray popup's
//! TypeScript (`ui/src/generated/masking.ts`) is generated from them, so the three can never
//! mask differently.
//!
//! Every pattern is written in the syntax both Rust's `regex` and JavaScript's `RegExp`
//! read the same way (character classes, `\b`, `\s`, counted repetition; no look-around).

/// A key whose value is a secret whatever it holds: `api_key`, `X-Auth-Token`, `password`.
/// Matched case-insensitively, anywhere in the key, after [`key_for_matching`].
pub const SECRET_KEY: &str = "(token|secret|passw(or)?d|passphrase|authorization|auth_?header|api_?key|apikey|access_?key|private_?key|client_?secret|credential|cookie|session_?key|signature)";

/// A value shape that is a secret whatever its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretShape {
    /// The pattern, matched anywhere in a string value.
    pub pattern: &'static str,
    /// Whether letters match in either case.
    pub ignore_case: bool,
    /// What it catches, for readers of the generated code.
    pub what: &'static str,
}

const fn shape(pattern: &'static str, ignore_case: bool, what: &'static str) -> SecretShape {
    SecretShape {
        pattern,
        ignore_case,
        what,
    }
}

/// Values that look like secrets whatever their key.
pub const SECRET_SHAPES: &[SecretShape] = &[
    shape(
        r"\bbearer\s+[A-Za-z0-9._~+/=-]{8,}",
        true,
        "an Authorization header's value",
    ),
    shape(
        r"\bbasic\s+[A-Za-z0-9+/=]{8,}",
        true,
        "a Basic Authorization value",
    ),
    shape(
        r"\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}",
        false,
        "OpenAI, Anthropic (sk-ant-…) and Stripe-like keys",
    ),
    shape(
        r"\b(sk|pk|rk)_(live|test)_[A-Za-z0-9]{16,}",
        false,
        "Stripe keys",
    ),
    shape(r"\bgh[pousr]_[A-Za-z0-9]{20,}", false, "GitHub tokens"),
    shape(
        r"\bgithub_pat_[A-Za-z0-9_]{20,}",
        false,
        "GitHub fine-grained tokens",
    ),
    shape(r"\bglpat-[A-Za-z0-9_-]{16,}", false, "GitLab tokens"),
    shape(r"\bxox[abprs]-[A-Za-z0-9-]{10,}", false, "Slack tokens"),
    shape(r"\bAKIA[0-9A-Z]{16}\b", false, "AWS access key ids"),
    shape(r"\bAIza[0-9A-Za-z_-]{30,}", false, "Google API keys"),
    shape(
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        false,
        "JWTs",
    ),
    shape(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
        false,
        "PEM private keys",
    ),
];

/// A key as [`SECRET_KEY`] is matched against: every character other than an ASCII letter,
/// digit or `_` becomes `_`, so `X-Api-Key` and `auth header` read as `api_key` and
/// `auth_header` do.
pub fn key_for_matching(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// What a masked value shows instead of itself: it keeps its place and says how long it was
/// (characters of a string, else of its compact JSON).
pub fn mask_text(chars: usize) -> String {
    format!("{MASK_PREFIX} ({chars} chars)")
}

/// The start of [`mask_text`].
pub const MASK_PREFIX: &str = "••••• masked";
