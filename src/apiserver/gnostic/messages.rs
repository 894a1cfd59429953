//! The messages of gnostic's `openapi.v2` protobuf package
//! (github.com/google/gnostic-models `openapiv2/OpenAPIv2.proto`) that a
//! published OpenAPI v2 document is made of, written here as prost structs
//! with gnostic's field numbers, types and oneofs. client-go's
//! `OpenAPISchema()` unmarshals `GET /openapi/v2` into `openapi_v2.Document`.
//!
//! Only what a document of this server can hold is here. Left out (and
//! refused by [`super::from_json`]): the document's global `parameters`,
//! `responses`, `security`, `securityDefinitions`, `tags` and
//! `externalDocs`; `Info.contact` and `Info.license`; `Operation.security`;
//! `Response.headers` and `Response.examples`; `Schema.xml`; file schemas;
//! and `Any.value` (gnostic's parser never sets it either: an `Any` is its
//! YAML text).
//!
//! The non-body parameters come in two layouts: header and path
//! sub-schemas number their fields alike ([`SimpleParameter`]), and so do
//! query and formData ones, which add `allowEmptyValue` as field 5
//! ([`QueryParameter`]).

/// `Document`: the root.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Document {
    #[prost(string, tag = "1")]
    pub swagger: String,
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    #[prost(string, tag = "3")]
    pub host: String,
    #[prost(string, tag = "4")]
    pub base_path: String,
    #[prost(string, repeated, tag = "5")]
    pub schemes: Vec<String>,
    #[prost(string, repeated, tag = "6")]
    pub consumes: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub produces: Vec<String>,
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
    #[prost(message, repeated, tag = "16")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Info`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Info {
    #[prost(string, tag = "1")]
    pub title: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub terms_of_service: String,
    #[prost(message, repeated, tag = "7")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Paths`: vendor extensions first (field 1), then the paths (field 2).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Paths {
    #[prost(message, repeated, tag = "1")]
    pub vendor_extension: Vec<NamedAny>,
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

/// `NamedPathItem`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NamedPathItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<PathItem>,
}

/// `PathItem`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PathItem {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(message, optional, tag = "2")]
    pub get: Option<Operation>,
    #[prost(message, optional, tag = "3")]
    pub put: Option<Operation>,
    #[prost(message, optional, tag = "4")]
    pub post: Option<Operation>,
    #[prost(message, optional, tag = "5")]
    pub delete: Option<Operation>,
    #[prost(message, optional, tag = "6")]
    pub options: Option<Operation>,
    #[prost(message, optional, tag = "7")]
    pub head: Option<Operation>,
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
    #[prost(message, repeated, tag = "9")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, repeated, tag = "10")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Operation`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Operation {
    #[prost(string, repeated, tag = "1")]
    pub tags: Vec<String>,
    #[prost(string, tag = "2")]
    pub summary: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(message, optional, tag = "4")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(string, tag = "5")]
    pub operation_id: String,
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, optional, tag = "9")]
    pub responses: Option<Responses>,
    #[prost(string, repeated, tag = "10")]
    pub schemes: Vec<String>,
    #[prost(bool, tag = "11")]
    pub deprecated: bool,
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `ParametersItem`: a parameter or a reference to one.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ParametersItem {
    #[prost(oneof = "ParametersItemOneof", tags = "1, 2")]
    pub oneof: Option<ParametersItemOneof>,
}

/// `ParametersItem.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum ParametersItemOneof {
    #[prost(message, tag = "1", boxed)]
    Parameter(Box<Parameter>),
    #[prost(message, tag = "2")]
    JsonReference(JsonReference),
}

/// `Parameter`: a body parameter or another.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Parameter {
    #[prost(oneof = "ParameterOneof", tags = "1, 2")]
    pub oneof: Option<ParameterOneof>,
}

/// `Parameter.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum ParameterOneof {
    #[prost(message, tag = "1")]
    BodyParameter(BodyParameter),
    #[prost(message, tag = "2")]
    NonBodyParameter(NonBodyParameter),
}

/// `BodyParameter`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BodyParameter {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(bool, tag = "4")]
    pub required: bool,
    #[prost(message, optional, tag = "5")]
    pub schema: Option<Schema>,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `NonBodyParameter`: one of four sub-schemas, by `in`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NonBodyParameter {
    #[prost(oneof = "NonBodyParameterOneof", tags = "1, 2, 3, 4")]
    pub oneof: Option<NonBodyParameterOneof>,
}

/// `NonBodyParameter.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum NonBodyParameterOneof {
    /// `HeaderParameterSubSchema`.
    #[prost(message, tag = "1")]
    Header(SimpleParameter),
    /// `FormDataParameterSubSchema`.
    #[prost(message, tag = "2")]
    FormData(QueryParameter),
    /// `QueryParameterSubSchema`.
    #[prost(message, tag = "3")]
    Query(QueryParameter),
    /// `PathParameterSubSchema`.
    #[prost(message, tag = "4")]
    Path(SimpleParameter),
}

/// `HeaderParameterSubSchema` and `PathParameterSubSchema` (same fields,
/// same numbers).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SimpleParameter {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(string, tag = "5")]
    pub r#type: String,
    #[prost(string, tag = "6")]
    pub format: String,
    #[prost(message, optional, tag = "7")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "8")]
    pub collection_format: String,
    #[prost(message, optional, tag = "9")]
    pub default: Option<Any>,
    #[prost(double, tag = "10")]
    pub maximum: f64,
    #[prost(bool, tag = "11")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "12")]
    pub minimum: f64,
    #[prost(bool, tag = "13")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "14")]
    pub max_length: i64,
    #[prost(int64, tag = "15")]
    pub min_length: i64,
    #[prost(string, tag = "16")]
    pub pattern: String,
    #[prost(int64, tag = "17")]
    pub max_items: i64,
    #[prost(int64, tag = "18")]
    pub min_items: i64,
    #[prost(bool, tag = "19")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "21")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "22")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `QueryParameterSubSchema` and `FormDataParameterSubSchema` (same fields,
/// same numbers).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct QueryParameter {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(bool, tag = "5")]
    pub allow_empty_value: bool,
    #[prost(string, tag = "6")]
    pub r#type: String,
    #[prost(string, tag = "7")]
    pub format: String,
    #[prost(message, optional, tag = "8")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "9")]
    pub collection_format: String,
    #[prost(message, optional, tag = "10")]
    pub default: Option<Any>,
    #[prost(double, tag = "11")]
    pub maximum: f64,
    #[prost(bool, tag = "12")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "13")]
    pub minimum: f64,
    #[prost(bool, tag = "14")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "15")]
    pub max_length: i64,
    #[prost(int64, tag = "16")]
    pub min_length: i64,
    #[prost(string, tag = "17")]
    pub pattern: String,
    #[prost(int64, tag = "18")]
    pub max_items: i64,
    #[prost(int64, tag = "19")]
    pub min_items: i64,
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "21")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "22")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "23")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `PrimitivesItems`: the items of an array parameter.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PrimitivesItems {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(message, optional, boxed, tag = "3")]
    pub items: Option<Box<PrimitivesItems>>,
    #[prost(string, tag = "4")]
    pub collection_format: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub maximum: f64,
    #[prost(bool, tag = "7")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "8")]
    pub minimum: f64,
    #[prost(bool, tag = "9")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "10")]
    pub max_length: i64,
    #[prost(int64, tag = "11")]
    pub min_length: i64,
    #[prost(string, tag = "12")]
    pub pattern: String,
    #[prost(int64, tag = "13")]
    pub max_items: i64,
    #[prost(int64, tag = "14")]
    pub min_items: i64,
    #[prost(bool, tag = "15")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "16")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "17")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "18")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `JsonReference`: `{"$ref": …}`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct JsonReference {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(string, tag = "2")]
    pub description: String,
}

/// `Responses`: by status code (or `default`), then vendor extensions.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Responses {
    #[prost(message, repeated, tag = "1")]
    pub response_code: Vec<NamedResponseValue>,
    #[prost(message, repeated, tag = "2")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `NamedResponseValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NamedResponseValue {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ResponseValue>,
}

/// `ResponseValue`: a response or a reference to one.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ResponseValue {
    #[prost(oneof = "ResponseValueOneof", tags = "1, 2")]
    pub oneof: Option<ResponseValueOneof>,
}

/// `ResponseValue.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum ResponseValueOneof {
    #[prost(message, tag = "1", boxed)]
    Response(Box<Response>),
    #[prost(message, tag = "2")]
    JsonReference(JsonReference),
}

/// `Response`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Response {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(message, optional, tag = "2")]
    pub schema: Option<SchemaItem>,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `SchemaItem`: a schema (field 1; a file schema would be field 2).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SchemaItem {
    #[prost(oneof = "SchemaItemOneof", tags = "1")]
    pub oneof: Option<SchemaItemOneof>,
}

/// `SchemaItem.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum SchemaItemOneof {
    #[prost(message, tag = "1")]
    Schema(Schema),
}

/// `Schema`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Schema {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(string, tag = "3")]
    pub title: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub multiple_of: f64,
    #[prost(double, tag = "7")]
    pub maximum: f64,
    #[prost(bool, tag = "8")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "9")]
    pub minimum: f64,
    #[prost(bool, tag = "10")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "11")]
    pub max_length: i64,
    #[prost(int64, tag = "12")]
    pub min_length: i64,
    #[prost(string, tag = "13")]
    pub pattern: String,
    #[prost(int64, tag = "14")]
    pub max_items: i64,
    #[prost(int64, tag = "15")]
    pub min_items: i64,
    #[prost(bool, tag = "16")]
    pub unique_items: bool,
    #[prost(int64, tag = "17")]
    pub max_properties: i64,
    #[prost(int64, tag = "18")]
    pub min_properties: i64,
    #[prost(string, repeated, tag = "19")]
    pub required: Vec<String>,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(message, optional, tag = "21")]
    pub additional_properties: Option<AdditionalPropertiesItem>,
    #[prost(message, optional, tag = "22")]
    pub r#type: Option<TypeItem>,
    #[prost(message, optional, tag = "23")]
    pub items: Option<ItemsItem>,
    #[prost(message, repeated, tag = "24")]
    pub all_of: Vec<Schema>,
    #[prost(message, optional, tag = "25")]
    pub properties: Option<Properties>,
    #[prost(string, tag = "26")]
    pub discriminator: String,
    #[prost(bool, tag = "27")]
    pub read_only: bool,
    #[prost(message, optional, tag = "29")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, optional, tag = "30")]
    pub example: Option<Any>,
    #[prost(message, repeated, tag = "31")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `AdditionalPropertiesItem`: a schema or a boolean.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct AdditionalPropertiesItem {
    #[prost(oneof = "AdditionalPropertiesOneof", tags = "1, 2")]
    pub oneof: Option<AdditionalPropertiesOneof>,
}

/// `AdditionalPropertiesItem.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum AdditionalPropertiesOneof {
    #[prost(message, tag = "1", boxed)]
    Schema(Box<Schema>),
    #[prost(bool, tag = "2")]
    Boolean(bool),
}

/// `TypeItem`: `type` as a list (one entry for a plain string).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TypeItem {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

/// `ItemsItem`: `items` as a list of schemas (always one).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ItemsItem {
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<Schema>,
}

/// `Properties`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Properties {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// `Definitions`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Definitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// `NamedSchema`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NamedSchema {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Schema>,
}

/// `ExternalDocs`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ExternalDocs {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Any`: a value as YAML text (field 2; field 1, a `google.protobuf.Any`,
/// stays unset as it does in gnostic's parser).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Any {
    #[prost(string, tag = "2")]
    pub yaml: String,
}

/// `NamedAny`: a vendor extension.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NamedAny {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Any>,
}
