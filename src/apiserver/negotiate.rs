//! Content negotiation for resource requests, following k8s.io/apiserver
//! `endpoints/handlers/negotiation`:
//!
//! - [`negotiate`] picks the response [`Representation`] from `Accept`:
//!   plain JSON, a `meta.k8s.io` `Table`, or `PartialObjectMetadata(List)`.
//!   Media ranges are tried in order of their `q` value (stable, so equal
//!   `q` keeps the client's order); protobuf, YAML, CBOR and any transform
//!   we cannot serve are skipped; 406 only when nothing is usable.
//! - [`content_type_of`] is the `Content-Type` to answer with. kube-apiserver
//!   answers tables and partial metadata with plain `application/json`
//!   (`transformResponseObject` calls `WriteObjectNegotiated(…, false)`, so no
//!   `;as=…;g=…;v=…` parameters); clients decode by the body's
//!   `kind`/`apiVersion`. Only aggregated discovery carries parameters, see
//!   [`super::discovery::AGGREGATED_CONTENT_TYPE`].
//! - [`body_type`] classifies a request body's `Content-Type` (415 otherwise).
//!
//! Deviations from upstream, both lenient: a `PartialObjectMetadata` range on
//! a list (or `PartialObjectMetadataList` on a single object) is skipped
//! rather than answered with 406; and `v1beta1` transforms are answered in
//! `meta.k8s.io/v1` (every client that asks for v1beta1 also accepts v1).

use crate::apimachinery::status::ApiError;

/// The body type of a successful response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Representation {
    /// The object or list itself.
    Json,
    /// A `meta.k8s.io/v1` `Table`; rows carry the object as asked.
    Table {
        /// What each row's `object` holds.
        include_object: IncludeObject,
    },
    /// `PartialObjectMetadata` of a single object.
    PartialObjectMetadata,
    /// `PartialObjectMetadataList` of a list.
    PartialObjectMetadataList,
}

/// The `includeObject` query parameter of table requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum IncludeObject {
    /// `None`: rows carry no object (`"object": null`).
    None,
    /// `Metadata` (the default): rows carry `PartialObjectMetadata`.
    #[default]
    Metadata,
    /// `Object`: rows carry the full object.
    Object,
}

impl IncludeObject {
    /// Parses the query parameter; a missing or empty value means `Metadata`.
    pub(crate) fn parse(param: Option<&str>) -> Result<IncludeObject, ApiError> {
        match param.unwrap_or("") {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "None" => Ok(IncludeObject::None),
            "Object" => Ok(IncludeObject::Object),
            other => Err(ApiError::bad_request(format!(
                "Unable to convert to Table as requested: includeObject: Invalid value: {}: must be 'Metadata', 'Object', 'None', or empty",
                crate::golang::quote(other)
            ))),
        }
    }
}

/// One parsed media range of an `Accept` header.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MediaRange {
    /// Lower-cased type (`application`, `*`).
    pub type_: String,
    /// Lower-cased subtype (`json`, `*`).
    pub subtype: String,
    /// Parameters other than `q`, names lower-cased, values unquoted.
    pub params: Vec<(String, String)>,
    /// The `q` value (1 when absent, 0 when malformed, as goautoneg does).
    pub q: f32,
}

impl MediaRange {
    /// The value of parameter `name`.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the range accepts JSON: `*/*`, `application/*` or
    /// `application/json`.
    pub(crate) fn accepts_json(&self) -> bool {
        matches!(
            (self.type_.as_str(), self.subtype.as_str()),
            ("*", "*") | ("application", "*") | ("application", "json")
        )
    }
}

/// Parses an `Accept` header into media ranges, sorted by descending `q`
/// (stable). Malformed ranges are dropped; a bare `*` means `*/*`.
pub(crate) fn parse_accept(accept: &str) -> Vec<MediaRange> {
    let mut ranges: Vec<MediaRange> = split_unquoted(accept, ',')
        .into_iter()
        .filter_map(parse_media_range)
        .collect();
    ranges.sort_by(|a, b| b.q.total_cmp(&a.q));
    ranges
}

/// Splits on `sep` outside double quotes.
fn split_unquoted(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn unquote(v: &str) -> String {
    let v = v.trim();
    match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) => {
            let mut out = String::with_capacity(inner.len());
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                } else {
                    out.push(c);
                }
            }
            out
        }
        None => v.to_owned(),
    }
}

fn parse_media_range(range: &str) -> Option<MediaRange> {
    let mut pieces = split_unquoted(range, ';').into_iter();
    let full = pieces.next()?.trim().to_ascii_lowercase();
    if full.is_empty() {
        return None;
    }
    let (type_, subtype) = match full.split_once('/') {
        Some((t, s)) => (t.trim().to_owned(), s.trim().to_owned()),
        None if full == "*" => ("*".to_owned(), "*".to_owned()),
        None => return None,
    };
    if type_.is_empty() || subtype.is_empty() {
        return None;
    }
    let mut params = Vec::new();
    let mut q = 1.0f32;
    for piece in pieces {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
        let name = name.trim().to_ascii_lowercase();
        let value = unquote(value);
        if name == "q" {
            q = value
                .parse::<f32>()
                .ok()
                .filter(|q| q.is_finite())
                .unwrap_or(0.0);
        } else {
            params.push((name, value));
        }
    }
    Some(MediaRange {
        type_,
        subtype,
        params,
        q,
    })
}

/// What a single range asks for, if we can serve it.
fn representation_of(
    range: &MediaRange,
    include_object: &dyn Fn() -> Result<IncludeObject, ApiError>,
    expect_list: bool,
) -> Result<Option<Representation>, ApiError> {
    if !range.accepts_json() {
        return Ok(None);
    }
    let (as_, g, v) = (range.param("as"), range.param("g"), range.param("v"));
    if as_.is_none() && g.is_none() && v.is_none() {
        return Ok(Some(Representation::Json));
    }
    // A transform: only meta.k8s.io v1/v1beta1, and only as concrete JSON.
    if range.type_ != "application" || range.subtype != "json" {
        return Ok(None);
    }
    if g != Some("meta.k8s.io") || !matches!(v, Some("v1" | "v1beta1")) {
        return Ok(None);
    }
    Ok(match as_ {
        Some("Table") => Some(Representation::Table {
            include_object: include_object()?,
        }),
        Some("PartialObjectMetadata") if !expect_list => {
            Some(Representation::PartialObjectMetadata)
        }
        Some("PartialObjectMetadataList") if expect_list => {
            Some(Representation::PartialObjectMetadataList)
        }
        _ => None,
    })
}

/// The message of the 406 we answer when nothing in `Accept` is usable
/// (YAML is served by [`super::yaml_response`]).
pub(crate) const NOT_ACCEPTABLE_MESSAGE: &str =
    "only the following media types are accepted: application/json, application/yaml";

/// The 406's message for a watch, whose stream is JSON only.
pub(crate) const NOT_ACCEPTABLE_WATCH_MESSAGE: &str =
    "only the following media types are accepted: application/json;stream=watch";

/// [`negotiate`] for a watch: its events carry objects (a
/// `PartialObjectMetadataList` range means `PartialObjectMetadata`), and
/// its 406 names the stream's media type.
pub(crate) fn negotiate_watch(
    accept: Option<&str>,
    include_object_param: Option<&str>,
) -> Result<Representation, ApiError> {
    match negotiate(accept, include_object_param, false) {
        Ok(Representation::PartialObjectMetadataList) => Ok(Representation::PartialObjectMetadata),
        Ok(other) => Ok(other),
        Err(e) if e.code == 406 => Err(ApiError::not_acceptable(NOT_ACCEPTABLE_WATCH_MESSAGE)),
        Err(e) => Err(e),
    }
}

/// Picks the response representation for a request whose result is a list
/// (`expect_list`, also for watch) or a single object.
///
/// `include_object_param` is the `includeObject` query parameter; it is only
/// checked when a table is chosen (400 for an unknown value). A missing or
/// empty `Accept` means JSON; nothing usable means 406 NotAcceptable.
pub(crate) fn negotiate(
    accept: Option<&str>,
    include_object_param: Option<&str>,
    expect_list: bool,
) -> Result<Representation, ApiError> {
    let accept = accept.map(str::trim).unwrap_or("");
    if accept.is_empty() {
        return Ok(Representation::Json);
    }
    let include_object = || IncludeObject::parse(include_object_param);
    for range in parse_accept(accept) {
        if let Some(repr) = representation_of(&range, &include_object, expect_list)? {
            return Ok(repr);
        }
    }
    Err(ApiError::not_acceptable(NOT_ACCEPTABLE_MESSAGE))
}

/// The exact `Content-Type` kube-apiserver sends for `repr`: always
/// `application/json` (see the module docs).
pub(crate) fn content_type_of(repr: Representation) -> &'static str {
    match repr {
        Representation::Json
        | Representation::Table { .. }
        | Representation::PartialObjectMetadata
        | Representation::PartialObjectMetadataList => "application/json",
    }
}

/// The type of a request body, from its `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyType {
    /// `application/json` (also assumed when the header is absent).
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/json-patch+json` (RFC 6902).
    JsonPatch,
    /// `application/merge-patch+json` (RFC 7386).
    MergePatch,
    /// `application/strategic-merge-patch+json`: recognized so PATCH can
    /// refuse it with 415 (the garbage collector falls back to a merge patch
    /// only on 415).
    StrategicMergePatch,
    /// `application/apply-patch+yaml` (server-side apply).
    ApplyPatch,
}

/// Patch media types PATCH accepts, as advertised in OpenAPI.
pub(crate) const PATCH_TYPES: [&str; 3] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// Media types accepted for a request body, as listed in the 415 message.
const BODY_TYPES: &str = "application/json, application/yaml, application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml";

/// Classifies a request body's `Content-Type`. Parameters (`charset=utf-8`)
/// are ignored; a missing or empty header means JSON, as kube-apiserver
/// assumes for create and update (PATCH must insist on a patch type).
/// Anything else is 415.
pub(crate) fn body_type(content_type: Option<&str>) -> Result<BodyType, ApiError> {
    let raw = content_type.unwrap_or("");
    let media = raw
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    Ok(match media.as_str() {
        "" | "application/json" => BodyType::Json,
        "application/yaml" => BodyType::Yaml,
        "application/json-patch+json" => BodyType::JsonPatch,
        "application/merge-patch+json" => BodyType::MergePatch,
        "application/strategic-merge-patch+json" => BodyType::StrategicMergePatch,
        "application/apply-patch+yaml" => BodyType::ApplyPatch,
        _ => {
            return Err(ApiError::unsupported_media_type(format!(
                "the body of the request was in an unknown format - accepted media types include: {BODY_TYPES}"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Request headers never panic the negotiation, whatever they are.
    #[test]
    fn garbage_never_panics() {
        for input in crate::apimachinery::garbage_inputs(20_000) {
            let _ = negotiate(Some(&input), Some(&input), true);
            let _ = body_type(Some(&input));
            let _ = super::super::discovery::wants_aggregated(Some(&input));
        }
    }

    const KUBECTL_GET: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    const METADATA_LIST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    const METADATA_GET: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

    fn table(include_object: IncludeObject) -> Representation {
        Representation::Table { include_object }
    }

    #[test]
    fn plain_json() {
        for accept in [
            None,
            Some(""),
            Some("*/*"),
            Some("*"),
            Some("application/*"),
            Some("application/json"),
            Some("application/json; charset=utf-8"),
            Some("text/html, application/json;q=0.9"),
            Some("APPLICATION/JSON"),
        ] {
            assert_eq!(
                negotiate(accept, None, false).unwrap(),
                Representation::Json,
                "{accept:?}"
            );
            assert_eq!(
                negotiate(accept, None, true).unwrap(),
                Representation::Json,
                "{accept:?}"
            );
        }
    }

    #[test]
    fn kubectl_get_gets_a_table() {
        assert_eq!(
            negotiate(Some(KUBECTL_GET), None, true).unwrap(),
            table(IncludeObject::Metadata)
        );
        assert_eq!(
            negotiate(Some(KUBECTL_GET), Some("Object"), false).unwrap(),
            table(IncludeObject::Object)
        );
        assert_eq!(
            negotiate(Some(KUBECTL_GET), Some("None"), true).unwrap(),
            table(IncludeObject::None)
        );
        assert_eq!(
            negotiate(
                Some("application/json;as=Table;v=v1beta1;g=meta.k8s.io"),
                None,
                true
            )
            .unwrap(),
            table(IncludeObject::Metadata)
        );
    }

    #[test]
    fn bad_include_object_is_400_only_for_tables() {
        let err = negotiate(Some(KUBECTL_GET), Some("Everything"), true).unwrap_err();
        assert_eq!((err.code, err.reason), (400, "BadRequest"));
        assert_eq!(
            err.message,
            "Unable to convert to Table as requested: includeObject: Invalid value: \"Everything\": must be 'Metadata', 'Object', 'None', or empty"
        );
        assert_eq!(
            negotiate(Some("application/json"), Some("Everything"), true).unwrap(),
            Representation::Json
        );
    }

    #[test]
    fn metadata_client_skips_protobuf() {
        assert_eq!(
            negotiate(Some(METADATA_LIST), None, true).unwrap(),
            Representation::PartialObjectMetadataList
        );
        assert_eq!(
            negotiate(Some(METADATA_GET), None, false).unwrap(),
            Representation::PartialObjectMetadata
        );
    }

    #[test]
    fn list_single_mismatch_falls_through() {
        // PartialObjectMetadata on a list: skipped, the plain JSON range wins.
        assert_eq!(
            negotiate(Some(METADATA_GET), None, true).unwrap(),
            Representation::Json
        );
        assert_eq!(
            negotiate(Some(METADATA_LIST), None, false).unwrap(),
            Representation::Json
        );
        let err = negotiate(
            Some("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"),
            None,
            true,
        )
        .unwrap_err();
        assert_eq!((err.code, err.reason), (406, "NotAcceptable"));
    }

    #[test]
    fn nothing_usable_is_406() {
        for accept in [
            "application/vnd.kubernetes.protobuf",
            "application/yaml",
            "text/plain",
            "application/json;as=Table;g=example.com;v=v1",
            "application/json;as=Table;g=meta.k8s.io;v=v2",
            "application/json;g=meta.k8s.io;v=v1",
            "application/json;as=Unknown;g=meta.k8s.io;v=v1",
            "*/*;as=Table;g=meta.k8s.io;v=v1",
            "garbage",
            ",,,",
        ] {
            let err = negotiate(Some(accept), None, true).unwrap_err();
            assert_eq!(err.code, 406, "{accept}");
            assert_eq!(err.message, NOT_ACCEPTABLE_MESSAGE);
        }
    }

    #[test]
    fn q_values_order_and_do_not_break_parsing() {
        assert_eq!(
            negotiate(
                Some("application/json;q=0.5, application/json;as=Table;g=meta.k8s.io;v=v1;q=0.9"),
                None,
                true
            )
            .unwrap(),
            table(IncludeObject::Metadata)
        );
        assert_eq!(
            negotiate(Some("application/json;q=abc"), None, true).unwrap(),
            Representation::Json
        );
        let ranges = parse_accept("a/b;q=0.1, c/d, e/f;q=\"0.5\";x=\"1,2\"");
        let order: Vec<_> = ranges.iter().map(|r| r.type_.as_str()).collect();
        assert_eq!(order, ["c", "e", "a"]);
        assert_eq!(ranges[1].param("x"), Some("1,2"));
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type_of(Representation::Json), "application/json");
        assert_eq!(
            content_type_of(table(IncludeObject::None)),
            "application/json"
        );
        assert_eq!(
            content_type_of(Representation::PartialObjectMetadataList),
            "application/json"
        );
    }

    #[test]
    fn body_types() {
        let ok = [
            (None, BodyType::Json),
            (Some(""), BodyType::Json),
            (Some("application/json"), BodyType::Json),
            (Some("application/json; charset=utf-8"), BodyType::Json),
            (Some("application/yaml"), BodyType::Yaml),
            (Some("application/json-patch+json"), BodyType::JsonPatch),
            (
                Some("application/merge-patch+json; charset=UTF-8"),
                BodyType::MergePatch,
            ),
            (
                Some("application/strategic-merge-patch+json"),
                BodyType::StrategicMergePatch,
            ),
            (Some("application/apply-patch+yaml"), BodyType::ApplyPatch),
            (Some("Application/JSON"), BodyType::Json),
        ];
        for (header, expected) in ok {
            assert_eq!(body_type(header).unwrap(), expected, "{header:?}");
        }
        for header in [
            "application/vnd.kubernetes.protobuf",
            "text/plain",
            "application/apply-patch+cbor",
            "application/x-www-form-urlencoded",
        ] {
            let err = body_type(Some(header)).unwrap_err();
            assert_eq!(
                (err.code, err.reason),
                (415, "UnsupportedMediaType"),
                "{header}"
            );
        }
    }
}
