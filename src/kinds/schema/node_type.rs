//! The type of a structural-schema node, as both the converter (which decides
//! it) and the validator (which checks values against it) see it, and the
//! JSON type of a value.

use serde_json::Value;

/// The `type` names a structural schema may use.
pub(super) const TYPE_NAMES: &[&str] =
    &["object", "array", "string", "integer", "number", "boolean"];

/// What values a structural-schema node accepts: one of the six `type`s,
/// `x-kubernetes-int-or-string`, or anything (no `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NodeType {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
    /// `x-kubernetes-int-or-string: true`.
    IntOrString,
    /// No type: any value (`x-kubernetes-preserve-unknown-fields`).
    Any,
}

impl NodeType {
    /// The type named by a `type` keyword, if it is one of [`TYPE_NAMES`].
    pub(super) fn from_name(t: &str) -> Option<NodeType> {
        Some(match t {
            "object" => NodeType::Object,
            "array" => NodeType::Array,
            "string" => NodeType::String,
            "integer" => NodeType::Integer,
            "number" => NodeType::Number,
            "boolean" => NodeType::Boolean,
            _ => return None,
        })
    }

    /// The value of the node's `type` keyword; none for int-or-string and
    /// for any value.
    pub(super) fn name(self) -> Option<&'static str> {
        Some(match self {
            NodeType::Object => "object",
            NodeType::Array => "array",
            NodeType::String => "string",
            NodeType::Integer => "integer",
            NodeType::Number => "number",
            NodeType::Boolean => "boolean",
            NodeType::IntOrString | NodeType::Any => return None,
        })
    }

    /// The type as kube-openapi names it in messages (`integer,string` for
    /// int-or-string, empty for any value).
    pub(super) fn message_name(self) -> &'static str {
        match self {
            NodeType::IntOrString => "integer,string",
            other => other.name().unwrap_or(""),
        }
    }

    /// Whether values of the JSON type `json_type` (as [`json_type_of`]
    /// names it) have this type.
    pub(super) fn contains(self, json_type: &str) -> bool {
        match self {
            NodeType::IntOrString => json_type == "integer" || json_type == "string",
            other => other.message_name() == json_type,
        }
    }

    /// Whether the node may hold strings (so string keywords apply).
    pub(super) fn has_strings(self) -> bool {
        matches!(
            self,
            NodeType::String | NodeType::IntOrString | NodeType::Any
        )
    }

    /// Whether the node may hold numbers.
    pub(super) fn has_numbers(self) -> bool {
        matches!(
            self,
            NodeType::Integer | NodeType::Number | NodeType::IntOrString | NodeType::Any
        )
    }

    /// Whether the node may hold lists.
    pub(super) fn has_arrays(self) -> bool {
        matches!(self, NodeType::Array | NodeType::Any)
    }

    /// Whether the node may hold objects.
    pub(super) fn has_objects(self) -> bool {
        matches!(self, NodeType::Object | NodeType::Any)
    }
}

/// The JSON type name of a value, as JSON Schema spells it (`integer` for
/// numbers without a fractional part that fit in 64 bits).
pub(super) fn json_type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_messages_follow_kube_openapi() {
        for name in TYPE_NAMES {
            let t = NodeType::from_name(name).expect("a type name");
            assert_eq!(t.name(), Some(*name));
            assert_eq!(t.message_name(), *name);
            assert!(t.contains(name));
        }
        assert_eq!(NodeType::from_name("null"), None);
        assert_eq!(NodeType::IntOrString.name(), None);
        assert_eq!(NodeType::IntOrString.message_name(), "integer,string");
        assert!(NodeType::IntOrString.contains("integer"));
        assert!(NodeType::IntOrString.contains("string"));
        assert!(!NodeType::IntOrString.contains("number"));
        assert_eq!(NodeType::Any.message_name(), "");
        assert!(!NodeType::Number.contains("integer"));
    }
}
