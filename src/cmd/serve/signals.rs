//! SIGINT, SIGTERM and SIGHUP for serve, listened to from the start: each
//! ends the session cleanly (SIGHUP is what a closed terminal tab or a lost
//! SSH connection sends).

use crate::cli::CliError;

/// SIGINT, SIGTERM and SIGHUP, listened to from the start (a signal before the
/// handlers exist would kill the process mid-registration).
pub(super) struct Signals {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    pub(super) fn new() -> Result<Self, CliError> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let listen = |kind| {
                signal(kind).map_err(|e| CliError::io("listen for SIGINT, SIGTERM and SIGHUP", e))
            };
            Ok(Signals {
                int: listen(SignalKind::interrupt())?,
                term: listen(SignalKind::terminate())?,
                hangup: listen(SignalKind::hangup())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    pub(super) async fn next(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
            _ = self.hangup.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}
