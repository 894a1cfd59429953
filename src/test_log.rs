//! Tests only: a tracing subscriber whose lines a test reads back, for the
//! tests that check what the code logs.
//!
//! tracing caches whether anyone is interested in each log statement. A
//! statement first reached by another test's thread at the moment a test
//! installs its subscriber can be cached as uninteresting for good
//! (`tracing_core::callsite` computes the interest and lists the callsite
//! in two steps, and a new subscriber re-asks only the listed ones), and
//! then that test reads an empty log. So the first [`subscriber`] also
//! installs a global one that is "sometimes" interested in everything and
//! enables nothing: no statement is cached as uninteresting again, and each
//! asks the subscriber of the thread that reaches it.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// The lines a [`subscriber`] wrote, shared with it.
#[derive(Clone, Default)]
pub(crate) struct CapturedLog(Arc<Mutex<Vec<u8>>>);

impl CapturedLog {
    /// Everything logged so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

impl Write for CapturedLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A plain-text subscriber for `tracing::subscriber::with_default` or
/// `set_default`, with `filter`'s directives (the fmt subscriber's default,
/// info and up, when `None`), and the log it writes to.
pub(crate) fn subscriber(
    filter: Option<&str>,
) -> (impl tracing::Subscriber + Send + Sync, CapturedLog) {
    static UNCACHED: std::sync::Once = std::sync::Once::new();
    UNCACHED.call_once(|| {
        // No unit test sets a global subscriber of its own (one that does
        // would need to be "sometimes" interested too).
        let _ = tracing::subscriber::set_global_default(AskEachTime);
    });
    let log = CapturedLog::default();
    let writer = log.clone();
    let builder = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter.unwrap_or("info")));
    (builder.finish(), log)
}

/// The global subscriber of tests that read logs: see the module's docs.
struct AskEachTime;

impl tracing::Subscriber for AskEachTime {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        false
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
