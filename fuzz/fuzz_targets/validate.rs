//! Fuzz target `validate`: see `kubectl_cozy::fuzzing::validate`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::validate(data));
