use super::tail::{Tail, TailEntry, TailReceiver};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tap_protocol::limits::{MAX_STREAMS_PER_PROVIDER, STREAM_RETENTION};
use tap_protocol::provider::{PushLevel, StreamEntry};
use tap_protocol::JsonObject;

/// A provider already has [`MAX_STREAMS_PER_PROVIDER`] streams in the session.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooManyStreams;

/// One event as kept in memory. The timestamp is formatted only when read, which keeps
/// accepting a push cheap.
pub(crate) struct Stored {
    pub at: SystemTime,
    pub event: String,
    pub level: PushLevel,
    /// Shared by the lines an emitter stores together.
    pub metadata: Option<Arc<JsonObject>>,
}

/// session → provider → stream → newest events (at most [`STREAM_RETENTION`]).
///
/// Nested maps rather than a (stream, provider) key so the hot path looks up by `&str`
/// without allocating.
#[derive(Default)]
pub(crate) struct StreamStore {
    // std Mutex, never held across an await: appends and reads are pure memory work.
    // New entries are published to the tail under it, so `follow` (subscribe + history
    // under it) misses none and repeats none.
    inner: Mutex<HashMap<String, SessionStreams>>,
    tail: Tail,
}

/// provider → stream → events.
type SessionStreams = HashMap<String, HashMap<String, VecDeque<Stored>>>;

impl StreamStore {
    /// Appends an event; refuses a new stream beyond [`MAX_STREAMS_PER_PROVIDER`] for
    /// this provider in this session.
    pub fn append(
        &self,
        session: &str,
        provider: &str,
        stream: &str,
        item: Stored,
    ) -> Result<(), TooManyStreams> {
        let mut inner = self.inner.lock().unwrap();
        with_queue(&mut inner, session, provider, stream, |events| {
            if events.len() == STREAM_RETENTION {
                events.pop_front();
            }
            events.push_back(item);
            self.tail.publish(|| TailEntry {
                session: session.to_string(),
                key: format!("{stream}@{provider}"),
                entry: entry_of(events.back().expect("just pushed")),
            });
        })
    }

    /// Appends consecutive events of one level and one metadata (an emitter's lines,
    /// `text` holding them joined by '\n') under one lock: followers get every one, the
    /// stream keeps the newest [`STREAM_RETENTION`], so only those are copied.
    #[allow(clippy::too_many_arguments)]
    pub fn append_lines(
        &self,
        session: &str,
        provider: &str,
        stream: &str,
        text: &str,
        level: PushLevel,
        metadata: &JsonObject,
        at: SystemTime,
    ) -> Result<(), TooManyStreams> {
        let mut inner = self.inner.lock().unwrap();
        with_queue(&mut inner, session, provider, stream, |events| {
            let metadata = Arc::new(metadata.clone());
            let stored = |line: &str| Stored {
                at,
                event: line.to_string(),
                level,
                metadata: Some(metadata.clone()),
            };
            for line in text.split('\n').take_while(|_| self.tail.has_followers()) {
                self.tail.publish(|| TailEntry {
                    session: session.to_string(),
                    key: format!("{stream}@{provider}"),
                    entry: entry_of(&stored(line)),
                });
            }
            let mut newest: Vec<&str> = text.rsplit('\n').take(STREAM_RETENTION).collect();
            newest.reverse();
            let room = STREAM_RETENTION - newest.len();
            while events.len() > room {
                events.pop_front();
            }
            events.extend(newest.into_iter().map(stored));
        })
    }

    /// The session's whole history (as [`StreamStore::history`] with no selection), and
    /// a receiver of every event stored after it (in any session: the follower filters).
    pub fn follow(&self, session: &str) -> (TailReceiver, BTreeMap<String, Vec<StreamEntry>>) {
        let inner = self.inner.lock().unwrap();
        let rx = self.tail.subscribe();
        (rx, history_of(&inner, session, None, STREAM_RETENTION))
    }

    /// Streams of a session as `stream@provider` → newest-first entries. `select` is
    /// `None` (all), `"stream"` (that stream of every provider) or `"stream@provider"`.
    pub fn history(
        &self,
        session: &str,
        select: Option<&str>,
        last: usize,
    ) -> BTreeMap<String, Vec<StreamEntry>> {
        let inner = self.inner.lock().unwrap();
        history_of(&inner, session, select, last)
    }

    /// Each stream of a session as `(stream, provider)` → how many events it holds and
    /// when the newest came.
    pub fn summary(
        &self,
        session: &str,
    ) -> BTreeMap<(String, String), (usize, Option<SystemTime>)> {
        let inner = self.inner.lock().unwrap();
        let mut out = BTreeMap::new();
        for (provider, streams) in inner.get(session).into_iter().flatten() {
            for (stream, events) in streams {
                let newest = events.back().map(|e| e.at);
                out.insert((stream.clone(), provider.clone()), (events.len(), newest));
            }
        }
        out
    }

    pub fn drop_session(&self, session: &str) {
        self.inner.lock().unwrap().remove(session);
    }
}

/// Runs `f` on the events of one stream, made on first use; refuses a new stream beyond
/// [`MAX_STREAMS_PER_PROVIDER`] for the provider in the session. A closure rather than a
/// returned reference: that lets each map be looked up once by `&str` (the push path),
/// its key allocated only for a new session, provider or stream.
fn with_queue<R>(
    inner: &mut HashMap<String, SessionStreams>,
    session: &str,
    provider: &str,
    stream: &str,
    f: impl FnOnce(&mut VecDeque<Stored>) -> R,
) -> Result<R, TooManyStreams> {
    let by_provider = match inner.get_mut(session) {
        Some(m) => m,
        None => inner.entry(session.to_string()).or_default(),
    };
    let by_stream = match by_provider.get_mut(provider) {
        Some(m) => m,
        None => by_provider.entry(provider.to_string()).or_default(),
    };
    let count = by_stream.len();
    let events = match by_stream.get_mut(stream) {
        Some(q) => q,
        None if count >= MAX_STREAMS_PER_PROVIDER => return Err(TooManyStreams),
        None => by_stream
            .entry(stream.to_string())
            .or_insert_with(|| VecDeque::with_capacity(16)),
    };
    Ok(f(events))
}

fn history_of(
    inner: &HashMap<String, SessionStreams>,
    session: &str,
    select: Option<&str>,
    last: usize,
) -> BTreeMap<String, Vec<StreamEntry>> {
    let (want_stream, want_provider) = match select {
        None => (None, None),
        Some(s) => match s.split_once('@') {
            Some((st, p)) => (Some(st), Some(p)),
            None => (Some(s), None),
        },
    };
    let mut out = BTreeMap::new();
    let Some(by_provider) = inner.get(session) else {
        return out;
    };
    for (provider, streams) in by_provider {
        if want_provider.is_some_and(|p| p != provider) {
            continue;
        }
        for (stream, events) in streams {
            if want_stream.is_some_and(|s| s != stream) {
                continue;
            }
            let entries = events.iter().rev().take(last).map(entry_of).collect();
            out.insert(format!("{stream}@{provider}"), entries);
        }
    }
    out
}

fn entry_of(e: &Stored) -> StreamEntry {
    StreamEntry {
        ts: crate::time::rfc3339(e.at),
        event: e.event.clone(),
        level: Some(e.level),
        metadata: e.metadata.as_deref().cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(event: &str) -> Stored {
        Stored {
            at: SystemTime::now(),
            event: event.into(),
            level: PushLevel::Keep,
            metadata: None,
        }
    }

    #[test]
    fn keeps_the_newest_200_newest_first() {
        let store = StreamStore::default();
        for i in 0..250 {
            store.append("s", "p", "st", item(&i.to_string())).unwrap();
        }
        let h = store.history("s", None, usize::MAX);
        let events = &h["st@p"];
        assert_eq!(events.len(), STREAM_RETENTION);
        assert_eq!(events[0].event, "249");
        assert_eq!(events[199].event, "50");
    }

    #[test]
    fn refuses_a_21st_stream_per_provider_and_session() {
        let store = StreamStore::default();
        for i in 0..MAX_STREAMS_PER_PROVIDER {
            store
                .append("s", "p", &format!("st{i}"), item("x"))
                .unwrap();
        }
        assert_eq!(
            store.append("s", "p", "one-more", item("x")),
            Err(TooManyStreams)
        );
        // existing streams, other providers and other sessions are unaffected
        store.append("s", "p", "st0", item("y")).unwrap();
        store.append("s", "q", "one-more", item("x")).unwrap();
        store.append("t", "p", "one-more", item("x")).unwrap();
    }

    #[test]
    fn lines_appended_together_keep_the_newest_200_and_reach_every_follower() {
        let store = StreamStore::default();
        store.append("s", "p", "st", item("before")).unwrap();
        let (mut rx, _) = store.follow("s");
        let lines: Vec<String> = (0..250).map(|i| i.to_string()).collect();
        let meta = JsonObject::from_iter([("run".to_string(), 1.into())]);
        let at = SystemTime::now();
        store
            .append_lines(
                "s",
                "p",
                "st",
                &lines[..3].join("\n"),
                PushLevel::Keep,
                &meta,
                at,
            )
            .unwrap();
        let h = store.history("s", None, usize::MAX);
        let got: Vec<_> = h["st@p"].iter().map(|e| e.event.as_str()).collect();
        assert_eq!(got, ["2", "1", "0", "before"]);
        store
            .append_lines(
                "s",
                "p",
                "st",
                &lines.join("\n"),
                PushLevel::Keep,
                &meta,
                at,
            )
            .unwrap();
        let h = store.history("s", None, usize::MAX);
        let events = &h["st@p"];
        assert_eq!(events.len(), STREAM_RETENTION);
        assert_eq!(events[0].event, "249");
        assert_eq!(events[199].event, "50");
        assert_eq!(events[0].metadata.as_ref(), Some(&meta));
        let mut followed = 0;
        while rx.rx.try_recv().is_ok() {
            followed += 1;
        }
        assert_eq!(followed, 253, "every line reaches a follower");
    }

    #[test]
    fn selects_by_stream_and_provider() {
        let store = StreamStore::default();
        store.append("s", "a", "x", item("1")).unwrap();
        store.append("s", "b", "x", item("2")).unwrap();
        store.append("s", "b", "y", item("3")).unwrap();
        assert_eq!(store.history("s", Some("x"), 10).len(), 2);
        assert_eq!(store.history("s", Some("x@b"), 10).len(), 1);
        assert_eq!(store.history("s", Some("y@a"), 10).len(), 0);
        assert_eq!(store.history("other", None, 10).len(), 0);
    }
}
