//! Reading a request body whole, within the size limit (413) and the
//! request's deadline (504, as kube-apiserver's timeout filter answers a
//! handler still reading a trickled body). A body left unread cannot be
//! skipped on a keep-alive connection, so every refusal here asks for the
//! connection to be closed (`Connection: close` over HTTP/1), and the
//! client opens a new one for its next request instead of meeting an EOF.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Response, Version, header};
use http_body_util::{BodyExt, Limited};

use super::response::{self, Body};
use crate::apimachinery::status::ApiError;

/// Collects `body`: at most `limit` bytes, within `timeout`.
pub(crate) async fn read<B>(body: B, limit: usize, timeout: Duration) -> Result<Bytes, ApiError>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match tokio::time::timeout(timeout, Limited::new(body, limit).collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e))
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            // kube-apiserver's words (`limitedReadBody`).
            Err(ApiError::too_large(format!("limit is {limit}")))
        }
        Ok(Err(e)) => Err(ApiError::bad_request(format!(
            "reading the request body: {e}"
        ))),
        Err(_) => Err(ApiError::timeout(format!(
            "the request body did not arrive within {}s",
            timeout.as_secs()
        ))),
    }
}

/// The answer to a refused body: the error, closing an HTTP/1 connection.
pub(crate) fn refusal(err: &ApiError, version: Version) -> Response<Body> {
    let mut response = response::error(err);
    if version < Version::HTTP_2 {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use futures::StreamExt;
    use http_body_util::StreamBody;
    use hyper::body::Frame;

    use super::*;

    fn trickle(
        chunks: usize,
        every: Duration,
    ) -> impl hyper::body::Body<Data = Bytes, Error = Infallible> {
        let stream = futures::stream::iter(0..chunks).then(move |_| async move {
            tokio::time::sleep(every).await;
            Ok::<_, Infallible>(Frame::data(Bytes::from_static(b"x")))
        });
        StreamBody::new(stream)
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickled_body_is_cut_at_the_deadline() {
        let err = read(
            trickle(1000, Duration::from_secs(1)),
            1 << 20,
            Duration::from_secs(60),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code, 504, "{err:?}");
        let done = read(
            trickle(5, Duration::from_secs(1)),
            1 << 20,
            Duration::from_secs(60),
        )
        .await
        .unwrap();
        assert_eq!(done.len(), 5);
    }

    #[tokio::test]
    async fn an_oversized_body_is_413_and_closes_an_http1_connection() {
        let body = http_body_util::Full::new(Bytes::from(vec![b'x'; 11]));
        let err = read(body, 10, Duration::from_secs(1)).await.unwrap_err();
        assert_eq!(err.code, 413);
        // kube-apiserver's message.
        assert_eq!(err.message, "Request entity too large: limit is 10");
        let http1 = refusal(&err, Version::HTTP_11);
        assert_eq!(http1.status(), 413);
        assert_eq!(http1.headers()[header::CONNECTION], "close");
        let http2 = refusal(&err, Version::HTTP_2);
        assert!(http2.headers().get(header::CONNECTION).is_none());
    }
}
