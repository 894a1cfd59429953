//! Round trips: documents are encoded, decoded back into the messages with
//! prost, turned back into JSON (`Any` values read with a YAML parser) and
//! compared with what went in; and what is refused, with where.

use prost::Message;
use serde_json::{Map, Value, json};

use super::from_json::{self, Error};
use super::messages::*;
use crate::apiserver::openapi::{self, OpenApiOptions};
use crate::kinds::Registry;

// ---- messages back to JSON (the inverse of from_json, for comparison) ----

fn put_str(m: &mut Map<String, Value>, key: &str, v: &str) {
    if !v.is_empty() {
        m.insert(key.into(), v.into());
    }
}

fn put_strs(m: &mut Map<String, Value>, key: &str, v: &[String]) {
    if !v.is_empty() {
        m.insert(key.into(), json!(v));
    }
}

fn put_bool(m: &mut Map<String, Value>, key: &str, v: bool) {
    if v {
        m.insert(key.into(), true.into());
    }
}

fn put_f64(m: &mut Map<String, Value>, key: &str, v: f64) {
    if v != 0.0 {
        m.insert(key.into(), json!(v));
    }
}

fn put_i64(m: &mut Map<String, Value>, key: &str, v: i64) {
    if v != 0 {
        m.insert(key.into(), json!(v));
    }
}

fn any(a: &Any) -> Value {
    serde_saphyr::from_str(&a.yaml).unwrap_or_else(|e| panic!("{e}: {:?}", a.yaml))
}

fn put_any(m: &mut Map<String, Value>, key: &str, v: Option<&Any>) {
    if let Some(a) = v {
        m.insert(key.into(), any(a));
    }
}

fn put_anys(m: &mut Map<String, Value>, key: &str, v: &[Any]) {
    if !v.is_empty() {
        m.insert(key.into(), v.iter().map(any).collect());
    }
}

fn put_extensions(m: &mut Map<String, Value>, v: &[NamedAny]) {
    for e in v {
        m.insert(
            e.name.clone(),
            any(e.value.as_ref().expect("extension value")),
        );
    }
}

fn document(d: &Document) -> Value {
    let mut m = Map::new();
    put_str(&mut m, "swagger", &d.swagger);
    if let Some(info) = &d.info {
        let mut i = Map::new();
        put_str(&mut i, "title", &info.title);
        put_str(&mut i, "version", &info.version);
        put_str(&mut i, "description", &info.description);
        put_str(&mut i, "termsOfService", &info.terms_of_service);
        put_extensions(&mut i, &info.vendor_extension);
        m.insert("info".into(), Value::Object(i));
    }
    put_str(&mut m, "host", &d.host);
    put_str(&mut m, "basePath", &d.base_path);
    put_strs(&mut m, "schemes", &d.schemes);
    put_strs(&mut m, "consumes", &d.consumes);
    put_strs(&mut m, "produces", &d.produces);
    if let Some(paths) = &d.paths {
        let mut p = Map::new();
        put_extensions(&mut p, &paths.vendor_extension);
        for named in &paths.path {
            p.insert(
                named.name.clone(),
                path_item(named.value.as_ref().expect("path item")),
            );
        }
        m.insert("paths".into(), Value::Object(p));
    }
    if let Some(defs) = &d.definitions {
        m.insert(
            "definitions".into(),
            named_schemas(&defs.additional_properties),
        );
    }
    put_extensions(&mut m, &d.vendor_extension);
    Value::Object(m)
}

fn path_item(p: &PathItem) -> Value {
    let mut m = Map::new();
    put_str(&mut m, "$ref", &p.xref);
    for (name, op) in [
        ("get", &p.get),
        ("put", &p.put),
        ("post", &p.post),
        ("delete", &p.delete),
        ("options", &p.options),
        ("head", &p.head),
        ("patch", &p.patch),
    ] {
        if let Some(op) = op {
            m.insert(name.into(), operation(op));
        }
    }
    if !p.parameters.is_empty() {
        m.insert(
            "parameters".into(),
            p.parameters.iter().map(parameters_item).collect(),
        );
    }
    put_extensions(&mut m, &p.vendor_extension);
    Value::Object(m)
}

fn external_docs(d: &ExternalDocs) -> Value {
    let mut m = Map::new();
    put_str(&mut m, "description", &d.description);
    put_str(&mut m, "url", &d.url);
    put_extensions(&mut m, &d.vendor_extension);
    Value::Object(m)
}

fn operation(o: &Operation) -> Value {
    let mut m = Map::new();
    put_strs(&mut m, "tags", &o.tags);
    put_str(&mut m, "summary", &o.summary);
    put_str(&mut m, "description", &o.description);
    if let Some(d) = &o.external_docs {
        m.insert("externalDocs".into(), external_docs(d));
    }
    put_str(&mut m, "operationId", &o.operation_id);
    put_strs(&mut m, "produces", &o.produces);
    put_strs(&mut m, "consumes", &o.consumes);
    if !o.parameters.is_empty() {
        m.insert(
            "parameters".into(),
            o.parameters.iter().map(parameters_item).collect(),
        );
    }
    if let Some(r) = &o.responses {
        let mut rm = Map::new();
        for named in &r.response_code {
            let value = match named.value.as_ref().and_then(|v| v.oneof.as_ref()) {
                Some(ResponseValueOneof::Response(r)) => {
                    let mut x = Map::new();
                    put_str(&mut x, "description", &r.description);
                    if let Some(SchemaItem {
                        oneof: Some(SchemaItemOneof::Schema(s)),
                    }) = &r.schema
                    {
                        x.insert("schema".into(), schema(s));
                    }
                    put_extensions(&mut x, &r.vendor_extension);
                    Value::Object(x)
                }
                Some(ResponseValueOneof::JsonReference(r)) => json_reference(r),
                None => panic!("empty response value"),
            };
            rm.insert(named.name.clone(), value);
        }
        put_extensions(&mut rm, &r.vendor_extension);
        m.insert("responses".into(), Value::Object(rm));
    }
    put_strs(&mut m, "schemes", &o.schemes);
    put_bool(&mut m, "deprecated", o.deprecated);
    put_extensions(&mut m, &o.vendor_extension);
    Value::Object(m)
}

fn json_reference(r: &JsonReference) -> Value {
    let mut m = Map::new();
    put_str(&mut m, "$ref", &r.xref);
    put_str(&mut m, "description", &r.description);
    Value::Object(m)
}

fn parameters_item(p: &ParametersItem) -> Value {
    match p.oneof.as_ref().expect("parameters item") {
        ParametersItemOneof::JsonReference(r) => json_reference(r),
        ParametersItemOneof::Parameter(p) => match p.oneof.as_ref().expect("parameter") {
            ParameterOneof::BodyParameter(b) => {
                let mut m = Map::new();
                put_str(&mut m, "description", &b.description);
                put_str(&mut m, "name", &b.name);
                put_str(&mut m, "in", &b.r#in);
                put_bool(&mut m, "required", b.required);
                if let Some(s) = &b.schema {
                    m.insert("schema".into(), schema(s));
                }
                put_extensions(&mut m, &b.vendor_extension);
                Value::Object(m)
            }
            ParameterOneof::NonBodyParameter(n) => match n.oneof.as_ref().expect("sub-schema") {
                NonBodyParameterOneof::Query(q) | NonBodyParameterOneof::FormData(q) => {
                    let mut m = Map::new();
                    put_bool(&mut m, "required", q.required);
                    put_str(&mut m, "in", &q.r#in);
                    put_str(&mut m, "description", &q.description);
                    put_str(&mut m, "name", &q.name);
                    put_bool(&mut m, "allowEmptyValue", q.allow_empty_value);
                    put_str(&mut m, "type", &q.r#type);
                    put_str(&mut m, "format", &q.format);
                    if let Some(items) = &q.items {
                        m.insert("items".into(), primitives_items(items));
                    }
                    put_str(&mut m, "collectionFormat", &q.collection_format);
                    put_any(&mut m, "default", q.default.as_ref());
                    put_f64(&mut m, "maximum", q.maximum);
                    put_bool(&mut m, "exclusiveMaximum", q.exclusive_maximum);
                    put_f64(&mut m, "minimum", q.minimum);
                    put_bool(&mut m, "exclusiveMinimum", q.exclusive_minimum);
                    put_i64(&mut m, "maxLength", q.max_length);
                    put_i64(&mut m, "minLength", q.min_length);
                    put_str(&mut m, "pattern", &q.pattern);
                    put_i64(&mut m, "maxItems", q.max_items);
                    put_i64(&mut m, "minItems", q.min_items);
                    put_bool(&mut m, "uniqueItems", q.unique_items);
                    put_anys(&mut m, "enum", &q.r#enum);
                    put_f64(&mut m, "multipleOf", q.multiple_of);
                    put_extensions(&mut m, &q.vendor_extension);
                    Value::Object(m)
                }
                NonBodyParameterOneof::Path(p) | NonBodyParameterOneof::Header(p) => {
                    let mut m = Map::new();
                    put_bool(&mut m, "required", p.required);
                    put_str(&mut m, "in", &p.r#in);
                    put_str(&mut m, "description", &p.description);
                    put_str(&mut m, "name", &p.name);
                    put_str(&mut m, "type", &p.r#type);
                    put_str(&mut m, "format", &p.format);
                    if let Some(items) = &p.items {
                        m.insert("items".into(), primitives_items(items));
                    }
                    put_str(&mut m, "collectionFormat", &p.collection_format);
                    put_any(&mut m, "default", p.default.as_ref());
                    put_f64(&mut m, "maximum", p.maximum);
                    put_bool(&mut m, "exclusiveMaximum", p.exclusive_maximum);
                    put_f64(&mut m, "minimum", p.minimum);
                    put_bool(&mut m, "exclusiveMinimum", p.exclusive_minimum);
                    put_i64(&mut m, "maxLength", p.max_length);
                    put_i64(&mut m, "minLength", p.min_length);
                    put_str(&mut m, "pattern", &p.pattern);
                    put_i64(&mut m, "maxItems", p.max_items);
                    put_i64(&mut m, "minItems", p.min_items);
                    put_bool(&mut m, "uniqueItems", p.unique_items);
                    put_anys(&mut m, "enum", &p.r#enum);
                    put_f64(&mut m, "multipleOf", p.multiple_of);
                    put_extensions(&mut m, &p.vendor_extension);
                    Value::Object(m)
                }
            },
        },
    }
}

fn primitives_items(p: &PrimitivesItems) -> Value {
    let mut m = Map::new();
    put_str(&mut m, "type", &p.r#type);
    put_str(&mut m, "format", &p.format);
    if let Some(items) = &p.items {
        m.insert("items".into(), primitives_items(items));
    }
    put_str(&mut m, "collectionFormat", &p.collection_format);
    put_any(&mut m, "default", p.default.as_ref());
    put_f64(&mut m, "maximum", p.maximum);
    put_bool(&mut m, "exclusiveMaximum", p.exclusive_maximum);
    put_f64(&mut m, "minimum", p.minimum);
    put_bool(&mut m, "exclusiveMinimum", p.exclusive_minimum);
    put_i64(&mut m, "maxLength", p.max_length);
    put_i64(&mut m, "minLength", p.min_length);
    put_str(&mut m, "pattern", &p.pattern);
    put_i64(&mut m, "maxItems", p.max_items);
    put_i64(&mut m, "minItems", p.min_items);
    put_bool(&mut m, "uniqueItems", p.unique_items);
    put_anys(&mut m, "enum", &p.r#enum);
    put_f64(&mut m, "multipleOf", p.multiple_of);
    put_extensions(&mut m, &p.vendor_extension);
    Value::Object(m)
}

fn named_schemas(v: &[NamedSchema]) -> Value {
    Value::Object(
        v.iter()
            .map(|n| (n.name.clone(), schema(n.value.as_ref().expect("schema"))))
            .collect(),
    )
}

fn schema(s: &Schema) -> Value {
    let mut m = Map::new();
    put_str(&mut m, "$ref", &s.xref);
    put_str(&mut m, "format", &s.format);
    put_str(&mut m, "title", &s.title);
    put_str(&mut m, "description", &s.description);
    put_any(&mut m, "default", s.default.as_ref());
    put_f64(&mut m, "multipleOf", s.multiple_of);
    put_f64(&mut m, "maximum", s.maximum);
    put_bool(&mut m, "exclusiveMaximum", s.exclusive_maximum);
    put_f64(&mut m, "minimum", s.minimum);
    put_bool(&mut m, "exclusiveMinimum", s.exclusive_minimum);
    put_i64(&mut m, "maxLength", s.max_length);
    put_i64(&mut m, "minLength", s.min_length);
    put_str(&mut m, "pattern", &s.pattern);
    put_i64(&mut m, "maxItems", s.max_items);
    put_i64(&mut m, "minItems", s.min_items);
    put_bool(&mut m, "uniqueItems", s.unique_items);
    put_i64(&mut m, "maxProperties", s.max_properties);
    put_i64(&mut m, "minProperties", s.min_properties);
    put_strs(&mut m, "required", &s.required);
    put_anys(&mut m, "enum", &s.r#enum);
    if let Some(a) = &s.additional_properties {
        let v = match a.oneof.as_ref().expect("additionalProperties") {
            AdditionalPropertiesOneof::Schema(s) => schema(s),
            AdditionalPropertiesOneof::Boolean(b) => Value::Bool(*b),
        };
        m.insert("additionalProperties".into(), v);
    }
    if let Some(t) = &s.r#type {
        // One type is written as a string, as in every document here.
        let v = match t.value.as_slice() {
            [one] => Value::String(one.clone()),
            many => json!(many),
        };
        m.insert("type".into(), v);
    }
    if let Some(items) = &s.items {
        assert_eq!(items.schema.len(), 1);
        m.insert("items".into(), schema(&items.schema[0]));
    }
    if !s.all_of.is_empty() {
        m.insert("allOf".into(), s.all_of.iter().map(schema).collect());
    }
    if let Some(p) = &s.properties {
        m.insert("properties".into(), named_schemas(&p.additional_properties));
    }
    put_str(&mut m, "discriminator", &s.discriminator);
    put_bool(&mut m, "readOnly", s.read_only);
    if let Some(d) = &s.external_docs {
        m.insert("externalDocs".into(), external_docs(d));
    }
    put_any(&mut m, "example", s.example.as_ref());
    put_extensions(&mut m, &s.vendor_extension);
    Value::Object(m)
}

/// Numbers as f64 (a `double` field reads back `1` as `1.0`).
fn numbers_as_f64(v: &mut Value) {
    match v {
        Value::Number(n) => *v = json!(n.as_f64().unwrap_or_default()),
        Value::Array(a) => a.iter_mut().for_each(numbers_as_f64),
        Value::Object(m) => m.values_mut().for_each(numbers_as_f64),
        _ => {}
    }
}

/// Encodes `doc`, decodes the bytes with prost and turns them back into
/// JSON, which must be `doc` again.
fn assert_round_trip(doc: &Value) {
    let bytes = super::encode(doc).unwrap_or_else(|e| panic!("{e}"));
    let decoded = Document::decode(bytes.as_slice()).expect("decodes");
    assert_eq!(decoded, from_json::document(doc).expect("converts"));
    let mut back = document(&decoded);
    let mut want = doc.clone();
    numbers_as_f64(&mut back);
    numbers_as_f64(&mut want);
    assert_eq!(back, want);
}

fn examples() -> std::sync::Arc<crate::kinds::registry::Snapshot> {
    Registry::from_path(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/kinds"
    )))
    .expect("example kinds")
    .snapshot()
}

#[test]
fn published_documents_round_trip() {
    let s = examples();
    for field_validation in [false, true] {
        for core_namespaces in [false, true] {
            let options = OpenApiOptions {
                field_validation,
                core_namespaces,
            };
            assert_round_trip(&openapi::v2(&s, &options));
        }
    }
}

/// Every keyword and oneof branch the conversion knows, with values a YAML
/// emitter must quote.
#[test]
fn every_supported_field_round_trips() {
    let tricky = json!([
        "",
        "on",
        "17",
        "1.5",
        "a: b",
        " lead",
        "two\nlines",
        "tab\t",
        "caf\u{e9}",
        "\u{1F600}",
        null,
        true,
        3,
        -2.5,
        [],
        {}
    ]);
    let get = json!({
        "tags": ["t"], "summary": "s", "description": "d", "externalDocs": {"url": "https://x", "description": "e", "x-e": true},
        "operationId": "o", "produces": ["a"], "consumes": ["b"], "schemes": ["http"], "deprecated": true,
        "parameters": [
            {"name": "q", "in": "query", "type": "array", "allowEmptyValue": true, "collectionFormat": "multi", "maxItems": 3, "minItems": 1, "uniqueItems": true,
             "items": {"type": "array", "collectionFormat": "csv", "items": {"type": "string", "pattern": "^a", "maxLength": 4, "minLength": 1, "enum": tricky, "default": "x", "x-i": "y"}}},
            {"name": "f", "in": "formData", "type": "file", "required": true},
            {"name": "body", "in": "body", "required": true, "description": "b", "schema": {"$ref": "#/definitions/D"}, "x-b": null}
        ],
        "responses": {
            "200": {"description": "ok", "schema": {"type": "array", "items": {"$ref": "#/definitions/D"}}, "x-r": [1]},
            "default": {"$ref": "#/responses/e"},
            "x-responses": {"k": "v"}
        },
        "x-kubernetes-action": "get",
        "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "D"}
    });
    let paths = json!({
        "x-paths": "v",
        "/a/{name}": {
            "$ref": "#/x",
            "parameters": [
                {"name": "name", "in": "path", "required": true, "type": "string", "description": "n", "x-p": 1},
                {"name": "h", "in": "header", "type": "integer", "format": "int32", "maximum": 5, "exclusiveMaximum": true, "minimum": -1, "exclusiveMinimum": true, "multipleOf": 0.5, "default": 2, "enum": [1, 2]},
                {"$ref": "#/parameters/p", "description": "r"}
            ],
            "get": get,
            "put": {"responses": {"201": {"description": "c"}}},
            "post": {"responses": {"201": {"description": "c"}}},
            "delete": {"responses": {"201": {"description": "c"}}},
            "options": {"responses": {"201": {"description": "c"}}},
            "head": {"responses": {"201": {"description": "c"}}},
            "patch": {"responses": {"201": {"description": "c"}}},
            "x-item": false
        }
    });
    let definitions = json!({
        "D": {
            "type": "object", "title": "T", "description": "d", "required": ["a"], "discriminator": "a", "readOnly": true,
            "maxProperties": 9, "minProperties": 1, "additionalProperties": false,
            "externalDocs": {"url": "u"}, "example": {"a": tricky}, "default": tricky,
            "properties": {
                "a": {"type": "string", "enum": tricky, "format": "byte", "x-kubernetes-validations": [{"rule": "self.size() > 0 && self != 'x'", "message": "must: not\nbe empty"}]},
                "b": {"type": "number", "maximum": 1e300, "minimum": -0.5, "multipleOf": 0.25},
                "c": {"type": "array", "items": {"$ref": "#/definitions/E"}, "maxItems": 2, "minItems": 1, "uniqueItems": true, "x-kubernetes-list-type": "set"},
                "d": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 63}},
                "e": {"x-kubernetes-preserve-unknown-fields": true},
                "f": {}
            },
            "x-kubernetes-group-version-kind": [{"group": "", "kind": "D", "version": "v1"}]
        },
        "E": {"type": ["string", "null"], "allOf": [{"$ref": "#/definitions/D"}, {"properties": {}}], "additionalProperties": true}
    });
    let doc = json!({
        "swagger": "2.0",
        "info": {"title": "t", "version": "1", "description": "d", "termsOfService": "tos", "x-info": {"a": [1]}},
        "host": "h", "basePath": "/b", "schemes": ["https", "wss"], "consumes": ["application/json"], "produces": ["application/yaml"],
        "paths": paths,
        "definitions": definitions,
        "x-doc": tricky
    });
    assert_round_trip(&doc);
}

#[test]
fn what_cannot_be_converted_is_refused_with_where() {
    let base = || {
        json!({
            "swagger": "2.0",
            "info": {"title": "t", "version": "1"},
            "paths": {},
            "definitions": {"D": {"type": "object", "properties": {"a/b": {"type": "string"}}}}
        })
    };
    let refused = |edit: &dyn Fn(&mut Value)| {
        let mut doc = base();
        edit(&mut doc);
        from_json::document(&doc).expect_err("refused")
    };
    let e = |pointer: &str, problem: &str| Error {
        pointer: pointer.into(),
        problem: problem.into(),
    };
    assert!(from_json::document(&base()).is_ok());
    assert_eq!(
        refused(&|d| d["definitions"]["D"]["properties"]["a/b"]["nullable"] = json!(true)),
        e(
            "/definitions/D/properties/a~1b/nullable",
            "\"nullable\" is not supported here"
        )
    );
    assert_eq!(
        refused(&|d| d["definitions"]["D"]["xml"] = json!({"name": "x"})),
        e("/definitions/D/xml", "\"xml\" is not supported here")
    );
    assert_eq!(
        refused(&|d| d["definitions"]["D"]["maxLength"] = json!(1.5)),
        e("/definitions/D/maxLength", "1.5 is not a 64-bit integer")
    );
    assert_eq!(
        refused(&|d| d["definitions"]["D"]["items"] = json!([{"type": "string"}])),
        e(
            "/definitions/D/items",
            "a schema must be an object, not an array"
        )
    );
    assert_eq!(
        refused(&|d| d["definitions"]["D"]["description"] = json!(5)),
        e(
            "/definitions/D/description",
            "must be a string, not a number"
        )
    );
    assert_eq!(
        refused(&|d| d["info"] = json!({"title": "t"})),
        e("/info", "missing required version")
    );
    assert_eq!(
        refused(&|d| d["swagger"] = json!("3.0")),
        e("/swagger", "\"3.0\" is not one of 2.0")
    );
    assert_eq!(
        refused(&|d| d["tags"] = json!([])),
        e("/tags", "\"tags\" is not supported here")
    );
    assert_eq!(
        refused(&|d| d["paths"]["nope"] = json!({})),
        e("/paths/nope", "\"nope\" is not supported here")
    );
    assert_eq!(
        refused(&|d| d["paths"]["/p"] =
            json!({"get": {"responses": {"200": {"description": "x", "headers": {}}}}})),
        e(
            "/paths/~1p/get/responses/200/headers",
            "\"headers\" is not supported here"
        )
    );
    assert_eq!(
        refused(
            &|d| d["paths"]["/p"] = json!({"get": {"responses": {}, "parameters": [{"name": "c", "in": "cookie", "type": "string"}]}})
        ),
        e(
            "/paths/~1p/get/parameters/0/in",
            "\"cookie\" is not one of body, query, formData, path, header"
        )
    );
    assert_eq!(
        refused(
            &|d| d["paths"]["/p"] = json!({"get": {"responses": {}, "parameters": [{"name": "n", "in": "path", "type": "string"}]}})
        ),
        e("/paths/~1p/get/parameters/0", "missing required required")
    );
    assert_eq!(
        refused(
            &|d| d["paths"]["/p"] = json!({"get": {"responses": {}, "parameters": [{"name": "n", "in": "path", "required": true, "type": "string", "allowEmptyValue": true}]}})
        ),
        e(
            "/paths/~1p/get/parameters/0/allowEmptyValue",
            "\"allowEmptyValue\" is not supported here"
        )
    );
    assert_eq!(
        refused(
            &|d| d["paths"]["/p"] = json!({"get": {"responses": {"200": {"description": "f", "schema": {"type": "file"}}}}})
        ),
        e(
            "/paths/~1p/get/responses/200/schema",
            "file schemas are not supported"
        )
    );
    assert_eq!(
        refused(&|d| d["paths"]["/p"] = json!({"get": {}})),
        e("/paths/~1p/get", "missing required responses")
    );
}
