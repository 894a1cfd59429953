//! Fuzz target `label_selector`: see `kubectl_cozy::fuzzing::label_selector`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::label_selector(data));
