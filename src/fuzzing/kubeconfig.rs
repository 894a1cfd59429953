//! Fuzz target of kubeconfig loading: the input is a kubeconfig file, read
//! and turned into a client configuration the way every subcommand does
//! (`--kubeconfig FILE`, then each of its contexts with `--context`).
//!
//! Loading never runs exec plugins (kube runs them when a client first
//! authenticates), but it reads the certificate and key files a kubeconfig
//! names, so fuzzing it reads local files; it writes nothing but its own
//! temporary copy of the input.

use std::sync::OnceLock;

use crate::kubeconfig::{Selection, context_names, load, read};

/// At most this many contexts of one input are loaded.
const MAX_CONTEXTS: usize = 4;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread tokio runtime")
    })
}

/// `kubeconfig`: the input is the kubeconfig's text.
pub fn kubeconfig(data: &[u8]) {
    // A file per process and thread: the replay test runs targets in
    // parallel.
    let path = std::env::temp_dir().join(format!(
        "kubectl-cozy-fuzz-{}-{:?}.kubeconfig",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&path, data).expect("write the fuzz input to a temporary file");
    let mut selection = Selection {
        kubeconfig: Some(path.clone()),
        ..Selection::default()
    };
    if read(&selection).is_ok() {
        let contexts = context_names(&selection);
        let _ = runtime().block_on(load(&selection));
        for context in contexts.into_iter().take(MAX_CONTEXTS) {
            selection.context = Some(context);
            let _ = runtime().block_on(load(&selection));
        }
    }
    let _ = std::fs::remove_file(&path);
}
