//! Builds every `kube::Client` the binary uses: kube-rs's own stack (TLS from
//! the kubeconfig, auth, extra headers such as `--as`, timeouts, optional
//! retries) over a connector whose sockets set `TCP_NODELAY`.
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

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::ConfigExt;
use tower::ServiceBuilder;
use tower::retry::RetryLayer;

/// A client for `config` whose connections set `TCP_NODELAY`.
pub fn client(config: kube::Config) -> Result<kube::Client, kube::Error> {
    if config.proxy_url.is_some() {
        return kube::Client::try_from(config);
    }
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    let https = config.rustls_https_connector_with_connector(http)?;
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
                .then(|| RetryLayer::new(kube::client::retry::RetryPolicy::server_retry())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(tower::BoxError::from)
        .service(http_client);
    Ok(kube::Client::new(service, config.default_namespace))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::net::{SocketAddr, TcpStream};
    use std::os::fd::{BorrowedFd, RawFd};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// This process's TCP sockets connected to `peer`.
    fn sockets_to(peer: SocketAddr) -> Vec<TcpStream> {
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
                (stream.peer_addr().ok()? == peer).then_some(stream)
            })
            .collect()
    }

    #[tokio::test]
    async fn the_clients_connections_set_nodelay() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = vec![0; 4096];
            let _ = socket.read(&mut buf).await.unwrap();
            socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
                .await
                .unwrap();
            socket
        });
        let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        let client = client(config).unwrap();
        let request = http::Request::get("/version").body(Vec::new()).unwrap();
        assert_eq!(client.request_text(request).await.unwrap(), "{}");
        let _open = server.await.unwrap();
        let sockets = sockets_to(addr);
        assert_eq!(sockets.len(), 1, "one pooled connection to the server");
        assert!(sockets[0].nodelay().unwrap(), "TCP_NODELAY is set");
    }
}
