//! Builds every `kube::Client` the binary uses: kube-rs's own stack (TLS from
//! the kubeconfig, auth, extra headers such as `--as`, timeouts, optional
//! retries) over a connector whose sockets set `TCP_NODELAY` and whose TLS
//! handshakes have client-go's 10 s deadline ([`handshake`]), with each
//! request logged at `-v 6` as kubectl logs its own ([`request_log`]) and
//! counted in client-go's metrics ([`request_metrics`]).
//!
//! kube-rs's `Client::try_from(Config)` dials with hyper's default connector,
//! which leaves Nagle's algorithm on. On a request/response connection that
//! rarely matters, but on `pods/portforward` (the tunnel's transport: many
//! small WebSocket frames each way) a second small write waits for the ACK of
//! the first, and kube-apiserver delays that ACK for up to 40 ms: about one
//! tunneled request in six took ≈ 47 ms instead of ≈ 5 ms. Every connection
//! of ours now writes at once, as client-go's (Go's default) do.
//!
//! A kubeconfig with a `proxy-url` keeps kube-rs's own builder (its proxy
//! connectors wrap their own socket).
//!
//! [`Unbuffered`] is the same stack without the queue `kube::Client` puts
//! in front of it (tower's `Buffer`: each request goes to a worker task
//! and its answer comes back through a channel). The watch cache's writes
//! and consistency checks are request/response calls on the request path
//! of every app write and consistent read, and the hop to that task and
//! back cost 0.05–0.08 ms of each (p50 of 2,950 interleaved GETs against
//! kube-apiserver on 2 cores: 1.10 vs 1.04 ms, 1.26 vs 1.18 ms).

use std::time::Duration;

use bytes::Bytes;
use futures::AsyncReadExt as _;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::{Body, ConfigExt};
use kube::core::Status;
use tower::retry::RetryLayer;
use tower::util::BoxCloneSyncService;
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

pub mod handshake;
pub mod request_log;
pub mod request_metrics;

/// kube-rs's service stack over a `TCP_NODELAY` connector, type-erased.
type Stack = BoxCloneSyncService<http::Request<Body>, http::Response<Incoming>, BoxError>;

/// A client for `config` whose connections set `TCP_NODELAY`.
pub fn client(config: kube::Config) -> Result<kube::Client, kube::Error> {
    Ok(clients(config)?.0)
}

/// [`client`], and an [`Unbuffered`] client over the same stack and
/// connections (over the client itself where a `proxy-url` keeps
/// kube-rs's builder).
pub fn clients(config: kube::Config) -> Result<(kube::Client, Unbuffered), kube::Error> {
    if config.proxy_url.is_some() {
        let client = kube::Client::try_from(config)?;
        return Ok((client.clone(), Unbuffered(Route::Queued(client))));
    }
    let service = stack(&config)?;
    let requests = Unbuffered(Route::Direct(service.clone()));
    Ok((
        kube::Client::new(service, config.default_namespace),
        requests,
    ))
}

/// A request/response client without `kube::Client`'s queue (see the
/// module's docs), made by [`clients`].
#[derive(Clone)]
pub struct Unbuffered(Route);

#[derive(Clone)]
enum Route {
    Direct(Stack),
    Queued(kube::Client),
}

impl Unbuffered {
    /// Sends `request` and answers with the response's body as text; an
    /// error status is `kube::Error::Api` with the answer's `Status` (as
    /// `kube::Client::request_text` answers).
    pub async fn request_text(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<String, kube::Error> {
        match &self.0 {
            Route::Queued(client) => client.request_text(request).await,
            Route::Direct(_) => String::from_utf8(self.request_bytes(request).await?.into())
                .map_err(kube::Error::FromUtf8),
        }
    }

    /// [`Unbuffered::request_text`] without the check that the body is text.
    pub async fn request_bytes(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<Bytes, kube::Error> {
        let service = match &self.0 {
            Route::Queued(client) => {
                // Read as a stream: `request_text` would refuse a body that
                // is not UTF-8 (a protobuf list).
                let mut body = Vec::new();
                client
                    .request_stream(request)
                    .await?
                    .read_to_end(&mut body)
                    .await
                    .map_err(kube::Error::ReadEvents)?;
                return Ok(Bytes::from(body));
            }
            Route::Direct(service) => service.clone(),
        };
        let response = service
            .oneshot(request.map(Body::from))
            .await
            .map_err(service_error)?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(kube::Error::HyperError)?
            .to_bytes();
        if status.is_client_error() || status.is_server_error() {
            return Err(api_error(status, &body));
        }
        Ok(body)
    }
}

/// A stack's error as `kube::Client` reports it: the error of one of
/// kube-rs's layers, a connection's, or another layer's.
fn service_error(err: BoxError) -> kube::Error {
    err.downcast::<kube::Error>()
        .map(|e| *e)
        .or_else(|err| {
            err.downcast::<hyper::Error>()
                .map(|e| kube::Error::HyperError(*e))
        })
        .unwrap_or_else(kube::Error::Service)
}

/// The error of an answer with an error `status`: its `Status`, or one made
/// of its text when it is not one (a proxy's or a bare path's answer).
fn api_error(status: http::StatusCode, body: &[u8]) -> kube::Error {
    match serde_json::from_slice::<Status>(body) {
        Ok(parsed) => kube::Error::Api(parsed.boxed()),
        Err(_) => {
            let text = String::from_utf8_lossy(body);
            kube::Error::Api(
                Status::failure(text.trim(), "Failed to parse error data")
                    .with_code(status.as_u16())
                    .boxed(),
            )
        }
    }
}

/// kube-rs's stack (base URI, optional retries, auth, extra headers) and
/// the request log over a `TCP_NODELAY` connector with `config`'s timeouts
/// and client-go's TLS handshake deadline ([`handshake`]).
fn stack(config: &kube::Config) -> Result<Stack, kube::Error> {
    stack_with(config, handshake::TLS_HANDSHAKE_TIMEOUT)
}

/// How a command's requests are retried when kube-apiserver answers 429,
/// 503 or 504: three more tries, 0.2 s apart at first (or as its
/// `Retry-After` says), about 1.5 s in all. kube-rs's default tries 15 more
/// times with a backoff growing to minutes, so that a command asking an
/// unavailable aggregated group (discovery answers 503: the very case doctor
/// diagnoses) said so only after about three minutes.
fn retry_policy() -> kube::client::retry::RetryPolicy {
    kube::client::retry::RetryPolicy::new(
        Duration::from_millis(200),
        Duration::from_secs(2),
        3,
        true,
    )
    .expect("static retry parameters are valid")
}

/// [`stack`] with a TLS handshake deadline of `handshake_timeout`.
fn stack_with(config: &kube::Config, handshake_timeout: Duration) -> Result<Stack, kube::Error> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    let https = config.rustls_https_connector_with_connector(handshake::HandshakeDeadline::new(
        http,
        handshake_timeout,
    ))?;
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http_client: hyper_util::client::legacy::Client<_, kube::client::Body> =
        hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then(|| RetryLayer::new(retry_policy())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .layer_fn(request_log::LogRequests)
        .layer_fn(request_metrics::CountRequests)
        .map_err(BoxError::from)
        .service(http_client);
    Ok(BoxCloneSyncService::new(service))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::net::{SocketAddr, TcpStream};
    use std::os::fd::{BorrowedFd, RawFd};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// This process's TCP sockets from `local` to `peer` (both: other tests
    /// in the process connect to ports of their own, which may be one
    /// this test's listener had before).
    fn sockets_between(local: SocketAddr, peer: SocketAddr) -> Vec<TcpStream> {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<RawFd>().ok())
            .filter_map(|fd| {
                // SAFETY: the fd is open for the duration of the borrow (the
                // test's own sockets stay open; a closed one fails to clone).
                #[expect(
                    unsafe_code,
                    reason = "a listed fd borrowed to read its socket options"
                )]
                let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
                let stream = TcpStream::from(borrowed.try_clone_to_owned().ok()?);
                (stream.local_addr().ok()? == local && stream.peer_addr().ok()? == peer)
                    .then_some(stream)
            })
            .collect()
    }

    #[tokio::test]
    async fn the_clients_connections_set_nodelay() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut socket, client) = listener.accept().await.unwrap();
            let mut buf = vec![0; 4096];
            let _ = socket.read(&mut buf).await.unwrap();
            socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
                .await
                .unwrap();
            (socket, client, listener)
        });
        let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        let client = client(config).unwrap();
        let request = http::Request::get("/version").body(Vec::new()).unwrap();
        assert_eq!(client.request_text(request).await.unwrap(), "{}");
        let (_open, client_addr, _listening) = server.await.unwrap();
        // The scan dups every fd of a process whose other tests open and
        // close theirs meanwhile (a dup can fail while the fd table is
        // full): asked again for a moment before it counts.
        let mut sockets = sockets_between(client_addr, addr);
        for _ in 0..20 {
            if sockets.len() == 1 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            sockets = sockets_between(client_addr, addr);
        }
        assert_eq!(
            sockets.len(),
            1,
            "one pooled connection from {client_addr} to {addr}"
        );
        assert!(sockets[0].nodelay().unwrap(), "TCP_NODELAY is set");
    }

    #[tokio::test]
    async fn an_unavailable_answer_is_retried_three_times_then_said() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = asked.clone();
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                let counted = counted.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0; 4096];
                    while let Ok(n) = socket.read(&mut buf).await {
                        if n == 0 {
                            return;
                        }
                        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let body = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"service unavailable","reason":"ServiceUnavailable","code":503}"#;
                        let head = format!(
                            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                            body.len()
                        );
                        if socket.write_all(head.as_bytes()).await.is_err()
                            || socket.write_all(body).await.is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        assert!(config.default_retry, "a command's client retries");
        let client = client(config).unwrap();
        let err = client
            .request_text(
                http::Request::get("/apis/example.com/v1")
                    .body(Vec::new())
                    .unwrap(),
            )
            .await
            .expect_err("503");
        assert!(err.to_string().contains("service unavailable"), "{err}");
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 4);
    }

    /// A server that answers one request with `status` and `body`, and the
    /// config of a client for it.
    async fn answering(status: &str, body: &'static [u8]) -> kube::Config {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut response = format!(
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        response.extend_from_slice(body);
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = vec![0; 4096];
            let _ = socket.read(&mut buf).await.unwrap();
            socket.write_all(&response).await.unwrap();
            // Held open: the client's pooled connection stays up.
            std::future::pending::<()>().await;
        });
        let mut config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        // The store's client: kube-rs would retry a 503 (on a server that
        // answers once).
        config.default_retry = false;
        config
    }

    #[tokio::test]
    async fn unbuffered_requests_answer_with_the_body() {
        let config = answering("200 OK", br#"{"kind":"x"}"#).await;
        let client = clients(config).unwrap().1;
        let request = http::Request::get("/version").body(Vec::new()).unwrap();
        assert_eq!(
            client.request_text(request).await.unwrap(),
            r#"{"kind":"x"}"#
        );
    }

    #[tokio::test]
    async fn a_body_that_is_not_text_arrives_intact_either_way() {
        const PROTOBUF: &[u8] = b"k8s\0\xff\xfe";
        for queued in [false, true] {
            let config = answering("200 OK", PROTOBUF).await;
            let client = if queued {
                Unbuffered(Route::Queued(kube::Client::try_from(config).unwrap()))
            } else {
                clients(config).unwrap().1
            };
            let request = http::Request::get("/x").body(Vec::new()).unwrap();
            let body = client.request_bytes(request).await.unwrap();
            assert_eq!(&body[..], PROTOBUF, "queued: {queued}");
        }
    }

    #[tokio::test]
    async fn an_error_status_is_the_answers_status() {
        let config = answering(
            "409 Conflict",
            br#"{"kind":"Status","status":"Failure","message":"stale","reason":"Conflict","code":409,"metadata":{}}"#,
        )
        .await;
        let client = clients(config).unwrap().1;
        let request = http::Request::put("/x").body(b"{}".to_vec()).unwrap();
        match client.request_bytes(request).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
                assert_eq!(status.message, "stale");
            }
            other => panic!("not an API error: {other:?}"),
        }
    }

    #[tokio::test]
    async fn an_error_that_is_not_a_status_keeps_its_code_and_text() {
        let config = answering("503 Service Unavailable", b" proxy down \n").await;
        let client = clients(config).unwrap().1;
        let request = http::Request::get("/x").body(Vec::new()).unwrap();
        match client.request_text(request).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 503);
                assert_eq!(status.message, "proxy down");
            }
            other => panic!("not an API error: {other:?}"),
        }
    }

    #[tokio::test]
    async fn an_unreachable_server_is_a_service_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        let client = clients(config).unwrap().1;
        let request = http::Request::get("/x").body(Vec::new()).unwrap();
        let err = client.request_text(request).await.unwrap_err();
        assert!(
            matches!(err, kube::Error::Service(_) | kube::Error::HyperError(_)),
            "{err:?}"
        );
    }
}
