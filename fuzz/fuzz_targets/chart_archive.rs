//! Fuzz target `chart_archive`: see `kubectl_cozy::fuzzing::chart_archive`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::chart_archive(data));
