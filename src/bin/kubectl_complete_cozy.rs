//! `kubectl_complete-cozy`: kubectl (≥ 1.26) runs this executable to complete
//! `kubectl cozy …`. It prints one candidate per line and a final `:<directive>`.
//! The command line recognises the completer by its name (`argv[0]`), so this
//! binary is the plugin's entry point under another name.

fn main() -> std::process::ExitCode {
    kubectl_cozy::cli::main()
}
