//! The terminal answers a session host was sent lately, kept so that a resume can send
//! again what a dropped socket lost.
//!
//! The outbox covers what never reached a socket. This covers the rest: an answer handed
//! to the old socket may sit unread in its queue or in the kernel's buffers when the
//! socket drops, and the gateway cannot tell. A resuming host lists the calls it still
//! waits on (`auth.pendingCalls`); each one not in flight and not in the outbox is
//! answered from here, or with `DISCONNECTED` when nothing is kept for it.

use std::collections::{HashMap, VecDeque};
use tap_protocol::host::HostEvent;
use tap_protocol::limits::{HOST_RECENT_ANSWERS, HOST_RECENT_ANSWER_BYTES};
use tokio_tungstenite::tungstenite::Message;

/// The `callId` a message ends for the host: a `tool.result`, or the `error` that refused
/// a `tool.invoke` (its `requestId` is the call's id).
pub(crate) fn answer_key(event: &HostEvent) -> Option<&str> {
    match event {
        HostEvent::ToolResult(r) => Some(&r.call_id),
        HostEvent::Error(e) if e.reply_to.as_deref() == Some("tool.invoke") => {
            e.request_id.as_deref()
        }
        _ => None,
    }
}

/// [`answer_key`] of a frame already serialized (the outbox and a closed socket's unsent
/// queue hold frames). Only read at a resume, so the parse costs nothing on the hot path.
pub(crate) fn frame_answer_key(frame: &Message) -> Option<String> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Head {
        #[serde(rename = "type")]
        kind: String,
        call_id: Option<String>,
        reply_to: Option<String>,
        request_id: Option<String>,
    }
    let Message::Text(text) = frame else {
        return None;
    };
    let head: Head = serde_json::from_str(text).ok()?;
    match head.kind.as_str() {
        "tool.result" => head.call_id,
        "error" if head.reply_to.as_deref() == Some("tool.invoke") => head.request_id,
        _ => None,
    }
}

/// The last [`HOST_RECENT_ANSWERS`] answers, at most [`HOST_RECENT_ANSWER_BYTES`], oldest
/// dropped first. Frames share their bytes with the copy that was sent.
#[derive(Default)]
pub(crate) struct RecentAnswers {
    by_call: HashMap<String, (u64, Message)>,
    order: VecDeque<(u64, String)>,
    next: u64,
    bytes: usize,
}

impl RecentAnswers {
    pub fn record(&mut self, call_id: &str, frame: &Message) {
        self.next += 1;
        self.bytes += frame.len();
        let old = self
            .by_call
            .insert(call_id.to_string(), (self.next, frame.clone()));
        if let Some((_, old)) = old {
            // A `callId` used again: the newer answer is the one a resume means.
            self.bytes -= old.len();
        }
        self.order.push_back((self.next, call_id.to_string()));
        // Oldest first. Entries superseded by a reuse stay in `order` until they reach its
        // front, so `order` has a bound of its own.
        while self.by_call.len() > HOST_RECENT_ANSWERS
            || self.bytes > HOST_RECENT_ANSWER_BYTES
            || self.order.len() > 2 * HOST_RECENT_ANSWERS
        {
            let Some((seq, id)) = self.order.pop_front() else {
                break;
            };
            if self.by_call.get(&id).is_some_and(|(s, _)| *s == seq) {
                let (_, frame) = self.by_call.remove(&id).expect("present");
                self.bytes -= frame.len();
            }
        }
    }

    pub fn get(&self, call_id: &str) -> Option<&Message> {
        self.by_call.get(call_id).map(|(_, m)| m)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_call.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tap_protocol::host::{HostError, HostToolResult};
    use tap_protocol::ErrorCode;

    fn result(id: &str, data: &str) -> Message {
        let event = HostEvent::ToolResult(HostToolResult {
            call_id: id.into(),
            data: Some(serde_json::json!(data)),
            error: None,
            error_code: None,
        });
        crate::socket::frame::frame(&event)
    }

    #[test]
    fn keeps_the_newest_answers_within_the_count() {
        let mut kept = RecentAnswers::default();
        for i in 0..HOST_RECENT_ANSWERS + 10 {
            kept.record(&format!("c{i}"), &result(&format!("c{i}"), "x"));
        }
        assert_eq!(kept.len(), HOST_RECENT_ANSWERS);
        assert!(kept.get("c9").is_none());
        assert!(kept.get("c10").is_some());
        assert!(kept.get(&format!("c{}", HOST_RECENT_ANSWERS + 9)).is_some());
    }

    #[test]
    fn keeps_the_newest_answers_within_the_bytes() {
        let mut kept = RecentAnswers::default();
        let big = "y".repeat(3 * 1024 * 1024);
        for i in 0..3 {
            kept.record(&format!("c{i}"), &result(&format!("c{i}"), &big));
        }
        // Three of 3 MiB do not fit in 8 MiB: the oldest went.
        assert!(kept.get("c0").is_none());
        assert!(kept.get("c1").is_some() && kept.get("c2").is_some());
        assert!(kept.bytes <= HOST_RECENT_ANSWER_BYTES);
    }

    #[test]
    fn a_reused_call_id_keeps_its_newest_answer_and_the_books_balance() {
        let mut kept = RecentAnswers::default();
        for round in 0..3 * HOST_RECENT_ANSWERS {
            kept.record("same", &result("same", &format!("{round}")));
        }
        assert_eq!(kept.len(), 1);
        assert!(kept.order.len() <= 2 * HOST_RECENT_ANSWERS);
        let last = format!("{}", 3 * HOST_RECENT_ANSWERS - 1);
        assert_eq!(kept.get("same"), Some(&result("same", &last)));
        assert_eq!(kept.bytes, result("same", &last).len());
    }

    #[test]
    fn answer_keys_are_found_in_events_and_in_frames() {
        let refused = HostEvent::Error(HostError {
            code: ErrorCode::InvalidJson,
            message: "no".into(),
            reply_to: Some("tool.invoke".into()),
            request_id: Some("c7".into()),
        });
        let other = HostEvent::Error(HostError {
            code: ErrorCode::InvalidJson,
            message: "no".into(),
            reply_to: Some("session.register".into()),
            request_id: Some("r1".into()),
        });
        assert_eq!(answer_key(&refused), Some("c7"));
        assert_eq!(answer_key(&other), None);
        let frame = crate::socket::frame::frame(&refused);
        assert_eq!(frame_answer_key(&frame).as_deref(), Some("c7"));
        assert_eq!(frame_answer_key(&result("c8", "z")).as_deref(), Some("c8"));
        assert_eq!(frame_answer_key(&crate::socket::frame::frame(&other)), None);
    }
}
