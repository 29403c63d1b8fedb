//! Headers every response of ours carries.

use axum::http::{header, HeaderMap, HeaderValue};

/// No MIME sniffing (a JSON or text answer is never run as script) and no `Referer` to
/// anyone (a panel URL may still carry its one-time login code in the fragment).
pub(super) fn harden(h: &mut HeaderMap) {
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}
