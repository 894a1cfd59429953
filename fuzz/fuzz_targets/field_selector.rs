//! Fuzz target `field_selector`: see `kubectl_cozy::fuzzing::field_selector`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::field_selector(data));
