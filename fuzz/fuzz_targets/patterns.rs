//! A user pattern (first line) through the hook-rule, stream-filter and emitter-filter
//! compilers, each matched against the rest of the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let (pattern, text) = s.split_once('\n').unwrap_or((s, ""));
    tap_gateway::fuzzing::pattern(pattern, text);
});
