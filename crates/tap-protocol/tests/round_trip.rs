//! Property: every message of every protocol survives encode → decode unchanged.
//!
//! Inputs are the example frames of each type (`fixtures`), mutated structurally: each
//! string, number and bool may be replaced by an arbitrary one of its kind (any Unicode,
//! any integer, finite floats of any magnitude), optional keys may go, and an unknown key
//! may be added (ignored by the spec's forward-compatibility rule). Whatever of that
//! decodes is a message: its encoding must decode to an equal message, whose encoding is
//! byte-for-byte the same.

mod fixtures;

use fixtures::{control_params, GATEWAY_MINIMAL, HOST_EVENT_MINIMAL, HOST_MINIMAL};
use fixtures::{PROVIDER_EXAMPLES, PROVIDER_MINIMAL};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::fmt::Debug;
use tap_protocol::control::{ClientFrame, ControlCall, ControlRequest};
use tap_protocol::host::{HostEvent, HostRequest};
use tap_protocol::provider::{GatewayMessage, ProviderMessage};

/// Cases per seed frame: ~80 seeds, so a few thousand cases in all (about a second).
const CASES: u32 = 48;

/// Keys whose value picks the variant: mutating them only tests "unknown type".
const TAGS: &[&str] = &["type", "method"];

fn mutate(v: Value) -> BoxedStrategy<Value> {
    match v {
        Value::String(s) => prop_oneof![
            2 => Just(Value::String(s)),
            1 => any::<String>().prop_map(Value::String),
            1 => "[a-z0-9._-]{0,12}".prop_map(Value::String),
        ]
        .boxed(),
        Value::Number(n) if n.is_u64() => prop_oneof![
            Just(Value::Number(n)),
            any::<u64>().prop_map(|x| json!(x)),
            (0u64..1000).prop_map(|x| json!(x)),
        ]
        .boxed(),
        Value::Number(n) if n.is_i64() => {
            prop_oneof![Just(Value::Number(n)), any::<i64>().prop_map(|x| json!(x))].boxed()
        }
        Value::Number(n) => prop_oneof![
            Just(Value::Number(n)),
            (prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO)
                .prop_map(|x| json!(x)),
        ]
        .boxed(),
        Value::Bool(_) => any::<bool>().prop_map(Value::Bool).boxed(),
        Value::Null => Just(Value::Null).boxed(),
        Value::Array(items) => items
            .into_iter()
            .map(mutate)
            .collect::<Vec<_>>()
            .prop_map(Value::Array)
            .boxed(),
        Value::Object(map) => {
            let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = map
                .into_iter()
                .map(|(k, v)| {
                    if TAGS.contains(&k.as_str()) {
                        Just(Some((k, v))).boxed()
                    } else {
                        let key = k.clone();
                        prop_oneof![
                            4 => mutate(v).prop_map(move |v| Some((key.clone(), v))),
                            1 => Just(None),
                        ]
                        .boxed()
                    }
                })
                .collect();
            (fields, any::<bool>(), any::<u32>())
                .prop_map(|(fields, extra, x)| {
                    let mut m: Map<String, Value> = fields.into_iter().flatten().collect();
                    if extra {
                        m.insert("futureField".into(), json!({"x": x}));
                    }
                    Value::Object(m)
                })
                .boxed()
        }
    }
}

/// Runs the round-trip property over mutations of each of `seeds`, decoding with `decode`.
fn round_trips<T, E: Debug>(seeds: &[Value], decode: impl Fn(&[u8]) -> Result<T, E>)
where
    T: Serialize + PartialEq + Debug,
{
    round_trips_as(seeds, decode, |m| serde_json::to_vec(m).unwrap());
}

/// [`round_trips`] for a message sent inside a wrapper (`encode`).
fn round_trips_as<T, E: Debug>(
    seeds: &[Value],
    decode: impl Fn(&[u8]) -> Result<T, E>,
    encode: impl Fn(&T) -> Vec<u8>,
) where
    T: PartialEq + Debug,
{
    for seed in seeds {
        // The seed itself is a valid message.
        let bytes = serde_json::to_vec(seed).unwrap();
        decode(&bytes).unwrap_or_else(|e| panic!("seed does not decode: {e:?}\n{seed}"));
        let mut runner = TestRunner::new(Config {
            cases: CASES,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&mutate(seed.clone()), |frame| {
                let bytes = serde_json::to_vec(&frame).unwrap();
                let Ok(first) = decode(&bytes) else {
                    return Ok(());
                };
                let encoded = encode(&first);
                let second = decode(&encoded).map_err(|e| {
                    TestCaseError::fail(format!(
                        "encoding of a decoded message does not decode: {e:?}\n{}",
                        String::from_utf8_lossy(&encoded)
                    ))
                })?;
                prop_assert_eq!(&second, &first);
                prop_assert_eq!(encode(&second), encoded);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}\nseed: {seed}"));
    }
}

fn parse(frames: &[&str]) -> Vec<Value> {
    frames
        .iter()
        .map(|f| serde_json::from_str(f).unwrap())
        .collect()
}

fn parse_named(frames: &[(&str, &str)]) -> Vec<Value> {
    frames
        .iter()
        .map(|(_, f)| serde_json::from_str(f).unwrap())
        .collect()
}

#[test]
fn provider_messages_round_trip() {
    let mut seeds = parse(PROVIDER_EXAMPLES);
    seeds.extend(parse_named(PROVIDER_MINIMAL));
    round_trips(&seeds, |b| {
        tap_protocol::decode::<ProviderMessage>(b, ProviderMessage::TYPES)
    });
}

#[test]
fn gateway_messages_round_trip() {
    round_trips(&parse_named(GATEWAY_MINIMAL), |b| {
        tap_protocol::decode::<GatewayMessage>(b, GatewayMessage::TYPES)
    });
}

#[test]
fn host_requests_round_trip() {
    round_trips(&parse_named(HOST_MINIMAL), |b| {
        tap_protocol::decode::<HostRequest>(b, HostRequest::TYPES)
    });
}

#[test]
fn host_events_round_trip() {
    round_trips(&parse_named(HOST_EVENT_MINIMAL), |b| {
        tap_protocol::decode::<HostEvent>(b, HostEvent::TYPES)
    });
}

#[test]
fn control_requests_round_trip() {
    let seeds: Vec<Value> = ControlCall::METHODS
        .iter()
        .map(|m| json!({"type": "request", "id": "x", "method": m, "params": control_params(m)}))
        .collect();
    round_trips_as(&seeds, ControlRequest::decode, |r| {
        serde_json::to_vec(&ClientFrame::Request(r.clone())).unwrap()
    });
}
