//! The MCP servers the gateway runs that offer prompts or resources (and completions for them), for the MCP facade to
//! show its clients: each ready server registers a [`ServerPeer`] here (`mcp_servers`) and
//! the facade (`mcp`) lists and forwards through it. Data and a trait only: neither side
//! knows the other.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use tap_protocol::Json;

/// What a server answers, as JSON (MCP's own shapes), or why not.
pub(crate) type Answer = Pin<Box<dyn Future<Output = Result<Json, String>> + Send>>;

/// A ready server's prompts and resources.
pub(crate) trait ServerPeer: Send + Sync {
    fn list_prompts(&self) -> Answer;
    fn get_prompt(&self, name: String, arguments: Option<serde_json::Map<String, Json>>) -> Answer;
    fn list_resources(&self) -> Answer;
    fn list_resource_templates(&self) -> Answer;
    fn read_resource(&self, uri: String) -> Answer;
    /// `completion/complete` with `params` (MCP's `CompleteRequestParams`, its `ref` already
    /// in the server's own names).
    fn complete(&self, params: Json) -> Answer;
}

/// One registered server.
#[derive(Clone)]
pub(crate) struct Entry {
    /// Its name in the configuration.
    pub server: String,
    /// What its prompt names start with in sessions (`<prefix>__`, or empty).
    pub prefix: String,
    /// A project server's session; `None`: every session `sees` allows.
    pub session: Option<String>,
    /// `sessions` of its entry (ids or labels), for a user server.
    pub sessions: Option<Vec<String>>,
    pub offers_prompts: bool,
    pub offers_resources: bool,
    /// It declared `completions`.
    pub offers_completions: bool,
    pub peer: Arc<dyn ServerPeer>,
}

#[derive(Default)]
pub(crate) struct ServerPeers {
    entries: Mutex<Vec<(u64, Entry)>>,
    next: Mutex<u64>,
}

impl ServerPeers {
    /// Registers `entry`; the id removes it.
    pub fn add(&self, entry: Entry) -> u64 {
        let mut next = self.next.lock().unwrap();
        *next += 1;
        self.entries.lock().unwrap().push((*next, entry));
        *next
    }

    pub fn remove(&self, id: u64) {
        self.entries.lock().unwrap().retain(|(i, _)| *i != id);
    }

    /// The servers session `id` (labelled `label`) sees.
    pub fn for_session(&self, id: &str, label: Option<&str>) -> Vec<Entry> {
        self.entries
            .lock()
            .unwrap()
            .iter()
            .map(|(_, e)| e)
            .filter(|e| match (&e.session, &e.sessions) {
                (Some(session), _) => session == id,
                (None, None) => true,
                (None, Some(list)) => list.iter().any(|x| x == id || Some(x.as_str()) == label),
            })
            .cloned()
            .collect()
    }
}
