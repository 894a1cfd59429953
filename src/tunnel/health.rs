//! The agent's health endpoint for the kubelet's probes (plain HTTP/1.1):
//!
//! | request | answer |
//! |---|---|
//! | `GET /livez` | `200 ok` while the process serves |
//! | `GET /readyz` | `200` while a serve session is connected, else `503` |
//! | anything else | `404` |

use std::convert::Infallible;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// What readiness reads: the serve session connected right now, if any
/// (the agent's hub implements it; tests use a fake).
pub(crate) trait Readiness: Clone + Send + Sync + 'static {
    /// The id of the connected serve session, or `None`.
    fn connected_session(&self) -> Option<String>;
}

/// Serves probes on `listener` forever.
pub(crate) async fn serve<R: Readiness>(listener: TcpListener, hub: R) {
    loop {
        let (sock, _) = match listener.accept().await {
            Ok(s) => s,
            Err(err) => {
                tracing::warn!(%err, "health port accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let hub = hub.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let hub = hub.clone();
                async move { Ok::<_, Infallible>(answer(&req, &hub)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(sock), service)
                .await;
        });
    }
}

fn answer<B>(req: &Request<B>, hub: &impl Readiness) -> Response<Full<Bytes>> {
    let (status, text) = match (req.method(), req.uri().path()) {
        (&Method::GET | &Method::HEAD, "/livez") => (StatusCode::OK, "ok\n".to_owned()),
        (&Method::GET | &Method::HEAD, "/readyz") => match hub.connected_session() {
            Some(session) => (
                StatusCode::OK,
                format!("serve session {session} connected\n"),
            ),
            None => (
                StatusCode::SERVICE_UNAVAILABLE,
                "no serve session connected\n".to_owned(),
            ),
        },
        _ => (StatusCode::NOT_FOUND, "not found\n".to_owned()),
    };
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone)]
    struct Fake(Option<&'static str>);

    impl Readiness for Fake {
        fn connected_session(&self) -> Option<String> {
            self.0.map(str::to_owned)
        }
    }

    #[test]
    fn readiness_follows_the_session() {
        let get = |path: &str| Request::get(path).body(()).unwrap();
        let alone = Fake(None);
        assert_eq!(answer(&get("/livez"), &alone).status(), StatusCode::OK);
        assert_eq!(
            answer(&get("/readyz"), &alone).status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(answer(&get("/x"), &alone).status(), StatusCode::NOT_FOUND);
        let connected = answer(&get("/readyz"), &Fake(Some("s1")));
        assert_eq!(connected.status(), StatusCode::OK);
    }
}
