//! Fuzz target `merge_patch`: see `kubectl_cozy::fuzzing::merge_patch`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::merge_patch(data));
