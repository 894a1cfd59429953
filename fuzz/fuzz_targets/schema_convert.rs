//! Fuzz target `schema_convert`: see `kubectl_cozy::fuzzing::schema_convert`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::schema_convert(data));
