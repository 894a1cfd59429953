//! Fuzz target `helm_release`: see `kubectl_cozy::fuzzing::helm_release`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::helm_release(data));
