//! Fuzz targets of the query-parameter languages: `labelSelector`,
//! `fieldSelector` and the JSONPath of printer columns.

use serde_json::{Map, Value};

use crate::apimachinery::fields::FieldSelector;
use crate::apimachinery::jsonpath::{JsonPath, to_text};
use crate::apimachinery::labels::LabelSelector;

/// `label_selector`: the first line is a `labelSelector`, the rest a JSON
/// object of labels to match (optional).
///
/// Asserts that a parsed selector prints as a selector that parses to the
/// same selector (kube-apiserver passes selectors on in their printed form,
/// e.g. to the HelmRelease list upstream).
pub fn label_selector(data: &[u8]) {
    let (line, rest) = super::split_line(data);
    let Ok(selector) = LabelSelector::parse(&super::text(line)) else {
        return;
    };
    let printed = selector.to_string();
    let again = LabelSelector::parse(&printed)
        .unwrap_or_else(|e| panic!("the printed selector {printed:?} does not parse: {e}"));
    assert_eq!(
        again, selector,
        "the printed selector {printed:?} parses differently"
    );
    for r in selector.requirements() {
        let _ = r.to_string();
    }
    let labels = serde_json::from_slice::<Map<String, Value>>(rest).ok();
    let matched = selector.matches(labels.as_ref());
    assert_eq!(again.matches(labels.as_ref()), matched);
    if selector.is_empty() {
        assert!(matched, "the empty selector must match everything");
    }
}

/// `field_selector`: the first line is a `fieldSelector`, the next two an
/// object's name and namespace.
pub fn field_selector(data: &[u8]) {
    let (line, rest) = super::split_line(data);
    let (name, namespace) = super::split_line(rest);
    let Ok(selector) = FieldSelector::parse(&super::text(line)) else {
        return;
    };
    let name = super::text(name);
    let matched = selector.matches(&name, &super::text(namespace));
    if let Some(exact) = selector.exact_name() {
        // A selector that names one object selects no other.
        if exact != name {
            assert!(!matched, "{selector:?} matched {name:?}");
        }
    }
}

/// `jsonpath`: the first line is a printer column's `jsonPath`, the rest
/// the JSON object it is evaluated on (anything else stands for a small
/// object with a list of conditions).
pub fn jsonpath(data: &[u8]) {
    let (line, rest) = super::split_line(data);
    let Ok(path) = JsonPath::parse(&super::text(line)) else {
        return;
    };
    let object = serde_json::from_slice::<Value>(rest).unwrap_or_else(|_| {
        serde_json::json!({
            "metadata": {"name": "db1", "labels": {"a.b/c": "d"}},
            "spec": {"replicas": 3, "ports": [80, 443], "size": "10Gi"},
            "status": {"conditions": [
                {"type": "Ready", "status": "True", "reason": "Installed"},
                {"type": "Released", "status": "False"}
            ]}
        })
    });
    if let Ok(found) = path.find(&object) {
        for v in found {
            let _ = to_text(v);
        }
    }
}
