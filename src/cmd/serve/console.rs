//! What serve prints while it runs: the access log (unless `-q`; without the
//! cluster's own successful reads, [`SYSTEM_READERS`], below `-v 1`), tunnel
//! state changes, the kinds' reloads and spinners (lines printed while a
//! spinner spins go above it); and, from the access log, proof that the
//! aggregator's availability probes reached this very server.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use indicatif::ProgressBar;

use crate::apiserver::server::{self, Access};
use crate::kinds::{Following, News};
use crate::tunnel::{TunnelState, TunnelStatus};

/// The user kube-apiserver's aggregator probes APIServices as.
const AGGREGATOR: &str = "system:kube-aggregator";

/// Users whose successful reads are the cluster's own traffic, not anyone's
/// work: the aggregator's availability probes and OpenAPI downloads, the
/// controllers' discovery and lists (namespace deletion, garbage
/// collection). The access log leaves them out below `-v 1`.
const SYSTEM_READERS: [&str; 4] = [
    AGGREGATOR,
    "system:aggregator",
    "system:kube-controller-manager",
    "system:apiserver",
];

/// Whether `a` is the cluster's own background traffic (see [`SYSTEM_READERS`]).
fn is_system_read(a: &Access<'_>) -> bool {
    (a.status.is_success() || a.status == http::StatusCode::NOT_MODIFIED)
        && a.method == http::Method::GET
        && a.user.is_some_and(|u| SYSTEM_READERS.contains(&u))
}

/// What serve prints while running: the access log (unless `-q`), tunnel
/// state changes, spinners (only on a terminal); lines printed while a
/// spinner spins go above it.
#[derive(Clone)]
pub(super) struct Log {
    quiet: bool,
    /// Whether the access log shows the cluster's own reads too (`-v 1`+).
    system_reads: bool,
    spinner: Arc<Mutex<Option<ProgressBar>>>,
    /// Paths the aggregator fetched successfully (its availability probes
    /// of `/apis/<group>/<version>`): proof that it reaches *this* server.
    probed: Arc<tokio::sync::watch::Sender<BTreeSet<String>>>,
}

impl Log {
    /// The console; `quiet` drops the access log, `system_reads` keeps the
    /// cluster's own reads in it.
    pub(super) fn new(quiet: bool, system_reads: bool) -> Self {
        Log {
            quiet,
            system_reads,
            spinner: Arc::new(Mutex::new(None)),
            probed: Arc::new(tokio::sync::watch::channel(Default::default()).0),
        }
    }

    /// Waits until the aggregator fetched every one of `paths` from this
    /// server.
    pub(super) async fn probed(&self, paths: &[String]) {
        let mut rx = self.probed.subscribe();
        let _ = rx
            .wait_for(|seen| paths.iter().all(|p| seen.contains(p)))
            .await;
    }

    pub(super) fn line(&self, text: &str) {
        let bar = self.spinner.lock().ok().and_then(|s| s.clone());
        match bar {
            Some(bar) if !bar.is_hidden() => bar.println(text),
            _ => crate::stderr_line!("{text}"),
        }
    }

    /// A spinner saying `message`; without a terminal, its waits are said
    /// as lines instead ([`Progress`]).
    pub(super) fn spinner(&self, message: &str) -> Progress {
        let bar = crate::output::progress::spinner(message.to_owned());
        if let Ok(mut slot) = self.spinner.lock() {
            *slot = Some(bar.clone());
        }
        let progress = Progress {
            bar,
            said: Arc::new(Mutex::new(BTreeSet::new())),
        };
        progress.announce(message);
        progress
    }

    pub(super) fn clear_spinner(&self) {
        if let Ok(mut slot) = self.spinner.lock() {
            *slot = None;
        }
    }

    pub(super) fn install_access_log(&self) {
        let log = self.clone();
        server::set_access_log(Box::new(move |a: &Access<'_>| {
            if a.status.is_success() && a.user == Some(AGGREGATOR) && a.path.starts_with("/apis/") {
                let path = a.path.to_owned();
                log.probed.send_if_modified(|seen| seen.insert(path));
            }
            if !log.quiet && (log.system_reads || !is_system_read(a)) {
                log.line(&access_line(a));
            }
        }));
    }

    /// Prints the tunnel's state changes (connected, reconnecting).
    pub(super) fn follow_tunnel(&self, mut status: tokio::sync::watch::Receiver<TunnelStatus>) {
        let log = self.clone();
        tokio::spawn(async move {
            let mut last = String::new();
            loop {
                let line = tunnel_line(&status.borrow_and_update());
                if let Some(line) = line
                    && line != last
                {
                    log.line(&line);
                    last = line;
                }
                if status.changed().await.is_err() {
                    break;
                }
            }
        });
    }
}

/// What serve is doing during a start: the spinner's message on a terminal;
/// elsewhere (CI, a log file), where no spinner is drawn, each wait
/// (`waiting for …`) it is told of is said once, as a line on stderr, as
/// `doctor --fix` does. Steps that take no time are not said.
#[derive(Clone)]
pub(super) struct Progress {
    bar: ProgressBar,
    /// The lines said so far: none is said twice.
    said: Arc<Mutex<BTreeSet<String>>>,
}

impl Progress {
    /// Says `message`: the spinner's text, or a line if it is a new wait.
    pub(super) fn set_message(&self, message: impl Into<String>) {
        let message = message.into();
        self.announce(&message);
        self.bar.set_message(message);
    }

    /// Clears the spinner.
    pub(super) fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }

    fn announce(&self, message: &str) {
        if !self.bar.is_hidden() {
            return;
        }
        if let Ok(mut said) = self.said.lock()
            && let Some(line) = wait_line(&mut said, message)
        {
            crate::stderr_line!("{line}");
        }
    }
}

/// Says on stderr what is served after each accepted change of the kinds,
/// and each change refused and the fix after it (standalone and `--route
/// none`; a registered session's `kinds_follow` says them with its nudges).
pub(super) fn report_reloads(mut following: Following) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(news) = following.next().await {
            if let Some(line) = news.verdict_line() {
                crate::stderr_line!("{line}");
            } else if let News::Reloaded { previous, now } = news {
                let plurals = now.plurals();
                crate::stderr_line!(
                    "Kinds: reloaded ({}), serving {} ({}){}",
                    now.changes_since(&previous),
                    plurals.len(),
                    plurals.join(", "),
                    now.watches_ended_since(&previous)
                );
            }
        }
    })
}

/// The line to say for `message` when no spinner is drawn: a wait not said
/// before (recorded in `said`), else nothing.
fn wait_line(said: &mut BTreeSet<String>, message: &str) -> Option<String> {
    (message.contains("waiting for") && said.insert(message.to_owned())).then(|| message.to_owned())
}

/// One access log line: `GET /apis/… 200 3.1ms alice`.
/// One request as kube-apiserver's log names it: the verb `WATCH` for a
/// watch (its latency is to its response head), else the HTTP method.
fn access_line(a: &Access<'_>) -> String {
    let verb = if a.watch { "WATCH" } else { a.method.as_str() };
    format!(
        "{} {} {} {:.1}ms {}",
        verb,
        a.path,
        a.status.as_u16(),
        a.latency.as_secs_f64() * 1000.0,
        a.user.unwrap_or("-")
    )
}

/// The line for a tunnel state, if it is worth one.
fn tunnel_line(status: &TunnelStatus) -> Option<String> {
    match &status.state {
        TunnelState::Connecting => None,
        TunnelState::Connected {
            endpoint, agent, ..
        } => Some(format!("Tunnel: connected to {endpoint} ({agent})")),
        TunnelState::Reconnecting { attempt, retry_in } => Some(format!(
            "Tunnel: reconnecting (attempt {attempt}, in {:.1}s){}",
            retry_in.as_secs_f64(),
            status
                .last_error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        )),
        TunnelState::Stopped => Some("Tunnel: stopped".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn without_a_terminal_each_wait_is_said_once() {
        let mut said = BTreeSet::new();
        let mut say = |m: &str| wait_line(&mut said, m);
        assert_eq!(say("registering: Lease"), None, "a step is not a wait");
        let wait = "registering: waiting for namespace x to finish terminating (up to 60s)";
        assert_eq!(say(wait).as_deref(), Some(wait));
        assert_eq!(say(wait), None, "said once");
        let agent = "waiting for the tunnel agent: pod/a Pending";
        assert_eq!(say(agent).as_deref(), Some(agent));
        assert!(say("waiting for the tunnel agent: pod/a Running, not ready").is_some());
        assert_eq!(say(agent), None);
    }

    #[test]
    fn access_and_tunnel_lines() {
        let line = access_line(&Access {
            method: &http::Method::GET,
            path: "/apis/a.example.com/v1",
            status: http::StatusCode::OK,
            latency: Duration::from_micros(3150),
            user: Some("system:kube-aggregator"),
            watch: false,
        });
        assert_eq!(
            line,
            "GET /apis/a.example.com/v1 200 3.1ms system:kube-aggregator"
        );
        let watch = access_line(&Access {
            method: &http::Method::GET,
            path: "/apis/a.example.com/v1/namespaces/x/postgreses",
            status: http::StatusCode::OK,
            latency: Duration::from_micros(300),
            user: Some("alice"),
            watch: true,
        });
        assert_eq!(
            watch,
            "WATCH /apis/a.example.com/v1/namespaces/x/postgreses 200 0.3ms alice"
        );
        let status = |state| TunnelStatus {
            state,
            last_error: Some("port-forward failed".into()),
            connections: 1,
        };
        assert_eq!(tunnel_line(&status(TunnelState::Connecting)), None);
        let probe = Access {
            method: &http::Method::GET,
            path: "/apis/a.example.com/v1",
            status: http::StatusCode::OK,
            latency: Duration::from_micros(100),
            user: Some(AGGREGATOR),
            watch: false,
        };
        assert!(is_system_read(&probe));
        let failed = Access {
            status: http::StatusCode::FORBIDDEN,
            ..probe
        };
        assert!(!is_system_read(&failed), "a failure is news");
        let mine = Access {
            user: Some("alice"),
            ..probe
        };
        assert!(!is_system_read(&mine));
        assert_eq!(
            tunnel_line(&status(TunnelState::Reconnecting {
                attempt: 2,
                retry_in: Duration::from_millis(500)
            }))
            .unwrap(),
            "Tunnel: reconnecting (attempt 2, in 0.5s): port-forward failed"
        );
    }
}
