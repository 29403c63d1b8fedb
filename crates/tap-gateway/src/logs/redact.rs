//! Masks what looks like a secret before a record is kept for the panel.
//!
//! Nothing in the engine logs a token today; this is the second line of defence for what
//! the engine does not control: lines a spawned provider prints (logged verbatim), a
//! future log statement, an error message quoting a frame. Every secret the gateway
//! makes is 256 random bits in base64url (43 characters), often with a `xxx-` prefix
//! (`ptk-`, `htk-`, `ctk-`, `ext-`, `rtk-`); a login code has none.

use std::borrow::Cow;

/// Runs of base64url characters at least this long may be secrets. Longer than a UUID
/// (36), shorter than a token (43).
const MIN_SECRET_LEN: usize = 40;

/// `text` with every run of base64url characters that looks random (at least
/// [`MIN_SECRET_LEN`] long, with upper case, lower case and digits) replaced by
/// `<redacted>`, keeping a `xxx-` prefix so the kind stays visible.
pub(super) fn redact(text: &str) -> Cow<'_, str> {
    let is_b64 = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if !is_b64(c) {
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(i, c)) = chars.peek() {
            if !is_b64(c) {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        let run = &text[start..end];
        if !looks_random(run) {
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
        o.push_str(&text[copied..start]);
        let b = run.as_bytes();
        if b.len() > 4 && b[3] == b'-' && b[..3].iter().all(u8::is_ascii_lowercase) {
            o.push_str(&run[..4]);
        }
        o.push_str("<redacted>");
        copied = end;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
    }
}

fn looks_random(run: &str) -> bool {
    run.len() >= MIN_SECRET_LEN
        && run.bytes().any(|b| b.is_ascii_uppercase())
        && run.bytes().any(|b| b.is_ascii_lowercase())
        && run.bytes().any(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::redact;

    const TOKEN: &str = "ptk-3q2Zk9vXbL0aYwR7mN5tJ8cF1hG4dS6eU2iO0pK_-xQ";

    #[test]
    fn tokens_and_codes_are_masked_keeping_their_kind() {
        assert_eq!(
            redact(&format!("token={TOKEN}, next")),
            "token=ptk-<redacted>, next"
        );
        let code = &TOKEN[4..];
        assert_eq!(
            redact(&format!("http://127.0.0.1:9400/#login={code}")),
            "http://127.0.0.1:9400/#login=<redacted>"
        );
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "provider authenticated",
            "session 6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b registered",
            "tap_gateway::providers::connection_with_a_very_long_name",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "naïve ünïcode ✓",
        ] {
            assert!(
                matches!(redact(text), std::borrow::Cow::Borrowed(_)),
                "{text}"
            );
        }
    }
}
