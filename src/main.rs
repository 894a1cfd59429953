//! Entry point of the `kubectl-cozy` binary. Everything lives in the library;
//! when this binary is invoked as `kubectl_complete-cozy` (a symlink made by
//! `kubectl cozy completion install`) it answers kubectl's plugin completion.

fn main() -> std::process::ExitCode {
    kubectl_cozy::cli::main()
}
