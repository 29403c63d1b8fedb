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
    /// `resources/subscribe` of the server's own `uri`.
    fn subscribe(&self, uri: String) -> Answer;
}

/// The scheme of a server's resources as sessions see them: `tap-mcp://<server>/<uri>`.
pub(crate) const SCHEME: &str = "tap-mcp://";

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
    /// It declared `resources.subscribe`.
    pub offers_subscribe: bool,
    pub peer: Arc<dyn ServerPeer>,
}

impl Entry {
    /// Whether session `id` (labelled `label`) sees this server.
    pub fn sees(&self, id: &str, label: Option<&str>) -> bool {
        match (&self.session, &self.sessions) {
            (Some(session), _) => session == id,
            (None, None) => true,
            (None, Some(list)) => list.iter().any(|x| x == id || Some(x.as_str()) == label),
        }
    }

    /// One of its resource URIs (or templates) as sessions see it: behind
    /// `tap-mcp://<server>/`, or as it is for a server whose prefix is empty.
    pub fn shown_uri(&self, uri: &str) -> String {
        match self.prefix.is_empty() {
            true => uri.to_string(),
            false => format!("{SCHEME}{}/{uri}", self.server),
        }
    }
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

    /// Unregisters `id`; its entry, if it was there.
    pub fn remove(&self, id: u64) -> Option<Entry> {
        let mut entries = self.entries.lock().unwrap();
        let at = entries.iter().position(|(i, _)| *i == id)?;
        Some(entries.remove(at).1)
    }

    /// The servers session `id` (labelled `label`) sees.
    pub fn for_session(&self, id: &str, label: Option<&str>) -> Vec<Entry> {
        self.entries
            .lock()
            .unwrap()
            .iter()
            .map(|(_, e)| e)
            .filter(|e| e.sees(id, label))
            .cloned()
            .collect()
    }

    /// The entry of server `server` (of project session `session`, or a user server).
    pub fn find(&self, server: &str, session: Option<&str>) -> Option<Entry> {
        let entries = self.entries.lock().unwrap();
        entries
            .iter()
            .map(|(_, e)| e)
            .find(|e| e.server == server && e.session.as_deref() == session)
            .cloned()
    }
}

/// Tells the MCP clients of the sessions that see `entry` what `notice` says (a resource of
/// it changed, its lists changed).
pub(crate) fn tell_sessions(
    core: &super::Core,
    entry: &Entry,
    notice: &super::mcp_binding::Notice,
) {
    let state = core.state();
    for binding in state.mcp.values() {
        let label = state
            .sessions
            .get(&binding.session_id)
            .and_then(|s| s.info.label.as_deref());
        if entry.sees(&binding.session_id, label) {
            binding.notify(notice.clone());
        }
    }
}
