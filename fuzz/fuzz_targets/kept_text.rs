//! Fuzz target `kept_text`: see `kubectl_cozy::fuzzing::kept_text`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::kept_text(data));
