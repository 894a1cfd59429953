//! Go-formatted text held against the real kube-apiserver: a CRD with the
//! same schema as our validator must refuse the same object with the same
//! messages, float bounds included (`1e+06`, not `1000000`).

use std::time::Duration;

use kubectl_cozy::kinds::schema::CompiledSchema;
use serde_json::{Value, json};

use crate::support::plane;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs kubectl with `input` on stdin.
fn kubectl(args: &[&str], input: &str) -> std::process::Output {
    plane().kubectl_stdin(args, input)
}

#[test]
fn number_bound_messages_match_kube_apiserver() {
    let group = format!("gotext-{}.example.com", std::process::id());
    let spec_schema = json!({"type": "object", "properties": {
        "big": {"type": "number", "maximum": 1000000},
        "small": {"type": "number", "minimum": 0.00001},
        "excl": {"type": "number", "maximum": 2500000, "exclusiveMaximum": true},
        "step": {"type": "number", "multipleOf": 0.5},
        "int": {"type": "number", "maximum": 1000000}
    }});
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gauges.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": "Gauge", "plural": "gauges", "singular": "gauge"},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": spec_schema}
                }}
            }]
        }
    });
    let out = kubectl(&["apply", "--server-side", "-f", "-"], &crd.to_string());
    assert!(out.status.success(), "apply CRD: {}", text(&out.stderr));
    let out = kubectl(
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            &format!("crd/gauges.{group}"),
        ],
        "",
    );
    assert!(out.status.success(), "wait: {}", text(&out.stderr));

    // Values kubectl sends on unchanged: non-integral floats stay float64
    // through its decode and re-encode, and so reach kube-openapi's float
    // path; `int` stays an integer and takes the `MaximumInt` path.
    let spec = json!({
        "big": 1500000.5,
        "small": 0.000001,
        "excl": 2500000.5,
        "step": 1000000.25,
        "int": 2000000
    });
    let object = json!({
        "apiVersion": format!("{group}/v1"),
        "kind": "Gauge",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": spec,
    });

    // Discovery of a new CRD can lag behind Established.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let stderr = loop {
        let out = kubectl(
            &["create", "--dry-run=server", "-o", "name", "-f", "-"],
            &object.to_string(),
        );
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "the object must be refused");
        if stderr.contains("is invalid") || std::time::Instant::now() > deadline {
            break stderr;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    let mut theirs: Vec<String> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("* "))
        .map(str::to_owned)
        .collect();
    theirs.sort();

    let compiled = CompiledSchema::new(&spec_schema).expect("schema compiles");
    let spec: Value = object["spec"].clone();
    let mut ours: Vec<String> = compiled
        .validate(&spec, "spec")
        .iter()
        .map(ToString::to_string)
        .collect();
    ours.sort();

    assert_eq!(theirs.len(), 5, "kube-apiserver said:\n{stderr}");
    assert_eq!(ours, theirs, "kube-apiserver said:\n{stderr}");
    assert!(
        theirs.contains(
            &"spec.big: Invalid value: 1.5000005e+06: spec.big in body should be less than or equal to 1e+06"
                .to_owned()
        ),
        "{theirs:#?}"
    );
}

/// structured-merge-diff writes `v:`/`k:` keys with json-iterator, not
/// `encoding/json`: `1e-07` keeps its two exponent digits and a backspace is
/// `\u0008`. The extension server's field sets use the same dialect
/// (`golang::Dialect::JsonIter`); this pins what kube-apiserver writes.
#[test]
fn field_set_keys_match_structured_merge_diff() {
    let group = format!("gotext-smd-{}.example.com", std::process::id());
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("tagsets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": "Tagset", "plural": "tagsets", "singular": "tagset"},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "properties": {
                        "tags": {
                            "type": "array",
                            "x-kubernetes-list-type": "set",
                            "items": {"type": "number"}
                        },
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "required": ["name"], "properties": {
                                "name": {"type": "string"}
                            }}
                        }
                    }
                }}}}
            }]
        }
    });
    let out = kubectl(&["apply", "--server-side", "-f", "-"], &crd.to_string());
    assert!(out.status.success(), "apply CRD: {}", text(&out.stderr));
    let out = kubectl(
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            &format!("crd/tagsets.{group}"),
        ],
        "",
    );
    assert!(out.status.success(), "wait: {}", text(&out.stderr));
    let object = json!({
        "apiVersion": format!("{group}/v1"),
        "kind": "Tagset",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {"tags": [1e-7, 1.5e21], "ports": [{"name": "a<\u{8}"}]},
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let applied: Value = loop {
        let out = kubectl(
            &[
                "apply",
                "--server-side",
                "--field-manager=gotext",
                "--show-managed-fields",
                "-o",
                "json",
                "-f",
                "-",
            ],
            &object.to_string(),
        );
        if out.status.success() {
            break serde_json::from_slice(&out.stdout).expect("kubectl -o json");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "apply: {}",
            text(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    let entry = applied["metadata"]["managedFields"]
        .as_array()
        .and_then(|entries| entries.iter().find(|e| e["manager"] == "gotext"))
        .unwrap_or_else(|| panic!("no gotext entry in {applied:#}"));
    let spec = &entry["fieldsV1"]["f:spec"];
    let tags: Vec<&String> = spec["f:tags"].as_object().expect("f:tags").keys().collect();
    let ports: Vec<&String> = spec["f:ports"]
        .as_object()
        .expect("f:ports")
        .keys()
        .collect();
    assert!(tags.contains(&&"v:1e-07".to_owned()), "{tags:?}");
    assert!(tags.contains(&&"v:1.5e+21".to_owned()), "{tags:?}");
    assert!(
        ports.contains(&&r#"k:{"name":"a\u003c\u0008"}"#.to_owned()),
        "{ports:?}"
    );
    let out = kubectl(
        &["delete", "-n", "default", &format!("tagsets.{group}/t")],
        "",
    );
    assert!(out.status.success(), "delete: {}", text(&out.stderr));
}

/// `-o go-template` and `-o jsonpath-as-json` print what kubectl prints for
/// the same template over the same object: kubectl's `label --local` prints
/// a file's object through its own printers without asking a server (the
/// label it sets is already there, so the object is unchanged).
#[test]
fn output_templates_print_what_kubectl_prints() {
    use kubectl_cozy::output::{OutputFormat, render_template};

    let object = json!({
        "apiVersion": "apps.cozystack.io/v1alpha1",
        "kind": "Postgres",
        "metadata": {
            "name": "db1", "namespace": "team-a", "creationTimestamp": null,
            "labels": {"tier": "db", "a": "1"}
        },
        "spec": {
            "replicas": 3, "ratio": 0.5, "big": 12_345_678_901_i64, "huge": 1.5e21,
            "storage": "10Gi", "enabled": true, "backup": null,
            "databases": ["app", "<reports> & more"],
            "users": {"app": {"password": "c2VjcmV0"}, "ro": {"password": "cmVhZA=="}}
        }
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("postgres.json");
    std::fs::write(&file, object.to_string()).expect("write the object");
    let kubectl = crate::support::plane::binaries()
        .expect("control plane binaries")
        .join("kubectl");
    let cases: &[(OutputFormat, &str)] = &[
        // Not `.spec.huge`: the engine prints a float of 1e6 or more (or
        // under 1e-4) in decimal, where Go prints `1.5e+21` (module docs).
        (
            OutputFormat::GoTemplate,
            "{{.metadata.name}} {{.spec.replicas}} {{.spec.ratio}} {{.spec.big}}",
        ),
        (
            OutputFormat::GoTemplate,
            "{{.metadata.labels}} {{.spec.databases}} {{.spec.users}}",
        ),
        (
            OutputFormat::GoTemplate,
            "{{.spec.backup}} {{.spec.nope}} {{.spec.nope.deeper}} {{.metadata.creationTimestamp}}",
        ),
        (
            OutputFormat::GoTemplate,
            "{{range $name, $user := .spec.users}}{{$name}}={{$user.password | base64decode}}\n{{end}}",
        ),
        (
            OutputFormat::GoTemplate,
            "{{range $i, $db := .spec.databases}}{{$i}}:{{$db}};{{end}}{{len .spec.databases}}",
        ),
        (
            OutputFormat::GoTemplate,
            "{{if .spec.enabled}}on{{else}}off{{end}} {{exists .spec \"backup\"}} {{exists .spec.users \"app\" \"password\"}} {{exists .spec.databases 2}}",
        ),
        (
            OutputFormat::GoTemplate,
            "{{printf \"%s/%s %d %v %q\" .metadata.namespace .metadata.name .spec.replicas .spec.ratio .spec.storage}}",
        ),
        (
            OutputFormat::GoTemplate,
            "{{with .spec}}{{.storage}}{{end}} {{index .metadata.labels \"tier\"}} {{eq .spec.replicas 3}} {{gt .spec.ratio 0.25}} {{html (index .spec.databases 1)}} {{js (index .spec.databases 1)}}",
        ),
        (
            OutputFormat::GoTemplate,
            "{{- range .spec.databases }}\n  - {{ . }}\n{{- end }}\n",
        ),
        (OutputFormat::JsonPathAsJson, "{.metadata.name}"),
        (
            OutputFormat::JsonPathAsJson,
            "{.spec.databases[*]}{.spec.users}{.spec.nope}",
        ),
        (
            OutputFormat::JsonPathAsJson,
            "name: {.metadata.name}{range .spec.databases[*]}[{@}]{end}",
        ),
        (
            OutputFormat::JsonPathAsJson,
            "{.spec.replicas} {.spec.ratio} {.spec.big} {.spec.huge} {.spec.backup}",
        ),
    ];
    for (format, template) in cases {
        let output = format!("{}={template}", format.name());
        let out = std::process::Command::new(&kubectl)
            .args(["label", "--local", "-f"])
            .arg(&file)
            .args(["a=1", "--overwrite", "-o", &output])
            .output()
            .expect("run kubectl");
        assert!(out.status.success(), "{output}: {}", text(&out.stderr));
        let mut ours = String::new();
        render_template(&object, *format, template, true, &mut ours)
            .unwrap_or_else(|e| panic!("{output}: {e}"));
        assert_eq!(ours, text(&out.stdout), "{output}");
    }
}

/// `--allow-missing-template-keys=false` fails a template where kubectl's
/// does, with the same cause, and prints what kubectl prints where it does
/// not: a JSONPath field that selects nothing from some input (a range
/// pass, a filter's comparison) fails it, a filter's existence test does
/// not; a Go template's missing map key fails it, `index` does not.
#[test]
fn missing_template_keys_fail_where_kubectl_fails() {
    use kubectl_cozy::output::{OutputFormat, render_template};

    let object = json!({
        "apiVersion": "example.com/v1", "kind": "Thing",
        "metadata": {"name": "x", "labels": {"a": "1"}},
        "entries": [{"k": "a", "v": 1}, {"k": "b"}],
        "spec": {"users": {"app": {"pw": "x"}, "ro": {}}}
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("thing.json");
    std::fs::write(&file, object.to_string()).expect("write the object");
    let kubectl = crate::support::plane::binaries()
        .expect("control plane binaries")
        .join("kubectl");
    let cases: &[(OutputFormat, &str)] = &[
        (OutputFormat::JsonPath, "{.nope}"),
        (OutputFormat::JsonPath, "{.entries[*].v}"),
        (OutputFormat::JsonPath, "{.entries[?(@.v)].k}"),
        (OutputFormat::JsonPath, "{.entries[?(@.v==1)].k}"),
        (OutputFormat::JsonPath, "{range .entries[*]}{.v}{end}"),
        (OutputFormat::JsonPath, "{.spec.users.*.pw}"),
        (OutputFormat::JsonPath, "{.none[*].v}"),
        (
            OutputFormat::JsonPathAsJson,
            "{.entries[*].k}{.metadata.nope}",
        ),
        (OutputFormat::GoTemplate, "{{.metadata.nope}}"),
        (
            OutputFormat::GoTemplate,
            "{{index .metadata.labels \"zz\"}} {{.metadata.name}}",
        ),
    ];
    for (format, template) in cases {
        let output = format!("{}={template}", format.name());
        let out = std::process::Command::new(&kubectl)
            .args(["label", "--local", "-f"])
            .arg(&file)
            .args([
                "a=1",
                "--overwrite",
                "--allow-missing-template-keys=false",
                "-o",
                &output,
            ])
            .output()
            .expect("run kubectl");
        let mut ours = String::new();
        let rendered = render_template(&object, *format, template, false, &mut ours);
        if out.status.success() {
            assert_eq!(rendered, Ok(()), "{output}");
            assert_eq!(ours, text(&out.stdout), "{output}");
            continue;
        }
        let theirs = text(&out.stderr) + &text(&out.stdout);
        let err = rendered.expect_err(&output);
        // kubectl's cause: `nope is not found` (JSONPath), `map has no entry
        // for key "nope"` (Go templates); gotmpl words the latter `…key: nope`.
        let cause = err.rsplit(": ").next().unwrap_or_default();
        let key = cause
            .trim_start_matches("map has no entry for key: ")
            .trim_end_matches(" is not found");
        assert!(
            theirs.contains(&format!("{key} is not found"))
                || theirs.contains(&format!("map has no entry for key \"{key}\"")),
            "{output}: ours {err:?}, kubectl {theirs}"
        );
    }
}
