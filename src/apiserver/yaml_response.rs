//! `Accept: application/yaml` on resource requests. kube-apiserver answers
//! an object, a list or an error `Status` in YAML when the client prefers
//! it (curl, scripts; kubectl asks for JSON), and refuses a watch that
//! accepts only YAML (406: YAML has no stream framing). The handlers
//! answer JSON; [`wanted`] says when a request prefers YAML, the handler
//! is then asked for JSON ([`asking_json`]), and [`from_json`] turns its
//! complete answer into a YAML document.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, header};
use http_body_util::BodyExt as _;
use serde_json::Value;

use super::negotiate::parse_accept;
use super::response::{self, Body};

/// The content type of a YAML answer, as kube-apiserver sends it.
pub(crate) const CONTENT_TYPE: &str = "application/yaml";

/// Whether `accept` prefers YAML: its most preferred range (by `q`, then
/// order) that either encoding serves is `application/yaml` itself, with
/// no transform (`as=Table` and the like are served as JSON only).
pub(crate) fn wanted(accept: Option<&str>) -> bool {
    // Every request asks: most never name YAML, and need no parsing.
    let names_yaml = |a: &&str| {
        a.as_bytes()
            .windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"yaml"))
    };
    let Some(accept) = accept.filter(names_yaml) else {
        return false;
    };
    for range in parse_accept(accept) {
        if range.accepts_json() {
            return false;
        }
        if range.type_ == "application" && range.subtype == "yaml" {
            return range.param("as").is_none();
        }
    }
    false
}

/// `headers` with `Accept: application/json`, for the handler.
pub(crate) fn asking_json(headers: &HeaderMap) -> HeaderMap {
    let mut headers = headers.clone();
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    headers
}

/// The handler's JSON answer as YAML (status and other headers kept); an
/// answer that is not JSON is returned as it is.
pub(crate) async fn from_json(answer: Response<Body>) -> Response<Body> {
    // Exactly: not a watch's `application/json;stream=watch`.
    let is_json = answer
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t == "application/json");
    if !is_json {
        return answer;
    }
    let (mut parts, body) = answer.into_parts();
    // Bodies are infallible; a JSON answer is complete, never a stream.
    let Ok(collected) = body.collect().await;
    let bytes = collected.to_bytes();
    let Some(yaml) = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|value| serde_saphyr::to_string(&value).ok())
    else {
        return Response::from_parts(parts, response::full(bytes));
    };
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, response::full(Bytes::from(yaml)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn yaml_is_wanted_only_where_it_is_preferred() {
        for (accept, yaml) in [
            (Some("application/yaml"), true),
            (Some("application/yaml, application/json;q=0.9"), true),
            (Some("application/json;q=0.5, application/yaml"), true),
            (Some("application/json, application/yaml"), false),
            (Some("*/*"), false),
            (Some("application/yaml;as=Table;v=v1;g=meta.k8s.io"), false),
            (Some("text/plain, application/yaml"), true),
            (Some("Application/YAML"), true),
            (Some(""), false),
            (None, false),
        ] {
            assert_eq!(wanted(accept), yaml, "{accept:?}");
        }
    }

    #[tokio::test]
    async fn a_json_answer_becomes_a_yaml_document() {
        let answer = response::json(
            StatusCode::CREATED,
            &serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": "a", "labels": {"on": "yes"}},
                                "spec": {"finalizers": ["kubernetes"]}}),
        );
        let yaml = from_json(answer).await;
        assert_eq!(yaml.status(), StatusCode::CREATED);
        assert_eq!(yaml.headers()[header::CONTENT_TYPE], CONTENT_TYPE);
        let text = yaml.into_body().collect().await.unwrap().to_bytes();
        let text = std::str::from_utf8(&text).unwrap();
        let back: Value = serde_saphyr::from_str(text).unwrap();
        assert_eq!(back["metadata"]["labels"]["on"], "yes", "{text}");
        // YAML 1.1 readers (Go's yaml.v2 under sigs.k8s.io/yaml) take a
        // bare `on` or `yes` for a boolean.
        assert!(text.contains(r#""on": "yes""#), "{text}");
        assert_eq!(back["spec"]["finalizers"][0], "kubernetes", "{text}");
        assert!(
            text.starts_with("apiVersion: v1\nkind: Namespace\n"),
            "{text}"
        );

        let plain = response::text(StatusCode::OK, "ok".into());
        let kept = from_json(plain).await;
        assert_eq!(kept.into_body().collect().await.unwrap().to_bytes(), "ok");
    }
}
