//! Finished spans as OTLP's protobuf messages: one `ExportTraceServiceRequest` per batch,
//! one resource (`service.name = tap-gateway`) and one instrumentation scope (`tap-gateway`).

use crate::ledger::record::{Attr, SpanEventRow, SpanRow};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{
    span, status, ResourceSpans, ScopeSpans, Span, SpanFlags, Status,
};
use std::time::SystemTime;
use tap_protocol::ledger::SpanStatus;

/// The `service.name` resource attribute and the instrumentation scope's name.
pub(crate) const SERVICE_NAME: &str = "tap-gateway";

/// One export request holding `rows`.
pub(crate) fn request(rows: &[SpanRow]) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![
                    kv("service.name", Attr::Str(SERVICE_NAME.into())),
                    kv(
                        "service.version",
                        Attr::Str(env!("CARGO_PKG_VERSION").into()),
                    ),
                ],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: SERVICE_NAME.into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                spans: rows.iter().map(span).collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

/// One span. Ids are big-endian bytes, the same digits the ledger and `traceparent` show in
/// hex, so a trace id found in the panel finds the same trace in Jaeger.
pub(crate) fn span(row: &SpanRow) -> Span {
    let mut attributes = Vec::with_capacity(row.attributes.len() + 3);
    // The indexed attributes under OpenTelemetry's semantic-convention names.
    for (key, value) in [
        ("session.id", &row.session_id),
        ("provider.name", &row.provider),
        ("tool.name", &row.tool),
    ] {
        if let Some(v) = value {
            attributes.push(kv(key, Attr::Str(v.clone())));
        }
    }
    if let Some(code) = &row.error_code {
        attributes.push(kv("error.type", Attr::Str(code.clone())));
    }
    attributes.extend(row.attributes.iter().map(|(k, v)| kv(k, v.clone())));
    let end = row.start + row.duration;
    // The W3C sampled flag, and whether the parent is in another process (OTLP's
    // "context has is_remote" bits), so a backend can tell a host's span from ours.
    let mut flags = SpanFlags::ContextHasIsRemoteMask as u32 | 0x01;
    if row.remote_parent {
        flags |= SpanFlags::ContextIsRemoteMask as u32;
    }
    Span {
        trace_id: row.trace_id.to_be_bytes().to_vec(),
        span_id: row.span_id.to_be_bytes().to_vec(),
        trace_state: String::new(),
        parent_span_id: row
            .parent_id
            .map(|p| p.to_be_bytes().to_vec())
            .unwrap_or_default(),
        flags,
        name: row.name.into(),
        // Every span is work inside the gateway; which side of a wire it is on is not
        // something the rows record.
        kind: span::SpanKind::Internal as i32,
        start_time_unix_nano: unix_nanos(row.start),
        end_time_unix_nano: unix_nanos(end),
        attributes,
        dropped_attributes_count: 0,
        events: row.events.iter().map(event).collect(),
        dropped_events_count: 0,
        links: Vec::new(),
        dropped_links_count: 0,
        status: Some(match row.status {
            SpanStatus::Ok => Status {
                code: status::StatusCode::Ok as i32,
                message: String::new(),
            },
            SpanStatus::Error => Status {
                code: status::StatusCode::Error as i32,
                message: match (&row.error_code, &row.message) {
                    (Some(c), Some(m)) => format!("{c}: {m}"),
                    (Some(c), None) => c.clone(),
                    (None, Some(m)) => m.clone(),
                    (None, None) => String::new(),
                },
            },
        }),
    }
}

fn event(e: &SpanEventRow) -> span::Event {
    span::Event {
        time_unix_nano: unix_nanos(e.at),
        name: e.name.into(),
        attributes: e.attributes.iter().map(|(k, v)| kv(k, v.clone())).collect(),
        dropped_attributes_count: 0,
    }
}

fn kv(key: &str, value: Attr) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue {
            value: Some(match value {
                Attr::Str(s) => any_value::Value::StringValue(s),
                Attr::Int(n) => any_value::Value::IntValue(n),
                Attr::Bool(b) => any_value::Value::BoolValue(b),
            }),
        }),
        ..Default::default()
    }
}

/// Nanoseconds since the Unix epoch (0 for a time before it).
fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use std::time::Duration;

    fn row() -> SpanRow {
        SpanRow {
            trace_id: 0x4bf92f3577b34da6a3ce929d0e0e4736,
            span_id: 0x00f067aa0ba902b7,
            parent_id: Some(0x1122334455667788),
            remote_parent: false,
            name: "delivery",
            start: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            duration: Duration::from_millis(1500),
            status: SpanStatus::Ok,
            error_code: None,
            message: None,
            session_id: Some("s-1".into()),
            provider: Some("ci".into()),
            tool: None,
            attributes: vec![("level", "surface".into()), ("n", Attr::Int(3))],
            events: vec![SpanEventRow {
                name: "retry",
                at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_001),
                attributes: vec![("ok", Attr::Bool(true))],
            }],
        }
    }

    fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
        attrs
            .iter()
            .find(|a| a.key == key)
            .and_then(|a| a.value.as_ref()?.value.as_ref())
    }

    #[test]
    fn ids_are_big_endian_bytes_of_the_hex_the_ledger_shows() {
        let s = span(&row());
        assert_eq!(
            s.trace_id,
            [
                0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e,
                0x47, 0x36
            ]
        );
        assert_eq!(s.span_id, [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
        assert_eq!(
            s.parent_span_id,
            [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
        );
        let root = span(&SpanRow {
            parent_id: None,
            ..row()
        });
        assert!(root.parent_span_id.is_empty(), "a root has no parent bytes");
    }

    #[test]
    fn times_names_attributes_and_events_map_one_to_one() {
        let s = span(&row());
        assert_eq!(s.name, "delivery");
        assert_eq!(s.kind, span::SpanKind::Internal as i32);
        assert_eq!(s.start_time_unix_nano, 1_700_000_000_000_000_000);
        assert_eq!(s.end_time_unix_nano, 1_700_000_001_500_000_000);
        assert_eq!(
            attr(&s.attributes, "session.id"),
            Some(&any_value::Value::StringValue("s-1".into()))
        );
        assert_eq!(
            attr(&s.attributes, "provider.name"),
            Some(&any_value::Value::StringValue("ci".into()))
        );
        assert_eq!(attr(&s.attributes, "tool.name"), None, "absent, not empty");
        assert_eq!(
            attr(&s.attributes, "level"),
            Some(&any_value::Value::StringValue("surface".into()))
        );
        assert_eq!(
            attr(&s.attributes, "n"),
            Some(&any_value::Value::IntValue(3))
        );
        assert_eq!(s.events.len(), 1);
        assert_eq!(s.events[0].name, "retry");
        assert_eq!(s.events[0].time_unix_nano, 1_700_000_001_000_000_000);
        assert_eq!(
            attr(&s.events[0].attributes, "ok"),
            Some(&any_value::Value::BoolValue(true))
        );
        let status = s.status.unwrap();
        assert_eq!(status.code, status::StatusCode::Ok as i32);
        assert_eq!(s.flags & 0x01, 0x01, "sampled");
        assert_eq!(s.flags & SpanFlags::ContextIsRemoteMask as u32, 0);
    }

    #[test]
    fn a_failed_span_has_an_error_status_with_code_and_message() {
        let s = span(&SpanRow {
            status: SpanStatus::Error,
            error_code: Some("NO_HOST".into()),
            message: Some("the session has no host connected".into()),
            remote_parent: true,
            ..row()
        });
        let status = s.status.unwrap();
        assert_eq!(status.code, status::StatusCode::Error as i32);
        assert_eq!(status.message, "NO_HOST: the session has no host connected");
        assert_eq!(
            attr(&s.attributes, "error.type"),
            Some(&any_value::Value::StringValue("NO_HOST".into()))
        );
        assert_ne!(s.flags & SpanFlags::ContextIsRemoteMask as u32, 0);
    }

    #[test]
    fn a_request_round_trips_through_protobuf_with_resource_and_scope() {
        let req = request(&[row(), row()]);
        let back = ExportTraceServiceRequest::decode(req.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back, req);
        let rs = &back.resource_spans[0];
        assert_eq!(
            attr(&rs.resource.as_ref().unwrap().attributes, "service.name"),
            Some(&any_value::Value::StringValue("tap-gateway".into()))
        );
        assert_eq!(
            rs.scope_spans[0].scope.as_ref().unwrap().name,
            "tap-gateway"
        );
        assert_eq!(rs.scope_spans[0].spans.len(), 2);
    }
}
