//! CEL validation rules (`x-kubernetes-validations`) enforced by the server:
//! a kind of our own with an immutable field (`self == oldSelf`), a
//! `messageExpression` with a `fieldPath`, `reason`, quantities, `matches`,
//! URLs, list macros, `has` and optional old self, exercised with kubectl's
//! create, apply, patch and replace against `serve --standalone`; the same
//! objects sent to a CRD with the same schema on the real kube-apiserver,
//! whose answers must match; and an uncompilable rule refused at load.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{bins, plane};

/// The kind's `spec` schema, shared by the kind and the CRD.
const SCHEMA: &str = r#"
type: object
x-kubernetes-validations:
- rule: "self.replicas <= self.maxReplicas"
  messageExpression: "'replicas (' + string(self.replicas) + ') may not exceed maxReplicas (' + string(self.maxReplicas) + ')'"
  fieldPath: .replicas
- rule: "quantity(self.size).isGreaterThan(quantity('1Gi'))"
  message: size must be more than 1Gi
  fieldPath: .size
  reason: FieldValueForbidden
- rule: "oldSelf.hasValue() || !has(self.legacy)"
  optionalOldSelf: true
  message: legacy may not be set on create
properties:
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
      message: user names need at least 3 characters
    - rule: "self.exists(u, u == 'admin')"
      message: an admin user is required
  legacy:
    type: boolean
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

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `serve --standalone` with a kinds directory of our own.
struct Server {
    child: Child,
    dir: tempfile::TempDir,
}

impl Server {
    fn start(kinds: &Path, dir: tempfile::TempDir) -> Result<Server, String> {
        let mut child = Command::new(bins::kubectl_cozy())
            .args([
                "serve",
                "--standalone",
                "--listen",
                "127.0.0.1:0",
                "--kinds",
            ])
            .arg(kinds)
            .arg("--data")
            .arg(dir.path().join("store.sqlite"))
            .arg("--write-kubeconfig")
            .arg(dir.path().join("kubeconfig"))
            .arg("--state-dir")
            .arg(dir.path().join("state"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let deadline = Instant::now() + Duration::from_secs(30);
        while !dir.path().join("kubeconfig").exists() {
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                let mut err = String::new();
                if let Some(mut s) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut s, &mut err);
                }
                return Err(format!("serve exited with {status}: {err}"));
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                return Err("serve --standalone wrote no kubeconfig".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Server { child, dir })
    }

    fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let bin_dir = plane::binaries().expect("binaries");
    let mut cmd = Command::new(bin_dir.join("kubectl"));
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env("HOME", std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("kubectl");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
    }
    child.wait_with_output().expect("kubectl")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "kubectl failed: {}\n{}",
        text(&out.stderr),
        text(&out.stdout)
    );
    text(&out.stdout)
}

/// kubectl's error output for a refused request.
fn refused(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "kubectl succeeded: {}",
        text(&out.stdout)
    );
    text(&out.stderr)
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
    let server = Server::start(kinds.path(), tempfile::tempdir().unwrap()).expect("server starts");
    let kc = server.kubeconfig();
    let v = |name: &str, spec: &str| volume("apps.cozystack.io/v1alpha1", "Volume", name, spec);

    // Create: valid, then one failure of each form.
    ok(&kubectl(&kc, &["create", "-f", "-"], Some(&v("v1", VALID))));
    let cases = [
        (
            VALID.replace("owner: alice", "owner: Alice"),
            r#"spec.owner: Invalid value: "Alice": failed rule: self.matches('^[a-z]+$')"#,
        ),
        (
            VALID.replace("size: 10Gi", "size: 512Mi"),
            "spec.size: Forbidden: size must be more than 1Gi",
        ),
        (
            format!("{VALID}replicas: 5\n"),
            "spec.replicas: Invalid value: replicas (5) may not exceed maxReplicas (3)",
        ),
        (
            VALID.replace("https://", "http://"),
            r#"spec.endpoint: Invalid value: "http://s3.example.com/b": endpoint must use https"#,
        ),
        (
            VALID.replace("[admin, bob]", "[admin, bo]"),
            "spec.users: Invalid value: user names need at least 3 characters",
        ),
        (
            VALID.replace("[admin, bob]", "[root, bob]"),
            "spec.users: Invalid value: an admin user is required",
        ),
        (
            format!("{VALID}legacy: true\n"),
            "spec: Invalid value: legacy may not be set on create",
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
        err.contains("replicas (4) may not exceed maxReplicas (3)"),
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
    let err = match Server::start(kinds.path(), tempfile::tempdir().unwrap()) {
        Ok(_) => panic!("the server loaded a kind with an uncompilable rule"),
        Err(e) => e,
    };
    let line = good.lines().count() + 2;
    let want = format!(
        "kinds.yaml:{line}: openAPISchema: /properties/storageClass/x-kubernetes-validations/0/rule: compilation failed: ERROR: <input>:1:9: undeclared reference to 'oldSelff'"
    );
    assert!(err.contains(&want), "want {want:?} in {err}");
}
