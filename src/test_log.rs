//! Tests only: a tracing subscriber whose lines a test reads back, for the
//! tests that check what the code logs.

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
    let log = CapturedLog::default();
    let writer = log.clone();
    let builder = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter.unwrap_or("info")));
    (builder.finish(), log)
}
