//! A tool's `parameters` schema (first line) compiled as at `hello`, and a call's `args`
//! (the rest) checked against it as before dispatch.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(2, |b| *b == b'\n');
    let schema = parts.next().unwrap_or_default();
    let args = parts.next().unwrap_or(b"{}");
    tap_gateway::fuzzing::tool_schema(schema, args);
});
