//! What the handle, the connection task and the handlers' tasks share: the configuration,
//! the declaration (tools, hooks, context, filters: what every `hello` carries and updates
//! change), and what the last `hello.ack` said.

use crate::hooks::{GateHandler, Transform};
use crate::tool::Tool;
use crate::types::{Config, Event};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use tap_protocol::provider::{FilterRule, HookRule, Hooks};
use tokio::sync::broadcast;

/// The provider's declaration as it stands now. Changed by the handle before an update is
/// sent (so a reconnect meanwhile declares it) and put back if the gateway refuses it.
#[derive(Default)]
pub(crate) struct Declaration {
    /// In the order declared (the order `hello` lists them).
    pub tools: Vec<Tool>,
    pub rules: Vec<HookRule>,
    pub transforms: BTreeMap<String, Transform>,
    pub gates: HashMap<String, GateHandler>,
    pub context: Option<String>,
    /// Set again after every bind: the gateway starts each binding without filters.
    pub filters: BTreeMap<String, Vec<FilterRule>>,
}

impl Declaration {
    pub fn tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.def.name == name).cloned()
    }

    /// `hello.hooks`, or `None` when there is nothing to declare.
    pub fn hooks(&self) -> Option<Hooks> {
        let rules = (!self.rules.is_empty()).then(|| self.rules.clone());
        let transforms = (!self.transforms.is_empty()).then(|| {
            (self.transforms.iter())
                .map(|(k, t)| (k.clone(), Some(t.wire.clone())))
                .collect()
        });
        (rules.is_some() || transforms.is_some()).then_some(Hooks {
            on_pre_tool_use: rules,
            transforms,
        })
    }
}

/// What the last `hello.ack` said.
#[derive(Default, Clone)]
pub(crate) struct Binding {
    pub provider_id: String,
    pub session_id: String,
    pub persist_dir: Option<PathBuf>,
}

pub(crate) struct Shared {
    pub config: Config,
    pub decl: Mutex<Declaration>,
    pub binding: Mutex<Binding>,
    pub events: broadcast::Sender<Event>,
}

impl Shared {
    /// The declaration. A handler that panicked while holding it cannot have left it half
    /// changed (every change is one assignment), so a poisoned lock is used as it is.
    pub fn decl(&self) -> MutexGuard<'_, Declaration> {
        self.decl.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn binding(&self) -> MutexGuard<'_, Binding> {
        self.binding.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }
}
