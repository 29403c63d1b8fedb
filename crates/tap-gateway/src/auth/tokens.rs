use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use subtle::ConstantTimeEq;

/// A fresh secret: `prefix` + 256 random bits, URL-safe base64 (43 characters).
pub fn generate(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// Compares a presented token with the expected one without leaking, through timing, how
/// much of it matched. (Length is not secret: every token of a kind has the same length.)
pub fn matches(presented: &str, expected: &str) -> bool {
    presented.as_bytes().ct_eq(expected.as_bytes()).into()
}

/// The secrets of one running gateway. They live as long as the process.
#[derive(Debug)]
pub struct Secrets {
    /// `ptk-…`: what Core Profile providers send in `auth`.
    pub gateway_token: String,
    /// `htk-…`: what session hosts send in their `auth`.
    pub host_token: String,
    /// `ctk-…`: what the panel and `tap pairing` send in the control plane's `auth`.
    pub control_token: String,
}

impl Secrets {
    pub fn generate() -> Self {
        Self {
            gateway_token: generate("ptk-"),
            host_token: generate("htk-"),
            control_token: generate("ctk-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_at_least_128_random_bits_and_differ() {
        let a = generate("ptk-");
        let b = generate("ptk-");
        assert!(a.starts_with("ptk-"));
        assert_eq!(a.len(), 4 + 43, "32 bytes of base64url");
        assert_ne!(a, b);
    }

    #[test]
    fn matches_only_the_exact_token() {
        let t = generate("ptk-");
        assert!(matches(&t, &t));
        assert!(!matches(&t[..t.len() - 1], &t));
        assert!(!matches("", &t));
        let mut other = t.clone().into_bytes();
        let last = other.len() - 1;
        other[last] = if other[last] == b'A' { b'B' } else { b'A' };
        assert!(!matches(std::str::from_utf8(&other).unwrap(), &t));
    }
}
