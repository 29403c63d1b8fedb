//! The prompts and resources of the MCP servers the gateway runs, next to the facade's own:
//! a server's prompt `p` is `<prefix>__p` (its tools' prefix), and its resource `uri` is
//! `tap-mcp://<server>/<uri>`, so two servers' items never collide and a request finds its
//! server. A resource template is renamed the same way (`tap-mcp://<server>/` before its
//! `uriTemplate`): the prefix has no variables, so a URI a client expands from it is the
//! server's own expansion behind the prefix, and reading it reaches the server with that.
//! A server configured with `"prefix": ""` keeps its own names for all three (its tools'
//! too): its resources and templates are shown as the server gives them, and a URI outside
//! the gateway's own `tap://` and `tap-mcp://` goes to such servers, the first that reads it
//! answering. Reads and gets are forwarded unchanged; a server that fails to list is left
//! out of the list (and logged) rather than failing the client's whole request.

use crate::state::mcp_binding::Binding;
use crate::state::mcp_server_peers::{Entry, SCHEME};
use crate::state::Core;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptResult, Prompt, ReadResourceResult, Reference,
    Resource, ResourceTemplate,
};
use rmcp::ErrorData as McpError;
use tap_protocol::Json;

/// The scheme of the gateway's own resources (`mcp/resources.rs`): never a server's.
const OWN_SCHEME: &str = "tap://";

/// The servers a resource URI of a session may belong to, with the URI in the server's own
/// terms: the one `tap-mcp://<server>/` names, else those that keep their own names (`None`:
/// not a server's, or the gateway's own).
fn resource_owners(core: &Core, binding: &Binding, uri: &str) -> Option<(Vec<Entry>, String)> {
    let with_resources = servers(core, binding)
        .into_iter()
        .filter(|e| e.offers_resources);
    if let Some(rest) = uri.strip_prefix(SCHEME) {
        let (server, own) = rest.split_once('/')?;
        let named: Vec<Entry> = with_resources.filter(|e| e.server == server).collect();
        return Some((named, own.to_string()));
    }
    if uri.starts_with(OWN_SCHEME) {
        return None;
    }
    let unprefixed: Vec<Entry> = with_resources.filter(|e| e.prefix.is_empty()).collect();
    (!unprefixed.is_empty()).then(|| (unprefixed, uri.to_string()))
}

fn servers(core: &Core, binding: &Binding) -> Vec<Entry> {
    let label = core
        .state()
        .sessions
        .get(&binding.session_id)
        .and_then(|s| s.info.label.clone());
    core.mcp_server_peers
        .for_session(&binding.session_id, label.as_deref())
}

pub(crate) async fn prompts(core: &Core, binding: &Binding) -> Vec<Prompt> {
    let servers = servers(core, binding)
        .into_iter()
        .filter(|e| e.offers_prompts);
    gather(
        servers,
        "prompts",
        "name",
        |e| e.peer.list_prompts(),
        |e, name| format!("{}{name}", e.prefix),
    )
    .await
}

/// Every server's items (the JSON array `list` answers), each with its `field` renamed by
/// `rename` and read as `T`; an item that does not read as one is left out.
async fn gather<T: serde::de::DeserializeOwned>(
    servers: impl Iterator<Item = Entry>,
    what: &str,
    field: &str,
    list: impl Fn(&Entry) -> crate::state::mcp_server_peers::Answer,
    rename: impl Fn(&Entry, &str) -> String,
) -> Vec<T> {
    let mut out = Vec::new();
    for e in servers {
        match list(&e).await {
            Ok(Json::Array(items)) => {
                for mut item in items {
                    if let Some(old) = item.get(field).and_then(Json::as_str) {
                        item[field] = Json::String(rename(&e, old));
                    }
                    out.extend(serde_json::from_value::<T>(item).ok());
                }
            }
            Ok(_) => {}
            Err(why) => {
                tracing::warn!(server = %e.server, error = %why, "could not list an MCP server's {what}")
            }
        }
    }
    out
}

/// The server whose prompt `name` is, and the prompt's own name there.
fn prompt_owner(core: &Core, binding: &Binding, name: &str) -> Option<(Entry, String)> {
    // The longest prefix wins, so `gh__x` is not taken by a server without one.
    let mut candidates: Vec<Entry> = servers(core, binding)
        .into_iter()
        .filter(|e| e.offers_prompts && name.starts_with(&e.prefix))
        .collect();
    candidates.sort_by_key(|e| std::cmp::Reverse(e.prefix.len()));
    let e = candidates.into_iter().next()?;
    let own = name[e.prefix.len()..].to_string();
    Some((e, own))
}

/// A server's prompt, if `name` is one (`None`: not a server's).
pub(crate) async fn get_prompt(
    core: &Core,
    binding: &Binding,
    name: &str,
    arguments: Option<&rmcp::model::JsonObject>,
) -> Option<Result<GetPromptResult, McpError>> {
    let (e, own) = prompt_owner(core, binding, name)?;
    Some(match e.peer.get_prompt(own, arguments.cloned()).await {
        Ok(v) => answered(&e, v),
        Err(why) => Err(McpError::invalid_params(
            format!("MCP server '{}': {why}", e.server),
            None,
        )),
    })
}

/// A server's answer read as `T`.
fn answered<T: serde::de::DeserializeOwned>(e: &Entry, v: Json) -> Result<T, McpError> {
    serde_json::from_value(v).map_err(|err| {
        McpError::internal_error(
            format!("MCP server '{}' answered something else: {err}", e.server),
            None,
        )
    })
}

/// `completion/complete` for a server's prompt or resource template, forwarded with the
/// reference in the server's own names (`None`: the reference is not a server's). A server
/// that declared no `completions` has none to offer: an empty list, as MCP answers then.
pub(crate) async fn complete(
    core: &Core,
    binding: &Binding,
    mut request: CompleteRequestParams,
) -> Option<Result<CompleteResult, McpError>> {
    let e = match &mut request.r#ref {
        Reference::Prompt(p) => {
            let (e, own) = prompt_owner(core, binding, &p.name)?;
            p.name = own;
            e
        }
        Reference::Resource(r) => {
            let (owners, own) = resource_owners(core, binding, &r.uri)?;
            r.uri = own;
            owners.into_iter().next()?
        }
        // A kind of reference newer than this gateway: not a server's it knows.
        _ => return None,
    };
    if !e.offers_completions {
        return Some(Ok(CompleteResult::default()));
    }
    let params = match serde_json::to_value(&request) {
        Ok(p) => p,
        Err(err) => return Some(Err(McpError::internal_error(err.to_string(), None))),
    };
    Some(match e.peer.complete(params).await {
        Ok(v) => answered(&e, v),
        Err(why) => Err(McpError::invalid_params(
            format!("MCP server '{}': {why}", e.server),
            None,
        )),
    })
}

pub(crate) async fn resources(core: &Core, binding: &Binding) -> Vec<Resource> {
    let servers = servers(core, binding)
        .into_iter()
        .filter(|e| e.offers_resources);
    gather(
        servers,
        "resources",
        "uri",
        |e| e.peer.list_resources(),
        |e, uri| e.shown_uri(uri),
    )
    .await
}

pub(crate) async fn resource_templates(core: &Core, binding: &Binding) -> Vec<ResourceTemplate> {
    let servers = servers(core, binding)
        .into_iter()
        .filter(|e| e.offers_resources);
    gather(
        servers,
        "resource templates",
        "uriTemplate",
        |e| e.peer.list_resource_templates(),
        |e, template| e.shown_uri(template),
    )
    .await
}

/// `resources/subscribe` of a server's resource, forwarded to the server (`None`: not a
/// server's). Its `notifications/resources/updated` then reach the client under the URI it
/// subscribed to. An unsubscribe stays with the client: other clients may still follow the
/// resource, so the server keeps sending and the facade passes on what is wanted.
pub(crate) async fn subscribe(
    core: &Core,
    binding: &Binding,
    uri: &str,
) -> Option<Result<(), McpError>> {
    let (owners, own) = resource_owners(core, binding, uri)?;
    let Some(e) = owners.into_iter().find(|e| e.offers_subscribe) else {
        return Some(Err(McpError::invalid_params(
            format!(
                "no MCP server of session '{}' offers subscriptions to '{uri}'",
                binding.session_id
            ),
            None,
        )));
    };
    Some(match e.peer.subscribe(own).await {
        Ok(_) => Ok(()),
        Err(why) => Err(McpError::invalid_params(
            format!("MCP server '{}': {why}", e.server),
            None,
        )),
    })
}

/// Reads a server's resource, if `uri` names one (`None`: not a server's).
pub(crate) async fn read(
    core: &Core,
    binding: &Binding,
    uri: &str,
) -> Option<Result<ReadResourceResult, McpError>> {
    let (owners, own) = resource_owners(core, binding, uri)?;
    let mut why = format!(
        "no MCP server with resources in session '{}' has '{uri}'",
        binding.session_id
    );
    for e in owners {
        match e.peer.read_resource(own.clone()).await {
            Ok(mut v) => {
                // The contents name the URI the client asked for.
                if let Some(contents) = v.get_mut("contents").and_then(Json::as_array_mut) {
                    for c in contents {
                        if c.get("uri").and_then(Json::as_str) == Some(&own) {
                            c["uri"] = Json::String(uri.to_string());
                        }
                    }
                }
                return Some(answered(&e, v));
            }
            Err(err) => why = format!("MCP server '{}': {err}", e.server),
        }
    }
    Some(Err(McpError::resource_not_found(why, None)))
}
