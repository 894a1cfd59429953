//! client-go's request metrics for every request our Kubernetes clients
//! send: `rest_client_requests_total` (code, host, method) and
//! `rest_client_request_duration_seconds` (verb, host; client-go's buckets),
//! with client-go's names, labels and help, so that a server's round trips
//! to kube-apiserver (its writes, consistency checks and watches) show in its
//! `/metrics` ([`crate::apiserver::metrics`]) as kube-controller-manager's
//! show in its own. Like the request log it is the innermost layer: a
//! retried request counts once per attempt, as client-go counts them. A
//! watch's duration is the time to its response head. The families live for
//! the process; a command that serves nothing never shows them.

use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// client-go's buckets of `rest_client_request_duration_seconds`.
const DURATION_BUCKETS: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Answered {
    code: String,
    host: String,
    method: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Timed {
    verb: String,
    host: String,
}

/// The client request metrics of this process.
#[derive(Debug, Clone)]
struct ClientMetrics {
    requests: Family<Answered, Counter>,
    duration: Family<Timed, Histogram, fn() -> Histogram>,
}

impl Default for ClientMetrics {
    fn default() -> ClientMetrics {
        ClientMetrics {
            requests: Family::default(),
            duration: Family::new_with_constructor(|| Histogram::new(DURATION_BUCKETS)),
        }
    }
}

impl ClientMetrics {
    fn count(&self, method: String, host: String, code: String, started: Instant) {
        self.duration
            .get_or_create(&Timed {
                verb: method.clone(),
                host: host.clone(),
            })
            .observe(started.elapsed().as_secs_f64());
        self.requests
            .get_or_create(&Answered { code, host, method })
            .inc();
    }
}

fn metrics() -> &'static ClientMetrics {
    static METRICS: LazyLock<ClientMetrics> = LazyLock::new(ClientMetrics::default);
    &METRICS
}

/// Adds the process's client request metrics to `registry` (a scrape's).
pub(crate) fn register(registry: &mut Registry) {
    let metrics = metrics().clone();
    // The registry ends each help text with a period.
    registry.register(
        "rest_client_requests",
        "Number of HTTP requests, partitioned by status code, method, and host",
        metrics.requests,
    );
    registry.register(
        "rest_client_request_duration_seconds",
        "Request latency in seconds. Broken down by verb, and host",
        metrics.duration,
    );
}

/// A future that counts its request when it completes.
type Counted<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

/// Wraps a client service so that each request it sends is counted.
#[derive(Clone, Debug)]
pub struct CountRequests<S>(pub S);

impl<S, ReqBody, ResBody> tower::Service<http::Request<ReqBody>> for CountRequests<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: 'static,
    S::Error: 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Counted<S::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let method = request.method().as_str().to_owned();
        let host = request
            .uri()
            .authority()
            .map(|a| a.as_str().to_owned())
            .unwrap_or_default();
        let started = Instant::now();
        let sent = self.0.call(request);
        Box::pin(async move {
            let answer = sent.await;
            let code = match &answer {
                Ok(response) => response.status().as_u16().to_string(),
                Err(_) => "<error>".to_owned(),
            };
            metrics().count(method, host, code, started);
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use tower::ServiceExt as _;

    use super::*;
    use crate::kube_client::request_log::tests::answering;

    fn count(code: &str, host: &str, method: &str) -> u64 {
        metrics()
            .requests
            .get_or_create(&Answered {
                code: code.to_owned(),
                host: host.to_owned(),
                method: method.to_owned(),
            })
            .get()
    }

    /// Each answer by its code, a failure as client-go's `<error>`; the
    /// host is the URL's, port included. (A host of this test's own, as the
    /// families are the process's.)
    #[tokio::test]
    async fn each_request_is_counted_by_code_host_and_method() {
        let host = "metrics-test.invalid:6443";
        let send = |status, method: http::Method| async move {
            let request = http::Request::builder()
                .method(method)
                .uri(format!(
                    "https://{host}/apis/helm.toolkit.fluxcd.io/v2/helmreleases"
                ))
                .body(())
                .unwrap();
            let _ = CountRequests(answering(status)).oneshot(request).await;
        };
        send(Some(200), http::Method::GET).await;
        send(Some(200), http::Method::GET).await;
        send(Some(409), http::Method::PUT).await;
        send(None, http::Method::POST).await;
        assert_eq!(count("200", host, "GET"), 2);
        assert_eq!(count("409", host, "PUT"), 1);
        assert_eq!(count("<error>", host, "POST"), 1);
        let mut registry = Registry::default();
        register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains(&format!(
                "rest_client_requests_total{{code=\"409\",host=\"{host}\",method=\"PUT\"}} 1\n"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "rest_client_request_duration_seconds_count{{verb=\"GET\",host=\"{host}\"}} 2\n"
            )),
            "{text}"
        );
    }
}
