//! `tap.config.json` bytes through the project-provider parser and the emitter filters.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tap_gateway::fuzzing::project_config(data);
});
