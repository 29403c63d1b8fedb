//! A remote server's "sign in first": its `401` (or `403 insufficient_scope`) answer with
//! the `WWW-Authenticate` header, found in whatever error rmcp wrapped it in (a failed
//! `initialize`, a call whose POST was refused after rmcp's one silent refresh).

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

/// Why `initialize` failed, when it was the server asking for a sign-in.
pub(crate) fn of_initialize(e: &rmcp::service::ClientInitializeError) -> Option<Challenge> {
    from(e.auth_challenge(), e.is_authorization_required())
}

/// Why a request failed, when it was the server asking for a (new) sign-in: a revoked
/// token whose refresh was refused, or a call that needs more scope.
pub(crate) fn of_request(e: &rmcp::service::ServiceError) -> Option<Challenge> {
    from(e.auth_challenge(), e.is_authorization_required())
}

/// rmcp finds the `WWW-Authenticate` value; without one (rmcp's own "authorization
/// required") discovery starts from the server's URL.
fn from(header: Option<&str>, required: bool) -> Option<Challenge> {
    if header.is_none() && !required {
        return None;
    }
    let header = header.unwrap_or_default().to_string();
    Some(Challenge {
        more_scope: header.contains("insufficient_scope"),
        header,
    })
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
    use rmcp::service::ServiceError;
    use rmcp::transport::streamable_http_client::{
        AuthRequiredError, InsufficientScopeError, StreamableHttpError,
    };
    use rmcp::transport::DynamicTransportError;

    /// A request error as rmcp's worker makes it: the HTTP error inside its transport error.
    fn refused(e: StreamableHttpError<reqwest::Error>) -> ServiceError {
        ServiceError::TransportSend(DynamicTransportError::new::<
            rmcp::transport::StreamableHttpClientTransport<reqwest::Client>,
            rmcp::RoleClient,
        >(e))
    }

    #[test]
    fn a_challenge_is_found_in_rmcps_errors() {
        let c = of_request(&refused(StreamableHttpError::AuthRequired(
            AuthRequiredError::new(
                "Bearer resource_metadata=\"https://a/.well-known/oauth-protected-resource\""
                    .into(),
            ),
        )))
        .unwrap();
        assert!(!c.more_scope && c.header.contains("resource_metadata"));
        assert_eq!(c.reason(false), "it needs you to sign in");

        let c = of_request(&refused(StreamableHttpError::InsufficientScope(
            InsufficientScopeError::new(
                "Bearer error=\"insufficient_scope\", scope=\"repo write\"".into(),
                None,
            ),
        )))
        .unwrap();
        assert!(c.more_scope);
        assert!(
            c.reason(true).contains("'repo write'"),
            "{}",
            c.reason(true)
        );

        assert_eq!(
            of_request(&refused(StreamableHttpError::SessionExpired)),
            None
        );
        assert_eq!(of_request(&ServiceError::TransportClosed), None);
    }
}
