//! Fuzz target `kubeconfig`: see `kubectl_cozy::fuzzing::kubeconfig`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubectl_cozy::fuzzing::kubeconfig(data));
