//! Building HTTP responses: JSON bodies, `Status` errors, plain-text health
//! answers, and streaming bodies for watches.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::Value;

use super::status::ApiError;

/// Every response body.
pub type Body = BoxBody<Bytes, Infallible>;

/// A complete body.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// A JSON response with an explicit content type.
pub fn json_with(code: StatusCode, value: &Value, content_type: &str) -> Response<Body> {
    encoded_json(
        code,
        serde_json::to_vec(value).unwrap_or_default(),
        content_type,
    )
}

/// A response whose body is already encoded JSON.
pub fn encoded_json(code: StatusCode, bytes: Vec<u8>, content_type: &str) -> Response<Body> {
    let mut response = Response::new(full(bytes));
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(content_type).unwrap_or(HeaderValue::from_static("application/json")),
    );
    response
}

/// A JSON response.
pub fn json(code: StatusCode, value: &Value) -> Response<Body> {
    json_with(code, value, "application/json")
}

/// A `Status` error response.
pub fn error(err: &ApiError) -> Response<Body> {
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
pub fn text(code: StatusCode, body: String) -> Response<Body> {
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

/// A streaming response fed by `rx`: each message is sent as it arrives.
pub fn stream(content_type: &str, rx: tokio::sync::mpsc::Receiver<Bytes>) -> Response<Body> {
    let frames = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|bytes| (Ok::<_, Infallible>(hyper::body::Frame::data(bytes)), rx))
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
