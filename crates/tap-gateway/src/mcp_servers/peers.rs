//! A ready server's prompts and resources, offered to the MCP facade
//! (`state::mcp_server_peers`): listed and forwarded through its MCP connection, each
//! request with the list deadline.

use super::naming::Names;
use super::server::Server;
use crate::limits::MCP_LIST_TIMEOUT;
use crate::state::mcp_binding::Notice;
use crate::state::mcp_server_peers::{tell_sessions, Answer, Entry, ServerPeer};
use crate::state::Core;
use rmcp::model::{
    CompleteRequestParams, GetPromptRequestParams, ReadResourceRequestParams,
    SubscribeRequestParams,
};
use rmcp::{Peer, RoleClient};
use std::sync::Arc;
use tap_protocol::Json;

struct McpPeer(Peer<RoleClient>);

/// Runs `ask` with the deadline; its answer as JSON.
fn answer<T: serde::Serialize + Send + 'static, E: std::fmt::Display + Send + 'static>(
    ask: impl std::future::Future<Output = Result<T, E>> + Send + 'static,
) -> Answer {
    Box::pin(async move {
        match tokio::time::timeout(MCP_LIST_TIMEOUT, ask).await {
            Ok(Ok(v)) => serde_json::to_value(v).map_err(|e| e.to_string()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "it did not answer within {} s",
                MCP_LIST_TIMEOUT.as_secs()
            )),
        }
    })
}

impl ServerPeer for McpPeer {
    fn list_prompts(&self) -> Answer {
        let peer = self.0.clone();
        answer(async move { peer.list_all_prompts().await })
    }

    fn get_prompt(&self, name: String, arguments: Option<serde_json::Map<String, Json>>) -> Answer {
        let peer = self.0.clone();
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = arguments;
        answer(async move { peer.get_prompt(params).await })
    }

    fn list_resources(&self) -> Answer {
        let peer = self.0.clone();
        answer(async move { peer.list_all_resources().await })
    }

    fn list_resource_templates(&self) -> Answer {
        let peer = self.0.clone();
        answer(async move { peer.list_all_resource_templates().await })
    }

    fn complete(&self, params: Json) -> Answer {
        let peer = self.0.clone();
        answer(async move {
            let params: CompleteRequestParams =
                serde_json::from_value(params).map_err(|e| e.to_string())?;
            peer.complete(params).await.map_err(|e| e.to_string())
        })
    }

    // The gateway speaks the `initialize` generation to servers (`client.rs`), where
    // `resources/subscribe` is how updates are asked for.
    #[allow(deprecated)]
    fn subscribe(&self, uri: String) -> Answer {
        let peer = self.0.clone();
        answer(async move { peer.subscribe(SubscribeRequestParams::new(uri)).await })
    }

    fn read_resource(&self, uri: String) -> Answer {
        let peer = self.0.clone();
        answer(async move {
            peer.read_resource(ReadResourceRequestParams::new(uri))
                .await
        })
    }
}

/// Registers a ready server's prompts and resources, if it offers any; the id (for
/// [`unregister`]) when it does.
pub(crate) fn register(core: &Core, server: &Server, peer: &Peer<RoleClient>) -> Option<u64> {
    let caps = peer.peer_info()?.capabilities.clone();
    let (prompts, resources) = (caps.prompts.is_some(), caps.resources.is_some());
    if !prompts && !resources {
        return None;
    }
    let prefix = Names::new(&server.spec.name, server.spec.prefix.as_deref())
        .prefix()
        .to_string();
    let subscribe = caps
        .resources
        .as_ref()
        .is_some_and(|r| r.subscribe == Some(true));
    let entry = Entry {
        server: server.spec.name.clone(),
        prefix,
        session: server.session_id.clone(),
        sessions: server.spec.sessions.clone(),
        offers_prompts: prompts,
        offers_resources: resources,
        offers_completions: caps.completions.is_some(),
        offers_subscribe: subscribe,
        peer: Arc::new(McpPeer(peer.clone())),
    };
    let id = core.mcp_server_peers.add(entry.clone());
    lists_changed(core, &entry);
    Some(id)
}

/// The sessions that see `entry` have other prompts and resources now.
fn lists_changed(core: &Core, entry: &Entry) {
    if entry.offers_prompts {
        tell_sessions(core, entry, &Notice::PromptsChanged);
    }
    if entry.offers_resources {
        tell_sessions(core, entry, &Notice::ResourcesChanged);
    }
}

pub(crate) fn unregister(core: &Core, id: Option<u64>) {
    if let Some(entry) = id.and_then(|id| core.mcp_server_peers.remove(id)) {
        lists_changed(core, &entry);
    }
}
