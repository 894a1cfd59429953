//! Fuzz target `apply`: see `kubectl_cozy::fuzzing::apply`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::apply(data));
