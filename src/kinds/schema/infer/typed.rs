//! Schemas from cozyvalues-gen types: the `{type}` of a `## @param` line
//! (and of the `@field`s of the `@typedef`s it names) turned into the
//! structural schema cozyvalues-gen's own chain (Go structs, controller-gen)
//! would produce, with the value from `values.yaml` as the default.
//!
//! * `string`, `bool`, `int`/`int32`/`int64`/`uint*`, `float32`/`float64`
//!   become their JSON types; `quantity` becomes int-or-string with
//!   Kubernetes' quantity pattern (so `10` and `"500m"` are both accepted);
//!   `duration` a string; `time` a `date-time` string; `object` a free-form
//!   object; `emptyobject` an object without fields;
//! * the string-format aliases (`uri`, `email`, `cidr`, `uuid`, ...) become
//!   strings with that `format`;
//! * `*T` and `?T` are nullable; `[]T` a list of T; `map[string]T` an object
//!   whose values are T;
//! * a `@typedef` name becomes an object with its `@field`s as properties;
//!   an `@enum` name (and the older inline `{string enum:"a,b"}`) an `enum`
//!   of its `@value`s, which keep their spelling: `no` stays the string
//!   `"no"` on a string enum (cozyvalues-gen's YAML 1.1 bug is not
//!   repeated);
//! * `name=default` (unquoted or quoted) is read for the field's type: a
//!   string type keeps the text as is, other types parse it as JSON;
//! * a field written without `[..]` is `required`, unless the value in
//!   `values.yaml` leaves it out (the chart evidently does without it);
//! * `@x-cozystack-options {source: s}` below a field adds a line to its
//!   description, as for JSON schemas.
//!
//! A default that does not fit the type is dropped with a warning (Helm
//! still applies the chart's own value). An unknown type name is an error
//! for the caller, which then keeps the schema inferred from the value.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::super::issue::Issue;
use super::super::node_type::json_type_of;
use super::super::pattern;
use super::comments::{EnumDef, Field};

/// Kubernetes' `resource.Quantity` syntax, as controller-gen writes it.
pub(super) const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// cozyvalues-gen's string-format aliases.
const FORMAT_ALIASES: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "datetime",
];

/// Nesting guard for recursive typedefs.
const MAX_DEPTH: usize = 24;

/// The `@typedef`s and `@enum`s of one `values.yaml`.
pub(super) struct TypeDefs<'c> {
    pub(super) typedefs: &'c HashMap<String, Vec<Field>>,
    pub(super) enums: &'c HashMap<String, EnumDef>,
}

impl TypeDefs<'_> {
    /// The schema of type `t` for `value` (the value in `values.yaml`,
    /// `None` inside lists and maps, where values have no default).
    /// Warnings point at `ptr`; `Err` names a type it does not know.
    pub(super) fn schema(
        &self,
        t: &str,
        value: Option<&Value>,
        ptr: &str,
        warnings: &mut Vec<Issue>,
    ) -> Result<Map<String, Value>, String> {
        self.node(t, value, ptr, warnings, 0)
    }

    /// A `name=default` annotation read for type `t`.
    pub(super) fn read_default(&self, t: &str, raw: &str) -> Value {
        let name = t.trim().trim_start_matches(['*', '?']).trim();
        let base = match self.enums.get(name) {
            // An enum's values are read as its base type: `off` stays text.
            Some(e) => base_type_name(&e.base),
            None => base_type_name(t),
        };
        read_literal(raw, &base)
    }

    fn node(
        &self,
        t: &str,
        value: Option<&Value>,
        ptr: &str,
        warnings: &mut Vec<Issue>,
        depth: usize,
    ) -> Result<Map<String, Value>, String> {
        if depth > MAX_DEPTH {
            return Err(format!("types nest more than {MAX_DEPTH} levels"));
        }
        let t = t.trim();
        let (nullable, t) = match t.strip_prefix(['*', '?']) {
            Some(rest) => (true, rest.trim()),
            None => (false, t),
        };
        let value = value.filter(|v| !v.is_null());
        let mut m = Map::new();
        if let Some(inner) = t.strip_prefix("[]") {
            m.insert("type".into(), "array".into());
            m.insert(
                "items".into(),
                Value::Object(self.node(inner, None, ptr, warnings, depth + 1)?),
            );
            set_nullable(&mut m, nullable);
            self.default_if(&mut m, value, Value::is_array, t, ptr, warnings);
            return Ok(m);
        }
        if let Some(inner) = t.strip_prefix("map[string]") {
            m.insert("type".into(), "object".into());
            m.insert(
                "additionalProperties".into(),
                Value::Object(self.node(inner, None, ptr, warnings, depth + 1)?),
            );
            set_nullable(&mut m, nullable);
            self.default_if(&mut m, value, Value::is_object, t, ptr, warnings);
            return Ok(m);
        }
        let (word, attrs) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        let scalar = |m: &mut Map<String, Value>, ty: &str| {
            m.insert("type".into(), ty.into());
            set_nullable(m, nullable);
        };
        match word {
            "string" => scalar(&mut m, "string"),
            "bool" | "boolean" => scalar(&mut m, "boolean"),
            "int" | "int8" | "int16" | "int32" | "int64" | "uint" | "uint8" | "uint16"
            | "uint32" | "uint64" | "integer" => scalar(&mut m, "integer"),
            "float32" | "float64" | "float" | "number" => scalar(&mut m, "number"),
            "duration" => scalar(&mut m, "string"),
            "time" => {
                scalar(&mut m, "string");
                m.insert("format".into(), "date-time".into());
            }
            "quantity" => {
                m.insert("x-kubernetes-int-or-string".into(), true.into());
                set_nullable(&mut m, nullable);
                m.insert("pattern".into(), QUANTITY_PATTERN.into());
            }
            "object" => {
                scalar(&mut m, "object");
                m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
            }
            "emptyobject" => scalar(&mut m, "object"),
            alias if FORMAT_ALIASES.contains(&alias) => {
                scalar(&mut m, "string");
                let format = if alias == "datetime" {
                    "date-time"
                } else {
                    alias
                };
                m.insert("format".into(), format.into());
            }
            name => {
                if let Some(e) = self.enums.get(name) {
                    let base = self.node(&e.base, None, ptr, warnings, depth + 1)?;
                    let base_type = base.get("type").and_then(Value::as_str).unwrap_or("string");
                    scalar(&mut m, base_type);
                    let values = e
                        .values
                        .iter()
                        .map(|v| read_literal(v, base_type))
                        .collect();
                    m.insert("enum".into(), Value::Array(values));
                } else if let Some(fields) = self.typedefs.get(name) {
                    scalar(&mut m, "object");
                    // The innermost @typedef on the way names a nesting
                    // without end: it contains itself.
                    self.struct_fields(&mut m, name, fields, value, ptr, warnings, depth)
                        .map_err(|e| {
                            if e.starts_with("types nest more than") {
                                format!("@typedef {name} contains itself: {e}")
                            } else {
                                e
                            }
                        })?;
                    if value.is_some_and(Value::is_object) {
                        // As for inferred objects: `{}` lets Kubernetes
                        // recreate the fields' defaults when it is omitted.
                        m.insert("default".into(), Value::Object(Map::new()));
                    }
                    return Ok(m);
                } else {
                    return Err(format!("unknown type {name:?} (no @typedef or @enum)"));
                }
            }
        }
        if let Some(list) = attrs.trim().strip_prefix("enum:") {
            let ty = m
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("string")
                .to_string();
            let values = list
                .trim()
                .trim_matches('"')
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| read_literal(v, &ty))
                .collect();
            m.insert("enum".into(), Value::Array(values));
        }
        let fits = |v: &Value| fits_node(&m, v);
        if let Some(v) = value {
            if fits(v) {
                m.insert("default".into(), v.clone());
            } else {
                warnings.push(Issue::new(
                    ptr,
                    format!(
                        "the value {} does not fit the @param type {t:?}; not used as the default",
                        short(v)
                    ),
                ));
            }
        }
        Ok(m)
    }

    /// Adds a `@typedef`'s fields as properties of `m`.
    #[allow(clippy::too_many_arguments)]
    fn struct_fields(
        &self,
        m: &mut Map<String, Value>,
        name: &str,
        fields: &[Field],
        value: Option<&Value>,
        ptr: &str,
        warnings: &mut Vec<Issue>,
        depth: usize,
    ) -> Result<(), String> {
        let given = value.and_then(Value::as_object);
        let mut props = Map::new();
        let mut required = Vec::new();
        for f in fields {
            let child_ptr = super::push_pointer(ptr, &f.name);
            let from_values = given.and_then(|g| g.get(&f.name)).filter(|v| !v.is_null());
            let from_annotation = match (from_values, &f.default) {
                (None, Some(d)) if given.is_some() || value.is_none() => {
                    Some(self.read_default(&f.type_name, d))
                }
                _ => None,
            };
            let child_value = from_values.or(from_annotation.as_ref());
            let mut child =
                self.node(&f.type_name, child_value, &child_ptr, warnings, depth + 1)?;
            let mut text = f.text.clone();
            if let Some(source) = &f.options_source {
                text = with_options_hint(&text, source);
            }
            if !text.is_empty() {
                insert_description(&mut child, &text);
            }
            // cozyvalues-gen makes a field without `[..]` required; a
            // value that leaves it out shows the chart does without it.
            let present = match given {
                Some(g) => g.contains_key(&f.name),
                None => value.is_none() && f.default.is_none(),
            };
            if !f.optional && present {
                required.push(Value::String(f.name.clone()));
            }
            props.insert(f.name.clone(), Value::Object(child));
        }
        if let Some(g) = given {
            for k in g.keys().filter(|k| !props.contains_key(*k)) {
                warnings.push(Issue::new(
                    super::push_pointer(ptr, k),
                    format!("{k:?} is not a @field of @typedef {name}; left out of the schema"),
                ));
            }
        }
        if props.is_empty() {
            m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        } else {
            m.insert("properties".into(), Value::Object(props));
        }
        if !required.is_empty() {
            m.insert("required".into(), Value::Array(required));
        }
        Ok(())
    }

    fn default_if(
        &self,
        m: &mut Map<String, Value>,
        value: Option<&Value>,
        shape: fn(&Value) -> bool,
        t: &str,
        ptr: &str,
        warnings: &mut Vec<Issue>,
    ) {
        let Some(v) = value else { return };
        if shape(v) {
            m.insert("default".into(), v.clone());
        } else {
            warnings.push(Issue::new(
                ptr,
                format!(
                    "the value {} does not fit the @param type {t:?}; not used as the default",
                    short(v)
                ),
            ));
        }
    }
}

/// The description a `@x-cozystack-options` source adds to a field.
pub(super) fn with_options_hint(text: &str, source: &str) -> String {
    let hint = format!("Choices: the Cozystack dashboard's {source:?} options.");
    if text.is_empty() {
        hint
    } else {
        format!("{} {hint}", text.trim_end())
    }
}

/// Puts `description` after the type keywords, where the rest of the
/// inferred schema has it.
fn insert_description(m: &mut Map<String, Value>, text: &str) {
    let mut out = Map::new();
    let mut placed = false;
    for (k, v) in std::mem::take(m) {
        let header = matches!(
            k.as_str(),
            "type" | "nullable" | "x-kubernetes-int-or-string"
        );
        if !header && !placed {
            out.insert("description".into(), text.into());
            placed = true;
        }
        out.insert(k, v);
    }
    if !placed {
        out.insert("description".into(), text.into());
    }
    *m = out;
}

fn set_nullable(m: &mut Map<String, Value>, nullable: bool) {
    if nullable {
        m.insert("nullable".into(), true.into());
    }
}

/// The JSON type a `name=default` or `@value` is read as for type `t`.
fn base_type_name(t: &str) -> String {
    let t = t.trim().trim_start_matches(['*', '?']);
    let word = t.split_whitespace().next().unwrap_or("");
    match word {
        "int" | "int8" | "int16" | "int32" | "int64" | "uint" | "uint8" | "uint16" | "uint32"
        | "uint64" | "integer" | "float32" | "float64" | "float" | "number" | "bool"
        | "boolean" | "quantity" | "object" | "emptyobject" => word.to_string(),
        w if w.starts_with("[]") || w.starts_with("map[") => "object".into(),
        w if FORMAT_ALIASES.contains(&w) || w == "string" || w == "duration" || w == "time" => {
            "string".into()
        }
        // A typedef reads `{}`, an enum its value: JSON first, text otherwise.
        _ => "any".into(),
    }
}

/// Reads an annotation literal for a field of JSON type `ty`: strings keep
/// their text (`no` stays `"no"`), quoted text is unquoted, other types are
/// read as JSON (`3`, `true`, `{}`), falling back to the text.
fn read_literal(raw: &str, ty: &str) -> Value {
    let raw = raw.trim();
    let unquoted = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .or_else(|| raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')));
    match ty {
        "string" => Value::String(unquoted.unwrap_or(raw).to_string()),
        "quantity" => match unquoted {
            Some(s) => Value::String(s.to_string()),
            None => raw
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| Value::String(raw.to_string())),
        },
        _ => {
            let text = unquoted.unwrap_or(raw);
            match serde_json::from_str::<Value>(text) {
                Ok(v) if unquoted.is_none() || v.is_object() || v.is_array() => v,
                _ => Value::String(text.to_string()),
            }
        }
    }
}

/// Whether `v` fits a scalar node built above (type, enum).
fn fits_node(m: &Map<String, Value>, v: &Value) -> bool {
    // A Kubernetes integer is an int64: a larger whole number is no
    // integer default (`Checked value must be of type integer`).
    let json = match json_type_of(v) {
        "integer" if !v.is_i64() => "number",
        json => json,
    };
    let type_ok = if m.contains_key("x-kubernetes-int-or-string") {
        json == "integer" || json == "string"
    } else {
        match m.get("type").and_then(Value::as_str) {
            Some("number") => json == "number" || json == "integer",
            Some(t) => t == json,
            None => true,
        }
    };
    let enum_ok = match m.get("enum").and_then(Value::as_array) {
        Some(values) => values.contains(v),
        None => true,
    };
    let pattern_ok = match (m.get("pattern").and_then(Value::as_str), v.as_str()) {
        (Some(p), Some(s)) => pattern::compile(p).is_ok_and(|re| re.is_match(s)),
        _ => true,
    };
    type_ok && enum_ok && pattern_ok
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::validate::CompiledSchema;
    use super::super::tests::infer;
    use super::QUANTITY_PATTERN;
    use serde_json::json;

    /// A chart annotated the way Cozystack's app charts are.
    const VALUES: &str = r#"
## @enum {string} ResourcesPreset - Sizing preset.
## @value nano
## @value small
## @value no

## @enum {int} Port - A port.
## @value 80
## @value 443

## @enum {string} Switch - A word YAML 1.1 would read as a boolean.
## @value on
## @value off

## @typedef {struct} Resources - Explicit CPU and memory configuration.
## @field {quantity} [cpu] - CPU available.
## @field {quantity} [memory] - Memory (RAM) available.

## @typedef {struct} User - A user.
## @field {string} password - Password for the user.
## @field {bool} [replication]=false - Replication privileges.
## @field {string} [storageClass] - Where the data lives.
## @x-cozystack-options {source: storageclass}
## @field {Resources} [resources] - Per-user resources.

## @param {int} replicas - Number of replicas.
replicas: 2
## @param {quantity} size - Volume size.
size: 10Gi
## @param {quantity} cpuLimit - CPU limit.
cpuLimit: 4
## @param {Resources} resources - Resources of each replica.
resources: {}
## @param {ResourcesPreset} resourcesPreset="small" - Sizing preset.
resourcesPreset: small
## @param {Switch} [mode]=off - Mode.
mode:
## @param {Port} [port]=443 - Port.
port:
## @param {map[string]User} users - Users configuration map.
users: {}
## @param {[]string} extensions - Extensions.
extensions: []
## @param {*time} [restoreTo] - Point in time.
restoreTo:
## @param {uri} endpoint - Where to upload.
endpoint: http://minio:9000
## @param {object} extra - Anything.
extra: {}
## @param {string enum:"a,b"} legacy - The older inline enum.
legacy: a
## @param {int} wrongDefault - A string where an int belongs.
wrongDefault: "3"
## @param {Nowhere} unknown - A type nobody declared.
unknown: {x: 1}
"#;

    #[test]
    fn cozyvalues_gen_types_shape_the_schema() {
        let out = infer(VALUES);
        let p = &out.schema["properties"];
        assert_eq!(
            p["replicas"],
            json!({"type": "integer", "description": "Number of replicas.", "default": 2})
        );
        assert_eq!(
            p["size"],
            json!({"x-kubernetes-int-or-string": true, "description": "Volume size.",
                   "pattern": QUANTITY_PATTERN, "default": "10Gi"})
        );
        assert_eq!(p["cpuLimit"]["default"], 4);
        let quantity = |d: &str| json!({"x-kubernetes-int-or-string": true, "description": d, "pattern": QUANTITY_PATTERN});
        assert_eq!(
            p["resources"],
            json!({"type": "object", "description": "Resources of each replica.", "properties": {
                "cpu": quantity("CPU available."),
                "memory": quantity("Memory (RAM) available.")
            }, "default": {}})
        );
        assert_eq!(
            p["resourcesPreset"],
            json!({"type": "string", "description": "Sizing preset.",
                   "enum": ["nano", "small", "no"], "default": "small"})
        );
        // `off` from the annotation stays a string (no YAML 1.1 boolean).
        assert_eq!(p["mode"]["enum"], json!(["on", "off"]));
        assert_eq!(p["mode"]["default"], "off");
        assert_eq!(
            p["port"],
            json!({"type": "integer", "description": "Port.", "enum": [80, 443], "default": 443})
        );
        let user = &p["users"]["additionalProperties"];
        assert_eq!(p["users"]["type"], "object");
        assert_eq!(p["users"]["default"], json!({}));
        assert_eq!(user["required"], json!(["password"]));
        assert_eq!(user["properties"]["replication"]["default"], false);
        assert_eq!(
            user["properties"]["storageClass"]["description"],
            "Where the data lives. Choices: the Cozystack dashboard's \"storageclass\" options."
        );
        assert_eq!(
            user["properties"]["resources"]["properties"]["cpu"]["pattern"],
            QUANTITY_PATTERN
        );
        assert_eq!(
            p["extensions"],
            json!({"type": "array", "description": "Extensions.", "items": {"type": "string"}, "default": []})
        );
        assert_eq!(
            p["restoreTo"],
            json!({"type": "string", "nullable": true, "description": "Point in time.", "format": "date-time"})
        );
        assert_eq!(p["endpoint"]["format"], "uri");
        assert_eq!(
            p["extra"],
            json!({"type": "object", "description": "Anything.", "x-kubernetes-preserve-unknown-fields": true, "default": {}})
        );
        assert_eq!(p["legacy"]["enum"], json!(["a", "b"]));
        assert_eq!(
            p["wrongDefault"],
            json!({"type": "integer", "description": "A string where an int belongs."})
        );
        // The unknown type falls back to inference.
        assert_eq!(p["unknown"]["properties"]["x"]["type"], "integer");
        let messages: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "/wrongDefault: the value \"3\" does not fit the @param type \"int\"; not used as the default",
                "/unknown: line 54: @param type \"Nowhere\" not used: unknown type \"Nowhere\" (no @typedef or @enum); the schema is inferred from the value",
            ]
        );

        // What the issue saw: `10` refused for a quantity, enums lost,
        // typed sub-objects free-form.
        let v = CompiledSchema::new(&out.schema).expect("compiles");
        for ok in [
            json!({"size": 10}),
            json!({"size": "500Mi"}),
            json!({"resources": {"cpu": 2, "memory": "4Gi"}}),
            json!({"users": {"alice": {"password": "x", "resources": {"cpu": "100m"}}}}),
        ] {
            assert!(
                v.validate(&ok, "spec").is_empty(),
                "{ok}: {:?}",
                v.validate(&ok, "spec")
            );
        }
        for bad in [
            json!({"size": "10 GB"}),
            json!({"resourcesPreset": "huge"}),
            json!({"users": {"alice": {"replication": true}}}),
            json!({"users": {"alice": {"password": "x", "resources": {"cpu": "lots"}}}}),
        ] {
            assert!(!v.validate(&bad, "spec").is_empty(), "{bad}");
        }
        let mut spec = json!({});
        assert!(v.default_and_validate(&mut spec, "spec").errors.is_empty());
        assert_eq!(spec["mode"], "off");
        assert_eq!(spec["resourcesPreset"], "small");
    }

    #[test]
    fn an_integer_beyond_int64_is_no_integer_default() {
        let out = infer(
            "## @typedef {struct} Limits - Limits.\n## @field {int} [maxBytes]=18446744073709551615 - Retention in bytes.\n\n## @param {Limits} limits - Limits.\nlimits: {}\n",
        );
        let field = &out.schema["properties"]["limits"]["properties"]["maxBytes"];
        assert_eq!(field["type"], "integer");
        assert!(field.get("default").is_none(), "{field}");
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert_eq!(out.warnings[0].pointer, "/limits/maxBytes");
    }

    #[test]
    fn typedef_keys_outside_the_fields_are_reported() {
        let out = infer(
            "## @typedef {struct} Db - A database.\n## @field {string} name - Name.\n\n## @param {Db} db - The database.\ndb:\n  name: x\n  extra: 1\n",
        );
        assert_eq!(
            out.schema["properties"]["db"]["properties"],
            json!({"name": {"type": "string", "description": "Name.", "default": "x"}})
        );
        assert_eq!(out.schema["properties"]["db"]["required"], json!(["name"]));
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert_eq!(out.warnings[0].pointer, "/db/extra");
    }

    #[test]
    fn a_typedef_that_contains_itself_is_named() {
        let out = infer(
            "## @typedef {struct} Node - A tree node.\n## @field {string} name - Name.\n## @field {[]Node} children - Children.\n\n## @param {Node} tree - The tree.\ntree: {}\n",
        );
        let said: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
        assert!(
            said.iter()
                .any(|w| w.contains("@typedef Node contains itself: types nest more than")),
            "{said:?}"
        );
    }
}
