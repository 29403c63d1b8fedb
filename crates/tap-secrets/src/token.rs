use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;

/// A fresh secret: `prefix` + 256 bits from the OS CSPRNG, URL-safe base64 (43
/// characters); the same shape as the engine's own tokens.
pub fn generate_token(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}
