//! How doctor talks to the API server: every request runs under a shared
//! concurrency limit and its own timeout, is counted (for the report and the
//! progress bar), and fails into a [`CallError`] that says whether the cause
//! was a timeout, an HTTP status (forbidden, not found, …) or the transport.
//! The timeout covers the request only, not the wait for a concurrency slot, so
//! a dead group costs one timeout however many requests are queued.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use kube::Client;
use tokio::sync::Semaphore;

use super::findings::{Probe, Unchecked};

/// Why a request did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// No answer within the limit.
    Timeout(Duration),
    /// The server answered with an error status.
    Status {
        /// HTTP status code.
        code: u16,
        /// `Status.reason` (e.g. `Forbidden`).
        reason: String,
        /// `Status.message`, or the start of a non-Status body.
        message: String,
    },
    /// The request never got an HTTP answer (connection, TLS).
    Transport(String),
    /// The server answered with a success, but not with JSON a Kubernetes
    /// API server sends (an HTML page, a proxy's sign-in form): why it did
    /// not decode.
    NotJson(String),
}

impl CallError {
    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            CallError::Status { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// No answer in time: the run's own limit, or the client's (kube's
    /// read timeout, `--request-timeout`), whichever came first.
    pub fn is_timeout(&self) -> bool {
        match self {
            CallError::Timeout(_) => true,
            CallError::Transport(text) => text.contains("timed out"),
            _ => false,
        }
    }

    /// 404.
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// 401 or 403: the credentials may not do this.
    pub fn is_forbidden(&self) -> bool {
        matches!(self.status(), Some(401 | 403))
    }

    /// 409: a precondition or resourceVersion did not match.
    pub fn is_conflict(&self) -> bool {
        self.status() == Some(409)
    }

    /// Records that `what` could not be checked because of this error.
    pub fn unchecked(&self, what: impl Into<String>) -> Unchecked {
        Unchecked {
            what: what.into(),
            reason: self.to_string(),
            status: self.status(),
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Timeout(limit) => write!(f, "no answer within {}", human_ms(*limit)),
            CallError::Status {
                code,
                reason,
                message,
            } => {
                let message = message.trim();
                match (reason.is_empty(), message.is_empty()) {
                    (true, true) => write!(f, "HTTP {code}"),
                    (true, false) => write!(f, "HTTP {code}: {message}"),
                    (false, true) => write!(f, "HTTP {code} {reason}"),
                    (false, false) => write!(f, "HTTP {code} {reason}: {message}"),
                }
            }
            CallError::Transport(text) => f.write_str(text),
            CallError::NotJson(why) => write!(f, "an answer that is not Kubernetes' JSON ({why})"),
        }
    }
}

impl std::error::Error for CallError {}

impl From<kube::Error> for CallError {
    fn from(err: kube::Error) -> Self {
        match err {
            kube::Error::Api(status) => CallError::Status {
                code: status.code,
                // kube fills this in for bodies that are not a Status.
                reason: if status.reason == "Failed to parse error data" {
                    String::new()
                } else {
                    status.reason.clone()
                },
                message: status.message.clone(),
            },
            kube::Error::SerdeError(e) => CallError::NotJson(e.to_string()),
            other => CallError::Transport(crate::error_chain::error_chain(&other)),
        }
    }
}

/// Milliseconds or seconds, whichever reads better.
pub fn human_ms(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// The client plus the limits every request of a run shares.
#[derive(Clone)]
pub struct Requester {
    client: Client,
    slots: Arc<Semaphore>,
    timeout: Duration,
    progress: ProgressBar,
    count: Arc<AtomicUsize>,
}

impl Requester {
    /// `concurrency` requests at most in flight, each limited to `timeout`.
    pub fn new(
        client: Client,
        concurrency: usize,
        timeout: Duration,
        progress: ProgressBar,
    ) -> Self {
        Requester {
            client,
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            timeout,
            progress,
            count: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The same client and limits, reporting to another progress bar.
    pub fn with_progress(&self, progress: ProgressBar) -> Self {
        Requester {
            progress,
            ..self.clone()
        }
    }

    /// The underlying client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The per-request timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Requests made so far.
    pub fn requests(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// The progress bar (hidden when stderr is not a terminal).
    pub fn progress(&self) -> &ProgressBar {
        &self.progress
    }

    /// Runs one request under the run's limits.
    pub async fn call<T>(
        &self,
        request: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, CallError> {
        self.call_within(self.timeout, request).await
    }

    /// Runs one request with its own timeout.
    pub async fn call_within<T>(
        &self,
        limit: Duration,
        request: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, CallError> {
        self.progress.inc_length(1);
        // The semaphore is never closed, so acquiring cannot fail.
        let _slot = self.slots.acquire().await.ok();
        self.count.fetch_add(1, Ordering::Relaxed);
        let result = tokio::time::timeout(limit, request).await;
        self.progress.inc(1);
        match result {
            Err(_) => Err(CallError::Timeout(limit)),
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => Err(err.into()),
        }
    }

    /// `GET path` as raw bytes, with its status (any status is an answer).
    pub async fn get_raw(
        &self,
        path: &str,
        accept: Option<&str>,
        limit: Duration,
    ) -> Result<(u16, Vec<u8>), CallError> {
        let mut builder = http::Request::get(path);
        if let Some(accept) = accept {
            builder = builder.header(http::header::ACCEPT, accept);
        }
        let request = builder
            .body(kube::client::Body::empty())
            .map_err(|e| CallError::Transport(format!("build request for {path}: {e}")))?;
        let client = self.client.clone();
        self.call_within(limit, async move {
            let response = client.send(request).await?;
            let status = response.status().as_u16();
            let body = response.into_body().collect_bytes().await?;
            Ok((status, body.to_vec()))
        })
        .await
    }

    /// The live probe of a group-version: `GET /apis/<group>/<version>`.
    pub async fn probe(&self, group: &str, version: &str, limit: Duration) -> Probe {
        let path = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let started = Instant::now();
        let result = self.get_raw(&path, Some("application/json"), limit).await;
        let latency_ms = started.elapsed().as_millis() as u64;
        match result {
            Ok((status, body)) => {
                // A 2xx is discovery only if it reads as discovery: a
                // server answering an HTML page fails every client's
                // discovery of the group as surely as a 503.
                let error = match (200..300).contains(&status) {
                    false => Some(body_excerpt(&body)),
                    true => not_discovery(&body),
                };
                let ok = error.is_none();
                Probe {
                    path,
                    status: Some(status),
                    latency_ms,
                    ok,
                    error,
                }
            }
            Err(err) => Probe {
                path,
                status: err.status(),
                latency_ms,
                ok: false,
                error: Some(err.to_string()),
            },
        }
    }
}

/// Why a 2xx body is not a group-version's discovery document (an
/// `APIResourceList`), or `None` when it is one.
fn not_discovery(body: &[u8]) -> Option<String> {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(doc)
            if doc
                .get("resources")
                .is_some_and(serde_json::Value::is_array) =>
        {
            None
        }
        Ok(doc) => Some(format!(
            "the answer is not a discovery document (APIResourceList): kind {}",
            doc.get("kind").and_then(|k| k.as_str()).unwrap_or("(none)")
        )),
        Err(_) => Some(format!(
            "the answer is not a discovery document (APIResourceList): {}",
            body_excerpt(body)
        )),
    }
}

/// The message of a Status body, else the first line of the body, trimmed.
fn body_excerpt(body: &[u8]) -> String {
    if let Ok(status) = serde_json::from_slice::<kube::core::Status>(body)
        && !status.message.is_empty()
    {
        return status.message;
    }
    let text = String::from_utf8_lossy(body);
    let line = text.lines().next().unwrap_or_default().trim();
    let mut excerpt: String = line.chars().take(200).collect();
    if excerpt.is_empty() {
        excerpt = "(empty body)".to_owned();
    }
    excerpt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_2xx_must_read_as_discovery() {
        assert_eq!(
            not_discovery(br#"{"kind":"APIResourceList","groupVersion":"a/v1","resources":[]}"#),
            None
        );
        assert_eq!(
            not_discovery(b"<html><body>Welcome to nginx</body></html>").as_deref(),
            Some(
                "the answer is not a discovery document (APIResourceList): <html><body>Welcome to nginx</body></html>"
            )
        );
        assert_eq!(
            not_discovery(br#"{"kind":"Status"}"#).as_deref(),
            Some("the answer is not a discovery document (APIResourceList): kind Status")
        );
    }

    /// kube's own read timeout (`--request-timeout`) may fire before the
    /// run's limit: a timeout all the same (CI met it where a laptop did not).
    #[test]
    fn the_clients_timeout_is_a_timeout() {
        assert!(CallError::Timeout(Duration::from_secs(3)).is_timeout());
        assert!(
            CallError::Transport(
                "ServiceError: client error (SendRequest): connection error: timed out".into()
            )
            .is_timeout()
        );
        assert!(!CallError::Transport("connection refused".into()).is_timeout());
    }

    #[test]
    fn errors_read_like_the_server_said_them() {
        let e = CallError::Status {
            code: 403,
            reason: "Forbidden".into(),
            message: "apiservices is forbidden".into(),
        };
        assert!(e.is_forbidden());
        assert_eq!(
            e.to_string(),
            "HTTP 403 Forbidden: apiservices is forbidden"
        );
        let u = e.unchecked("list apiservices");
        assert_eq!(u.status, Some(403));
        assert_eq!(
            CallError::Timeout(Duration::from_millis(1500)).to_string(),
            "no answer within 1.5s"
        );
        assert_eq!(human_ms(Duration::from_millis(20)), "20ms");
    }

    #[test]
    fn body_excerpts_prefer_status_messages() {
        assert_eq!(
            body_excerpt(br#"{"kind":"Status","message":"service unavailable","code":503}"#),
            "service unavailable"
        );
        assert_eq!(
            body_excerpt(b"service unavailable\n"),
            "service unavailable"
        );
        assert_eq!(body_excerpt(b""), "(empty body)");
    }
}
