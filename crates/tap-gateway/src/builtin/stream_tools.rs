//! `tap_list_streams`, `tap_post`, `tap_stream_history`, `tap_enable_injector`,
//! `tap_disable_injector`.
//!
//! The agent's own streams live beside its emitters' (`<name>@emitters`): a post is kept
//! there and in the ledger like an emitter's line, and the stream's injector decides
//! whether it is also shown (only `delivery: all` shows a post).

use super::{to_json, Answer, Args};
use crate::emitters::persist;
use crate::emitters::route::{self, StreamEvent, EMITTERS_PROVIDER};
use crate::error::Error;
use crate::limits::DEFAULT_STREAM_HISTORY;
use crate::state::emitters::injector::{DeliveryMode, Policy};
use crate::state::Core;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;
use tap_protocol::emitters::Lifespan;
use tap_protocol::ledger::EventOutcome;
use tap_protocol::limits::STREAM_RETENTION;
use tap_protocol::provider::PushLevel;
use tap_protocol::ErrorCode;

pub(super) fn list(core: &Core, session_id: &str) -> Answer {
    core.state().live_session(session_id)?;
    let mut streams: BTreeMap<(String, String), Json> = BTreeMap::new();
    for ((stream, provider), (events, newest)) in core.streams.summary(session_id) {
        let entry = json!({
            "name": stream, "provider": provider, "key": format!("{stream}@{provider}"),
            "events": events, "newestAt": newest.map(crate::time::rfc3339),
        });
        streams.insert((stream, provider), entry);
    }
    // Emitter streams are listed with their injector, even before their first line.
    for (stream, injector) in core.emitters.injectors(session_id) {
        let key = (stream.clone(), EMITTERS_PROVIDER.to_string());
        let entry = streams.entry(key).or_insert_with(|| {
            json!({"name": stream, "provider": EMITTERS_PROVIDER,
                   "key": format!("{stream}@{EMITTERS_PROVIDER}"), "events": 0, "newestAt": null})
        });
        entry["sessionInjector"] = serde_json::to_value(injector.policy()).unwrap_or_default();
    }
    Ok(json!({
        "sessionId": session_id,
        "streams": streams.into_values().collect::<Vec<_>>(),
    }))
}

type Json = serde_json::Value;

pub(super) async fn post(core: &Arc<Core>, session_id: &str, a: &Args<'_>) -> Answer {
    core.state().live_session(session_id)?;
    let stream = a.emitter_stream()?;
    let message = a.text(&["message"]).unwrap_or_default();
    let source = a.text(&["source"]).unwrap_or_else(|| "tool".into());
    let injector = core.emitters.injector(session_id, &stream);
    if let Some(d) = a.text(&["description"]) {
        injector.describe(d);
    }
    let level = match injector.deliver_as(EventOutcome::Keep) {
        EventOutcome::Surface => PushLevel::Surface,
        _ => PushLevel::Keep,
    };
    let at = SystemTime::now();
    let mut metadata = serde_json::Map::new();
    metadata.insert("source".into(), source.into());
    let event = StreamEvent {
        session_id,
        stream: &stream,
        text: message.clone(),
        level,
        metadata,
        at,
        trace_id: None,
    };
    let record = route::keep(core, event).map_err(|_| {
        Error::new(
            ErrorCode::RateLimited,
            format!(
                "Session '{session_id}' already has {} emitter streams; post to one of them",
                tap_protocol::limits::MAX_STREAMS_PER_PROVIDER
            ),
        )
    })?;
    // Waits while the ledger's queue is full: a posting agent is slowed, never dropped.
    core.ledger.write(record).await;
    let shown = level == PushLevel::Surface
        && route::deliver(core, session_id, &stream, level, &message, None, at);
    Ok(json!({
        "posted": true,
        "stream": stream,
        "key": format!("{stream}@{EMITTERS_PROVIDER}"),
        "shown": shown,
    }))
}

pub(super) fn history(core: &Core, session_id: &str, a: &Args<'_>) -> Answer {
    core.state().live_session(session_id)?;
    let last = a
        .uint(&["limit", "last"])
        .unwrap_or(DEFAULT_STREAM_HISTORY)
        .clamp(1, STREAM_RETENTION as u64) as usize;
    let select = a.stream();
    let mut streams = core.streams.history(session_id, select.as_deref(), last);
    // Emitter streams are named in normal form; "CI Tests" finds `ci-tests`.
    if streams.is_empty() {
        if let Some(raw) = select.as_deref().filter(|s| !s.contains('@')) {
            let normal = crate::state::emitters::spec::normalise(raw);
            streams = core.streams.history(session_id, Some(&normal), last);
        }
    }
    if let (Some(s), true) = (&select, streams.is_empty()) {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("Session '{session_id}' has no stream '{s}' (tap_list_streams lists them)"),
        ));
    }
    Ok(json!({ "sessionId": session_id, "streams": streams }))
}

pub(super) async fn set_injector(
    core: &Arc<Core>,
    session_id: &str,
    a: &Args<'_>,
    enabled: bool,
) -> Answer {
    core.state().live_session(session_id)?;
    let stream = a.emitter_stream()?;
    let injector = core.emitters.injector(session_id, &stream);
    let current = injector.policy();
    let delivery = match a.text(&["delivery"]) {
        Some(d) => DeliveryMode::parse(&d)?,
        None if enabled => DeliveryMode::Surface,
        None => current.delivery,
    };
    let policy = Policy {
        enabled,
        delivery,
        lifespan: a.lifespan(),
        ownership: a.ownership(),
        description: a.text(&["description"]).or(current.description),
    };
    injector.check_change(&stream, a.by(), a.force())?;
    // Written first: a file that cannot be written changes nothing.
    if policy.lifespan == Lifespan::Persistent {
        persist::put_stream(core, session_id, &stream, &policy)?;
    }
    injector.set(&stream, policy.clone(), a.by(), a.force())?;
    tracing::info!(session = %session_id, stream = %stream, enabled, delivery = delivery.as_str(), "session injector set");
    to_json(json!({ "stream": stream, "sessionInjector": policy }))
}
