//! Fuzz target `json_patch`: see `kubectl_cozy::fuzzing::json_patch`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::json_patch(data));
