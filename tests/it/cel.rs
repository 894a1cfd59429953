//! CEL validation rules (`x-kubernetes-validations`) enforced by the server:
//! a kind of our own with an immutable field (`self == oldSelf`), a
//! `messageExpression`, a `fieldPath`, `reason`, quantities, `matches`,
//! URLs, list macros, `has` and optional old self, exercised with kubectl's
//! create, apply, patch and replace against `serve --standalone`; the same
//! objects sent to a CRD with the same schema on the real kube-apiserver,
//! whose answers must match; and an uncompilable rule refused at load.

use std::path::Path;
use std::process::Output;

use crate::support::plane;
use crate::support::standalone::{Standalone, kubectl, ok, refused, text};

/// The kind's `spec` schema, shared by the kind and the CRD.
const SCHEMA: &str = r#"
type: object
x-kubernetes-validations:
- rule: "self.replicas <= self.maxReplicas"
  message: replicas may not exceed maxReplicas
  fieldPath: .replicas
- rule: "quantity(self.size).isGreaterThan(quantity('1Gi'))"
  message: size must be more than 1Gi
  fieldPath: .size
  reason: FieldValueForbidden
- rule: "oldSelf.hasValue() || !has(self.legacy)"
  optionalOldSelf: true
  message: legacy may not be set on create
- rule: "!has(self.max__dash__connections) || self.max__dash__connections <= self.__namespace__.size() * 100"
  message: max-connections may not exceed 100 per character of namespace
properties:
  max-connections:
    type: integer
  namespace:
    type: string
    maxLength: 63
    default: db
  storageClass:
    type: string
    maxLength: 63
    x-kubernetes-validations:
    - rule: self == oldSelf
      message: storageClass is immutable
  size:
    type: string
    maxLength: 16
    default: 10Gi
  replicas:
    type: integer
    default: 1
  maxReplicas:
    type: integer
    default: 3
  owner:
    type: string
    maxLength: 63
    x-kubernetes-validations:
    - rule: "self.matches('^[a-z]+$')"
      messageExpression: "'owner ' + self + ' must be lower-case letters'"
  endpoint:
    type: string
    maxLength: 256
    x-kubernetes-validations:
    - rule: "url(self).getScheme() == 'https'"
      message: endpoint must use https
  users:
    type: array
    maxItems: 10
    items:
      type: string
      maxLength: 32
    x-kubernetes-validations:
    - rule: "self.all(u, u.size() >= 3)"
    - rule: "self.exists(u, u == 'admin')"
      message: an admin user is required
  legacy:
    type: boolean
  tls:
    type: object
    properties:
      enabled:
        type: boolean
      secret:
        type: string
        maxLength: 253
    x-kubernetes-validations:
    - rule: "!self.enabled || self.secret != ''"
      message: an enabled tls needs a secret
"#;

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.trim_start_matches('\n')
        .lines()
        .map(|l| format!("{pad}{l}\n"))
        .collect()
}

fn kind_definition() -> String {
    format!(
        "kind: Volume\nplural: volumes\ngroup: apps.cozystack.io\nversion: v1alpha1\nopenAPISchema:\n{}\
         release:\n  chart:\n    name: volume\n    version: \"0.1.0\"\n    sourceRef: {{kind: HelmRepository, name: apps, namespace: cozy-public}}\n",
        indent(SCHEMA, 2)
    )
}

fn volume(api_version: &str, kind: &str, name: &str, spec: &str) -> String {
    format!(
        "apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n{}",
        indent(spec, 2)
    )
}

const VALID: &str = "storageClass: fast\nsize: 10Gi\nowner: alice\nendpoint: https://s3.example.com/b\nusers: [admin, bob]\n";

#[test]
fn rules_are_enforced_on_create_update_patch_and_apply() {
    let kinds = tempfile::tempdir().unwrap();
    std::fs::write(kinds.path().join("volume.yaml"), kind_definition()).unwrap();
    let server = Standalone::launch(
        "127.0.0.1:0",
        "--kinds",
        kinds.path(),
        tempfile::tempdir().unwrap(),
    )
    .expect("server starts");
    let kc = server.kubeconfig();
    let v = |name: &str, spec: &str| volume("apps.cozystack.io/v1alpha1", "Volume", name, spec);

    // Create: valid, then one failure of each form.
    ok(&kubectl(&kc, &["create", "-f", "-"], Some(&v("v1", VALID))));
    let cases = [
        (
            VALID.replace("owner: alice", "owner: Alice"),
            r#"spec.owner: Invalid value: "Alice": owner Alice must be lower-case letters"#,
        ),
        (
            VALID.replace("size: 10Gi", "size: 512Mi"),
            "spec.size: Forbidden: size must be more than 1Gi",
        ),
        (
            format!("{VALID}replicas: 5\n"),
            "spec.replicas: Invalid value: replicas may not exceed maxReplicas",
        ),
        (
            VALID.replace("https://", "http://"),
            r#"spec.endpoint: Invalid value: "http://s3.example.com/b": endpoint must use https"#,
        ),
        (
            VALID.replace("[admin, bob]", "[admin, bo]"),
            "spec.users: Invalid value: failed rule: self.all(u, u.size() >= 3)",
        ),
        (
            VALID.replace("[admin, bob]", "[root, bob]"),
            "spec.users: Invalid value: an admin user is required",
        ),
        (
            format!("{VALID}legacy: true\n"),
            "spec: Invalid value: legacy may not be set on create",
        ),
        (
            format!("{VALID}max-connections: 301\n"),
            "spec: Invalid value: max-connections may not exceed 100 per character of namespace",
        ),
    ];
    for (spec, want) in &cases {
        let err = refused(&kubectl(&kc, &["create", "-f", "-"], Some(&v("bad", spec))));
        assert!(err.contains(want), "want {want:?} in {err}");
        assert!(err.contains(r#"The Volume "bad" is invalid"#), "{err}");
    }
    // Two failing rules: one cause each.
    let err = refused(&kubectl(
        &kc,
        &["create", "-f", "-"],
        Some(&v(
            "bad",
            &VALID
                .replace("owner: alice", "owner: Alice")
                .replace("size: 10Gi", "size: 1Mi"),
        )),
    ));
    assert!(
        err.contains("spec.owner: Invalid value") && err.contains("spec.size: Forbidden"),
        "{err}"
    );

    // Transition rule: storageClass is immutable through apply, merge and
    // JSON patches and replace; other changes go through.
    let changed = v(
        "v1",
        &VALID.replace("storageClass: fast", "storageClass: slow"),
    );
    let immutable = r#"spec.storageClass: Invalid value: "slow": storageClass is immutable"#;
    let err = refused(&kubectl(&kc, &["apply", "-f", "-"], Some(&changed)));
    assert!(err.contains(immutable), "{err}");
    let err = refused(&kubectl(
        &kc,
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&changed),
    ));
    assert!(err.contains(immutable), "{err}");
    let err = refused(&kubectl(
        &kc,
        &[
            "patch",
            "volume",
            "v1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"storageClass":"slow"}}"#,
        ],
        None,
    ));
    assert!(err.contains(immutable), "{err}");
    let err = refused(&kubectl(
        &kc,
        &[
            "patch",
            "volume",
            "v1",
            "--type",
            "json",
            "-p",
            r#"[{"op":"replace","path":"/spec/storageClass","value":"slow"}]"#,
        ],
        None,
    ));
    assert!(err.contains(immutable), "{err}");
    let err = refused(&kubectl(&kc, &["replace", "-f", "-"], Some(&changed)));
    assert!(err.contains(immutable), "{err}");
    let stored = ok(&kubectl(
        &kc,
        &["get", "volume", "v1", "-o", "jsonpath={.spec.storageClass}"],
        None,
    ));
    assert_eq!(stored, "fast");

    ok(&kubectl(
        &kc,
        &[
            "patch",
            "volume",
            "v1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"size":"20Gi","replicas":2}}"#,
        ],
        None,
    ));
    let err = refused(&kubectl(
        &kc,
        &[
            "patch",
            "volume",
            "v1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"replicas":4}}"#,
        ],
        None,
    ));
    assert!(
        err.contains("spec.replicas: Invalid value: replicas may not exceed maxReplicas"),
        "{err}"
    );
    // Optional old self: `legacy` may be set once the object exists.
    ok(&kubectl(
        &kc,
        &[
            "patch",
            "volume",
            "v1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"legacy":true}}"#,
        ],
        None,
    ));
}

#[test]
fn an_uncompilable_rule_is_reported_at_load_with_file_and_line() {
    let kinds = tempfile::tempdir().unwrap();
    let good = kind_definition();
    let bad = good
        .replace("kind: Volume", "kind: Disk")
        .replace("plural: volumes", "plural: disks")
        .replace("rule: self == oldSelf", "rule: self == oldSelff");
    std::fs::write(kinds.path().join("kinds.yaml"), format!("{good}---\n{bad}")).unwrap();
    let err = match Standalone::launch(
        "127.0.0.1:0",
        "--kinds",
        kinds.path(),
        tempfile::tempdir().unwrap(),
    ) {
        Ok(_) => panic!("the server loaded a kind with an uncompilable rule"),
        Err(e) => e,
    };
    // The rule's own line: the second document starts after `good` and `---`.
    let rule = bad
        .lines()
        .position(|l| l.contains("oldSelff"))
        .expect("the broken rule")
        + 1;
    let line = good.lines().count() + 1 + rule;
    let want = format!(
        "kinds.yaml:{line}: openAPISchema: /properties/storageClass/x-kubernetes-validations/0/rule: compilation failed: ERROR: <input>:1:9: undeclared reference to 'oldSelff'"
    );
    assert!(err.contains(&want), "want {want:?} in {err}");
}

/// The causes in kubectl's error output for a refused write (`spec...`
/// lines), sorted: kube-apiserver walks object fields in map order.
fn causes(err: &str) -> Vec<String> {
    let mut out: Vec<String> = err
        .lines()
        .flat_map(|l| l.split(" is invalid: ").last())
        .map(|l| l.trim_start_matches("* ").trim().to_string())
        .filter(|l| l.starts_with("spec") || l.starts_with("<nil>"))
        .collect();
    out.sort();
    out
}

/// What a write did: accepted, or refused with these causes.
fn outcome(out: &Output) -> Result<(), Vec<String>> {
    if out.status.success() {
        Ok(())
    } else {
        Err(causes(&text(&out.stderr)))
    }
}

#[test]
fn answers_match_kube_apiserver_for_a_crd_with_the_same_schema() {
    let plane = plane::plane();
    let ns = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(plane.namespace("cel"));
    let crd = format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: volumes.celtest.cozystack.io\n\
         spec:\n  group: celtest.cozystack.io\n  scope: Namespaced\n  names: {{kind: Volume, plural: volumes, singular: volume}}\n  \
         versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        \
         properties:\n          spec:\n{}",
        indent(SCHEMA, 12)
    );
    crate::support::aggregated::apply(plane, &crd).expect("CRD installs");
    let wait = plane
        .kubectl()
        .args([
            "wait",
            "--for",
            "condition=Established",
            "--timeout=60s",
            "crd/volumes.celtest.cozystack.io",
        ])
        .output()
        .expect("kubectl wait");
    assert!(wait.status.success(), "{}", text(&wait.stderr));

    let kinds = tempfile::tempdir().unwrap();
    std::fs::write(kinds.path().join("volume.yaml"), kind_definition()).unwrap();
    let server = Standalone::launch(
        "127.0.0.1:0",
        "--kinds",
        kinds.path(),
        tempfile::tempdir().unwrap(),
    )
    .expect("server starts");
    let ours = server.kubeconfig();
    let theirs = plane.kubeconfig.clone();
    // The standalone server has namespaces of its own, like a cluster.
    let created = kubectl(&ours, &["create", "namespace", ns.as_str()], None);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let run = |kc: &Path, args: &[&str], stdin: Option<&str>| {
        let mut all = vec!["-n", ns.as_str()];
        all.extend_from_slice(args);
        kubectl(kc, &all, stdin)
    };
    let both = |args: &[&str], name: &str, spec: Option<&str>| {
        let ours_in = spec.map(|s| volume("apps.cozystack.io/v1alpha1", "Volume", name, s));
        let theirs_in = spec.map(|s| volume("celtest.cozystack.io/v1", "Volume", name, s));
        // Fully qualified: other tests serve Volumes of other groups.
        let with = |resource: &'static str| -> Vec<&str> {
            args.iter()
                .map(|a| if *a == "RESOURCE" { resource } else { *a })
                .collect()
        };
        let a = outcome(&run(
            &ours,
            &with("volumes.apps.cozystack.io"),
            ours_in.as_deref(),
        ));
        let b = outcome(&run(
            &theirs,
            &with("volumes.celtest.cozystack.io"),
            theirs_in.as_deref(),
        ));
        assert_eq!(
            a, b,
            "kubectl {args:?} on {name} with {spec:?}: ours (left) differs from kube-apiserver"
        );
        a
    };

    // Creates.
    let creates = [
        VALID.to_string(),
        VALID.replace("owner: alice", "owner: Alice"),
        VALID.replace("size: 10Gi", "size: 512Mi"),
        format!("{VALID}replicas: 5\n"),
        VALID.replace("https://", "http://"),
        VALID.replace("[admin, bob]", "[admin, bo]"),
        VALID.replace("[admin, bob]", "[root, bo]"),
        format!("{VALID}legacy: true\n"),
        VALID
            .replace("owner: alice", "owner: Alice")
            .replace("size: 10Gi", "size: 1Mi"),
        // An evaluation error (no such key: enabled) and a nested object's
        // rule; `||` absorbs the error when its other side is true.
        format!("{VALID}tls: {{secret: \"\"}}\n"),
        format!("{VALID}tls: {{secret: s}}\n"),
        format!("{VALID}tls: {{enabled: true, secret: \"\"}}\n"),
        // A schema error stops the rules.
        VALID
            .replace("owner: alice", "owner: 5")
            .replace("size: 10Gi", "size: 1Mi"),
        // Property names CEL selects escaped (`__dash__`, `__namespace__`).
        format!("{VALID}max-connections: 200\n"),
        format!("{VALID}max-connections: 301\n"),
        format!("{VALID}max-connections: 301\nnamespace: dbs1\n"),
    ];
    let mut refused_creates = 0;
    for (i, spec) in creates.iter().enumerate() {
        let name = format!("c{i}");
        if both(&["create", "-f", "-"], &name, Some(spec)).is_err() {
            refused_creates += 1;
        }
    }
    assert_eq!(
        refused_creates,
        creates.len() - 4,
        "every create but the first, `tls: {{secret: s}}` and the two within max-connections is refused"
    );

    // Updates of c0 (valid, stored on both).
    let changed = VALID.replace("storageClass: fast", "storageClass: slow");
    assert!(both(&["apply", "-f", "-"], "c0", Some(&changed)).is_err());
    assert!(both(&["replace", "-f", "-"], "c0", Some(&changed)).is_err());
    for patch in [
        r#"{"spec":{"storageClass":"slow"}}"#,
        r#"{"spec":{"replicas":4}}"#,
        r#"{"spec":{"users":["admin","x"]}}"#,
        r#"{"spec":{"size":"20Gi","replicas":2}}"#,
        r#"{"spec":{"legacy":true}}"#,
    ] {
        let _ = both(
            &["patch", "RESOURCE", "c0", "--type", "merge", "-p", patch],
            "c0",
            None,
        );
    }
}

/// The kind under its own group, served in-process over the plane's
/// HelmReleases and registered with the real aggregator; returns the kinds
/// directory (kept for the server's life).
fn serve_through_the_aggregator(plane: &'static plane::Plane) -> Result<tempfile::TempDir, String> {
    let kinds = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(
        kinds.path().join("volume.yaml"),
        kind_definition().replace("group: apps.cozystack.io", "group: cel.cozystack.io"),
    )
    .map_err(|e| e.to_string())?;
    crate::support::aggregated::spawn_registered(
        plane,
        kinds.path().to_owned(),
        "cel.cozystack.io",
        "kubectl-cozy-cel-test",
    )?;
    Ok(kinds)
}

#[test]
fn rules_are_enforced_through_the_aggregator() {
    let plane = plane::plane();
    let _kinds = serve_through_the_aggregator(plane).expect("server registered");
    let ns = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(plane.namespace("cel-agg"));
    let kc = plane.kubeconfig.clone();
    let v = |spec: &str| volume("cel.cozystack.io/v1alpha1", "Volume", "v1", spec);
    let k = |args: &[&str], stdin: Option<&str>| {
        let mut all = vec!["-n", ns.as_str()];
        all.extend_from_slice(args);
        kubectl(&kc, &all, stdin)
    };
    let err = refused(&k(
        &["create", "-f", "-"],
        Some(&v(&VALID.replace("size: 10Gi", "size: 1Mi"))),
    ));
    assert!(
        err.contains("spec.size: Forbidden: size must be more than 1Gi"),
        "{err}"
    );
    ok(&k(&["create", "-f", "-"], Some(&v(VALID))));
    let err = refused(&k(
        &[
            "patch",
            "volumes.cel.cozystack.io",
            "v1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"storageClass":"slow"}}"#,
        ],
        None,
    ));
    assert!(
        err.contains(r#"spec.storageClass: Invalid value: "slow": storageClass is immutable"#),
        "{err}"
    );
    let changed = v(&VALID.replace("storageClass: fast", "storageClass: slow"));
    let err = refused(&k(&["apply", "-f", "-"], Some(&changed)));
    assert!(err.contains("storageClass is immutable"), "{err}");
    ok(&k(
        &[
            "patch",
            "volumes.cel.cozystack.io",
            "v1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"replicas":2}}"#,
        ],
        None,
    ));
    // The HelmRelease behind it kept the original storage class.
    let hr = ok(&k(
        &[
            "get",
            "helmreleases.helm.toolkit.fluxcd.io",
            "-l",
            "apps.cozystack.io/application.name=v1",
            "-o",
            "jsonpath={.items[0].spec.values.storageClass}",
        ],
        None,
    ));
    assert_eq!(hr, "fast");
}

/// Which rules load: the same as kube-apiserver accepts in a CRD (server
/// dry run of the CRD with the rule on `spec`), for rules that type-check
/// and rules its type checker refuses (not a bool, a message expression not
/// a string, no overload for the operands, a field of a scalar, an
/// uncorrelatable transition rule), each loaded as a kind by `kinds list`.
#[test]
fn rules_load_exactly_when_kube_apiserver_accepts_them_in_a_crd() {
    let plane = plane::plane();
    let props = "\
enabled: {type: boolean}
count: {type: integer}
ratio: {type: number}
name: {type: string, maxLength: 16}
port: {x-kubernetes-int-or-string: true}
anything: {x-kubernetes-preserve-unknown-fields: true}
loose: {type: array, maxItems: 4, items: {x-kubernetes-preserve-unknown-fields: true}}
max-connections: {type: integer}
backup: {type: object, properties: {size: {type: string, maxLength: 8}}}
tags: {type: array, maxItems: 4, items: {type: string, maxLength: 8}}
items:
  type: array
  maxItems: 4
  items:
    type: object
    properties: {v: {type: integer}}
    x-kubernetes-validations: [{rule: \"!has(oldSelf.v) || self.v >= oldSelf.v\"}]
";
    let rules = [
        // Accepted by both.
        (r#"{rule: "self.count <= self.ratio"}"#, true),
        (r#"{rule: "self.port == 80 || self.port == 'http'"}"#, true),
        (r#"{rule: "self.tags.all(t, t.size() < 8)"}"#, true),
        (
            r#"{rule: "!has(self.max__dash__connections) || self.max__dash__connections < 10"}"#,
            true,
        ),
        (r#"{rule: "self.count < 2.5"}"#, true),
        (
            r#"{rule: "true", messageExpression: "self.name + ' is taken'"}"#,
            true,
        ),
        // Refused by both.
        (
            r#"{rule: "true", messageExpression: "'count is ' + string(self.count)"}"#,
            false,
        ),
        (
            r#"{rule: "self.count <= 5", messageExpression: "'count exceeds ' + string(5)"}"#,
            false,
        ),
        (r#"{rule: "self.backup.size"}"#, false),
        (r#"{rule: "self.enabled == 'yes'"}"#, false),
        (r#"{rule: "self.count.foo == 1"}"#, false),
        (r#"{rule: "self.name > 3"}"#, false),
        (r#"{rule: "false", messageExpression: "1 + 1"}"#, false),
        (r#"{rule: "self.max-connections < 10"}"#, false),
        // A field without a type has no CEL type: it is not a field.
        (r#"{rule: "has(self.anything)"}"#, false),
        (r#"{rule: "self.anything == 1"}"#, false),
        // Nor is a list of such values.
        (r#"{rule: "self.loose.size() < 5"}"#, false),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (rule, want)) in rules.iter().enumerate() {
        // The transition rule below atomic items is refused on its own:
        // checked without it (it would refuse every schema here) but once.
        let props = if i == 0 {
            props.to_owned()
        } else {
            props.split("items:\n").next().unwrap_or(props).to_owned()
        };
        let schema = format!(
            "type: object\nproperties:\n{}x-kubernetes-validations: [{rule}]\n",
            indent(&props, 2)
        );
        let crd = format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.celload.cozystack.io\n\
             spec:\n  group: celload.cozystack.io\n  scope: Namespaced\n  names: {{kind: Gadget, plural: gadgets}}\n  \
             versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        \
             properties:\n          spec:\n{}",
            indent(&schema, 12)
        );
        let theirs = plane.kubectl_stdin(&["apply", "--dry-run=server", "-f", "-"], &crd);
        let kind = format!(
            "kind: Gadget\nplural: gadgets\ngroup: apps.cozystack.io\nversion: v1alpha1\nopenAPISchema:\n{}\
             release:\n  chart:\n    name: gadget\n    version: \"0.1.0\"\n    sourceRef: {{kind: HelmRepository, name: apps, namespace: cozy-public}}\n",
            indent(&schema, 2)
        );
        let file = dir.path().join("gadget.yaml");
        std::fs::write(&file, kind).unwrap();
        let ours = std::process::Command::new(crate::support::bins::kubectl_cozy())
            .args(["kinds", "list", "--kinds"])
            .arg(&file)
            .output()
            .expect("kinds list");
        if i == 0 {
            // With the transition rule below atomic items: both refuse.
            assert!(
                !theirs.status.success() && !ours.status.success(),
                "the uncorrelatable transition rule: kube-apiserver {}, ours {}\n{}\n{}",
                theirs.status,
                ours.status,
                text(&theirs.stderr),
                text(&ours.stderr)
            );
            assert!(
                text(&theirs.stderr)
                    .contains("oldSelf cannot be used on the uncorrelatable portion")
                    && text(&ours.stderr)
                        .contains("oldSelf cannot be used on the uncorrelatable portion"),
                "{}\n{}",
                text(&theirs.stderr),
                text(&ours.stderr)
            );
            continue;
        }
        assert_eq!(
            theirs.status.success(),
            *want,
            "kube-apiserver on {rule}: {}",
            text(&theirs.stderr)
        );
        assert_eq!(
            ours.status.success(),
            *want,
            "ours on {rule}: {}",
            text(&ours.stderr)
        );
    }
    // A rule on a node without a type: both refuse it, in the same words.
    let schema = "type: object\nproperties:\n  cpu:\n    x-kubernetes-preserve-unknown-fields: true\n    \
                  x-kubernetes-validations: [{rule: \"type(self) == string\"}]\n";
    let crd = format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.celload.cozystack.io\n\
         spec:\n  group: celload.cozystack.io\n  scope: Namespaced\n  names: {{kind: Gadget, plural: gadgets}}\n  \
         versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        \
         properties:\n          spec:\n{}",
        indent(schema, 12)
    );
    let theirs = plane.kubectl_stdin(&["apply", "--dry-run=server", "-f", "-"], &crd);
    let file = dir.path().join("gadget.yaml");
    std::fs::write(
        &file,
        format!(
            "kind: Gadget\nopenAPISchema:\n{}release:\n  chartRef: {{kind: ExternalArtifact, name: gadget}}\n",
            indent(schema, 2)
        ),
    )
    .unwrap();
    let ours = std::process::Command::new(crate::support::bins::kubectl_cozy())
        .args(["kinds", "list", "--kinds"])
        .arg(&file)
        .output()
        .expect("kinds list");
    let said = "unable to convert structural schema to CEL declarations";
    assert!(
        !theirs.status.success() && text(&theirs.stderr).contains(said),
        "kube-apiserver: {}",
        text(&theirs.stderr)
    );
    assert!(
        !ours.status.success() && text(&ours.stderr).contains(said),
        "ours: {}",
        text(&ours.stderr)
    );
}
