//! The log of every request our Kubernetes clients send, as kubectl's
//! `-v 6` shows its own: method, URL, status and time, one line each
//! (`GET https://…/apis 200 OK in 3 ms`). It is the innermost layer of the
//! stack, so a retried request shows once per attempt, as in kubectl.
//!
//! The lines go to the [`TARGET`] target at debug level, which `-v 6` and
//! more turn on (`cli::init_logging`). When that target is off, a request
//! costs one check of the subscriber's cached interest and nothing else:
//! no clock read, no boxed future.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::future::Either;

/// The tracing target of the request lines.
pub const TARGET: &str = "kubectl_cozy::http";

/// A future that logs when it completes.
type Logged<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

/// Wraps a client service so that each request it sends is logged.
#[derive(Clone, Debug)]
pub struct LogRequests<S>(pub S);

impl<S, ReqBody, ResBody> tower::Service<http::Request<ReqBody>> for LogRequests<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: std::fmt::Display,
    ResBody: 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Either<S::Future, Logged<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        if !tracing::enabled!(target: TARGET, tracing::Level::DEBUG) {
            return Either::Left(self.0.call(request));
        }
        let method = request.method().clone();
        let uri = request.uri().clone();
        let started = Instant::now();
        let sent = self.0.call(request);
        Either::Right(Box::pin(async move {
            let answer = sent.await;
            let ms = started.elapsed().as_millis();
            match &answer {
                Ok(response) => {
                    tracing::debug!(target: TARGET, "{method} {uri} {} in {ms} ms", response.status());
                }
                Err(err) => {
                    tracing::debug!(target: TARGET, "{method} {uri} failed in {ms} ms: {err}")
                }
            }
            answer
        }))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use tower::ServiceExt as _;

    use super::*;

    /// A service that answers every request with `status`, or fails.
    pub(crate) fn answering(
        status: Option<u16>,
    ) -> impl tower::Service<
        http::Request<()>,
        Response = http::Response<()>,
        Error = String,
        Future = std::future::Ready<Result<http::Response<()>, String>>,
    > + Clone {
        tower::service_fn(move |_: http::Request<()>| {
            std::future::ready(match status {
                Some(code) => Ok(http::Response::builder().status(code).body(()).unwrap()),
                None => Err("connection refused".to_owned()),
            })
        })
    }

    async fn send(status: Option<u16>, filter: &str) -> String {
        let (subscriber, captured) = crate::test_log::subscriber(Some(filter));
        let _guard = tracing::subscriber::set_default(subscriber);
        let request = http::Request::get("https://127.0.0.1:6443/apis/apps/v1/namespaces/x")
            .body(())
            .unwrap();
        let _ = LogRequests(answering(status)).oneshot(request).await;
        captured.text()
    }

    #[tokio::test]
    async fn a_request_is_one_line_with_method_url_status_and_time() {
        let log = send(Some(404), "kubectl_cozy::http=debug").await;
        assert!(
            log.contains("GET https://127.0.0.1:6443/apis/apps/v1/namespaces/x 404 Not Found in "),
            "{log}"
        );
        assert_eq!(log.lines().count(), 1, "{log}");
    }

    #[tokio::test]
    async fn a_failed_request_says_why() {
        let log = send(None, "kubectl_cozy::http=debug").await;
        assert!(
            log.contains("failed in ") && log.contains("connection refused"),
            "{log}"
        );
    }

    #[tokio::test]
    async fn nothing_is_logged_when_the_target_is_off() {
        let log = send(Some(200), "kubectl_cozy=debug,kubectl_cozy::http=off").await;
        assert_eq!(log, "");
    }
}
