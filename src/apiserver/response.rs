//! Building HTTP responses: JSON bodies, `Status` errors, plain-text health
//! answers, and streaming bodies for watches.
//!
//! [`error`] is where every error answer is written, so it is also where
//! the hidden cause of an internal error is logged: the client gets the
//! generic `Status`, the operator the cause.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::Value;

use crate::apimachinery::status::ApiError;

/// Every response body.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// A complete body.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// A JSON response with an explicit content type.
pub(crate) fn json_with(code: StatusCode, value: &Value, content_type: &str) -> Response<Body> {
    encoded_json(
        code,
        serde_json::to_vec(value).unwrap_or_default(),
        content_type,
    )
}

/// A response whose body is already encoded JSON.
pub(crate) fn encoded_json(
    code: StatusCode,
    bytes: impl Into<Bytes>,
    content_type: &str,
) -> Response<Body> {
    let mut response = Response::new(full(bytes));
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(content_type).unwrap_or(HeaderValue::from_static("application/json")),
    );
    response
}

/// A JSON response.
pub(crate) fn json(code: StatusCode, value: &Value) -> Response<Body> {
    json_with(code, value, "application/json")
}

/// A `Status` error response; an internal error's hidden cause is logged
/// here, never sent.
pub(crate) fn error(err: &ApiError) -> Response<Body> {
    if let Some(cause) = &err.hidden_cause {
        tracing::error!(code = err.code, "internal error: {cause}");
    }
    let mut response = json(
        StatusCode::from_u16(err.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &err.to_status(),
    );
    if let Some(seconds) = err.retry_after
        && let Ok(v) = HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

/// A plain-text response (health endpoints).
pub(crate) fn text(code: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = code;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// A streaming response of `chunks`: each is sent as it comes.
pub(crate) fn stream(
    content_type: &str,
    chunks: impl futures::Stream<Item = Bytes> + Send + Sync + 'static,
) -> Response<Body> {
    let frames = futures::StreamExt::map(chunks, |bytes| {
        Ok::<_, Infallible>(hyper::body::Frame::data(bytes))
    });
    let mut response = Response::new(StreamBody::new(frames).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(content_type).unwrap_or(HeaderValue::from_static("application/json")),
    );
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    response
}

/// kube-apiserver's 405 for a method its routes do not take (its generic
/// server response, whose details are empty but there).
pub(crate) fn method_not_allowed() -> ApiError {
    ApiError {
        details: Some(serde_json::json!({})),
        ..ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    #[tokio::test]
    async fn an_internal_error_is_logged_and_answered_generically() {
        let (subscriber, log) = crate::test_log::subscriber(None);
        let cause = "UPDATE objects: database is locked (/var/lib/cozy/db.sqlite)";
        let response = tracing::subscriber::with_default(subscriber, || {
            error(&ApiError::internal_hidden(cause))
        });
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let status: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            status["message"],
            "Internal error occurred: an error on the server has prevented the request from succeeding"
        );
        assert!(
            !String::from_utf8_lossy(&body).contains("database"),
            "{status}"
        );
        let logged = log.text();
        assert!(logged.contains(cause), "{logged}");
    }
}
