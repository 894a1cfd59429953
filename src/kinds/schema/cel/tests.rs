//! Unit tests of CEL rules: every rule form, every library function, the
//! compile-time checks and the cost limits, through `CompiledSchema`.

use serde_json::{Value, json};

use super::super::validate::{CompiledSchema, SchemaError};

fn schema_with(rules: Value, props: Value) -> Value {
    json!({"type": "object", "properties": props, "x-kubernetes-validations": rules})
}

/// Errors for `value` (old value `old`), as kube-apiserver prints them.
fn run(schema: &Value, value: Value, old: Option<Value>) -> Vec<String> {
    let c = CompiledSchema::new(schema).expect("schema compiles");
    let mut v = value;
    c.default_and_validate_update(&mut v, old.as_ref(), "spec")
        .errors
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Evaluates `rule` on the root `self` = `value`: whether it holds, or the
/// error text.
fn holds(rule: &str, value: Value) -> Result<bool, String> {
    let mut schema = bounded_schema(&value);
    schema["x-kubernetes-validations"] = json!([{"rule": rule}]);
    let errs = run(&schema, value, None);
    match errs.as_slice() {
        [] => Ok(true),
        [e] if e.ends_with(&format!("failed rule: {rule}")) => Ok(false),
        _ => Err(errs.join("\n")),
    }
}

/// A schema for `v` with small bounds, as a chart's schema would have.
fn bounded_schema(v: &Value) -> Value {
    match v {
        Value::String(_) => json!({"type": "string", "maxLength": 64}),
        Value::Number(n) if n.is_i64() => json!({"type": "integer"}),
        Value::Number(_) => json!({"type": "number"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Array(a) => json!({"type": "array", "maxItems": 16,
            "items": a.first().map_or(json!({"type": "string", "maxLength": 64}), bounded_schema)}),
        Value::Object(m) => {
            let props: serde_json::Map<String, Value> = m
                .iter()
                .map(|(k, v)| (k.clone(), bounded_schema(v)))
                .collect();
            json!({"type": "object", "properties": props})
        }
        Value::Null => json!({}),
    }
}

fn compile_error(schema: &Value) -> String {
    match CompiledSchema::new(schema) {
        Err(e @ SchemaError::InvalidRule { .. }) => e.to_string(),
        other => panic!("expected an invalid rule, got {other:?}"),
    }
}

#[test]
fn failing_rule_reports_kube_apiserver_message() {
    let s = schema_with(
        json!([{"rule": "self.replicas <= self.maxReplicas"}]),
        json!({"replicas": {"type": "integer"}, "maxReplicas": {"type": "integer"}}),
    );
    assert_eq!(
        run(&s, json!({"replicas": 5, "maxReplicas": 3}), None),
        ["spec: Invalid value: failed rule: self.replicas <= self.maxReplicas"]
    );
    assert!(run(&s, json!({"replicas": 2, "maxReplicas": 3}), None).is_empty());
}

#[test]
fn scalar_nodes_show_their_value_and_message() {
    let s = json!({"type": "object", "properties": {"name": {"type": "string",
        "x-kubernetes-validations": [{"rule": "self.matches('^[a-z]+$')", "message": "must be lower-case letters"}]}}});
    assert_eq!(
        run(&s, json!({"name": "Abc"}), None),
        ["spec.name: Invalid value: \"Abc\": must be lower-case letters"]
    );
    assert!(run(&s, json!({"name": "abc"}), None).is_empty());
}

#[test]
fn transition_rule_needs_an_old_value() {
    let s = json!({"type": "object", "properties": {"storageClass": {"type": "string",
        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "storageClass is immutable"}]}}});
    // Create: no old value, the rule is skipped.
    assert!(run(&s, json!({"storageClass": "fast"}), None).is_empty());
    // Update: unchanged passes, changed fails.
    assert!(
        run(
            &s,
            json!({"storageClass": "fast"}),
            Some(json!({"storageClass": "fast"}))
        )
        .is_empty()
    );
    assert_eq!(
        run(
            &s,
            json!({"storageClass": "slow"}),
            Some(json!({"storageClass": "fast"}))
        ),
        ["spec.storageClass: Invalid value: \"slow\": storageClass is immutable"]
    );
    // Set for the first time on update: no old value for the field.
    assert!(run(&s, json!({"storageClass": "slow"}), Some(json!({}))).is_empty());
}

#[test]
fn optional_old_self_runs_on_create_too() {
    let s = schema_with(
        json!([{"rule": "!oldSelf.hasValue() || self.size >= oldSelf.value().size",
                "optionalOldSelf": true, "message": "size may not shrink"},
               {"rule": "oldSelf.hasValue() || self.size <= 10", "optionalOldSelf": true,
                "message": "initial size at most 10"}]),
        json!({"size": {"type": "integer"}}),
    );
    assert_eq!(
        run(&s, json!({"size": 20}), None),
        ["spec: Invalid value: initial size at most 10"]
    );
    assert!(run(&s, json!({"size": 5}), None).is_empty());
    assert!(run(&s, json!({"size": 20}), Some(json!({"size": 5}))).is_empty());
    assert_eq!(
        run(&s, json!({"size": 4}), Some(json!({"size": 5}))),
        ["spec: Invalid value: size may not shrink"]
    );
}

#[test]
fn message_expression_reason_and_field_path() {
    let s = schema_with(
        json!([{"rule": "self.min <= self.max",
                "messageExpression": "'min of ' + self.label + ' exceeds max'",
                "fieldPath": ".min", "reason": "FieldValueForbidden"},
               {"rule": "has(self.name)", "reason": "FieldValueRequired", "fieldPath": ".name",
                "message": "name is required"},
               {"rule": "self.tags.size() == 0", "reason": "FieldValueDuplicate", "fieldPath": "['tags']"}]),
        json!({"min": {"type": "integer"}, "max": {"type": "integer"}, "name": {"type": "string"},
               "label": {"type": "string", "maxLength": 8},
               "tags": {"type": "array", "items": {"type": "string"}}}),
    );
    assert_eq!(
        run(
            &s,
            json!({"min": 5, "max": 3, "label": "web", "tags": ["a"]}),
            None
        ),
        [
            "spec.min: Forbidden: min of web exceeds max",
            "spec.name: Required value: name is required",
            "spec.tags: Duplicate value",
        ]
    );
}

#[test]
fn message_expression_failure_falls_back_to_message() {
    let s = schema_with(
        json!([{"rule": "false", "messageExpression": "self.missing", "message": "plain"},
               // Known at compile time only as int-or-string; an int here.
               {"rule": "false", "messageExpression": "self.port"}]),
        json!({"missing": {"type": "string"}, "port": {"x-kubernetes-int-or-string": true}}),
    );
    assert_eq!(
        run(&s, json!({"port": 42}), None),
        [
            "spec: Invalid value: plain",
            "spec: Invalid value: failed rule: false"
        ]
    );
}

#[test]
fn evaluation_errors_are_reported_with_the_rule() {
    let s = schema_with(
        json!([{"rule": "self.missing == 1"}]),
        json!({"missing": {"type": "integer"}}),
    );
    assert_eq!(
        run(&s, json!({}), None),
        [
            "spec: Invalid value: \"object\": no such key: missing evaluating rule: self.missing == 1"
        ]
    );
    let s = json!({"type": "object", "properties": {"port": {"x-kubernetes-int-or-string": true,
        "x-kubernetes-validations": [{"rule": "self > 0"}]}}});
    let errs = run(&s, json!({"port": "http"}), None);
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].contains("call arguments did not match a supported operator, function or macro signature for rule: self > 0"),
        "{errs:?}"
    );
}

#[test]
fn rules_run_only_on_schema_valid_objects() {
    let s = schema_with(
        json!([{"rule": "self.n > 0"}]),
        json!({"n": {"type": "integer"}}),
    );
    assert_eq!(
        run(&s, json!({"n": "x"}), None),
        [
            "spec.n: Invalid value: \"string\": spec.n in body must be of type integer: \"string\"",
            "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        ]
    );
}

#[test]
fn rules_on_items_and_map_values_get_their_paths_and_old_values() {
    let s = json!({"type": "object", "properties": {
        "users": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
          "items": {"type": "object", "properties": {"name": {"type": "string"}, "role": {"type": "string"}},
            "x-kubernetes-validations": [{"rule": "self.role == oldSelf.role", "message": "role is immutable"}]}},
        "limits": {"type": "object", "additionalProperties": {"type": "string",
          "x-kubernetes-validations": [{"rule": "isQuantity(self)", "message": "not a quantity"}]}}
    }});
    let old = json!({"users": [{"name": "a", "role": "dev"}, {"name": "b", "role": "dev"}]});
    assert_eq!(
        run(
            &s,
            json!({"users": [{"name": "b", "role": "admin"}, {"name": "a", "role": "dev"}],
                        "limits": {"cpu": "1", "memory": "lots"}}),
            Some(old)
        ),
        [
            "spec.users[0]: Invalid value: role is immutable",
            "spec.limits[memory]: Invalid value: \"lots\": not a quantity",
        ]
    );
}

#[test]
fn numbers_are_typed_by_the_schema() {
    let s = schema_with(
        json!([{"rule": "self.ratio == 2.0 && self.count == 2 && type(self.ratio) == double && type(self.count) == int"}]),
        json!({"ratio": {"type": "number"}, "count": {"type": "integer"}}),
    );
    assert!(run(&s, json!({"ratio": 2, "count": 2}), None).is_empty());
}

#[test]
fn standard_macros_and_functions() {
    let v = json!({"xs": [1, 2, 3], "name": "web-1", "m": {"a": 1}});
    for rule in [
        "self.xs.all(x, x > 0)",
        "self.xs.exists(x, x == 2)",
        "self.xs.exists_one(x, x == 3)",
        "self.xs.map(x, x * 2) == [2, 4, 6]",
        "self.xs.filter(x, x > 1).size() == 2",
        "has(self.name) && has(self.m.a)",
        "size(self.name) == 5 && self.name.size() == 5",
        "self.name.startsWith('web') && self.name.endsWith('-1') && self.name.contains('b-')",
        "self.name.matches('^[a-z]+-[0-9]+$')",
        "'a' in self.m && !('b' in self.m)",
        "2 in self.xs",
        "int('5') == 5 && string(5) == '5' && double(1) == 1.0",
        "self.m.?a.orValue(0) == 1",
    ] {
        assert_eq!(holds(rule, v.clone()), Ok(true), "{rule}");
    }
    assert_eq!(holds("self.xs.all(x, x > 1)", v.clone()), Ok(false));
}

#[test]
fn strings_library() {
    let v = json!({"s": "Hello, World"});
    for rule in [
        "self.s.charAt(0) == 'H'",
        "self.s.indexOf('o') == 4 && self.s.lastIndexOf('o') == 8",
        "self.s.lowerAscii() == 'hello, world' && self.s.upperAscii() == 'HELLO, WORLD'",
        "self.s.replace('World', 'CEL') == 'Hello, CEL'",
        "self.s.split(', ') == ['Hello', 'World']",
        "self.s.substring(7) == 'World' && self.s.substring(0, 5) == 'Hello'",
        "'  x '.trim() == 'x'",
        "['a', 'b'].join('-') == 'a-b'",
    ] {
        assert_eq!(holds(rule, v.clone()), Ok(true), "{rule}");
    }
}

#[test]
fn lists_library() {
    let v = json!({"xs": [3, 1, 2], "sorted": ["a", "b", "c"]});
    for rule in [
        "self.sorted.isSorted() && !self.xs.isSorted()",
        "self.xs.sum() == 6 && [1.5, 2.5].sum() == 4.0",
        "self.xs.min() == 1 && self.xs.max() == 3",
        "self.xs.indexOf(2) == 2 && [1, 2, 1].lastIndexOf(1) == 2 && self.xs.indexOf(9) == -1",
        "[].sum() == 0",
    ] {
        assert_eq!(holds(rule, v.clone()), Ok(true), "{rule}");
    }
    assert!(
        holds("[].min() == 0", v)
            .unwrap_err()
            .contains("evaluating rule")
    );
}

#[test]
fn regex_library() {
    let v = json!({"s": "abc 123 def 456"});
    for rule in [
        "self.s.find('[0-9]+') == '123'",
        "self.s.find('xyz') == ''",
        "self.s.findAll('[0-9]+') == ['123', '456']",
        "self.s.findAll('[a-z]+', 1) == ['abc']",
    ] {
        assert_eq!(holds(rule, v.clone()), Ok(true), "{rule}");
    }
}

#[test]
fn quantity_library() {
    let v = json!({"size": "10Gi", "cpu": "500m"});
    for rule in [
        "quantity(self.size).isGreaterThan(quantity('1Gi'))",
        "quantity(self.cpu).isLessThan(quantity('1'))",
        "quantity(self.size).compareTo(quantity('10240Mi')) == 0",
        "quantity(self.size) == quantity('10240Mi')",
        "isQuantity(self.size) && !isQuantity('ten')",
        "quantity(self.cpu).add(quantity('500m')) == quantity('1')",
        "quantity('2').sub(1).asInteger() == 1 && quantity('1k').add(24).asInteger() == 1024",
        "quantity(self.cpu).sign() == 1 && quantity('-1').sign() == -1",
        "!quantity(self.cpu).isInteger() && quantity('1Ki').isInteger()",
        "quantity(self.cpu).asApproximateFloat() == 0.5",
    ] {
        assert_eq!(holds(rule, v.clone()), Ok(true), "{rule}");
    }
    assert_eq!(
        holds(
            "quantity(self.size).isGreaterThan(quantity('20Gi'))",
            v.clone()
        ),
        Ok(false)
    );
    assert!(holds("quantity('ten') == quantity('10')", v).is_err());
}

#[test]
fn url_library() {
    let v = json!({"u": "https://example.com:8443/a/b?x=1&x=2&y=z"});
    for rule in [
        "url(self.u).getScheme() == 'https'",
        "url(self.u).getHost() == 'example.com:8443'",
        "url(self.u).getHostname() == 'example.com'",
        "url(self.u).getPort() == '8443'",
        "url(self.u).getEscapedPath() == '/a/b'",
        "url(self.u).getQuery() == {'x': ['1', '2'], 'y': ['z']}",
        "isURL(self.u) && !isURL('not a url')",
    ] {
        assert_eq!(holds(rule, v.clone()), Ok(true), "{rule}");
    }
}

#[test]
fn uncompilable_rules_fail_at_compile_time() {
    let bad = |rule: Value| {
        compile_error(
            &json!({"type": "object", "properties": {"a": {"type": "string",
            "x-kubernetes-validations": [rule]}}}),
        )
    };
    let e = bad(json!({"rule": "self ==="}));
    assert!(
        e.starts_with(
            "/properties/a/x-kubernetes-validations/0/rule: compilation failed: ERROR: <input>:1:"
        ),
        "{e}"
    );
    assert_eq!(
        bad(json!({"rule": "self == other"})),
        "/properties/a/x-kubernetes-validations/0/rule: compilation failed: ERROR: <input>:1:9: undeclared reference to 'other' (in container '')"
    );
    assert!(
        bad(json!({"rule": "self.frobnicate()"})).contains("undeclared reference to 'frobnicate'")
    );
    assert!(bad(json!({"rule": ""})).contains("rule: Required value"));
    assert!(
        bad(json!({"rule": "true", "reason": "Bad"}))
            .contains("reason: Unsupported value: \"Bad\"")
    );
    assert!(bad(json!({"rule": "true", "optionalOldSelf": true})).contains("optionalOldSelf"));
    assert!(
        bad(json!({"rule": "true", "fieldPath": ".nope"})).contains("fieldPath: Invalid value")
    );
    assert!(
        bad(json!({"rule": "true", "messageExpression": "self +"})).contains("messageExpression")
    );
    assert!(bad(json!({"rule": "true", "message": "a\nb"})).contains("line breaks"));
    // Fields the schema does not declare.
    let typo = compile_error(&schema_with(
        json!([{"rule": "self.replicas > 0 && has(self.spec.replica)"}]),
        json!({"replicas": {"type": "integer"}, "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}),
    ));
    assert!(typo.ends_with("undefined field 'replica'"), "{typo}");
    let open = json!({"type": "object", "x-kubernetes-validations": [{"rule": "has(self.anything) && self.m.k == 'v'"}],
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}},
                       "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    assert!(CompiledSchema::new(&open).is_err());
    let open = json!({"type": "object", "x-kubernetes-validations": [{"rule": "has(self.m.k) && has(self.free.x)"}],
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}},
                       "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    assert!(CompiledSchema::new(&open).is_ok());
    // Comprehension variables are in scope in their body only.
    assert!(bad(json!({"rule": "[1].all(x, x > 0) && x > 0"})).contains("'x'"));
}

#[test]
fn static_cost_limit_refuses_unbounded_nested_loops() {
    let rule = json!([{"rule": "self.xs.all(x, self.xs.all(y, x.matches(y)))"}]);
    let unbounded = schema_with(
        rule.clone(),
        json!({"xs": {"type": "array", "items": {"type": "string"}}}),
    );
    assert!(compile_error(&unbounded).contains("estimated rule cost exceeds budget by factor of"));
    let bounded = schema_with(
        rule,
        json!({"xs": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 20}}}),
    );
    assert!(CompiledSchema::new(&bounded).is_ok());
}

#[test]
fn runtime_cost_limits_stop_expensive_rules() {
    // Unbounded in the schema (and under the static limit), but too
    // expensive for the actual object: the rule does not run.
    let s = json!({"type": "object", "properties": {"xs": {"type": "array", "maxItems": 500,
        "items": {"type": "integer"}}},
        "x-kubernetes-validations": [{"rule": "self.xs.all(x, self.xs.all(y, x <= y || x > y))"}]});
    assert!(CompiledSchema::new(&s).is_ok());
    let small: Vec<i64> = (0..10).collect();
    assert!(run(&s, json!({"xs": small}), None).is_empty());
    let large: Vec<i64> = (0..500).collect();
    let errs = run(&s, json!({"xs": large}), None);
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].contains("call cost exceeds limit for rule"),
        "{errs:?}"
    );
}

#[test]
fn message_expressions_have_a_static_cost_limit_too() {
    let s = schema_with(
        json!([{"rule": "true", "messageExpression": "self.xs.map(x, self.xs.map(y, x + y)).join(',')"}]),
        json!({"xs": {"type": "array", "items": {"type": "string"}}}),
    );
    let e = compile_error(&s);
    assert!(
        e.starts_with("/x-kubernetes-validations/0/messageExpression: Forbidden: estimated messageExpression cost exceeds budget"),
        "{e}"
    );
}

/// Declared property names are selected escaped, as kube-apiserver exposes
/// them (`__dash__`, `__dot__`, `__slash__`, `__underscores__`, reserved
/// words as `__namespace__`); the raw forms kube-apiserver refuses are
/// refused here too; a map's keys stay as they are.
#[test]
fn property_names_are_selected_escaped_as_kube_apiserver_does() {
    let value = json!({
        "innodb-buffer-pool-ratio": 80,
        "namespace": "team-a",
        "a__b": 1,
        "labels": {"app.kubernetes.io/part-of": "shop"}
    });
    let holding = [
        "self.innodb__dash__buffer__dash__pool__dash__ratio == 80",
        "self.__namespace__ == 'team-a'",
        "self.a__underscores__b == 1",
        "has(self.innodb__dash__buffer__dash__pool__dash__ratio)",
        "self.labels.app__dot__kubernetes__dot__io__slash__part__dash__of == 'shop'",
    ];
    for rule in holding {
        assert_eq!(holds(rule, value.clone()), Ok(true), "{rule}");
    }
    // A map (additionalProperties): keys as they are.
    let schema = json!({"type": "object", "properties": {
        "labels": {"type": "object", "maxProperties": 8,
                   "additionalProperties": {"type": "string", "maxLength": 63}}},
        "x-kubernetes-validations": [{"rule": "self.labels['app.kubernetes.io/part-of'] == 'shop'"}]});
    assert!(
        run(
            &schema,
            json!({"labels": {"app.kubernetes.io/part-of": "shop"}}),
            None
        )
        .is_empty()
    );
    // The raw forms kube-apiserver does not declare.
    let props = json!({"a__b": {"type": "integer"}, "ratio": {"type": "integer"}});
    for rule in ["self.a__b == 1", "self.ratio__dash__x == 1"] {
        let err = compile_error(&schema_with(json!([{ "rule": rule }]), props.clone()));
        assert!(err.contains("undefined field"), "{rule}: {err}");
    }
}

/// A transition rule needs the old value of its node: below the items of a
/// list that is not a `map` list (atomic, set) there is none to pair it
/// with, and kube-apiserver refuses such a rule; under a map list's items,
/// or a map's values, it is allowed.
#[test]
fn transition_rules_below_uncorrelatable_items_are_refused() {
    let item = json!({"type": "object", "required": ["k"], "properties": {
        "k": {"type": "string", "maxLength": 8},
        "v": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v"}]});
    let list = |list_type: Value| {
        let mut l = json!({"type": "array", "maxItems": 4, "items": item.clone()});
        if let Value::Object(extra) = list_type {
            l.as_object_mut().unwrap().extend(extra);
        }
        json!({"type": "object", "properties": {"list": l}})
    };
    for list_type in [json!({}), json!({"x-kubernetes-list-type": "atomic"})] {
        assert_eq!(
            compile_error(&list(list_type)),
            "/properties/list/items/x-kubernetes-validations/0/rule: \
             oldSelf cannot be used on the uncorrelatable portion of the schema within /properties/list"
        );
    }
    let keyed = list(json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}));
    assert!(CompiledSchema::new(&keyed).is_ok());
    let map = json!({"type": "object", "properties": {"byName": {"type": "object",
        "maxProperties": 4, "additionalProperties": item.clone()}}});
    assert!(CompiledSchema::new(&map).is_ok());
    // A rule without oldSelf is fine anywhere.
    let mut plain = item;
    plain["x-kubernetes-validations"] = json!([{"rule": "self.v >= 0"}]);
    let atomic = json!({"type": "object", "properties": {"list": {"type": "array", "maxItems": 4, "items": plain}}});
    assert!(CompiledSchema::new(&atomic).is_ok());
}

/// What kube-apiserver's type checker refuses when the CRD is created is
/// refused when the kind loads, in its words: a rule that is not a bool, a
/// message expression that is not a string, operators on types they have
/// no overload for, a field of a scalar. Types it cannot know (int-or-string,
/// comprehension variables, numbers of two types, null) are never refused.
#[test]
fn rules_that_do_not_type_check_are_refused_at_load() {
    let props = json!({
        "enabled": {"type": "boolean"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "name": {"type": "string", "maxLength": 16},
        "port": {"x-kubernetes-int-or-string": true},
        "backup": {"type": "object", "properties": {"size": {"type": "string", "maxLength": 8}}},
        "tags": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 8}}
    });
    let refused = [
        (
            json!({"rule": "self.backup.size"}),
            "cel expression must evaluate to a bool",
        ),
        (
            json!({"rule": "self.enabled == \"yes\""}),
            "found no matching overload for '_==_' applied to '(bool, string)'",
        ),
        (
            json!({"rule": "self.count.foo == 1"}),
            "type 'int' does not support field selection",
        ),
        (
            json!({"rule": "self.name > 3"}),
            "found no matching overload for '_>_' applied to '(string, int)'",
        ),
        (
            json!({"rule": "self.count + 'x' == 'y'"}),
            "found no matching overload for '_+_' applied to '(int, string)'",
        ),
        (
            json!({"rule": "self.count && true"}),
            "found no matching overload for '_&&_' applied to '(int, bool)'",
        ),
        (
            json!({"rule": "false", "messageExpression": "1 + 1"}),
            "messageExpression must evaluate to a string",
        ),
    ];
    for (rule, want) in refused {
        let err = compile_error(&schema_with(json!([rule.clone()]), props.clone()));
        assert!(err.contains(want), "{rule}: {err}");
    }
    let accepted = [
        "self.count <= self.ratio",
        "self.port == 80 || self.port == 'http'",
        "self.tags.all(t, t.size() < 8)",
        "self.tags.map(t, t + '!').size() < 5",
        "self.name == null || self.name.startsWith('a')",
        "self.count + 1 > 2 && self.name + 'x' != 'y'",
        "!has(self.backup) || self.backup.size.size() > 0",
        "self.count < 2.5",
        "'a' in self.tags",
        "size(self.tags) < 5",
    ];
    for rule in accepted {
        assert!(
            CompiledSchema::new(&schema_with(json!([{ "rule": rule }]), props.clone())).is_ok(),
            "{rule}"
        );
    }
}
