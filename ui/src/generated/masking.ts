// Generated from crates/tap-protocol/src/masking.rs by tests/generated_typescript.rs. Do not edit.

/** A key whose value is a secret whatever it holds (matched on the key with every character
 * other than A-Z, a-z, 0-9 and _ read as _). */
export const SECRET_KEY = new RegExp("(token|secret|passw(or)?d|passphrase|authorization|auth_?header|api_?key|apikey|access_?key|private_?key|client_?secret|credential|cookie|session_?key|signature)", "i");

/** Values that look like secrets whatever their key. */
export const SECRET_VALUE: readonly RegExp[] = [
  new RegExp("\\bbearer\\s+[A-Za-z0-9._~+/=-]{8,}", "i"), // an Authorization header's value
  new RegExp("\\bbasic\\s+[A-Za-z0-9+/=]{8,}", "i"), // a Basic Authorization value
  new RegExp("\\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}", ""), // OpenAI, Anthropic (sk-ant-…) and Stripe-like keys
  new RegExp("\\b(sk|pk|rk)_(live|test)_[A-Za-z0-9]{16,}", ""), // Stripe keys
  new RegExp("\\bgh[pousr]_[A-Za-z0-9]{20,}", ""), // GitHub tokens
  new RegExp("\\bgithub_pat_[A-Za-z0-9_]{20,}", ""), // GitHub fine-grained tokens
  new RegExp("\\bglpat-[A-Za-z0-9_-]{16,}", ""), // GitLab tokens
  new RegExp("\\bxox[abprs]-[A-Za-z0-9-]{10,}", ""), // Slack tokens
  new RegExp("\\bAKIA[0-9A-Z]{16}\\b", ""), // AWS access key ids
  new RegExp("\\bAIza[0-9A-Za-z_-]{30,}", ""), // Google API keys
  new RegExp("\\beyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}", ""), // JWTs
  new RegExp("-----BEGIN [A-Z ]*PRIVATE KEY-----", ""), // PEM private keys
];

/** What a masked value shows, before its length. */
export const MASK_PREFIX = "••••• masked";
