//! Fuzz targets of the HTTP request front: request path → route and
//! request info, and `Accept`/`Content-Type` negotiation.

use http::Method;

use crate::apimachinery::query::parse_query;
use crate::apimachinery::request_info::{Route, route};
use crate::apiserver::negotiate::{
    BodyType, body_type, content_type_of, negotiate as negotiate_accept, parse_accept,
};
use crate::apiserver::patch::PatchKind;

/// `request_info`: the first line is the method, the second the request
/// target (path, optionally `?query`).
pub fn request_info(data: &[u8]) {
    let (method, rest) = super::split_line(data);
    let (target, _) = super::split_line(rest);
    let Ok(method) = Method::from_bytes(method) else {
        return;
    };
    let target = super::text(target);
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (&*target, None),
    };
    let query = parse_query(query);
    if let Route::Resource(req) = route(&method, path, &query) {
        let _ = req.verb.as_str();
        assert!(
            !req.resource.is_empty() && !req.version.is_empty(),
            "a resource request without a resource or version: {req:?}"
        );
    }
}

/// `negotiate`: the first line is an `Accept` header, the second the
/// `includeObject` parameter (empty: absent), the third a `Content-Type`.
///
/// Asserts that a PATCH body type and the patch kind agree.
pub fn negotiate(data: &[u8]) {
    let (accept, rest) = super::split_line(data);
    let (include, rest) = super::split_line(rest);
    let (content_type, _) = super::split_line(rest);
    let accept = super::text(accept);
    let include = super::text(include);
    let include = (!include.is_empty()).then_some(&*include);
    for expect_list in [false, true] {
        if let Ok(repr) = negotiate_accept(Some(&accept), include, expect_list) {
            let _ = content_type_of(repr);
        }
    }
    for range in parse_accept(&accept) {
        let _ = (range.accepts_json(), range.param("as"));
        assert!(range.q.is_finite(), "{range:?} from {accept:?}");
    }
    let content_type = super::text(content_type);
    let kind = PatchKind::from_content_type(&content_type);
    match body_type(Some(&content_type)) {
        Ok(BodyType::JsonPatch) => assert_eq!(kind, Some(PatchKind::Json)),
        Ok(BodyType::MergePatch) => assert_eq!(kind, Some(PatchKind::Merge)),
        Ok(BodyType::ApplyPatch) => assert_eq!(kind, Some(PatchKind::Apply)),
        _ => assert_eq!(kind, None, "{content_type:?}"),
    }
}
