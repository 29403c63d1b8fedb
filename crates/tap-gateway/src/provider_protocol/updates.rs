//! State updates (spec: "Update acknowledgments"): `tools.update`, `hooks.update`,
//! `context.update` and `filter.set`. Each applies to the sessions its `sessionId` names
//! (see [`super::all_binding::targets`]) and is answered per (provider, session): `ack`
//! with that pair's next revision, or `error` echoing the `requestId`.
//!
//! The revision barrier ("after `ack(revision=N)` … all subsequent dispatches to that
//! session use revision N state"): an update is acknowledged only once it is in effect
//! everywhere a dispatch is decided. Hook rules, transforms, context and filters are
//! evaluated by the gateway itself, so they take effect (and are acknowledged) at once. A
//! tool set is also used by the session host, which learns it from the debounced
//! `session.tools`: a `tools.update` with a `requestId` is applied at once but acknowledged
//! when that publish has gone to the host. Until then it is in flight, and another
//! `tools.update` for the same (provider, session) gets `RATE_LIMITED` (spec: "only one state
//! update per (provider, session, message type) can be in-flight"). Revisions are given
//! in acknowledgment order, so the provider sees them increase.

use super::all_binding::{ack_sessions, changes_template, targets, Absent};
use super::ProviderConn;
use crate::diagnostics::Limit;
use crate::error::Error;
use crate::providers::acks::TOOLS_UPDATE;
use crate::providers::validate::{self, Invalid};
use crate::state::binding::PendingAck;
use crate::state::tool_map::Claimant;
use crate::state::tool_schema::ToolList;
use crate::state::State;
use std::sync::Arc;
use tap_protocol::provider::{
    Ack, ContextUpdate, FilterSet, GatewayMessage, HooksUpdate, ToolDef, ToolsUpdate,
};
use tap_protocol::ErrorCode;

/// `tools.update`'s new list from the current one: with `remove` a delta (v2), without a
/// full replacement (Core Profile).
fn updated_list(current: &[Arc<ToolDef>], u: &ToolsUpdate) -> Vec<Arc<ToolDef>> {
    let sent = u.tools.iter().cloned().map(Arc::new);
    match &u.remove {
        // Kept tools keep their `Arc`: nothing of theirs is copied under the lock.
        Some(remove) => current
            .iter()
            .filter(|t| !remove.contains(&t.name) && !u.tools.iter().any(|n| n.name == t.name))
            .cloned()
            .chain(sent)
            .collect(),
        None => sent.collect(),
    }
}

impl ProviderConn {
    pub(super) fn on_tools_update(&mut self, u: ToolsUpdate) {
        // The sent schemas are compiled here, outside the lock; under it, each new list
        // only picks compiled schemas from these and the current ones.
        let sent = ToolList::build(u.tools.clone(), &[]);
        let result = self.with_entry(|state, id| -> Result<Vec<String>, Invalid> {
            let sent = sent?;
            let targets = targets(state, id, u.session_id.as_deref(), Absent::Every)?;
            let entry = &state.providers[id];
            if let Some(busy) = targets.iter().find(|sid| {
                entry
                    .updates
                    .get(*sid)
                    .is_some_and(|s| s.in_flight.contains(&TOOLS_UPDATE))
            }) {
                return Err(Error::new(
                    ErrorCode::RateLimited,
                    format!("A tools.update for session '{busy}' is still in flight; send the next one after its ack"),
                ));
            }
            let template = changes_template(entry, u.session_id.as_deref());
            // Everything is checked before anything changes: all sessions or none.
            let mut lists = Vec::with_capacity(targets.len());
            for sid in &targets {
                let current = entry.tools_in(sid);
                let list = updated_list(&current, &u);
                validate::tools(&list)?;
                validate::shared_tools(entry.instance.as_deref(), &list)?;
                state
                    .sessions
                    .get(sid)
                    .ok_or_else(|| crate::state::unknown_session(sid))?
                    .check_conflicts(&list, &Claimant::of_entry(entry), &state.providers)?;
                lists.push(Arc::new(ToolList::build(list, &[&sent, &current])?));
            }
            let new_template = match (&entry.all, template) {
                (Some(all), true) => {
                    let list = updated_list(&all.template.tools, &u);
                    validate::tools(&list)?;
                    validate::shared_tools(entry.instance.as_deref(), &list)?;
                    Some(Arc::new(ToolList::build(list, &[&sent, &all.template.tools])?))
                }
                _ => None,
            };
            let entry = state.providers.get_mut(id).expect("checked by with_entry");
            if let (Some(all), Some(list)) = (entry.all.as_mut(), new_template) {
                all.template.tools = list.clone();
                entry.tools = list;
            }
            for (sid, list) in targets.iter().zip(lists) {
                entry.set_tools_in(sid, list);
            }
            let State {
                sessions,
                providers,
                ..
            } = state;
            for sid in &targets {
                if let Some(s) = sessions.get_mut(sid) {
                    s.rebuild_tools(providers);
                }
            }
            let Some(request_id) = &u.request_id else {
                // Core Profile: no acknowledgment, so nothing is ever in flight; the update
                // still counts as a revision (decision 16).
                return Ok(ack_sessions(targets, template));
            };
            if targets.is_empty() {
                return Ok(ack_sessions(targets, template));
            }
            // Under the same lock as the rebuild, so the publish that carries this change
            // cannot slip in before the ack is waiting for it.
            for sid in &targets {
                if let Some(s) = sessions.get_mut(sid) {
                    s.pending_acks.push(PendingAck {
                        provider_id: id.to_string(),
                        request_id: request_id.clone(),
                    });
                }
                let p = providers.get_mut(id).expect("checked by with_entry");
                p.updates_in(sid).in_flight.push(TOOLS_UPDATE);
            }
            Ok(Vec::new())
        });
        self.answer_update(TOOLS_UPDATE, u.request_id, result);
    }

    /// `hooks.update`: `onPreToolUse` replaces the rule list, `transforms` changes the
    /// sections it names (`null` removes one); validated as in `hello`, and on error nothing
    /// changes. Paired providers' limits are checked by the caller.
    pub(super) fn on_hooks_update(&mut self, u: HooksUpdate) {
        // Transforms are validated here and applied with the rules, so either both parts
        // of one message take effect or neither does.
        if let Some(t) = &u.transforms {
            if let Err(Error { code, message, .. }) = crate::state::transforms::validate(t) {
                return self.error_req(code, message, Some("hooks.update"), u.request_id);
            }
        }
        // Compiled outside the state lock: 50 patterns may take a few milliseconds.
        let rules = match u
            .on_pre_tool_use
            .as_deref()
            .map(crate::patterns::rules::compile)
            .transpose()
        {
            Ok(rules) => rules,
            Err(Error { code, message, .. }) => {
                return self.error_req(code, message, Some("hooks.update"), u.request_id)
            }
        };
        let result = self.with_entry(|state, id| -> Result<Vec<String>, Invalid> {
            let targets = targets(state, id, u.session_id.as_deref(), Absent::Every)?;
            let entry = state.providers.get_mut(id).expect("checked by with_entry");
            let template = changes_template(entry, u.session_id.as_deref());
            if let Some(rules) = &rules {
                for sid in &targets {
                    entry.set_hooks_in(sid, rules.clone());
                }
            }
            if let (true, Some(all)) = (template, entry.all.as_mut()) {
                if let Some(rules) = &rules {
                    all.template.hooks = rules.clone();
                    entry.hooks = rules.clone();
                }
                if let Some(changes) = &u.transforms {
                    let t = all.template.transforms.get_or_insert_with(Default::default);
                    for (section, change) in changes {
                        t.insert(section.clone(), change.clone());
                    }
                }
            }
            if let Some(t) = &u.transforms {
                for sid in &targets {
                    state.transforms.update_transforms(id, sid, t);
                }
            }
            Ok(ack_sessions(targets, template))
        });
        self.answer_update("hooks.update", u.request_id, result);
    }

    /// `context.update` (external providers are refused before this): the provider's
    /// ambient context in its session(s); absent `context` clears it.
    pub(super) fn on_context_update(&mut self, u: ContextUpdate) {
        let result = self.with_entry(|state, id| -> Result<Vec<String>, Invalid> {
            let targets = targets(state, id, u.session_id.as_deref(), Absent::Every)?;
            let entry = state.providers.get_mut(id).expect("checked by with_entry");
            let template = changes_template(entry, u.session_id.as_deref());
            if let (true, Some(all)) = (template, entry.all.as_mut()) {
                all.template.context = u.context.clone();
            }
            for sid in &targets {
                state.transforms.set_context(id, sid, u.context.clone());
            }
            Ok(ack_sessions(targets, template))
        });
        self.answer_update("context.update", u.request_id, result);
    }

    /// `filter.set` on one of the provider's own streams, in its session(s).
    pub(super) fn on_filter_set(&mut self, f: FilterSet) {
        let resolved = self.with_entry(|state, id| {
            let targets = targets(state, id, f.session_id.as_deref(), Absent::Every)?;
            let entry = &state.providers[id];
            let template = changes_template(entry, f.session_id.as_deref());
            Ok::<_, Invalid>((
                id.to_string(),
                entry.name.clone().unwrap_or_default(),
                targets,
                template,
            ))
        });
        let result = resolved.map(|r| {
            let (id, name, targets, template) = r?;
            // The filter store has its own lock, taken without the state lock.
            self.set_filter(&id, &name, &targets, &f)?;
            if template {
                self.with_entry(|state, id| {
                    if let Some(all) = state.providers.get_mut(id).and_then(|e| e.all.as_mut()) {
                        let key = f.stream.split('@').next().unwrap_or_default().to_string();
                        if f.rules.is_empty() {
                            all.filters.remove(&key);
                        } else {
                            all.filters.insert(key, f.clone());
                        }
                    }
                });
            }
            Ok(ack_sessions(targets, template))
        });
        self.answer_update("filter.set", f.request_id, result);
    }

    /// Validates a `filter.set` from provider `provider_id` (named `name`) and applies it
    /// in each of `sessions` (resolved from its `sessionId`). Empty `rules` removes the
    /// stream's filter. The filter store has its own lock: call without the state lock.
    pub(super) fn set_filter(
        &self,
        provider_id: &str,
        name: &str,
        sessions: &[String],
        f: &FilterSet,
    ) -> Result<(), Invalid> {
        let (stream, filter) = crate::streams::filter::compile(name, f)?;
        for session in sessions {
            self.core
                .stream_controls
                .set_filter(provider_id, session, stream, filter.clone())?;
        }
        Ok(())
    }

    /// Answers a state update: per session an `ack` with that (provider, session)'s next
    /// revision when it applied (silence without a `requestId`, as the Core Profile has
    /// it), else `error` echoing the `requestId`. `None`: the connection's entry is gone,
    /// nothing to answer.
    pub(super) fn answer_update(
        &mut self,
        kind: &'static str,
        request_id: Option<String>,
        result: Option<Result<Vec<String>, Invalid>>,
    ) {
        match result {
            Some(Ok(sessions)) => {
                for session_id in sessions {
                    let Some(revision) = self.with_entry(|state, id| {
                        let u = state
                            .providers
                            .get_mut(id)
                            .expect("checked by with_entry")
                            .updates_in(&session_id);
                        u.revision += 1;
                        u.revision
                    }) else {
                        return;
                    };
                    if let Some(request_id) = request_id.clone() {
                        self.send(&GatewayMessage::Ack(Ack {
                            request_id,
                            session_id,
                            revision,
                        }));
                    }
                }
            }
            Some(Err(Error { code, message, .. })) => {
                if code == ErrorCode::PayloadTooLarge {
                    self.core.diagnostics.limit_hit(match kind {
                        "tools.update" => Limit::ToolCount,
                        _ => Limit::RuleCount,
                    });
                }
                self.error_req(code, message, Some(kind), request_id)
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str) -> ToolDef {
        serde_json::from_value(json!({"name": name})).unwrap()
    }

    fn names(l: &[Arc<ToolDef>]) -> Vec<&str> {
        l.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn remove_makes_a_delta_and_its_absence_a_replacement() {
        let current = [def("a"), def("b"), def("c")].map(Arc::new);
        let replace: ToolsUpdate =
            serde_json::from_value(json!({"tools": [{"name": "x"}]})).unwrap();
        assert_eq!(names(&updated_list(&current, &replace)), ["x"]);
        let delta: ToolsUpdate = serde_json::from_value(
            json!({"tools": [{"name": "b"}, {"name": "d"}], "remove": ["a"]}),
        )
        .unwrap();
        let list = updated_list(&current, &delta);
        assert_eq!(names(&list), ["c", "b", "d"]);
        assert!(
            Arc::ptr_eq(&list[0], &current[2]),
            "a kept tool is not copied"
        );
        assert!(
            !Arc::ptr_eq(&list[1], &current[1]),
            "a sent tool replaces the old one"
        );
    }
}
