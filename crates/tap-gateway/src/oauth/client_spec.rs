//! How the gateway identifies itself to a server's authorization server, from the
//! server's `"oauth"` entry in `mcp.json` / `tap.config.json`:
//!
//! ```json
//! "linear": { "url": "https://mcp.linear.app/mcp",
//!             "oauth": { "clientId": "…", "clientSecret": "${secret:linear.client-secret}",
//!                        "scopes": ["read", "write"],
//!                        "clientMetadataUrl": "https://example.com/tap-client.json" } }
//! ```
//!
//! Every key is optional, and so is the entry: a server that answers `401` gets a sign-in
//! either way. rmcp picks the registration in the MCP spec's order: a pre-registered
//! `clientId` (with its secret: `tap mcp add --client-id ID --client-secret S` stores the
//! secret like any other), else the Client ID Metadata Document at `clientMetadataUrl` when
//! the authorization server supports those, else dynamic registration.

use serde_json::{Map, Value};

/// The `"oauth"` entry of a remote server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClientSpec {
    /// A client id registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// Its secret, as written (usually a `${secret:NAME}` reference; put in at sign-in).
    pub client_secret: Option<String>,
    /// The scopes to ask for; empty: what the server's challenge or metadata suggests.
    pub scopes: Vec<String>,
    /// An HTTPS URL serving this client's metadata document (SEP-991).
    pub client_metadata_url: Option<String>,
}

impl ClientSpec {
    /// Reads an `"oauth"` value. `Err`: what is wrong, naming the key.
    pub fn parse(value: &Value) -> Result<ClientSpec, String> {
        let obj: &Map<String, Value> = value.as_object().ok_or(
            "'oauth' must be an object (clientId, clientSecret, scopes, clientMetadataUrl)",
        )?;
        let text = |key: &str| -> Result<Option<String>, String> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
                Some(_) => Err(format!("'oauth.{key}' must be a non-empty string")),
            }
        };
        let scopes = match obj.get("scopes") {
            None | Some(Value::Null) => Vec::new(),
            // A space-separated string, as OAuth writes scopes, or an array.
            Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or("'oauth.scopes' must be an array of strings")?,
            Some(_) => return Err("'oauth.scopes' must be an array of strings".into()),
        };
        let spec = ClientSpec {
            client_id: text("clientId")?,
            client_secret: text("clientSecret")?,
            scopes,
            client_metadata_url: text("clientMetadataUrl")?,
        };
        if spec.client_secret.is_some() && spec.client_id.is_none() {
            return Err("'oauth.clientSecret' needs 'oauth.clientId'".into());
        }
        if let Some(url) = &spec.client_metadata_url {
            if !url.starts_with("https://") {
                return Err("'oauth.clientMetadataUrl' must be an https:// URL".into());
            }
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_key_and_names_a_bad_one() {
        let spec = ClientSpec::parse(&json!({
            "clientId": "tap", "clientSecret": "${secret:s}", "scopes": "read write",
            "clientMetadataUrl": "https://example.com/c.json"
        }))
        .unwrap();
        assert_eq!(spec.client_id.as_deref(), Some("tap"));
        assert_eq!(spec.scopes, ["read", "write"]);
        assert_eq!(
            ClientSpec::parse(&json!({})).unwrap(),
            ClientSpec::default()
        );
        for (bad, key) in [
            (json!({"clientSecret": "x"}), "clientId"),
            (json!({"scopes": 3}), "scopes"),
            (json!({"clientMetadataUrl": "http://x/c.json"}), "https"),
            (json!("yes"), "object"),
        ] {
            let why = ClientSpec::parse(&bad).unwrap_err();
            assert!(why.contains(key), "{why}");
        }
    }
}
