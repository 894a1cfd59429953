//! Fuzz target `negotiate`: see `kubectl_cozy::fuzzing::negotiate`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::negotiate(data));
