//! `GET /oauth/callback`: where an authorization server sends the user's browser back
//! after a sign-in to a remote MCP server. The page says what happened; the sign-in
//! itself (state, PKCE, the code exchange) is `oauth/sign_in.rs`'s. An answer nobody is
//! waiting for (a forged or replayed `state`) gets `400` and changes nothing.

use super::headers::harden;
use crate::gateway::Gateway;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

pub(super) async fn endpoint(State(gw): State<Gateway>, RawQuery(query): RawQuery) -> Response {
    let (status, title, text) = match gw.oauth_callback(query.as_deref().unwrap_or("")).await {
        Ok(server) => (
            StatusCode::OK,
            "Signed in",
            format!("Tap is signed in to the MCP server '{server}'. You can close this tab."),
        ),
        Err(why) => (
            StatusCode::BAD_REQUEST,
            "Sign-in refused",
            format!("Tap did not finish this sign-in: {why}"),
        ),
    };
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title} · Tap</title>\
         <style>body{{font:16px system-ui,sans-serif;margin:4rem auto;max-width:36rem;padding:0 1rem}}\
         @media (prefers-color-scheme:dark){{body{{background:#111;color:#eee}}}}</style></head>\
         <body><h1>{title}</h1><p>{}</p></body></html>",
        escape(&text)
    );
    let mut response = (status, body).into_response();
    let h = response.headers_mut();
    harden(h);
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // The page is the answer to one sign-in: never kept, never framed, no script.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        ),
    );
    response
}

/// The reason may carry the authorization server's `error_description`: text, never markup.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            super::escape("<script>'x'&\"</script>"),
            "&lt;script&gt;&#39;x&#39;&amp;&quot;&lt;/script&gt;"
        );
    }
}
