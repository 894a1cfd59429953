//! Fuzz target `request_info`: see `kubectl_cozy::fuzzing::request_info`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::request_info(data));
