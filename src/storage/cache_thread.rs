//! The thread the watch cache's upstream list and watch run on: a
//! single-threaded runtime of its own, apart from the workers that serve
//! requests.
//!
//! What the cache keeps (every app's JSON text and view, the event history,
//! the snapshots) lives as long as the cache does, and is allocated on the
//! thread that parses it. On the request workers those long-lived blocks
//! would sit among each request's short-lived ones, and glibc's malloc
//! would serve every request from one large, fragmented heap: longer free
//! lists, more cache and TLB misses. glibc gives each thread an arena of its
//! own (as many as [`crate::allocator`] allows), so on this thread the
//! cache's objects stay out of the heap the requests allocate from. (A
//! write's answer, which the cache takes at once, is still kept where the
//! write ran.)
//!
//! Measured (`benches/server.sh writes`, spans, six paired runs): what the
//! server adds to a write beside upstream's round trip, p50, fell by 4–19 %
//! per update (0.380 to 0.310 ms in the first pair) and 8–20 % per patch;
//! creates and deletes did not move consistently; parsing an update's body
//! alone went from 45 to 31 µs (`docs/performance.md`).

use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle};

/// The cache runtime's handle; the thread starts on first use and runs for
/// the rest of the process (one shared by every cache of the process).
/// `serve` starts it right after tuning malloc ([`crate::allocator`]),
/// before any thread but the runtime's workers: glibc then hands it the
/// main thread's arena, apart from the request workers' (the first thread
/// to reuse an arena gets the main one), and the call returns once the
/// thread has allocated, so that holds.
pub(crate) fn handle() -> Handle {
    static HANDLE: OnceLock<Handle> = OnceLock::new();
    HANDLE.get_or_init(start).clone()
}

fn start() -> Handle {
    let (handle_tx, handle_rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("cozy-cache".to_owned())
        .spawn(move || {
            // Built here, so the thread's first allocation (which picks its
            // malloc arena) happens before the caller goes on.
            let runtime = Builder::new_current_thread()
                .enable_all()
                .thread_name("cozy-cache-blocking")
                .build()
                .unwrap_or_else(|e| panic!("cannot start the watch cache's runtime: {e}"));
            let _ = handle_tx.send(runtime.handle().clone());
            runtime.block_on(std::future::pending::<()>());
        })
        .unwrap_or_else(|e| panic!("cannot start the watch cache's thread: {e}"));
    handle_rx
        .recv()
        .unwrap_or_else(|e| panic!("the watch cache's thread did not start: {e}"))
}

#[cfg(test)]
mod tests {
    use super::handle;

    #[test]
    fn tasks_run_on_the_cache_thread_without_a_caller_runtime() {
        let name = std::thread::current().name().map(str::to_owned);
        let (tx, rx) = std::sync::mpsc::channel();
        handle().spawn(async move {
            let _ = tx.send(std::thread::current().name().map(str::to_owned));
        });
        let on = rx.recv().expect("the task ran");
        assert_eq!(on.as_deref(), Some("cozy-cache"));
        assert_ne!(on, name);
    }
}
