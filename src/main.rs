//! Entry point of the `kubectl-cozy` binary. Everything lives in the library;
//! when this binary is invoked as `kubectl_complete-cozy` (a symlink made by
//! `kubectl cozy completion install`) it answers kubectl's plugin completion.

/// mimalloc instead of glibc's malloc: no per-allocation header and less
/// fragmentation for the watch cache's many small JSON nodes, and freed
/// memory goes back to the system (see the README's memory figures).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    kubectl_cozy::cli::main()
}
