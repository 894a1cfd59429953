//! Objects as CEL values, typed by their schema as kube-apiserver types
//! them: `integer` fields are `int`, `number` fields `double` (even when
//! written `2`), `int-or-string` either, objects maps whose fields are
//! selected with `.`, arrays lists. Strings are borrowed from the object, not
//! copied.

use std::collections::HashMap;

use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::Val;
use serde_json::Value;

/// What a schema node says about the value's CEL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShapeKind {
    /// `type: integer`.
    Integer,
    /// `type: number`.
    Number,
    /// Anything else: the JSON type decides.
    Other,
}

/// A schema node, seen from CEL: its kind and its children's nodes.
pub(crate) trait Shape: Copy {
    /// How numbers at this node are typed.
    fn kind(self) -> ShapeKind;
    /// The node of property `name`, or of `additionalProperties`.
    fn field(self, name: &str) -> Option<Self>;
    /// The node of the items.
    fn items(self) -> Option<Self>;
    /// `maxLength`, `maxItems` or `maxProperties`, whichever applies.
    fn max_size(self) -> Option<u64>;
    /// Whether the node is a string.
    fn is_string(self) -> bool;
    /// Whether the node is an object whose fields are all declared (no
    /// `additionalProperties`, unknown fields not preserved): selecting
    /// another field is a compile error.
    fn is_closed_object(self) -> bool;
    /// Whether the node is a number or a boolean.
    fn is_scalar(self) -> bool;
    /// Whether the node has no type (and is not int-or-string): CEL has
    /// no type for it, so kube-apiserver leaves it out of its parent's
    /// fields and refuses rules on it.
    fn is_untyped(self) -> bool;
    /// The schema's `type` (`object`, `string`, ...; empty if none), as
    /// errors show it.
    fn type_name(self) -> &'static str;
    /// Whether the node is an object with declared properties, whose names
    /// CEL selects escaped ([`super::escaping`]); a map's keys are not.
    fn escapes_field_names(self) -> bool;

    /// The node a CEL selection `.field` reaches: on an object with
    /// declared properties the one whose escaped name is `field`, on a map
    /// its values.
    fn cel_field(self, field: &str) -> Option<Self> {
        let found = if self.escapes_field_names() {
            self.field(&super::escaping::unescape(field)?)
        } else {
            self.field(field)
        };
        found.filter(|f| !f.is_untyped())
    }
}

/// `v` as a CEL value typed by `shape` (`None`: typed by JSON alone).
pub(crate) fn to_val<'v, S: Shape>(v: &'v Value, shape: Option<S>) -> Box<dyn Val + 'v> {
    match v {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => {
            let kind = shape.map_or(ShapeKind::Other, Shape::kind);
            if kind != ShapeKind::Number {
                if let Some(i) = n.as_i64() {
                    return Box::new(CelInt::from(i));
                }
                if let Some(u) = n.as_u64() {
                    return Box::new(CelUInt::from(u));
                }
            }
            Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN)))
        }
        Value::String(s) => Box::new(CelString::from(s.as_str())),
        Value::Array(items) => {
            let item_shape = shape.and_then(Shape::items);
            let list: Vec<Box<dyn Val + 'v>> =
                items.iter().map(|i| to_val(i, item_shape)).collect();
            Box::new(CelList::from(list))
        }
        Value::Object(m) => {
            // Declared properties under their escaped names (one that has
            // none cannot be selected); a map's keys as they are.
            let escaped = shape.is_some_and(Shape::escapes_field_names);
            let map: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = m
                .iter()
                .filter_map(|(k, v)| {
                    let field_shape = shape.and_then(|s| s.field(k));
                    let key = if escaped {
                        super::escaping::escape(k)?
                    } else {
                        std::borrow::Cow::Borrowed(k.as_str())
                    };
                    Some((
                        CelMapKey::String(CelString::from(key)),
                        to_val(v, field_shape),
                    ))
                })
                .collect();
            Box::new(CelMap::from(map))
        }
    }
}
