//! Fuzz target of kubeconfig loading: the input is a kubeconfig file, read
//! and turned into a client configuration the way every subcommand does
//! (`--kubeconfig FILE`, then each of its contexts with `--context`).
//!
//! The same text is then what standalone's `--write-kubeconfig` merges its
//! context into, and what it restores the previous current context of:
//! refused or merged, never a panic; a merged file parses back with our
//! context current, and restoring makes the one before current again.
//!
//! Loading never runs exec plugins (kube runs them when a client first
//! authenticates), but it reads the certificate and key files a kubeconfig
//! names, so fuzzing it reads local files; it writes nothing but its own
//! temporary copy of the input.

use std::sync::OnceLock;

use crate::kubeconfig::{Selection, context_names, load, read};
use crate::register::kubeconfig_file::{self, CONTEXT, Entries};

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
    if let Ok(text) = std::str::from_utf8(data) {
        merge_and_restore(text);
    }
}

/// Standalone's entries merged into `text`, then the previous context
/// restored; panics where a property fails.
fn merge_and_restore(text: &str) {
    let entries = Entries {
        server: "https://127.0.0.1:6443",
        ca_data: "Q0E=",
        cert_data: "Q0VSVA==",
        key_data: "S0VZ",
    };
    let Ok(merged) = kubeconfig_file::merge(Some(text), &entries) else {
        return;
    };
    let current = |text: &str| -> Option<String> {
        let config: serde_json::Value =
            serde_saphyr::from_str(text).expect("a merged kubeconfig parses back");
        config
            .get("current-context")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    assert_eq!(current(&merged.text).as_deref(), Some(CONTEXT));
    let again = kubeconfig_file::merge(Some(&merged.text), &entries)
        .expect("a merged kubeconfig merges again");
    assert!(again.replaced_server.is_none() && again.previous_context.is_none());
    // Restored to the context current before, if it is in the file: only
    // `current-context` changes.
    let Some(previous) = merged.previous_context.as_deref() else {
        return;
    };
    let parsed = |text: &str| -> serde_json::Value {
        serde_saphyr::from_str(text).expect("a written kubeconfig parses back")
    };
    match kubeconfig_file::restore_context(&merged.text, entries.server, previous)
        .expect("a merged kubeconfig is a kubeconfig")
    {
        Ok(restored) => {
            let mut want = parsed(&merged.text);
            want["current-context"] = previous.into();
            assert_eq!(parsed(&restored), want);
        }
        Err(kept) => assert_eq!(kept, kubeconfig_file::Kept::PreviousGone),
    }
}
