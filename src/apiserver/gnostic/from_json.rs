//! A Swagger 2.0 document (`serde_json::Value`) to gnostic's
//! `openapi_v2.Document` ([`super::messages`]), as gnostic's
//! `openapi_v2.ParseDocument` reads it: every key to its field, keys and
//! map entries in document order, `x-…` keys to `NamedAny` vendor
//! extensions whose `Any.yaml` is [`super::yaml::to_yaml`] of the value, and
//! the same choices in oneofs (`$ref` makes a `JsonReference` of a
//! parameter or response; a parameter's `in` picks its sub-schema; a
//! boolean `additionalProperties` is `boolean`, an object `schema`).
//!
//! Nothing is dropped: a key this conversion has no field for, a value of
//! the wrong JSON type, a number a field cannot hold exactly (`maxLength:
//! 1.5`), or a key gnostic requires that is missing is an [`Error`] naming
//! the JSON pointer of the offending value. gnostic refuses these too,
//! except the parts of Swagger 2.0 left out of [`super::messages`].

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::messages::*;
use super::yaml::to_yaml;

/// Why a document cannot be converted: what, and where (a JSON pointer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("OpenAPI v2 document at {pointer:?}: {problem}")]
pub(crate) struct Error {
    /// The JSON pointer of the offending value (`""` for the root).
    pub pointer: String,
    /// What is wrong with it.
    pub problem: String,
}

type Result<T> = std::result::Result<T, Error>;

fn error(pointer: &str, problem: impl Into<String>) -> Error {
    Error {
        pointer: pointer.to_owned(),
        problem: problem.into(),
    }
}

/// `pointer` extended by `key` (RFC 6901 escaping).
fn child(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// The JSON type of `v`, for error messages.
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON object being read into one message: keys are taken one by one,
/// and [`Object::finish`] refuses any left over.
struct Object<'a> {
    map: &'a Map<String, Value>,
    pointer: String,
    taken: HashSet<&'a str>,
}

impl<'a> Object<'a> {
    fn new(value: &'a Value, pointer: &str, what: &str) -> Result<Object<'a>> {
        match value {
            Value::Object(map) => Ok(Object {
                map,
                pointer: pointer.to_owned(),
                taken: HashSet::new(),
            }),
            other => Err(error(
                pointer,
                format!("{what} must be an object, not {}", type_of(other)),
            )),
        }
    }

    fn at(&self, key: &str) -> String {
        child(&self.pointer, key)
    }

    /// The value of `key`, marking it read.
    fn take(&mut self, key: &str) -> Option<&'a Value> {
        let (k, v) = self.map.get_key_value(key)?;
        self.taken.insert(k.as_str());
        Some(v)
    }

    /// Refuses the message when one of `keys` is missing, as gnostic does.
    fn require(&self, keys: &[&str]) -> Result<()> {
        let missing: Vec<&str> = keys
            .iter()
            .copied()
            .filter(|k| !self.map.contains_key(*k))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(error(
                &self.pointer,
                format!("missing required {}", missing.join(", ")),
            ))
        }
    }

    fn string(&mut self, key: &str) -> Result<String> {
        match self.take(key) {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(error(
                &self.at(key),
                format!("must be a string, not {}", type_of(other)),
            )),
        }
    }

    /// A string that must be one of `allowed` when present.
    fn one_of(&mut self, key: &str, allowed: &[&str]) -> Result<String> {
        let s = self.string(key)?;
        if self.map.contains_key(key) && !allowed.contains(&s.as_str()) {
            return Err(error(
                &self.at(key),
                format!("{s:?} is not one of {}", allowed.join(", ")),
            ));
        }
        Ok(s)
    }

    fn strings(&mut self, key: &str) -> Result<Vec<String>> {
        let Some(v) = self.take(key) else {
            return Ok(Vec::new());
        };
        let at = self.at(key);
        let Value::Array(items) = v else {
            return Err(error(
                &at,
                format!("must be an array of strings, not {}", type_of(v)),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(error(
                    &child(&at, &i.to_string()),
                    format!("must be a string, not {}", type_of(other)),
                )),
            })
            .collect()
    }

    fn bool(&mut self, key: &str) -> Result<bool> {
        match self.take(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(error(
                &self.at(key),
                format!("must be a boolean, not {}", type_of(other)),
            )),
        }
    }

    /// A `double` field: any JSON number.
    fn f64(&mut self, key: &str) -> Result<f64> {
        match self.take(key) {
            None => Ok(0.0),
            Some(Value::Number(n)) => n
                .as_f64()
                .ok_or_else(|| error(&self.at(key), "not a number")),
            Some(other) => Err(error(
                &self.at(key),
                format!("must be a number, not {}", type_of(other)),
            )),
        }
    }

    /// An `int64` field: an integer JSON number that fits (gnostic takes
    /// only YAML integers here).
    fn i64(&mut self, key: &str) -> Result<i64> {
        match self.take(key) {
            None => Ok(0),
            Some(Value::Number(n)) => n
                .as_i64()
                .ok_or_else(|| error(&self.at(key), format!("{n} is not a 64-bit integer"))),
            Some(other) => Err(error(
                &self.at(key),
                format!("must be an integer, not {}", type_of(other)),
            )),
        }
    }

    /// An `Any` field: the value as YAML.
    fn any(&mut self, key: &str) -> Option<Any> {
        self.take(key).map(|v| Any { yaml: to_yaml(v) })
    }

    /// A `repeated Any` field (`enum`): one `Any` per array item.
    fn anys(&mut self, key: &str) -> Result<Vec<Any>> {
        match self.take(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                Ok(items.iter().map(|v| Any { yaml: to_yaml(v) }).collect())
            }
            Some(other) => Err(error(
                &self.at(key),
                format!("must be an array, not {}", type_of(other)),
            )),
        }
    }

    /// A message field read by `read` at `key`.
    fn message<T>(
        &mut self,
        key: &str,
        read: impl FnOnce(&'a Value, &str) -> Result<T>,
    ) -> Result<Option<T>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => read(v, &self.at(key)).map(Some),
        }
    }

    /// A `repeated` message field from a JSON array.
    fn messages<T>(
        &mut self,
        key: &str,
        read: impl Fn(&'a Value, &str) -> Result<T>,
    ) -> Result<Vec<T>> {
        let Some(v) = self.take(key) else {
            return Ok(Vec::new());
        };
        let at = self.at(key);
        let Value::Array(items) = v else {
            return Err(error(&at, format!("must be an array, not {}", type_of(v))));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| read(item, &child(&at, &i.to_string())))
            .collect()
    }

    /// Every `x-…` key, in order, as vendor extensions.
    fn extensions(&mut self) -> Vec<NamedAny> {
        let mut out = Vec::new();
        for (k, v) in self.map {
            if k.starts_with("x-") {
                self.taken.insert(k.as_str());
                out.push(NamedAny {
                    name: k.clone(),
                    value: Some(Any { yaml: to_yaml(v) }),
                });
            }
        }
        out
    }

    /// Refuses keys nothing read.
    fn finish(self) -> Result<()> {
        match self.map.keys().find(|k| !self.taken.contains(k.as_str())) {
            None => Ok(()),
            Some(k) => Err(error(&self.at(k), format!("{k:?} is not supported here"))),
        }
    }
}

/// Converts a Swagger 2.0 document.
pub(crate) fn document(value: &Value) -> Result<Document> {
    let mut o = Object::new(value, "", "the document")?;
    o.require(&["info", "paths", "swagger"])?;
    let swagger = o.one_of("swagger", &["2.0"])?;
    let doc = Document {
        swagger,
        info: o.message("info", info)?,
        host: o.string("host")?,
        base_path: o.string("basePath")?,
        schemes: schemes(&mut o)?,
        consumes: o.strings("consumes")?,
        produces: o.strings("produces")?,
        paths: o.message("paths", paths)?,
        definitions: o.message("definitions", |v, at| {
            Ok(Definitions {
                additional_properties: named_schemas(v, at)?,
            })
        })?,
        vendor_extension: o.extensions(),
    };
    o.finish()?;
    Ok(doc)
}

fn schemes(o: &mut Object<'_>) -> Result<Vec<String>> {
    let schemes = o.strings("schemes")?;
    if let Some(bad) = schemes
        .iter()
        .find(|s| !["http", "https", "ws", "wss"].contains(&s.as_str()))
    {
        return Err(error(
            &o.at("schemes"),
            format!("{bad:?} is not one of http, https, ws, wss"),
        ));
    }
    Ok(schemes)
}

fn info(v: &Value, at: &str) -> Result<Info> {
    let mut o = Object::new(v, at, "info")?;
    o.require(&["title", "version"])?;
    let info = Info {
        title: o.string("title")?,
        version: o.string("version")?,
        description: o.string("description")?,
        terms_of_service: o.string("termsOfService")?,
        vendor_extension: o.extensions(),
    };
    o.finish()?;
    Ok(info)
}

fn paths(v: &Value, at: &str) -> Result<Paths> {
    let mut o = Object::new(v, at, "paths")?;
    let mut path = Vec::new();
    for (k, item) in o.map {
        if k.starts_with('/') {
            path.push(NamedPathItem {
                name: k.clone(),
                value: Some(path_item(item, &child(at, k))?),
            });
            o.taken.insert(k.as_str());
        }
    }
    let paths = Paths {
        vendor_extension: o.extensions(),
        path,
    };
    o.finish()?;
    Ok(paths)
}

fn path_item(v: &Value, at: &str) -> Result<PathItem> {
    let mut o = Object::new(v, at, "a path item")?;
    let item = PathItem {
        xref: o.string("$ref")?,
        get: o.message("get", operation)?,
        put: o.message("put", operation)?,
        post: o.message("post", operation)?,
        delete: o.message("delete", operation)?,
        options: o.message("options", operation)?,
        head: o.message("head", operation)?,
        patch: o.message("patch", operation)?,
        parameters: o.messages("parameters", parameters_item)?,
        vendor_extension: o.extensions(),
    };
    o.finish()?;
    Ok(item)
}

fn operation(v: &Value, at: &str) -> Result<Operation> {
    let mut o = Object::new(v, at, "an operation")?;
    o.require(&["responses"])?;
    let op = Operation {
        tags: o.strings("tags")?,
        summary: o.string("summary")?,
        description: o.string("description")?,
        external_docs: o.message("externalDocs", external_docs)?,
        operation_id: o.string("operationId")?,
        produces: o.strings("produces")?,
        consumes: o.strings("consumes")?,
        parameters: o.messages("parameters", parameters_item)?,
        responses: o.message("responses", responses)?,
        schemes: schemes(&mut o)?,
        deprecated: o.bool("deprecated")?,
        vendor_extension: o.extensions(),
    };
    o.finish()?;
    Ok(op)
}

fn json_reference(v: &Value, at: &str) -> Result<JsonReference> {
    let mut o = Object::new(v, at, "a reference")?;
    let r = JsonReference {
        xref: o.string("$ref")?,
        description: o.string("description")?,
    };
    o.finish()?;
    Ok(r)
}

fn parameters_item(v: &Value, at: &str) -> Result<ParametersItem> {
    let oneof = if v.get("$ref").is_some() {
        ParametersItemOneof::JsonReference(json_reference(v, at)?)
    } else {
        ParametersItemOneof::Parameter(Box::new(parameter(v, at)?))
    };
    Ok(ParametersItem { oneof: Some(oneof) })
}

fn parameter(v: &Value, at: &str) -> Result<Parameter> {
    let mut o = Object::new(v, at, "a parameter")?;
    let location = match v.get("in") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(error(at, "a parameter needs \"in\" (a string)")),
    };
    let oneof = match location.as_str() {
        "body" => {
            o.require(&["in", "name", "schema"])?;
            let body = BodyParameter {
                description: o.string("description")?,
                name: o.string("name")?,
                r#in: o.string("in")?,
                required: o.bool("required")?,
                schema: o.message("schema", schema)?,
                vendor_extension: o.extensions(),
            };
            ParameterOneof::BodyParameter(body)
        }
        "query" | "formData" => {
            o.require(&["in", "name", "type"])?;
            let mut types = vec!["string", "number", "boolean", "integer", "array"];
            if location == "formData" {
                types.push("file");
            }
            let q = QueryParameter {
                required: o.bool("required")?,
                r#in: o.string("in")?,
                description: o.string("description")?,
                name: o.string("name")?,
                allow_empty_value: o.bool("allowEmptyValue")?,
                r#type: o.one_of("type", &types)?,
                format: o.string("format")?,
                items: o.message("items", primitives_items)?,
                collection_format: o
                    .one_of("collectionFormat", &["csv", "ssv", "tsv", "pipes", "multi"])?,
                default: o.any("default"),
                maximum: o.f64("maximum")?,
                exclusive_maximum: o.bool("exclusiveMaximum")?,
                minimum: o.f64("minimum")?,
                exclusive_minimum: o.bool("exclusiveMinimum")?,
                max_length: o.i64("maxLength")?,
                min_length: o.i64("minLength")?,
                pattern: o.string("pattern")?,
                max_items: o.i64("maxItems")?,
                min_items: o.i64("minItems")?,
                unique_items: o.bool("uniqueItems")?,
                r#enum: o.anys("enum")?,
                multiple_of: o.f64("multipleOf")?,
                vendor_extension: o.extensions(),
            };
            let sub = if location == "query" {
                NonBodyParameterOneof::Query(q)
            } else {
                NonBodyParameterOneof::FormData(q)
            };
            ParameterOneof::NonBodyParameter(NonBodyParameter { oneof: Some(sub) })
        }
        "path" | "header" => {
            o.require(&["in", "name", "type"])?;
            if location == "path" {
                o.require(&["required"])?;
            }
            let p = SimpleParameter {
                required: o.bool("required")?,
                r#in: o.string("in")?,
                description: o.string("description")?,
                name: o.string("name")?,
                r#type: o.one_of("type", &["string", "number", "boolean", "integer", "array"])?,
                format: o.string("format")?,
                items: o.message("items", primitives_items)?,
                collection_format: o.one_of("collectionFormat", &["csv", "ssv", "tsv", "pipes"])?,
                default: o.any("default"),
                maximum: o.f64("maximum")?,
                exclusive_maximum: o.bool("exclusiveMaximum")?,
                minimum: o.f64("minimum")?,
                exclusive_minimum: o.bool("exclusiveMinimum")?,
                max_length: o.i64("maxLength")?,
                min_length: o.i64("minLength")?,
                pattern: o.string("pattern")?,
                max_items: o.i64("maxItems")?,
                min_items: o.i64("minItems")?,
                unique_items: o.bool("uniqueItems")?,
                r#enum: o.anys("enum")?,
                multiple_of: o.f64("multipleOf")?,
                vendor_extension: o.extensions(),
            };
            let sub = if location == "path" {
                NonBodyParameterOneof::Path(p)
            } else {
                NonBodyParameterOneof::Header(p)
            };
            ParameterOneof::NonBodyParameter(NonBodyParameter { oneof: Some(sub) })
        }
        other => {
            return Err(error(
                &child(at, "in"),
                format!("{other:?} is not one of body, query, formData, path, header"),
            ));
        }
    };
    o.finish()?;
    Ok(Parameter { oneof: Some(oneof) })
}

fn primitives_items(v: &Value, at: &str) -> Result<PrimitivesItems> {
    let mut o = Object::new(v, at, "items")?;
    let items = PrimitivesItems {
        r#type: o.one_of("type", &["string", "number", "integer", "boolean", "array"])?,
        format: o.string("format")?,
        items: o.message("items", primitives_items)?.map(Box::new),
        collection_format: o.one_of("collectionFormat", &["csv", "ssv", "tsv", "pipes"])?,
        default: o.any("default"),
        maximum: o.f64("maximum")?,
        exclusive_maximum: o.bool("exclusiveMaximum")?,
        minimum: o.f64("minimum")?,
        exclusive_minimum: o.bool("exclusiveMinimum")?,
        max_length: o.i64("maxLength")?,
        min_length: o.i64("minLength")?,
        pattern: o.string("pattern")?,
        max_items: o.i64("maxItems")?,
        min_items: o.i64("minItems")?,
        unique_items: o.bool("uniqueItems")?,
        r#enum: o.anys("enum")?,
        multiple_of: o.f64("multipleOf")?,
        vendor_extension: o.extensions(),
    };
    o.finish()?;
    Ok(items)
}

fn responses(v: &Value, at: &str) -> Result<Responses> {
    let mut o = Object::new(v, at, "responses")?;
    let mut response_code = Vec::new();
    for (k, value) in o.map {
        let is_code = k == "default" || (k.len() == 3 && k.bytes().all(|b| b.is_ascii_digit()));
        if is_code {
            let at = child(at, k);
            let oneof = if value.get("$ref").is_some() {
                ResponseValueOneof::JsonReference(json_reference(value, &at)?)
            } else {
                ResponseValueOneof::Response(Box::new(response(value, &at)?))
            };
            response_code.push(NamedResponseValue {
                name: k.clone(),
                value: Some(ResponseValue { oneof: Some(oneof) }),
            });
            o.taken.insert(k.as_str());
        }
    }
    let r = Responses {
        response_code,
        vendor_extension: o.extensions(),
    };
    o.finish()?;
    Ok(r)
}

fn response(v: &Value, at: &str) -> Result<Response> {
    let mut o = Object::new(v, at, "a response")?;
    o.require(&["description"])?;
    let r = Response {
        description: o.string("description")?,
        schema: o.message("schema", |v, at| {
            if v.get("type").and_then(Value::as_str) == Some("file") {
                return Err(error(at, "file schemas are not supported"));
            }
            Ok(SchemaItem {
                oneof: Some(SchemaItemOneof::Schema(schema(v, at)?)),
            })
        })?,
        vendor_extension: o.extensions(),
    };
    o.finish()?;
    Ok(r)
}

fn external_docs(v: &Value, at: &str) -> Result<ExternalDocs> {
    let mut o = Object::new(v, at, "externalDocs")?;
    o.require(&["url"])?;
    let docs = ExternalDocs {
        description: o.string("description")?,
        url: o.string("url")?,
        vendor_extension: o.extensions(),
    };
    o.finish()?;
    Ok(docs)
}

/// An object of schemas by name (`definitions`, `properties`).
fn named_schemas(v: &Value, at: &str) -> Result<Vec<NamedSchema>> {
    let Value::Object(map) = v else {
        return Err(error(
            at,
            format!("must be an object of schemas, not {}", type_of(v)),
        ));
    };
    map.iter()
        .map(|(name, s)| {
            Ok(NamedSchema {
                name: name.clone(),
                value: Some(schema(s, &child(at, name))?),
            })
        })
        .collect()
}

/// A Swagger 2.0 schema.
pub(crate) fn schema(v: &Value, at: &str) -> Result<Schema> {
    let mut o = Object::new(v, at, "a schema")?;
    let s = Schema {
        xref: o.string("$ref")?,
        format: o.string("format")?,
        title: o.string("title")?,
        description: o.string("description")?,
        default: o.any("default"),
        multiple_of: o.f64("multipleOf")?,
        maximum: o.f64("maximum")?,
        exclusive_maximum: o.bool("exclusiveMaximum")?,
        minimum: o.f64("minimum")?,
        exclusive_minimum: o.bool("exclusiveMinimum")?,
        max_length: o.i64("maxLength")?,
        min_length: o.i64("minLength")?,
        pattern: o.string("pattern")?,
        max_items: o.i64("maxItems")?,
        min_items: o.i64("minItems")?,
        unique_items: o.bool("uniqueItems")?,
        max_properties: o.i64("maxProperties")?,
        min_properties: o.i64("minProperties")?,
        required: o.strings("required")?,
        r#enum: o.anys("enum")?,
        additional_properties: o.message("additionalProperties", additional_properties)?,
        r#type: o.message("type", type_item)?,
        items: o.message("items", |v, at| {
            Ok(ItemsItem {
                schema: vec![schema(v, at)?],
            })
        })?,
        all_of: o.messages("allOf", schema)?,
        properties: o.message("properties", |v, at| {
            Ok(Properties {
                additional_properties: named_schemas(v, at)?,
            })
        })?,
        discriminator: o.string("discriminator")?,
        read_only: o.bool("readOnly")?,
        external_docs: o.message("externalDocs", external_docs)?,
        example: o.any("example"),
        vendor_extension: o.extensions(),
    };
    o.finish()?;
    Ok(s)
}

fn additional_properties(v: &Value, at: &str) -> Result<AdditionalPropertiesItem> {
    let oneof = match v {
        Value::Bool(b) => AdditionalPropertiesOneof::Boolean(*b),
        Value::Object(_) => AdditionalPropertiesOneof::Schema(Box::new(schema(v, at)?)),
        other => {
            return Err(error(
                at,
                format!("must be a schema or a boolean, not {}", type_of(other)),
            ));
        }
    };
    Ok(AdditionalPropertiesItem { oneof: Some(oneof) })
}

fn type_item(v: &Value, at: &str) -> Result<TypeItem> {
    let value = match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, t)| match t {
                Value::String(s) => Ok(s.clone()),
                other => Err(error(
                    &child(at, &i.to_string()),
                    format!("must be a string, not {}", type_of(other)),
                )),
            })
            .collect::<Result<_>>()?,
        other => {
            return Err(error(
                at,
                format!(
                    "must be a string or an array of strings, not {}",
                    type_of(other)
                ),
            ));
        }
    };
    Ok(TypeItem { value })
}
