//! The review calls authentication and authorization delegate to
//! kube-apiserver: `TokenReview` and `SubjectAccessReview`, POSTed with the
//! server's own identity (which needs `system:auth-delegator`).
//!
//! [`Reviewer`] is the seam: [`KubeReviewer`] talks to a cluster through a
//! `kube::Client` (point it at another address to test an unreachable
//! endpoint), and unit tests use a fake. Calls time out after 10 s and are
//! retried on transport errors, 429 and 5xx with upstream's webhook backoff
//! (500 ms, ×1.5, 5 attempts). Request bodies (which carry tokens) are never
//! logged, and errors never quote them.

use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

/// Which review to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewKind {
    /// `authentication.k8s.io/v1` TokenReview.
    TokenReview,
    /// `authorization.k8s.io/v1` SubjectAccessReview.
    SubjectAccessReview,
}

impl ReviewKind {
    /// The collection path.
    pub fn path(self) -> &'static str {
        match self {
            ReviewKind::TokenReview => "/apis/authentication.k8s.io/v1/tokenreviews",
            ReviewKind::SubjectAccessReview => "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        }
    }

    /// `apiVersion` of the object.
    pub fn api_version(self) -> &'static str {
        match self {
            ReviewKind::TokenReview => "authentication.k8s.io/v1",
            ReviewKind::SubjectAccessReview => "authorization.k8s.io/v1",
        }
    }

    /// `kind` of the object.
    pub fn kind(self) -> &'static str {
        match self {
            ReviewKind::TokenReview => "TokenReview",
            ReviewKind::SubjectAccessReview => "SubjectAccessReview",
        }
    }
}

/// A review call failed (after retries).
#[derive(Debug, Clone, thiserror::Error)]
#[error("create {kind:?}: {message}")]
pub struct ReviewError {
    /// Which review.
    pub kind: ReviewKind,
    /// What went wrong, without request contents.
    pub message: String,
}

/// Creates reviews and returns the answered object.
pub trait Reviewer: Send + Sync + 'static {
    /// POSTs `{"apiVersion":…,"kind":…,"spec": spec}` and returns the object
    /// kube-apiserver answered (with `status`).
    fn create(
        &self,
        kind: ReviewKind,
        spec: Value,
    ) -> BoxFuture<'static, Result<Value, ReviewError>>;
}

/// Reviews through a Kubernetes API server.
#[derive(Clone)]
pub struct KubeReviewer {
    client: kube::Client,
    timeout: Duration,
    attempts: u32,
}

impl KubeReviewer {
    /// Upstream's defaults: 10 s per call, 5 attempts.
    pub fn new(client: kube::Client) -> KubeReviewer {
        KubeReviewer {
            client,
            timeout: Duration::from_secs(10),
            attempts: 5,
        }
    }
}

impl Reviewer for KubeReviewer {
    fn create(
        &self,
        kind: ReviewKind,
        spec: Value,
    ) -> BoxFuture<'static, Result<Value, ReviewError>> {
        let this = self.clone();
        Box::pin(async move {
            let body = serde_json::json!({
                "apiVersion": kind.api_version(),
                "kind": kind.kind(),
                "spec": spec,
            });
            let body = serde_json::to_vec(&body).map_err(|e| ReviewError {
                kind,
                message: format!("encode: {e}"),
            })?;
            let mut delay = Duration::from_millis(500);
            let mut attempt = 1;
            loop {
                let request = http::Request::post(kind.path())
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .header(http::header::ACCEPT, "application/json")
                    .body(body.clone())
                    .map_err(|e| ReviewError {
                        kind,
                        message: format!("build the request: {e}"),
                    })?;
                let result =
                    tokio::time::timeout(this.timeout, this.client.request::<Value>(request)).await;
                let (message, retry) = match result {
                    Ok(Ok(object)) => return Ok(object),
                    Ok(Err(kube::Error::Api(status))) => {
                        let retry = status.code == 429 || status.code >= 500;
                        (format!("{} ({})", status.message, status.code), retry)
                    }
                    Ok(Err(e)) => (e.to_string(), true),
                    Err(_) => (format!("timed out after {:?}", this.timeout), true),
                };
                if !retry || attempt >= this.attempts {
                    return Err(ReviewError { kind, message });
                }
                tracing::debug!(attempt, "{:?} failed, retrying: {message}", kind);
                tokio::time::sleep(delay).await;
                delay = delay.mul_f32(1.5);
                attempt += 1;
            }
        })
    }
}
