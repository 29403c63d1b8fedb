//! `decode` reads a frame that begins `{"type":"` without serde's buffering of internally
//! tagged enums. It must agree with the derived path (`decode_derived`) on every frame:
//! the same message, or the same error with the same words. Each example frame of every
//! protocol is written with its `type` first, then broken in the ways a peer breaks frames:
//! a second `type`, each field removed or of every other JSON kind, an unknown field, an
//! escaped tag, an unknown tag, trailing bytes.

mod fixtures;

use fixtures::PROVIDER_MINIMAL;
use fixtures::{GATEWAY_MINIMAL, HOST_EVENT_MINIMAL, HOST_MINIMAL, PROVIDER_EXAMPLES};
use serde_json::{Map, Value};
use std::fmt::Debug;
use tap_protocol::host::{HostEvent, HostRequest};
use tap_protocol::provider::{GatewayMessage, ProviderMessage};
use tap_protocol::{decode, decode_derived, Tagged};

/// `{"type":TAG,` then `fields` in their order, compact.
fn leading(tag: &str, fields: &[(String, Value)]) -> String {
    let mut out = format!("{{\"type\":{tag}");
    for (k, v) in fields {
        out.push(',');
        out.push_str(&serde_json::to_string(k).unwrap());
        out.push(':');
        out.push_str(&serde_json::to_string(v).unwrap());
    }
    out.push('}');
    out
}

/// Every variant of `example` that the fast path takes.
fn frames(example: &str) -> Vec<String> {
    let Value::Object(obj): Value = serde_json::from_str(example).unwrap() else {
        panic!("{example} is not an object")
    };
    let tag = serde_json::to_string(&obj["type"]).unwrap();
    let name = obj["type"].as_str().unwrap().to_string();
    let fields: Vec<(String, Value)> = obj
        .iter()
        .filter(|(k, _)| *k != "type")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let kinds = [
        Value::Null,
        Value::Bool(true),
        Value::from(5),
        Value::from(-1.5),
        Value::from("s"),
        Value::Array(vec![]),
        Value::Object(Map::new()),
    ];
    let mut out = vec![
        leading(&tag, &fields),
        leading(
            &tag,
            &[
                fields.clone(),
                vec![("type".into(), Value::from(name.clone()))],
            ]
            .concat(),
        ),
        leading(
            &tag,
            &[fields.clone(), vec![("type".into(), Value::from("push"))]].concat(),
        ),
        leading(
            &tag,
            &[fields.clone(), vec![("futureField".into(), Value::from(1))]].concat(),
        ),
        leading(
            &tag,
            &[
                vec![("type".into(), Value::from(name.clone()))],
                fields.clone(),
            ]
            .concat(),
        ),
        leading(&format!("\"{}\"", name.replace('.', "\\u002e")), &fields),
        leading("\"no.such.type\"", &fields),
        format!("{} x", leading(&tag, &fields)),
        format!("{}}}", leading(&tag, &fields)),
        leading(&tag, &fields).replacen('}', "", 1),
    ];
    for i in 0..fields.len() {
        let mut without = fields.clone();
        without.remove(i);
        out.push(leading(&tag, &without));
        for kind in &kinds {
            let mut other = fields.clone();
            other[i].1 = kind.clone();
            out.push(leading(&tag, &other));
        }
    }
    out
}

fn agree<T: Tagged + PartialEq + Debug>(examples: &[&str], types: &[&str]) -> (usize, usize) {
    let (mut ok, mut refused) = (0, 0);
    for example in examples {
        for frame in frames(example) {
            assert!(frame.starts_with(r#"{"type":""#), "{frame}");
            let fast = decode::<T>(frame.as_bytes(), types);
            let derived = decode_derived::<T>(frame.as_bytes(), types);
            assert_eq!(fast, derived, "{frame}");
            match fast {
                Ok(_) => ok += 1,
                Err(_) => refused += 1,
            }
        }
    }
    (ok, refused)
}

#[test]
fn the_fast_path_agrees_with_the_derived_one_on_every_broken_example() {
    let minimal =
        |m: &[(&'static str, &'static str)]| m.iter().map(|(_, f)| *f).collect::<Vec<_>>();
    let provider: Vec<&str> = PROVIDER_EXAMPLES
        .iter()
        .copied()
        .chain(minimal(PROVIDER_MINIMAL))
        .collect();
    let counts = [
        agree::<ProviderMessage>(&provider, ProviderMessage::TYPES),
        agree::<GatewayMessage>(&minimal(GATEWAY_MINIMAL), GatewayMessage::TYPES),
        agree::<HostRequest>(&minimal(HOST_MINIMAL), HostRequest::TYPES),
        agree::<HostEvent>(&minimal(HOST_EVENT_MINIMAL), HostEvent::TYPES),
    ];
    // Both outcomes are exercised for every protocol: frames that decode and frames that
    // are refused.
    for (ok, refused) in counts {
        assert!(ok > 10 && refused > 10, "{counts:?}");
    }
}

/// The duplicate is refused with serde's own words, not taken as the payload's unknown
/// field and ignored.
#[test]
fn a_second_type_is_refused_as_a_duplicate() {
    let frame = br#"{"type":"tool.result","id":"c1","data":1,"type":"push"}"#;
    let err = decode::<ProviderMessage>(frame, ProviderMessage::TYPES).unwrap_err();
    assert!(
        err.message().contains("duplicate field `type`"),
        "{}",
        err.message()
    );
}
