//! `kubectl_complete-cozy`: kubectl (≥ 1.26) runs this executable to complete
//! `kubectl cozy …`. It prints one candidate per line and a final `:<directive>`.

fn main() -> std::process::ExitCode {
    kubectl_cozy::complete::main()
}
