//! A trace as a text waterfall, for `tap traces show`: each span under its parent (children
//! by start time), its duration, a bar placed on the trace's time line, its status, and
//! beneath it the error, the attributes its parent does not already show, and its events.
//!
//! ```text
//! push        1.20ms  ████████████████████████████████████████  ok
//!               session.id=s-1 provider.name=prov stream=ci level=surface
//!   delivery   300µs  ░░░░░░░░░░██████████░░░░░░░░░░░░░░░░░░░░  ok
//! ```

use crate::durations::format_us;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use tap_protocol::ledger::{Span, SpanStatus, Trace};
use tap_protocol::{Json, JsonObject};

/// Columns of the bar by default.
pub const BAR_WIDTH: usize = 40;

/// Spaces per level of nesting.
const INDENT: usize = 2;

/// One span placed in the tree.
struct Row<'a> {
    span: &'a Span,
    depth: usize,
    /// The attributes of its parent, so repeats can be left out.
    parent_attributes: Option<&'a JsonObject>,
}

/// The waterfall of `trace`, `bar_width` columns for the bars; ends with a newline.
pub fn render(trace: &Trace, bar_width: usize) -> String {
    let bar_width = bar_width.max(1);
    let mut out = String::new();
    let Some(t0) = trace.spans.iter().map(|s| s.start_us).min() else {
        let _ = writeln!(out, "Trace {}: no spans", trace.trace_id);
        return out;
    };
    let end = trace
        .spans
        .iter()
        .map(|s| s.start_us.saturating_add(s.duration_us))
        .max()
        .unwrap_or(t0);
    let total = (end - t0).max(1);
    let rows = tree(&trace.spans);
    let errors = trace
        .spans
        .iter()
        .filter(|s| s.status == SpanStatus::Error)
        .count();
    let _ = writeln!(
        out,
        "Trace {}  {}  {} span{}{}  started {}",
        trace.trace_id,
        format_us(end - t0),
        trace.spans.len(),
        if trace.spans.len() == 1 { "" } else { "s" },
        match errors {
            0 => String::new(),
            n => format!(", {n} failed"),
        },
        crate::durations::time_us(t0),
    );
    let name_w = rows
        .iter()
        .map(|r| r.depth * INDENT + r.span.name.chars().count())
        .max()
        .unwrap_or(0);
    let dur_w = rows
        .iter()
        .map(|r| format_us(r.span.duration_us).chars().count())
        .max()
        .unwrap_or(0);
    for row in &rows {
        let s = row.span;
        let indent = " ".repeat(row.depth * INDENT);
        let name = format!("{indent}{}", s.name);
        let status = match s.status {
            SpanStatus::Ok => "ok".to_string(),
            SpanStatus::Error => match &s.error_code {
                Some(code) => format!("✗ ERROR {code}"),
                None => "✗ ERROR".to_string(),
            },
        };
        let remote = if s.remote_parent {
            "  (parent in the caller)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{name:<name_w$}  {:>dur_w$}  {}  {status}{remote}",
            format_us(s.duration_us),
            bar(s.start_us - t0, s.duration_us, total, bar_width),
        );
        // Details line up under the span's name, one level in.
        let detail = " ".repeat(row.depth * INDENT + INDENT);
        if let Some(message) = &s.message {
            let label = if s.status == SpanStatus::Error {
                "error: "
            } else {
                ""
            };
            let _ = writeln!(out, "{detail}{label}{message}");
        }
        let attrs = attributes(&s.attributes, row.parent_attributes);
        if !attrs.is_empty() {
            let _ = writeln!(out, "{detail}{attrs}");
        }
        for e in &s.events {
            let at = format_us(e.at_us.saturating_sub(s.start_us));
            let mut line = format!("{detail}· +{at} {}", e.name);
            let message = e.attributes.get("message").and_then(Json::as_str);
            if let Some(m) = message {
                let _ = write!(line, ": {m}");
            }
            let rest: JsonObject = e
                .attributes
                .iter()
                .filter(|(k, _)| message.is_none() || k.as_str() != "message")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let rest = attributes(&rest, None);
            if !rest.is_empty() {
                let _ = write!(line, "  {rest}");
            }
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// The spans depth first: roots (no parent, or a parent not stored here) by start, each
/// followed by its children by start. A span caught in a parent cycle still appears, at
/// the top level, after the others.
fn tree(spans: &[Span]) -> Vec<Row<'_>> {
    let ids: HashSet<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    let mut children: HashMap<&str, Vec<&Span>> = HashMap::new();
    let mut roots = Vec::new();
    for s in spans {
        match s.parent_span_id.as_deref() {
            Some(p) if ids.contains(p) && p != s.span_id => children.entry(p).or_default().push(s),
            _ => roots.push(s),
        }
    }
    let by_start = |a: &&Span, b: &&Span| a.start_us.cmp(&b.start_us);
    roots.sort_by(by_start);
    for list in children.values_mut() {
        list.sort_by(by_start);
    }
    let mut rows = Vec::with_capacity(spans.len());
    let mut seen = HashSet::new();
    let mut stack: Vec<(&Span, usize, Option<&JsonObject>)> =
        roots.iter().rev().map(|s| (*s, 0, None)).collect();
    loop {
        while let Some((span, depth, parent_attributes)) = stack.pop() {
            if !seen.insert(span.span_id.as_str()) {
                continue;
            }
            rows.push(Row {
                span,
                depth,
                parent_attributes,
            });
            if let Some(kids) = children.get(span.span_id.as_str()) {
                for k in kids.iter().rev() {
                    stack.push((k, depth + 1, Some(&span.attributes)));
                }
            }
        }
        match spans.iter().find(|s| !seen.contains(s.span_id.as_str())) {
            Some(left) => stack.push((left, 0, None)),
            None => break,
        }
    }
    rows
}

/// `█` over the part of the trace's time line the span covers, `░` elsewhere; at least one
/// `█`, so an instant still shows where it happened.
fn bar(offset_us: u64, duration_us: u64, total_us: u64, width: usize) -> String {
    let scale = |us: u64| (us as u128 * width as u128 / total_us as u128) as usize;
    let start = scale(offset_us).min(width - 1);
    let end = scale(offset_us.saturating_add(duration_us))
        .max(start + 1)
        .min(width);
    let mut bar = String::with_capacity(width * 3);
    for i in 0..width {
        bar.push(if (start..end).contains(&i) {
            '█'
        } else {
            '░'
        });
    }
    bar
}

/// `key=value …`, strings unquoted, leaving out what the parent shows with the same value.
fn attributes(attrs: &JsonObject, parent: Option<&JsonObject>) -> String {
    attrs
        .iter()
        .filter(|(k, v)| parent.and_then(|p| p.get(*k)) != Some(*v))
        .map(|(k, v)| match v {
            Json::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tap_protocol::ledger::SpanEvent;

    fn span(id: &str, parent: Option<&str>, name: &str, start: u64, dur: u64) -> Span {
        Span {
            trace_id: "t".repeat(32),
            span_id: id.into(),
            parent_span_id: parent.map(str::to_string),
            remote_parent: false,
            name: name.into(),
            start_us: start,
            duration_us: dur,
            status: SpanStatus::Ok,
            error_code: None,
            message: None,
            attributes: JsonObject::new(),
            events: vec![],
        }
    }

    fn obj(v: serde_json::Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    fn trace(spans: Vec<Span>) -> Trace {
        Trace {
            trace_id: "t".repeat(32),
            spans,
        }
    }

    /// The span rows: lines that hold a bar.
    fn rows(out: &str) -> Vec<&str> {
        out.lines().filter(|l| l.contains('█')).collect()
    }

    #[test]
    fn children_are_indented_under_their_parent_in_start_order() {
        // Stored out of order: the tree, not the input, decides.
        let t = trace(vec![
            span("c2", Some("root"), "second", 500, 100),
            span("root", None, "tool.call", 0, 1000),
            span("g1", Some("c1"), "grandchild", 150, 50),
            span("c1", Some("root"), "first", 100, 200),
        ]);
        let out = render(&t, 10);
        let names: Vec<String> = rows(&out)
            .iter()
            .map(|l| {
                let name = l.trim_start().split("  ").next().unwrap();
                format!("{}{name}", " ".repeat(l.len() - l.trim_start().len()))
            })
            .collect();
        assert_eq!(
            names,
            ["tool.call", "  first", "    grandchild", "  second"],
            "{out}"
        );
    }

    #[test]
    fn bars_are_placed_on_the_traces_time_line() {
        let t = trace(vec![
            span("root", None, "root", 1_000, 1_000),
            span("late", Some("root"), "late", 1_500, 250),
            span("blip", Some("root"), "blip", 1_000, 0),
        ]);
        let out = render(&t, 8);
        let bars: Vec<&str> = rows(&out)
            .iter()
            .map(|l| l.split_whitespace().nth(2).unwrap())
            .collect();
        assert_eq!(bars, ["████████", "█░░░░░░░", "░░░░██░░"], "{out}");
    }

    #[test]
    fn a_trace_of_one_instant_still_draws() {
        let out = render(&trace(vec![span("r", None, "push", 7, 0)]), 4);
        assert!(out.contains("push  0µs  █░░░  ok"), "{out}");
        assert!(out.starts_with(&format!("Trace {}  0µs  1 span  started", "t".repeat(32))));
    }

    #[test]
    fn errors_are_marked_with_their_code_and_message() {
        let mut failed = span("d", Some("r"), "delivery", 10, 5);
        failed.status = SpanStatus::Error;
        failed.error_code = Some("NO_HOST".into());
        failed.message = Some("the session has no host connected".into());
        let out = render(&trace(vec![span("r", None, "push", 0, 20), failed]), 4);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].ends_with(", 1 failed  started 1970-01-01T00:00:00.000Z"));
        assert!(lines[2].ends_with("✗ ERROR NO_HOST"), "{out}");
        assert_eq!(
            lines[3], "    error: the session has no host connected",
            "{out}"
        );
    }

    #[test]
    fn attributes_show_once_and_events_are_sub_lines() {
        let mut root = span("r", None, "tool.call", 0, 3_000);
        root.attributes = obj(json!({"session.id": "s-1", "tool.name": "build"}));
        let mut child = span("c", Some("r"), "provider.call", 500, 2_000);
        child.attributes = obj(json!({"session.id": "s-1", "attempt": 2}));
        child.events = vec![
            SpanEvent {
                name: "progress".into(),
                at_us: 1_500,
                attributes: obj(json!({"message": "50% done", "step": 3})),
            },
            SpanEvent {
                name: "retry".into(),
                at_us: 2_000,
                attributes: JsonObject::new(),
            },
        ];
        let out = render(&trace(vec![root, child]), 4);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[2], "  session.id=s-1 tool.name=build", "{out}");
        assert_eq!(
            lines[4], "    attempt=2",
            "the parent's session.id is not repeated: {out}"
        );
        assert_eq!(
            lines[5], "    · +1.00ms progress: 50% done  step=3",
            "{out}"
        );
        assert_eq!(lines[6], "    · +1.50ms retry", "{out}");
    }

    #[test]
    fn spans_whose_parent_is_elsewhere_are_top_level_and_cycles_do_not_hide_spans() {
        let mut remote = span("r", Some("host-span"), "tool.call", 0, 10);
        remote.remote_parent = true;
        let t = trace(vec![
            remote,
            span("a", Some("b"), "a", 2, 1),
            span("b", Some("a"), "b", 3, 1),
        ]);
        let out = render(&t, 4);
        let rows = rows(&out);
        assert_eq!(rows.len(), 3, "{out}");
        assert!(rows[0].ends_with("ok  (parent in the caller)"), "{out}");
    }

    #[test]
    fn an_empty_trace_says_so() {
        assert_eq!(
            render(&trace(vec![]), 4),
            format!("Trace {}: no spans\n", "t".repeat(32))
        );
    }
}
