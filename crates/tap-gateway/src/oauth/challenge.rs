//! A remote server's "sign in first": its `401` (or `403 insufficient_scope`) answer with
//! the `WWW-Authenticate` header, found in whatever error rmcp wrapped it in (a failed
//! `initialize`, a call whose POST was refused after rmcp's one silent refresh).

use rmcp::transport::streamable_http_client::StreamableHttpError;

/// The server asked for a (new) sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// Its `WWW-Authenticate` value: where discovery starts (`resource_metadata`, `scope`).
    pub header: String,
    /// `403 insufficient_scope`: signed in, but the call needs more scope (step-up).
    pub more_scope: bool,
}

impl Challenge {
    /// Why the server waits, in words for the user.
    pub fn reason(&self, signed_in: bool) -> String {
        let scope = scope_of(&self.header);
        match (self.more_scope, signed_in, scope) {
            (true, _, Some(scope)) => {
                format!("it asks for more access (scope '{scope}'): sign in again to grant it")
            }
            (true, _, None) => "it asks for more access: sign in again to grant it".into(),
            (false, true, _) => "its sign-in expired or was revoked: sign in again".into(),
            (false, false, _) => "it needs you to sign in".into(),
        }
    }
}

/// The challenge somewhere in `error`'s chain of sources, if the server sent one.
pub(crate) fn find(error: &(dyn std::error::Error + 'static)) -> Option<Challenge> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(http) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return match http {
                StreamableHttpError::AuthRequired(a) => Some(Challenge {
                    header: a.www_authenticate_header.clone(),
                    more_scope: false,
                }),
                StreamableHttpError::InsufficientScope(i) => Some(Challenge {
                    header: i.www_authenticate_header.clone(),
                    more_scope: true,
                }),
                _ => None,
            };
        }
        next = e.source();
    }
    None
}

/// The `scope="…"` parameter of a `WWW-Authenticate` value.
fn scope_of(header: &str) -> Option<&str> {
    let at = header.find("scope=\"")? + "scope=\"".len();
    let rest = &header[at..];
    Some(&rest[..rest.find('"')?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};

    #[derive(Debug, thiserror::Error)]
    #[error("sending failed")]
    struct Wrapper(#[source] StreamableHttpError<reqwest::Error>);

    #[test]
    fn a_challenge_is_found_under_wrappers() {
        let e = Wrapper(StreamableHttpError::AuthRequired(AuthRequiredError::new(
            "Bearer resource_metadata=\"https://a/.well-known/oauth-protected-resource\"".into(),
        )));
        let c = find(&e).unwrap();
        assert!(!c.more_scope && c.header.contains("resource_metadata"));
        assert_eq!(c.reason(false), "it needs you to sign in");

        let e = Wrapper(StreamableHttpError::InsufficientScope(
            InsufficientScopeError::new(
                "Bearer error=\"insufficient_scope\", scope=\"repo write\"".into(),
                None,
            ),
        ));
        let c = find(&e).unwrap();
        assert!(c.more_scope);
        assert!(
            c.reason(true).contains("'repo write'"),
            "{}",
            c.reason(true)
        );

        let other = Wrapper(StreamableHttpError::SessionExpired);
        assert_eq!(find(&other), None);
    }
}
