//! Freeing large request temporaries off the request's path.
//!
//! A write builds several JSON trees (the decoded body, the current app, the
//! HelmRelease sent upstream, upstream's answer); freeing one is a walk that
//! calls `free` once per node. Dropped where they go out of scope, they are
//! freed while the client waits — either before the upstream call or between
//! upstream's answer and the response. [`drop_later`] hands such a value to
//! a task of its own, off the request's task: the runtime runs it on another
//! worker, or on this one once the request's task yields (while it waits for
//! upstream, or after its response is written).

/// Drops `value` in a task of its own on the current Tokio runtime; at once
/// where there is none (synchronous code and its tests).
pub fn drop_later<T: Send + 'static>(value: T) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move { drop(value) });
        }
        Err(_) => drop(value),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::drop_later;

    /// Sets its flag when dropped.
    struct Flag(Arc<AtomicBool>);

    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn without_a_runtime_the_value_is_dropped_at_once() {
        let dropped = Arc::new(AtomicBool::new(false));
        drop_later(Flag(dropped.clone()));
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn on_a_runtime_the_value_is_dropped_once_the_caller_yields() {
        let dropped = Arc::new(AtomicBool::new(false));
        drop_later(Flag(dropped.clone()));
        assert!(!dropped.load(Ordering::SeqCst), "not on the caller's path");
        tokio::task::yield_now().await;
        assert!(dropped.load(Ordering::SeqCst));
    }
}
