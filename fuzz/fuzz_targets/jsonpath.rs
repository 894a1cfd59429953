//! Fuzz target `jsonpath`: see `kubectl_cozy::fuzzing::jsonpath`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::jsonpath(data));
