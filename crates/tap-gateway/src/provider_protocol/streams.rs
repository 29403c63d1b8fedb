//! `stream.query`: a provider reads its own streams (internal trust: any provider's).

use super::all_binding::{targets, Absent};
use super::ProviderConn;
use crate::diagnostics::Limit;
use crate::error::Error;
use crate::state::provider_entry::Trust;
use tap_protocol::limits::MAX_STREAM_QUERY_LAST;
use tap_protocol::provider::{GatewayMessage, StreamHistory, StreamQuery};
use tap_protocol::ErrorCode;

impl ProviderConn {
    pub(super) fn on_stream_query(&self, q: StreamQuery) {
        let Some(resolved) = self.with_entry(|s, id| {
            let e = &s.providers[id];
            targets(s, id, q.session_id.as_deref(), Absent::Refuse)
                .map(|t| (t, e.name.clone().unwrap_or_default(), e.trust))
        }) else {
            return;
        };
        let (session, provider, trust) = match resolved {
            Ok((t, name, trust)) => (t.into_iter().next().unwrap_or_default(), name, trust),
            Err(Error { code, message, .. }) => {
                return self.error(code, message, Some("stream.query"))
            }
        };
        let last = q.last.unwrap_or(MAX_STREAM_QUERY_LAST);
        if last > MAX_STREAM_QUERY_LAST {
            self.core.diagnostics.limit_hit(Limit::StreamQueryLast);
            self.error(
                ErrorCode::PayloadTooLarge,
                format!("'last' may be at most {MAX_STREAM_QUERY_LAST}"),
                Some("stream.query"),
            );
            return;
        }
        let streams = &self.core.streams;
        let mut result = std::collections::BTreeMap::new();
        let keys: Vec<String> = match q.streams {
            Some(keys) => keys,
            None => streams
                .history(&session, None, 0)
                .into_keys()
                .filter(|k| k.ends_with(&format!("@{provider}")))
                .collect(),
        };
        for key in keys {
            let (stream, owner) = match key.split_once('@') {
                Some((s, p)) => (s.to_string(), p.to_string()),
                None => (key.clone(), provider.clone()),
            };
            // Cross-provider reads need internal trust (capability matrix).
            if owner != provider && trust != Trust::Internal {
                self.error(
                    ErrorCode::Unauthorized,
                    format!("Reading '{key}' needs internal trust: providers may read only their own streams"),
                    Some("stream.query"),
                );
                return;
            }
            let entries = streams
                .history(&session, Some(&format!("{stream}@{owner}")), last)
                .into_values()
                .next()
                .unwrap_or_default();
            result.insert(key, entries);
        }
        self.send(&GatewayMessage::StreamHistory(StreamHistory {
            query_id: q.query_id,
            streams: result,
        }));
    }
}
