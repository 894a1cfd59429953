//! `kubectl cozy doctor` against the real control plane (kube-controller-manager
//! running the namespace and garbage-collector controllers): a healthy plane,
//! a dead APIService stalling namespace deletion, a custom finalizer, a
//! failurePolicy Fail webhook without a backend, 43 namespaces stuck on one
//! dead APIService (said once), a finalizer behind a failing webhook (not
//! planned), a user with limited RBAC,
//! fake `serve` sessions under the session contract (an expired one reaped, a
//! live one left alone, a taken-over APIService restored byte for byte), and
//! (ignored, run by `benches/doctor.sh`) the 200-namespace timing figure.
//!
//! Every test here holds [`CLUSTER_LOCK`]: they create cluster-wide blockers
//! or need a plane with none, and guards undo what they create even when an
//! assertion fails.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::Value;

use crate::support::{CLUSTER_LOCK, bins, plane};

fn cozy_with(kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(bins::kubectl_cozy())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .stdin(Stdio::null())
        .output()
        .expect("run kubectl-cozy")
}

fn cozy(args: &[&str]) -> Output {
    cozy_with(&plane().kubeconfig, args)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor did not print JSON ({e}); stdout:\n{}\nstderr:\n{}",
            text(&out.stdout),
            text(&out.stderr)
        )
    })
}

fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

fn findings_with<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .map(|a| a.iter().filter(|f| f["code"] == code).collect())
        .unwrap_or_default()
}

fn kubectl(args: &[&str]) -> Output {
    plane().kubectl().args(args).output().expect("run kubectl")
}

fn kubectl_apply(manifest: &str) {
    let mut child = plane()
        .kubectl()
        .args(["apply", "--server-side", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl apply");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(manifest.as_bytes())
        .expect("write manifest");
    let out = child.wait_with_output().expect("kubectl apply");
    assert!(out.status.success(), "kubectl apply: {}", text(&out.stderr));
}

async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("{what}: not within {timeout:?}");
}

/// A port on 127.0.0.1 where nothing listens.
fn dead_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// Deletes cluster objects on drop (kubectl, so it works outside async code
/// and during a panic).
struct Cleanup(Vec<Vec<String>>);

impl Cleanup {
    fn new() -> Self {
        Cleanup(Vec::new())
    }

    /// Runs `kubectl <args>` on drop, ignoring failures.
    fn kubectl(&mut self, args: &[&str]) {
        self.0.push(args.iter().map(|s| (*s).to_owned()).collect());
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for args in self.0.iter().rev() {
            let _ = plane()
                .kubectl()
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

async fn namespace_condition(ns: &str, type_: &str) -> Option<String> {
    let api: Api<Namespace> = Api::all(plane().client().await);
    let ns = api.get_opt(ns).await.ok().flatten()?;
    ns.status?
        .conditions?
        .into_iter()
        .find(|c| c.type_ == type_)
        .map(|c| c.status)
}

async fn namespace_gone(ns: &str) -> bool {
    let api: Api<Namespace> = Api::all(plane().client().await);
    matches!(api.get_opt(ns).await, Ok(None))
}

/// Waits until no namespace is Terminating (earlier tests' deletions finish).
/// Runs doctor until it exits 0 (ten attempts, a second apart), and returns
/// the last run. Other tests of this binary run meanwhile: a group being
/// registered may answer its probe with 404 for a moment, and a namespace
/// another test deletes is Terminating for a few seconds.
async fn doctor_once_healthy(args: &[&str]) -> std::process::Output {
    let mut out = cozy(args);
    for _ in 0..9 {
        if out.status.code() == Some(0) {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        out = cozy(args);
    }
    out
}

/// Creates ConfigMap `name` in `ns` carrying `finalizer`, so that a deletion
/// of the namespace stays Terminating; `cleanup` removes the finalizer.
async fn held_configmap(
    client: &kube::Client,
    ns: &str,
    name: &str,
    finalizer: &str,
    cleanup: &mut Cleanup,
) {
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "finalizers": [finalizer]},
        "data": {"a": "b"}
    }))
    .unwrap();
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .expect("create ConfigMap");
    cleanup.kubectl(&[
        "patch",
        "configmap",
        name,
        "-n",
        ns,
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
}

/// Deletes namespace `ns` while a ConfigMap `name` in it carries the
/// finalizer `example.com/block`, and waits until the namespace reports
/// `NamespaceFinalizersRemaining`; `cleanup` removes the finalizer.
async fn hold_in_deletion(client: &kube::Client, ns: &str, name: &str, cleanup: &mut Cleanup) {
    held_configmap(client, ns, name, "example.com/block", cleanup).await;
    Api::<Namespace>::all(client.clone())
        .delete(ns, &DeleteParams::default())
        .await
        .expect("delete namespace");
    eventually(
        "NamespaceFinalizersRemaining=True",
        Duration::from_secs(60),
        || async {
            namespace_condition(ns, "NamespaceFinalizersRemaining").await == Some("True".into())
        },
    )
    .await;
}

async fn no_terminating_namespaces() {
    let api: Api<Namespace> = Api::all(plane().client().await);
    eventually("no Terminating namespace", Duration::from_secs(120), || {
        let api = api.clone();
        async move {
            api.list(&Default::default()).await.is_ok_and(|l| {
                l.items
                    .iter()
                    .all(|n| n.metadata.deletion_timestamp.is_none())
            })
        }
    })
    .await;
}

/// A Service + APIService for a made-up group that points at a port where
/// nothing listens, removed on drop (it stalls every namespace deletion).
fn register_dead_api_service(cleanup: &mut Cleanup, group: &str, service: &str) -> String {
    register_api_service(cleanup, group, "v1alpha1", service, dead_port())
}

/// APIService `version.group` through ExternalName Service `service`
/// (`localhost`) to `port`, TLS unverified; removed on drop.
fn register_api_service(
    cleanup: &mut Cleanup,
    group: &str,
    version: &str,
    service: &str,
    port: u16,
) -> String {
    let name = format!("{version}.{group}");
    cleanup.kubectl(&[
        "delete",
        "service",
        "-n",
        "default",
        service,
        "--ignore-not-found",
        "--wait=false",
    ]);
    cleanup.kubectl(&[
        "delete",
        "apiservice",
        &name,
        "--ignore-not-found",
        "--wait=false",
    ]);
    kubectl_apply(&format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {service}, namespace: default}}\n\
         spec: {{type: ExternalName, externalName: localhost}}\n---\n\
         apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {{name: {name}}}\n\
         spec:\n  group: {group}\n  version: {version}\n  insecureSkipTLSVerify: true\n  groupPriorityMinimum: 1000\n  versionPriority: 15\n  \
         service: {{namespace: default, name: {service}, port: {port}}}\n"
    ));
    name
}

async fn wait_unavailable(name: &str) {
    eventually(
        "APIService Available=False",
        Duration::from_secs(60),
        || async {
            let out = kubectl(&[
                "get",
                "apiservice",
                name,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Available\")].status}",
            ]);
            text(&out.stdout).trim() == "False"
        },
    )
    .await;
}

#[tokio::test]
async fn healthy_plane_exits_0_with_no_findings() {
    let _serial = CLUSTER_LOCK.lock().await;
    no_terminating_namespaces().await;

    let out = doctor_once_healthy(&["doctor", "-o", "json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let r = report(&out);
    assert_eq!(r["apiVersion"], "kubectl-cozy.io/v1alpha1");
    assert_eq!(r["kind"], "DoctorReport");
    assert_eq!(r["result"], "Healthy");
    assert_eq!(r["findings"], serde_json::json!([]), "{r:#}");
    assert_eq!(r["unchecked"], serde_json::json!([]), "{r:#}");
    let api_services = r["apiServices"].as_array().expect("apiServices");
    assert!(api_services.len() > 10, "{r:#}");
    assert!(api_services.iter().all(|a| a["healthy"] == true), "{r:#}");
    // Every APIService got a live probe, and they all answered 200.
    assert!(
        api_services
            .iter()
            .all(|a| a["probe"]["status"] == 200 && a["probe"]["ok"] == true),
        "{r:#}"
    );
    assert!(r["summary"]["requests"].as_u64().unwrap() > 10);

    let out = doctor_once_healthy(&["doctor"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("FINDINGS: none"), "{stdout}");
    assert!(stdout.contains("TERMINATING NAMESPACES: none"), "{stdout}");
    assert!(stdout.contains("Result: healthy (exit 0)."), "{stdout}");
    // No progress bar or anything else when stderr is not a terminal.
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));

    let out = cozy(&["doctor", "-o", "yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let yaml: Value = serde_saphyr::from_str(&text(&out.stdout)).expect("yaml report");
    assert_eq!(yaml["result"], "Healthy");

    // -A wins over -n, as in kubectl: every namespace, and a -n naming none
    // that exists is not even looked up (it used to be a usage error, exit 2).
    let out = doctor_once_healthy(&[
        "doctor",
        "-n",
        "doctor-no-such-namespace",
        "-A",
        "-o",
        "json",
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let r = report(&out);
    assert_eq!(
        r["scope"],
        serde_json::json!({"namespaces": "all"}),
        "{r:#}"
    );
    assert!(r["summary"]["namespaces"].as_u64().unwrap() >= 4, "{r:#}");
}

#[tokio::test]
async fn dead_apiservice_blocking_namespace_deletion_is_named_and_fixed() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    no_terminating_namespaces().await;
    let ns = plane.namespace("doctor-dead-api").await;
    let mut cleanup = Cleanup::new();
    let name = register_dead_api_service(&mut cleanup, "doctor-test.example.com", "doctor-dead");
    wait_unavailable(&name).await;

    // `kinds list` of the dead group names the APIService and points at
    // doctor (bounded: kube-apiserver may take minutes to answer for it).
    let out = cozy(&[
        "kinds",
        "list",
        "--group",
        "doctor-test.example.com",
        "--request-timeout",
        "3s",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("APIService {name} "))
            && stderr.contains("`kubectl cozy doctor` says why"),
        "{stderr}"
    );

    let client = plane.client().await;
    Api::<Namespace>::all(client.clone())
        .delete(&ns, &DeleteParams::default())
        .await
        .expect("delete namespace");
    eventually(
        "NamespaceDeletionDiscoveryFailure=True",
        Duration::from_secs(30),
        || async {
            namespace_condition(&ns, "NamespaceDeletionDiscoveryFailure").await
                == Some("True".into())
        },
    )
    .await;

    // The diagnosis names the APIService as the cause.
    let out = cozy(&["doctor", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let r = report(&out);
    assert_eq!(r["result"], "ProblemsFound");
    let unavailable = findings_with(&r, "APIServiceUnavailable");
    assert_eq!(unavailable.len(), 1, "{r:#}");
    let api_finding = unavailable[0];
    assert_eq!(api_finding["subject"]["name"], name.as_str());
    assert_eq!(api_finding["severity"], "error");
    assert!(
        api_finding["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b == ns.as_str()),
        "{api_finding:#}"
    );
    let evidence = api_finding["evidence"].to_string();
    assert!(evidence.contains("FailedDiscoveryCheck"), "{evidence}");
    assert!(evidence.contains("HTTP 503"), "{evidence}");
    assert_eq!(
        api_finding["remedy"]["command"],
        format!("kubectl delete apiservice {name}")
    );
    let blocked: Vec<&Value> = findings_with(&r, "NamespaceDiscoveryFailure")
        .into_iter()
        .filter(|f| f["subject"]["name"] == ns.as_str())
        .collect();
    assert_eq!(blocked.len(), 1, "{r:#}");
    assert_eq!(blocked[0]["causedBy"][0], api_finding["id"]);
    let ns_report = r["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == ns.as_str())
        .expect("namespace in report");
    let condition = ns_report["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "NamespaceDeletionDiscoveryFailure")
        .expect("condition verbatim");
    assert_eq!(condition["reason"], "DiscoveryFailed");
    assert!(
        condition["message"]
            .as_str()
            .unwrap()
            .contains("doctor-test.example.com/v1alpha1")
    );

    // The text report says the same to a person.
    let out = cozy(&["doctor"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stdout = text(&out.stdout);
    for needle in [
        "[error] APIServiceUnavailable apiservices.apiregistration.k8s.io/v1alpha1.doctor-test.example.com",
        "NamespaceDeletionDiscoveryFailure=True DiscoveryFailed",
        "fix:      kubectl delete apiservice v1alpha1.doctor-test.example.com",
        "SUMMARY",
        "Result: problems found (exit 3)",
    ] {
        assert!(stdout.contains(needle), "{needle:?} missing:\n{stdout}");
    }

    // -o name: what `kubectl get -o name` prints, which kubectl reads back.
    let out = cozy(&["doctor", "-o", "name"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let names = text(&out.stdout);
    let lines: Vec<&str> = names.lines().collect();
    let api_line = format!("apiservice.apiregistration.k8s.io/{name}");
    assert!(lines.contains(&api_line.as_str()), "{names}");
    assert!(
        lines.contains(&format!("namespace/{ns}").as_str()),
        "{names}"
    );
    let unique: BTreeSet<&str> = lines.iter().copied().collect();
    assert_eq!(unique.len(), lines.len(), "a subject twice:\n{names}");
    let got = kubectl(&["get", &api_line, &format!("namespace/{ns}"), "-o", "name"]);
    assert!(got.status.success(), "{}", text(&got.stderr));
    assert_eq!(
        text(&got.stdout),
        format!("{api_line}\nnamespace/{ns}\n"),
        "kubectl names them the same way"
    );

    // --fix without --yes and without a terminal is a dry run.
    let out = cozy(&["doctor", "--fix"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("FIX PLAN"), "{stdout}");
    assert!(
        stdout.contains(&format!("delete APIService {name}")),
        "{stdout}"
    );
    assert!(stdout.contains("Dry run: nothing was changed"), "{stdout}");
    let still = kubectl(&["get", "apiservice", &name]);
    assert!(still.status.success(), "dry run deleted the APIService");

    // --fix --yes removes it, waits, and the namespace deletion completes.
    let out = cozy(&["doctor", "--fix", "--yes", "--wait", "100s", "-o", "json"]);
    let r = report(&out);
    let fix = &r["fix"];
    assert_eq!(fix["mode"], "applied", "{}", describe(&out));
    let delete = fix["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"]["type"] == "DeleteAPIService")
        .expect("a DeleteAPIService action");
    assert_eq!(delete["action"]["name"], name.as_str());
    let result = fix["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["action"] == delete["id"])
        .expect("its result");
    assert_eq!(result["outcome"], "done", "{fix:#}");
    assert!(result["verified"].as_str().unwrap().contains("NotFound"));
    let after_ns = fix["after"]["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == ns.as_str())
        .expect("namespace after the fix");
    assert_eq!(after_ns["state"], "gone", "{fix:#}");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(namespace_gone(&ns).await);
    assert!(!kubectl(&["get", "apiservice", &name]).status.success());
    // Without a terminal, what it did and what it waited for is said on
    // stderr as it happens (it used to wait in silence), stdout stays JSON.
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} missing from stderr:\n{stderr}"))
    };
    let deleted = at(&format!("{}. delete APIService {name}: done", delete["id"]));
    let waiting = at("namespace(s) to be deleted (up to 100s)…");
    let gone = at(&format!("namespace \"{ns}\" deleted (after "));
    let verifying = at("re-verifying: a fresh diagnosis…");
    assert!(
        deleted < waiting && waiting < gone && gone < verifying,
        "{stderr}"
    );
    drop(cleanup);
}

/// Regression: one dead APIService (a ClusterIP Service with no backend) and
/// 43 namespaces stuck Terminating on it printed each namespace's copy of the
/// APIService's evidence (1,587 lines). What they share is said once and the
/// namespaces listed; `-o json` keeps a finding per namespace.
#[tokio::test]
async fn namespaces_stuck_on_one_dead_apiservice_are_said_once() {
    const STUCK: usize = 43;
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    no_terminating_namespaces().await;
    let client = plane.client().await;
    let pid = std::process::id();
    let mut cleanup = Cleanup::new();
    cleanup.kubectl(&[
        "delete",
        "namespace",
        "-l",
        &format!("doctor-many={pid}"),
        "--wait=false",
    ]);
    let name = "v1alpha1.doctor-many.example.com";
    cleanup.kubectl(&["delete", "apiservice", name, "--ignore-not-found"]);
    cleanup.kubectl(&[
        "delete",
        "service",
        "-n",
        "default",
        "doctor-many",
        "--ignore-not-found",
    ]);
    kubectl_apply(&format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: doctor-many, namespace: default}}\n\
         spec: {{ports: [{{port: 443}}], selector: {{app: doctor-many-{pid}}}}}\n---\n\
         apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {{name: {name}}}\n\
         spec:\n  group: doctor-many.example.com\n  version: v1alpha1\n  insecureSkipTLSVerify: true\n  \
         groupPriorityMinimum: 1000\n  versionPriority: 15\n  service: {{namespace: default, name: doctor-many, port: 443}}\n"
    ));
    wait_unavailable(name).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let names: Vec<String> = (0..STUCK).map(|i| format!("many-{pid}-{i:02}")).collect();
    for name in &names {
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {"doctor-many": pid.to_string()}}
        }))
        .unwrap();
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .expect("create namespace");
    }
    for name in &names {
        namespaces
            .delete(name, &DeleteParams::default())
            .await
            .expect("delete namespace");
    }
    eventually(
        "every namespace reports the discovery failure",
        Duration::from_secs(120),
        || async {
            for name in &names {
                if namespace_condition(name, "NamespaceDeletionDiscoveryFailure").await
                    != Some("True".into())
                {
                    return false;
                }
            }
            true
        },
    )
    .await;

    let out = cozy(&["doctor"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stdout = text(&out.stdout);
    let lines = stdout.lines().count();
    println!("doctor with {STUCK} namespaces stuck on one dead APIService: {lines} lines");
    // The namespaces table has a row each; the rest is said once.
    assert!(lines <= STUCK + 70, "{lines} lines:\n{stdout}");
    assert_eq!(
        stdout
            .matches(&format!("APIService {name} status.conditions[Available]"))
            .count(),
        2,
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "[error] NamespaceDiscoveryFailure in {STUCK} namespaces"
        )),
        "{stdout}"
    );
    for ns in &names {
        assert!(stdout.contains(ns.as_str()), "{ns} missing:\n{stdout}");
    }
    // -o json keeps a finding per namespace.
    let r = report(&cozy(&["doctor", "-o", "json"]));
    let mine: Vec<&Value> = findings_with(&r, "NamespaceDiscoveryFailure")
        .into_iter()
        .filter(|f| names.iter().any(|n| f["subject"]["name"] == n.as_str()))
        .collect();
    assert_eq!(mine.len(), STUCK, "{r:#}");

    // The fix: the APIService goes, and so do the namespaces.
    let out = cozy(&["doctor", "--fix", "--yes", "--wait", "120s"]);
    let stdout = text(&out.stdout);
    println!(
        "doctor --fix --yes with {STUCK} namespaces: {} lines",
        stdout.lines().count()
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    for ns in &names {
        assert!(namespace_gone(ns).await, "{ns}:\n{stdout}");
    }
    drop(cleanup);
}

/// `--fix` waits for namespaces with a bar whose counter counts the
/// namespaces gone, out of those it waits for (it counted the requests it
/// made while polling: `5/6` for two namespaces).
#[tokio::test]
async fn the_wait_for_namespaces_counts_namespaces() {
    use indicatif::ProgressBar;
    use kubectl_cozy::doctor::fix::wait_namespaces_gone;
    use kubectl_cozy::doctor::requester::Requester;
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    no_terminating_namespaces().await;
    let client = plane.client().await;
    let names = vec![
        plane.namespace("doctor-wait").await,
        plane.namespace("doctor-wait").await,
    ];
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for name in &names {
        namespaces
            .delete(name, &DeleteParams::default())
            .await
            .expect("delete namespace");
    }
    let polled = ProgressBar::hidden();
    let req = Requester::new(client, 4, Duration::from_secs(10), polled.clone());
    let bar = ProgressBar::hidden();
    let left = wait_namespaces_gone(&req, &bar, &names, Duration::from_secs(100)).await;
    assert!(left.is_empty(), "{left:?} still there");
    assert_eq!((bar.position(), bar.length()), (2, Some(2)));
    assert!(req.requests() >= 2);
    assert_eq!(polled.position(), req.requests() as u64);
}

#[tokio::test]
async fn custom_finalizer_is_named_and_removed() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    no_terminating_namespaces().await;
    let ns = plane.namespace("doctor-finalizer").await;
    let client = plane.client().await;
    let mut cleanup = Cleanup::new();
    hold_in_deletion(&client, &ns, "blocked", &mut cleanup).await;

    // Just deleted: its finalizer's owner may still be at work; a note,
    // nothing planned.
    let out = cozy(&["doctor", "-n", &ns, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let r = report(&out);
    let blocking = findings_with(&r, "FinalizerBlocking");
    assert_eq!(blocking.len(), 1, "{r:#}");
    assert_eq!(blocking[0]["severity"], "info", "{r:#}");
    assert_eq!(blocking[0]["remedy"]["automatic"], false, "{r:#}");

    // Past --stuck-after (0s here): an error, and its removal planned.
    let out = cozy(&["doctor", "-n", &ns, "--stuck-after", "0s", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let r = report(&out);
    assert_eq!(r["scope"]["namespaces"], "namespace");
    let blocking = findings_with(&r, "FinalizerBlocking");
    assert_eq!(blocking.len(), 1, "{r:#}");
    let f = blocking[0];
    assert_eq!(f["subject"]["kind"], "ConfigMap");
    assert_eq!(f["subject"]["name"], "blocked");
    assert_eq!(f["subject"]["namespace"], ns.as_str());
    assert!(f["what"].as_str().unwrap().contains("example.com/block"));
    assert!(
        f["owner"]
            .as_str()
            .unwrap()
            .starts_with("example.com/block: ")
    );
    assert!(
        f["remedy"]["command"]
            .as_str()
            .unwrap()
            .contains("\"resourceVersion\":"),
        "{f:#}"
    );
    let ns_report = &r["namespaces"][0];
    assert_eq!(
        ns_report["remaining"][0]["finalizers"][0],
        "example.com/block"
    );
    assert!(
        ns_report["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "NamespaceFinalizersRemaining"
                && c["message"].as_str().unwrap().contains("example.com/block"))
    );

    let out = cozy(&[
        "doctor",
        "-n",
        &ns,
        "--stuck-after",
        "0s",
        "--fix",
        "--yes",
        "--wait",
        "100s",
    ]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "remove finalizer(s) example.com/block from configmaps/blocked -n {ns}"
        )),
        "{}",
        describe(&out)
    );
    assert!(
        stdout.contains("1. done: removed example.com/block"),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("{ns}   gone")), "{stdout}");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(namespace_gone(&ns).await);
    drop(cleanup);
}

#[tokio::test]
async fn fail_policy_webhook_without_backend_is_reported() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    no_terminating_namespaces().await;
    let pid = std::process::id();
    let config = format!("doctor-deny-{pid}");
    let mut cleanup = Cleanup::new();
    cleanup.kubectl(&[
        "delete",
        "validatingwebhookconfiguration",
        &config,
        "--ignore-not-found",
    ]);
    // Narrow on purpose: only DELETE of ConfigMaps, and the finalize of
    // namespaces, labeled for this test, so no other test is affected.
    kubectl_apply(&format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {{name: {config}}}\n\
         webhooks:\n- name: deny.doctor-test.example.com\n  failurePolicy: Fail\n  sideEffects: None\n  \
         admissionReviewVersions: [v1]\n  clientConfig: {{service: {{namespace: default, name: doctor-missing-{pid}, port: 443}}}}\n  \
         namespaceSelector: {{matchLabels: {{doctor-webhook-test: \"{pid}\"}}}}\n  \
         rules: [{{operations: [DELETE], apiGroups: [\"\"], apiVersions: [v1], resources: [configmaps]}},\n    \
         {{operations: [UPDATE], apiGroups: [\"\"], apiVersions: [v1], resources: [namespaces/finalize]}}]\n"
    ));

    // It really does reject what it intercepts.
    let ns = plane.namespace("doctor-webhook").await;
    kubectl(&[
        "label",
        "namespace",
        &ns,
        &format!("doctor-webhook-test={pid}"),
    ]);
    let configmaps: Api<ConfigMap> = Api::namespaced(plane.client().await, &ns);
    let cm: ConfigMap =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "guarded"}})).unwrap();
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .expect("create ConfigMap");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match configmaps.delete("guarded", &DeleteParams::default()).await {
            Err(err) if err.to_string().contains("failed calling webhook") => break,
            other => assert!(
                Instant::now() < deadline,
                "the webhook never rejected the delete: {other:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    let out = cozy(&["doctor", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let r = report(&out);
    let found = findings_with(&r, "WebhookBackendUnavailable");
    assert_eq!(found.len(), 1, "{r:#}");
    let f = found[0];
    assert_eq!(f["subject"]["name"], config.as_str());
    assert!(
        f["what"].as_str().unwrap().contains(&format!(
            "Service default/doctor-missing-{pid} is not found"
        )),
        "{f:#}"
    );
    assert!(
        f["evidence"].to_string().contains("DELETE configmaps"),
        "{f:#}"
    );
    assert_eq!(
        f["remedy"]["command"],
        format!("kubectl delete validatingwebhookconfiguration {config}")
    );
    let hook = r["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["configuration"] == config.as_str())
        .expect("webhook in report");
    assert_eq!(hook["failurePolicy"], "Fail");
    assert_eq!(hook["healthy"], false);
    // Its namespaceSelector narrows what it rejects: not "cluster-wide".
    assert!(
        f["why"].as_str().unwrap().ends_with(&format!(
            "fail in the namespaces its namespaceSelector (doctor-webhook-test={pid}) selects"
        )),
        "{f:#}"
    );
    assert_eq!(
        hook["namespaceSelector"]["matchLabels"]["doctor-webhook-test"],
        pid.to_string()
    );

    // Deleting the namespace: the namespace controller's delete of the
    // ConfigMap is rejected. The webhook's finding and the namespace agree
    // that it is blocked, and a namespace the selector leaves out is not.
    let free = plane.namespace("doctor-webhook-free").await;
    Api::<ConfigMap>::namespaced(plane.client().await, &free)
        .create(&PostParams::default(), &cm)
        .await
        .expect("create ConfigMap");
    for name in [&ns, &free] {
        Api::<Namespace>::all(plane.client().await)
            .delete(name, &DeleteParams::default())
            .await
            .expect("delete namespace");
    }
    eventually(
        "NamespaceDeletionContentFailure=True",
        Duration::from_secs(60),
        || async {
            namespace_condition(&ns, "NamespaceDeletionContentFailure").await == Some("True".into())
        },
    )
    .await;
    let out = cozy(&["doctor", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let r = report(&out);
    let f = findings_with(&r, "WebhookBackendUnavailable")[0];
    assert_eq!(f["blocks"], serde_json::json!([ns.as_str()]), "{r:#}");
    let blocked = |name: &str| {
        r["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .map(|n| n["blocked"].clone())
    };
    assert_eq!(blocked(&ns), Some(Value::Bool(true)), "{r:#}");
    assert_ne!(blocked(&free), Some(Value::Bool(true)), "{r:#}");

    // --fix never touches webhooks; it says what to run instead.
    let out = cozy(&["doctor", "--fix", "-o", "json"]);
    let r = report(&out);
    let not_planned = r["fix"]["notPlanned"].to_string();
    assert!(
        not_planned.contains("doctor does not delete webhook configurations"),
        "{not_planned}"
    );
    // Nor plans a /finalize the webhook rejects: it says to fix the webhook.
    let out = cozy(&["doctor", "--fix", "--finalize-namespaces", "-o", "json"]);
    let r = report(&out);
    let id = f["id"].as_str().expect("the webhook finding's id");
    let row = r["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == ns.as_str())
        .expect("the namespace's row");
    assert_eq!(row["finalizeRejectedBy"], serde_json::json!([id]), "{r:#}");
    let finalizes = r["fix"]["actions"].to_string();
    assert!(
        !finalizes.contains(&format!("/api/v1/namespaces/{ns}/finalize")),
        "{finalizes}"
    );
    let not_planned = r["fix"]["notPlanned"].to_string();
    assert!(
        not_planned.contains(&format!(
            "this one rejects the /finalize of namespace {ns}: --finalize-namespaces cannot clear it"
        )),
        "{not_planned}"
    );

    drop(cleanup);
    // Without the webhook the ConfigMap (and the namespace) can go.
    let _ = configmaps.delete("guarded", &DeleteParams::default()).await;
    for name in [&ns, &free] {
        let _ = Api::<Namespace>::all(plane.client().await)
            .delete(name, &DeleteParams::default())
            .await;
    }
    eventually("namespace cleanup", Duration::from_secs(120), || async {
        namespace_gone(&ns).await && namespace_gone(&free).await
    })
    .await;
}

/// Regression: `--fix` planned removing a finalizer whose update a failing
/// webhook rejects (the patch could only fail). The plan leaves it, says to
/// fix the webhook first, and the webhook's finding blocks the namespace.
#[tokio::test]
async fn a_finalizer_behind_a_failing_webhook_is_not_planned() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    no_terminating_namespaces().await;
    let pid = std::process::id();
    let config = format!("doctor-guard-{pid}");
    let ns = plane.namespace("doctor-guard").await;
    let client = plane.client().await;
    let mut cleanup = Cleanup::new();
    held_configmap(&client, &ns, "held", "example.com/block", &mut cleanup).await;
    // Removed before the finalizer (guards run in reverse).
    cleanup.kubectl(&[
        "delete",
        "validatingwebhookconfiguration",
        &config,
        "--ignore-not-found",
    ]);
    kubectl(&[
        "label",
        "namespace",
        &ns,
        &format!("doctor-guard-test={pid}"),
    ]);
    kubectl_apply(&format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {{name: {config}}}\n\
         webhooks:\n- name: guard.doctor-test.example.com\n  failurePolicy: Fail\n  sideEffects: None\n  \
         admissionReviewVersions: [v1]\n  clientConfig: {{service: {{namespace: default, name: doctor-guard-{pid}, port: 443}}}}\n  \
         namespaceSelector: {{matchLabels: {{doctor-guard-test: \"{pid}\"}}}}\n  \
         rules: [{{operations: [UPDATE], apiGroups: [\"\"], apiVersions: [v1], resources: [configmaps]}}]\n"
    ));
    Api::<Namespace>::all(client.clone())
        .delete(&ns, &DeleteParams::default())
        .await
        .expect("delete namespace");
    eventually(
        "NamespaceFinalizersRemaining=True",
        Duration::from_secs(60),
        || async {
            namespace_condition(&ns, "NamespaceFinalizersRemaining").await == Some("True".into())
        },
    )
    .await;
    // The removal really is rejected.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = kubectl(&[
            "patch",
            "configmap",
            "held",
            "-n",
            &ns,
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
            "--dry-run=server",
        ]);
        if text(&out.stderr).contains("failed calling webhook") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the webhook never rejected the patch: {}",
            text(&out.stderr)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    let out = cozy(&[
        "doctor",
        "-n",
        &ns,
        "--stuck-after",
        "0s",
        "--fix",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let r = report(&out);
    let hook = findings_with(&r, "WebhookBackendUnavailable")
        .into_iter()
        .find(|f| f["subject"]["name"] == config.as_str())
        .unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(hook["blocks"], serde_json::json!([ns.as_str()]), "{hook:#}");
    let blocking = findings_with(&r, "FinalizerBlocking");
    assert_eq!(blocking.len(), 1, "{r:#}");
    let f = blocking[0];
    assert_eq!(f["remedy"]["automatic"], false, "{f:#}");
    assert_eq!(f["causedBy"], serde_json::json!([hook["id"]]), "{f:#}");
    let fix = &r["fix"];
    assert!(
        !fix["actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["action"]["type"] == "RemoveFinalizers"),
        "{fix:#}"
    );
    let reason = fix["notPlanned"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["finding"] == f["id"])
        .map(|n| n["reason"].as_str().unwrap().to_owned())
        .unwrap_or_default();
    assert!(
        reason.starts_with("removing its finalizers is an update that a failing webhook rejects"),
        "{fix:#}"
    );

    drop(cleanup);
    eventually("namespace cleanup", Duration::from_secs(120), || {
        namespace_gone(&ns)
    })
    .await;
}

#[tokio::test]
async fn limited_rbac_reports_what_it_could_not_check() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    no_terminating_namespaces().await;
    let pid = std::process::id();
    let user = format!("doctor-limited-{pid}");
    let mut cleanup = Cleanup::new();
    cleanup.kubectl(&[
        "delete",
        "clusterrole,clusterrolebinding",
        &user,
        "--ignore-not-found",
    ]);
    kubectl_apply(&format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: {user}}}\n\
         rules: [{{apiGroups: [\"\"], resources: [namespaces], verbs: [get, list]}}]\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {{name: {user}}}\n\
         roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {user}}}\n\
         subjects: [{{apiGroup: rbac.authorization.k8s.io, kind: User, name: {user}}}]\n"
    ));
    let kubeconfig = plane.user_kubeconfig(&user, &[]);

    // Nothing Terminating: what it cannot read is reported, exit 5.
    let out = cozy_with(&kubeconfig, &["doctor", "-o", "json"]);
    assert_eq!(out.status.code(), Some(5), "{}", describe(&out));
    let r = report(&out);
    assert_eq!(r["result"], "Incomplete");
    let unchecked: BTreeSet<String> = r["unchecked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["what"].as_str().unwrap().to_owned())
        .collect();
    for expected in [
        "list apiservices.apiregistration.k8s.io",
        "list validatingwebhookconfigurations.admissionregistration.k8s.io",
        "list mutatingwebhookconfigurations.admissionregistration.k8s.io",
    ] {
        assert!(
            unchecked.contains(expected),
            "{expected} missing: {unchecked:?}"
        );
    }
    assert!(
        r["unchecked"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["status"] == 403),
        "{r:#}"
    );

    // A Terminating namespace whose content the user cannot list: doctor says
    // so, quotes the namespace controller, and does not claim it is empty.
    let ns = plane.namespace("doctor-rbac").await;
    let client = plane.client().await;
    hold_in_deletion(&client, &ns, "held", &mut cleanup).await;
    let out = cozy_with(&kubeconfig, &["doctor"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stdout = text(&out.stdout);
    for needle in [
        "NOT CHECKED",
        "namespaced resource types",
        "HTTP 403 Forbidden",
        "NamespaceFinalizersRemaining=True",
        "could not be listed",
    ] {
        assert!(stdout.contains(needle), "{needle:?} missing:\n{stdout}");
    }
    // (Other tests' namespaces may be Terminating meanwhile: only this one counts.)
    assert!(
        !stdout
            .lines()
            .any(|l| l.contains(&format!("namespace {ns} ")) && l.contains("no blocker was found")),
        "{stdout}"
    );

    // The admin removes the finalizer; the namespace goes.
    drop(cleanup);
    eventually("namespace cleanup", Duration::from_secs(120), || {
        namespace_gone(&ns)
    })
    .await;
}

#[test]
fn without_a_cluster_doctor_fails_clearly() {
    // No kubeconfig: exit 1 and a kubeconfig error, nothing on stdout.
    let out = Command::new(bins::kubectl_cozy())
        .arg("doctor")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains("no kubeconfig found"),
        "{}",
        describe(&out)
    );

    // A kubeconfig pointing at a closed port: exit 4.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:{}\n    \
             insecure-skip-tls-verify: true\ncontexts:\n- name: x\n  context: {{cluster: x, user: x}}\nusers:\n- name: x\n  user: {{token: t}}\n",
            dead_port()
        ),
    )
    .unwrap();
    let out = Command::new(bins::kubectl_cozy())
        .args(["doctor", "--kubeconfig"])
        .arg(&path)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(4), "{}", describe(&out));
    assert!(
        text(&out.stderr).contains("connection refused")
            && text(&out.stderr).contains("hint: is the cluster running"),
        "{}",
        describe(&out)
    );
    // The same port as a standalone server's context (`kubectl-cozy`, which
    // `serve --standalone` writes): the hint says to start it again.
    let standalone = dir.path().join("standalone");
    let config = std::fs::read_to_string(&path)
        .unwrap()
        .replace("current-context: x", "current-context: kubectl-cozy")
        .replace("contexts:\n- name: x", "contexts:\n- name: kubectl-cozy");
    std::fs::write(&standalone, config).unwrap();
    for args in [&["doctor"][..], &["kinds", "list"]] {
        let out = Command::new(bins::kubectl_cozy())
            .args(args)
            .arg("--kubeconfig")
            .arg(&standalone)
            .stdin(Stdio::null())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(4), "{args:?}: {}", describe(&out));
        assert!(
            text(&out.stderr).contains(
                "hint: context kubectl-cozy is a standalone server's: start it again (`kubectl cozy serve --standalone"
            ),
            "{args:?}: {}",
            describe(&out)
        );
    }

    // -A and -n together are not a usage error (-A wins, as in kubectl):
    // doctor goes on to the cluster, which cannot be reached.
    let out = Command::new(bins::kubectl_cozy())
        .args(["doctor", "-A", "-n", "x", "--kubeconfig"])
        .arg(&path)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(4), "{}", describe(&out));
}

/// The figure: 200 namespaces (20 Terminating, each held by a finalizer), 60
/// CRDs, one dead APIService; times full runs of the binary in
/// `COZY_DOCTOR_BENCH_BIN` (the release build, see `benches/doctor.sh`).
#[tokio::test]
#[ignore = "benchmark: run through benches/doctor.sh"]
async fn benchmark_200_namespaces_60_crds_one_dead_apiservice() {
    const NAMESPACES: usize = 200;
    const TERMINATING: usize = 20;
    const CRDS: usize = 60;
    const RUNS: usize = 7;
    const TARGET: Duration = Duration::from_secs(3);
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let pid = std::process::id();
    let binary = std::env::var_os("COZY_DOCTOR_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(bins::kubectl_cozy);

    // 60 CRDs, each in its own group (so 60 more APIServices to probe).
    let mut crds = String::new();
    for i in 0..CRDS {
        crds.push_str(&format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
             metadata: {{name: gadgets.bench{i}.doctor.example.com, labels: {{doctor-bench: \"{pid}\"}}}}\n\
             spec:\n  group: bench{i}.doctor.example.com\n  scope: Namespaced\n  \
             names: {{kind: Gadget, plural: gadgets, singular: gadget}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    \
             schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}\n---\n"
        ));
    }
    kubectl_apply(&crds);
    let out = kubectl(&[
        "wait",
        "--for=condition=Established",
        "--timeout=120s",
        "crd",
        "-l",
        &format!("doctor-bench={pid}"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    // 200 namespaces; the first 20 get an object held by a finalizer.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let names: Vec<String> = (0..NAMESPACES)
        .map(|i| format!("bench-{pid}-{i:03}"))
        .collect();
    futures::future::join_all(names.iter().map(|name| {
        let namespaces = namespaces.clone();
        async move {
            let ns: Namespace = serde_json::from_value(serde_json::json!({
                "metadata": {"name": name, "labels": {"doctor-bench": pid.to_string()}}
            }))
            .unwrap();
            namespaces
                .create(&PostParams::default(), &ns)
                .await
                .expect("create namespace");
        }
    }))
    .await;
    let mut cleanup = Cleanup::new();
    for name in &names[..TERMINATING] {
        held_configmap(
            &client,
            name,
            "held",
            "bench.doctor.example.com/hold",
            &mut cleanup,
        )
        .await;
    }
    let dead = register_dead_api_service(
        &mut cleanup,
        "doctor-bench.example.com",
        "doctor-bench-dead",
    );
    wait_unavailable(&dead).await;
    for name in &names[..TERMINATING] {
        namespaces
            .delete(name, &DeleteParams::default())
            .await
            .expect("delete namespace");
    }
    eventually(
        "the namespace controller to report the discovery failure",
        Duration::from_secs(60),
        || async {
            namespace_condition(&names[0], "NamespaceDeletionDiscoveryFailure").await
                == Some("True".into())
        },
    )
    .await;

    let run = |args: &[&str]| -> (Duration, Output) {
        let started = Instant::now();
        let out = Command::new(&binary)
            .arg("--kubeconfig")
            .arg(&plane.kubeconfig)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run doctor");
        (started.elapsed(), out)
    };
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..RUNS {
        let (elapsed, out) = run(&["doctor", "-o", "json"]);
        assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
        times.push(elapsed);
        last = Some(out);
    }
    let r = report(last.as_ref().unwrap());
    let mut all_times = Vec::new();
    let mut all_namespaces = 0;
    for _ in 0..3 {
        let (elapsed, out) = run(&["doctor", "-A", "-o", "json"]);
        assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
        all_times.push(elapsed);
        all_namespaces = report(&out)["summary"]["namespaces"].as_u64().unwrap_or(0);
    }
    times.sort();
    all_times.sort();
    let median = times[RUNS / 2];
    let all_median = all_times[1];
    let summary = &r["summary"];
    println!(
        "doctor benchmark ({}):\n  cluster: {} namespaces ({} Terminating), {} CRDs, {} APIServices ({} unhealthy), \
         {} namespaced resource types listed, {} objects found, {} findings, {} requests per run\n  \
         default scope: median {} ms (min {} ms, max {} ms over {RUNS} runs); -A (all {} namespaces): median {} ms\n  \
         target {} ms → ratio {:.2} (≤ 1.00 meets it)",
        binary.display(),
        NAMESPACES,
        TERMINATING,
        CRDS,
        summary["apiServices"],
        summary["unhealthyApiServices"],
        summary["resourceTypesListed"],
        summary["remainingObjects"],
        r["findings"].as_array().map(Vec::len).unwrap_or(0),
        summary["requests"],
        median.as_millis(),
        times[0].as_millis(),
        times[RUNS - 1].as_millis(),
        all_namespaces,
        all_median.as_millis(),
        TARGET.as_millis(),
        median.as_secs_f64() / TARGET.as_secs_f64(),
    );
    assert_eq!(summary["terminatingNamespaces"], TERMINATING, "{summary:#}");
    assert_eq!(findings_with(&r, "APIServiceUnavailable").len(), 1);
    assert_eq!(findings_with(&r, "FinalizerBlocking").len(), TERMINATING);
    assert!(summary["resourceTypesListed"].as_u64().unwrap() >= CRDS as u64);
    assert!(
        median <= TARGET,
        "median {median:?} over the {TARGET:?} target"
    );

    // Leave the plane clean: the fix removes the APIService and finalizers.
    let (elapsed, out) = run(&["doctor", "--fix", "--yes", "--wait", "120s"]);
    println!(
        "  doctor --fix --yes (20 namespaces unblocked and gone): {} ms",
        elapsed.as_millis()
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    drop(cleanup);
    let _ = kubectl(&[
        "delete",
        "namespace",
        "-l",
        &format!("doctor-bench={pid}"),
        "--wait=false",
    ]);
    let _ = kubectl(&[
        "delete",
        "crd",
        "-l",
        &format!("doctor-bench={pid}"),
        "--wait=false",
    ]);
}

/// The session namespace, created when missing (sessions share it and never
/// delete it).
fn session_namespace() -> &'static str {
    use kubectl_cozy::register::session::DEFAULT_NAMESPACE;
    kubectl_apply(&format!(
        "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {DEFAULT_NAMESPACE}}}\n"
    ));
    DEFAULT_NAMESPACE
}

/// A session Lease as `serve` writes it, last renewed at `renewed`.
fn session_lease(
    id: &str,
    namespace: &str,
    renewed: k8s_openapi::jiff::Timestamp,
    duration_seconds: i32,
    record: &kubectl_cozy::register::session::SessionRecord,
) -> String {
    use kubectl_cozy::register::session::{holder_identity, lease_object};
    let lease = lease_object(
        id,
        namespace,
        &holder_identity("tester", "doctor-it", std::process::id()),
        duration_seconds,
        renewed,
        record,
    );
    serde_json::to_string(&lease).expect("lease JSON")
}

/// What a `kubectl cozy serve` session leaves when it dies without cleaning
/// up, under the session contract: an APIService carrying the session label
/// and the session namespace annotation, a ClusterIP Service (its tunnel) and
/// a ServiceAccount in the session namespace, and a Lease nobody renews.
#[tokio::test]
async fn expired_serve_session_is_reaped_but_a_live_one_is_left_alone() {
    use base64::Engine as _;
    use kubectl_cozy::register::session::{
        NAMESPACE_ANNOTATION, SESSION_LABEL, SessionRecord, lease_name,
    };
    let _serial = CLUSTER_LOCK.lock().await;
    no_terminating_namespaces().await;
    let ns = session_namespace();
    let id = format!("doctor{}", std::process::id());
    let lease = lease_name(&id);
    let service = format!("kubectl-cozy-{id}");
    let name = "v1alpha1.doctor-session.example.com";
    let mut cleanup = Cleanup::new();
    cleanup.kubectl(&[
        "delete",
        "apiservice",
        name,
        "--ignore-not-found",
        "--wait=false",
    ]);
    cleanup.kubectl(&[
        "delete",
        "service,serviceaccount,lease",
        "-n",
        ns,
        "-l",
        &format!("{SESSION_LABEL}={id}"),
        "--ignore-not-found",
    ]);
    let ca = kubectl_cozy::pki::Ca::new("doctor-session-ca").expect("CA");
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca.cert_pem());
    let now = k8s_openapi::jiff::Timestamp::now();
    let record = SessionRecord {
        served: vec!["doctor-session.example.com/v1alpha1".into()],
        api_services: vec![name.into()],
        route: Some(format!("service {ns}/{service}:443")),
        started: Some(now),
        saved_api_services: None,
        in_session_namespace: false,
        process: None,
    };
    kubectl_apply(&format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {service}, namespace: {ns}, labels: {{{SESSION_LABEL}: {id}}}}}\n\
         spec: {{type: ClusterIP, ports: [{{name: https, port: 443, targetPort: 8443}}]}}\n---\n\
         apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: {service}-agent, namespace: {ns}, labels: {{{SESSION_LABEL}: {id}}}}}\n---\n\
         apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {{name: {name}, labels: {{{SESSION_LABEL}: {id}}}, \
         annotations: {{{NAMESPACE_ANNOTATION}: {ns}}}}}\n\
         spec:\n  group: doctor-session.example.com\n  version: v1alpha1\n  caBundle: {ca_bundle}\n  groupPriorityMinimum: 1000\n  \
         versionPriority: 15\n  service: {{namespace: {ns}, name: {service}, port: 443}}\n---\n{}\n",
        session_lease(&id, ns, now, 3600, &record)
    ));
    wait_unavailable(name).await;

    // A namespace deleted meanwhile is stuck on the live session's APIService.
    let client = plane().client().await;
    let stuck = plane().namespace("doctor-live-session").await;
    Api::<Namespace>::all(client.clone())
        .delete(&stuck, &DeleteParams::default())
        .await
        .expect("delete namespace");
    eventually(
        "NamespaceDeletionDiscoveryFailure=True",
        Duration::from_secs(60),
        || async {
            namespace_condition(&stuck, "NamespaceDeletionDiscoveryFailure").await
                == Some("True".into())
        },
    )
    .await;

    // Alive: what the findings say --fix does agrees with the plan, and
    // nothing says to delete the live session's APIService by hand; they say
    // to wait for its Lease, until when, and that serve may have died.
    let out = cozy(&["doctor", "--fix"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("kubectl delete apiservice"), "{stdout}");
    assert!(!stdout.contains("[planned by --fix]"), "{stdout}");
    for needle in [
        &format!("NamespaceDiscoveryFailure namespaces/{stuck}"),
        &format!("fix:      kubectl get lease -n {ns} {lease}"),
        &format!("belongs to the live serve session {id}, and its Lease expires at "),
        "hint:     the Lease of serve session ",
        "may have died",
        "FIX PLAN: nothing doctor can fix automatically",
        &format!(
            "NamespaceDiscoveryFailure:namespace/{stuck}: its cause is not fixed by the plan: APIService {name} belongs to the live serve session {id}"
        ),
        "Never delete a live session's APIService by hand.",
    ] {
        assert!(stdout.contains(needle), "{needle:?} missing:\n{stdout}");
    }

    // Alive: reported (it is unavailable) but never planned for deletion.
    let out = cozy(&["doctor", "--fix", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let r = report(&out);
    let a = r["apiServices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .expect("APIService in report");
    assert_eq!(a["session"]["state"], "alive", "{a:#}");
    assert_eq!(a["session"]["lease"], format!("{ns}/{lease}"), "{a:#}");
    assert_eq!(a["service"]["type"], "ClusterIP");
    assert_eq!(a["service"]["readyEndpoints"], 0, "{a:#}");
    assert!(
        a["caBundle"]["certificates"][0]["daysLeft"]
            .as_i64()
            .unwrap()
            > 30
    );
    assert!(findings_with(&r, "ServeSessionExpired").is_empty());
    let f = findings_with(&r, "APIServiceUnavailable")[0];
    assert!(
        f["remedy"]["description"]
            .as_str()
            .unwrap()
            .contains("do not delete its APIService by hand"),
        "{f:#}"
    );
    assert_eq!(
        f["remedy"]["command"],
        format!("kubectl get lease -n {ns} {lease}")
    );
    let expires_in = a["session"]["expiresInSeconds"]
        .as_i64()
        .expect("expiresInSeconds");
    assert!((3500..=3600).contains(&expires_in), "{a:#}");
    let blocked = findings_with(&r, "NamespaceDiscoveryFailure")
        .into_iter()
        .find(|f| f["subject"]["name"] == stuck.as_str())
        .expect("the namespace's finding");
    assert_eq!(blocked["remedy"]["automatic"], false, "{blocked:#}");
    assert_eq!(r["fix"]["actions"], serde_json::json!([]), "{:#}", r["fix"]);

    // Expired two hours and a minute after its last renewal (duration one
    // hour): reaped, and all four objects go.
    let stale = now - std::time::Duration::from_secs(2 * 3600 + 60);
    let out = kubectl(&[
        "patch",
        "lease",
        "-n",
        ns,
        &lease,
        "--type=merge",
        "-p",
        &format!(
            r#"{{"spec":{{"renewTime":"{}"}}}}"#,
            stale.strftime("%Y-%m-%dT%H:%M:%S%.6fZ")
        ),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Objects that carry the session's label but are not where, or not
    // named as, a session makes its own: anyone who may edit them can set
    // a label. They are not the session's, and the reap leaves them.
    let bystanders = format!("doctor-bystander-{}", std::process::id());
    cleanup.kubectl(&[
        "delete",
        "secret",
        "-n",
        "default",
        &bystanders,
        "--ignore-not-found",
    ]);
    cleanup.kubectl(&["delete", "clusterrole", &bystanders, "--ignore-not-found"]);
    kubectl_apply(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata: {{name: {bystanders}, namespace: default, labels: {{{SESSION_LABEL}: {id}}}}}\n\
         stringData: {{password: keep-me}}\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: {bystanders}, labels: {{{SESSION_LABEL}: {id}}}}}\n\
         rules: []\n"
    ));
    let out = cozy(&["doctor", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let r = report(&out);
    let expired = findings_with(&r, "ServeSessionExpired");
    assert_eq!(expired.len(), 1, "{r:#}");
    assert_eq!(expired[0]["subject"]["name"], lease.as_str());
    assert_eq!(expired[0]["subject"]["namespace"], ns);
    let evidence = expired[0]["evidence"].to_string();
    assert!(
        evidence.contains("expired 1h ago") || evidence.contains("expired 61m ago"),
        "{:#}",
        expired[0]
    );
    assert!(
        evidence.contains("serves doctor-session.example.com/v1alpha1"),
        "{evidence}"
    );
    let session = r["serveSessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id.as_str())
        .expect("the session in serveSessions");
    assert_eq!(session["namespace"], ns, "{session:#}");
    let kinds: Vec<&str> = session["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["APIService", "Service", "ServiceAccount", "Lease"],
        "{session:#}"
    );

    let out = cozy(&["doctor", "--fix", "--yes", "--wait", "100s", "-o", "json"]);
    let r = report(&out);
    let fix = &r["fix"];
    assert_eq!(
        fix["actions"][0]["action"]["type"], "ReapSession",
        "{fix:#}"
    );
    assert_eq!(fix["actions"][0]["action"]["namespace"], ns, "{fix:#}");
    assert_eq!(fix["results"][0]["outcome"], "done", "{fix:#}");
    // The reap fixes the namespace's discovery failure too: it is gone.
    assert!(
        fix["actions"][0]["fixes"]
            .to_string()
            .contains(&format!("NamespaceDiscoveryFailure:namespace/{stuck}")),
        "{fix:#}"
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(namespace_gone(&stuck).await);
    assert!(!kubectl(&["get", "apiservice", name]).status.success());
    for object in [
        format!("service/{service}"),
        format!("serviceaccount/{service}-agent"),
        format!("lease/{lease}"),
    ] {
        assert!(
            !kubectl(&["get", "-n", ns, &object]).status.success(),
            "{object} is still there"
        );
    }
    for object in [
        vec!["get", "secret", "-n", "default", &bystanders],
        vec!["get", "clusterrole", &bystanders],
    ] {
        assert!(kubectl(&object).status.success(), "{object:?} was deleted");
    }
    drop(cleanup);
}

/// `serve --takeover` replaces an APIService that was there before it and
/// saves the original; when the session dies, reaping it restores the
/// original byte for byte (spec, labels, annotations) instead of deleting it.
#[tokio::test]
async fn a_taken_over_apiservice_is_restored_byte_for_byte_when_its_session_is_reaped() {
    taken_over_and_reaped(false).await;
}

/// The saved original waits in a ConfigMap of the session namespace, which
/// someone with no cluster rights may be able to edit: restored as found,
/// an edited original pointed a cluster-wide group at their Service. The
/// takeover records the original's digest on the APIService; an original
/// that no longer matches it is not restored, and the session's record is
/// kept, the failure named.
#[tokio::test]
async fn an_original_edited_during_the_takeover_is_not_restored() {
    taken_over_and_reaped(true).await;
}

async fn taken_over_and_reaped(edited: bool) {
    use k8s_openapi::api::coordination::v1::Lease;
    use kubectl_cozy::register::session::{
        NAMESPACE_ANNOTATION, ORIGINAL_DIGEST_ANNOTATION, SESSION_LABEL, SavedApiService,
        SessionRecord, lease_name, saved_api_services_name,
    };
    let _serial = CLUSTER_LOCK.lock().await;
    no_terminating_namespaces().await;
    let ns = session_namespace();
    let id = format!("takeover{}{}", std::process::id(), u8::from(edited));
    let name = if edited {
        "v1alpha1.doctor-edited.example.com"
    } else {
        "v1alpha1.doctor-takeover.example.com"
    };
    let saved_name = saved_api_services_name(&id);
    let mut cleanup = Cleanup::new();
    cleanup.kubectl(&[
        "delete",
        "apiservice",
        name,
        "--ignore-not-found",
        "--wait=false",
    ]);
    cleanup.kubectl(&[
        "delete",
        "service,configmap,lease",
        "-n",
        ns,
        "-l",
        &format!("{SESSION_LABEL}={id}"),
        "--ignore-not-found",
    ]);

    // The APIService that was there first (its server is elsewhere).
    kubectl_apply(&format!(
        "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: {name}\n  \
         labels: {{app.kubernetes.io/name: original, team: platform}}\n  \
         annotations: {{example.com/owner: team-x, note: the original one}}\n\
         spec:\n  group: {}\n  version: v1alpha1\n  insecureSkipTLSVerify: true\n  \
         groupPriorityMinimum: 1000\n  versionPriority: 15\n  service: {{namespace: default, name: doctor-takeover-original, port: {}}}\n",
        name.trim_start_matches("v1alpha1."),
        dead_port()
    ));
    let read = || -> Value {
        let out = kubectl(&["get", "apiservice", name, "-o", "json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("APIService JSON")
    };
    let exact = |v: &Value| -> [String; 3] {
        [
            v["spec"].to_string(),
            v["metadata"]["labels"].to_string(),
            v["metadata"]["annotations"].to_string(),
        ]
    };
    let original = read();
    let before = exact(&original);

    // The session saves it, then takes it over: its own Service, its label
    // and annotation, one annotation gone, another priority.
    let client = plane().client().await;
    let saved = SavedApiService::from_object(&original).expect("save the original");
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": saved_name, "labels": {SESSION_LABEL: id}},
        "data": {name: saved.to_json()}
    }))
    .unwrap();
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .expect("create the saved originals");
    let service = format!("kubectl-cozy-{id}");
    kubectl_apply(&format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {service}, namespace: {ns}, labels: {{{SESSION_LABEL}: {id}}}}}\n\
         spec: {{type: ClusterIP, ports: [{{name: https, port: 443, targetPort: 8443}}]}}\n"
    ));
    let patch = serde_json::json!({
        "metadata": {
            "labels": {SESSION_LABEL: id},
            "annotations": {
                NAMESPACE_ANNOTATION: ns,
                ORIGINAL_DIGEST_ANNOTATION: saved.digest(),
                "note": null
            }
        },
        "spec": {
            "groupPriorityMinimum": 2000,
            "service": {"namespace": ns, "name": service, "port": 443}
        }
    });
    let out = kubectl(&[
        "patch",
        "apiservice",
        name,
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_ne!(exact(&read()), before, "the takeover changed nothing");

    // Its Lease, last renewed two hours ago for 15 seconds.
    let record = SessionRecord {
        served: vec![format!("{}/v1alpha1", name.trim_start_matches("v1alpha1."))],
        api_services: vec![name.into()],
        route: None,
        started: None,
        saved_api_services: Some(saved_name.clone()),
        in_session_namespace: false,
        process: None,
    };
    let stale = k8s_openapi::jiff::Timestamp::now() - std::time::Duration::from_secs(2 * 3600);
    let lease: Lease =
        serde_json::from_str(&session_lease(&id, ns, stale, 15, &record)).expect("lease");
    Api::<Lease>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &lease)
        .await
        .expect("create the Lease");

    if edited {
        // Someone points the saved original at a Service of theirs.
        let mut forged = saved.clone();
        forged.spec.insert(
            "service".into(),
            serde_json::json!({"namespace": ns, "name": "theirs", "port": 443}),
        );
        let patch = serde_json::json!({"data": {name: forged.to_json()}});
        configmaps
            .patch(
                &saved_name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&patch),
            )
            .await
            .expect("edit the saved original");
        let taken = exact(&read());
        // The diagnosis says so before anything is done: the finding's
        // evidence names the APIService, its remedy leaves it alone.
        let out = cozy(&["doctor", "-o", "json"]);
        let r = report(&out);
        let expired = findings_with(&r, "ServeSessionExpired");
        let finding = expired
            .iter()
            .find(|f| f.to_string().contains(&id))
            .unwrap_or_else(|| panic!("the session's finding: {r:#}"));
        let evidence = finding["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["source"] == format!("APIService {name}").as_str())
            .unwrap_or_else(|| panic!("evidence naming {name}: {finding:#}"));
        assert!(
            evidence["observed"]
                .as_str()
                .unwrap()
                .contains("its saved original was changed after the takeover"),
            "{evidence:#}"
        );
        let remedy = finding["remedy"]["description"].as_str().unwrap();
        assert!(
            remedy.contains(&format!(
                "except APIService {name}, whose saved original was changed"
            )),
            "{remedy}"
        );
        let table = cozy(&["doctor"]);
        assert!(
            text(&table.stdout).contains("its saved original was changed after the takeover"),
            "{}",
            describe(&table)
        );
        let out = cozy(&["doctor", "--fix", "--yes", "-o", "json"]);
        let r = report(&out);
        let failed = r["fix"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["detail"].as_str().is_some_and(|d| d.contains(name)))
            .unwrap_or_else(|| panic!("a result naming {name}: {r:#}"));
        assert_ne!(failed["outcome"], "done", "{failed:#}");
        assert!(
            failed["detail"]
                .as_str()
                .unwrap()
                .contains("its saved original was changed after the takeover"),
            "{failed:#}"
        );
        // Neither restored from the forgery nor deleted; the record kept.
        assert_eq!(exact(&read()), taken);
        for object in [
            format!("configmap/{saved_name}"),
            format!("lease/{}", lease_name(&id)),
        ] {
            assert!(
                kubectl(&["get", "-n", ns, &object]).status.success(),
                "{object} is gone"
            );
        }
        drop(cleanup);
        return;
    }

    // The diagnosis names the saved originals and plans the restore.
    let out = cozy(&["doctor", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let r = report(&out);
    let session = r["serveSessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id.as_str())
        .expect("the session in serveSessions");
    assert_eq!(session["state"], "expired", "{session:#}");
    assert_eq!(session["savedApiServices"]["name"], saved_name.as_str());
    let expired = findings_with(&r, "ServeSessionExpired");
    assert_eq!(expired.len(), 1, "{r:#}");
    assert_eq!(expired[0]["remedy"]["command"], "kubectl cozy doctor --fix");

    let out = cozy(&["doctor", "--fix", "--yes", "-o", "json"]);
    let r = report(&out);
    let fix = &r["fix"];
    let reap = fix["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"]["type"] == "ReapSession" && a["action"]["session"] == id.as_str())
        .expect("a ReapSession action");
    let result = fix["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["action"] == reap["id"])
        .expect("its result");
    assert_eq!(result["outcome"], "done", "{fix:#}");
    assert!(
        result["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("restored APIService(s) {name}")),
        "{result:#}"
    );

    // Restored, not deleted: the same spec, labels and annotations, to the byte.
    let restored = read();
    assert_eq!(exact(&restored), before);
    assert_eq!(restored["metadata"]["uid"], original["metadata"]["uid"]);
    for object in [
        format!("configmap/{saved_name}"),
        format!("service/{service}"),
        format!("lease/{}", lease_name(&id)),
    ] {
        assert!(
            !kubectl(&["get", "-n", ns, &object]).status.success(),
            "{object} is still there"
        );
    }
    drop(cleanup);
}

/// The reaper driven directly (what `serve` and its agent will call): a live
/// session is not touched; an APIService relabelled by another session since
/// it was listed is left alone; when the saved originals a Lease names are
/// gone, no APIService is deleted and the Lease is kept for a later reap.
#[tokio::test]
async fn the_reaper_touches_only_what_is_still_the_sessions() {
    use k8s_openapi::api::coordination::v1::Lease;
    use kubectl_cozy::register::reap::{Reaped, Target, reap};
    use kubectl_cozy::register::session::{
        API_SERVICE, NAMESPACE_ANNOTATION, SESSION_LABEL, SessionObject, SessionRecord, lease_name,
    };
    let _serial = CLUSTER_LOCK.lock().await;
    no_terminating_namespaces().await;
    let ns = session_namespace();
    let pid = std::process::id();
    let id = format!("reaper{pid}");
    let other = format!("other{pid}");
    let names = [
        "v1alpha1.doctor-reaper-a.example.com",
        "v1alpha1.doctor-reaper-b.example.com",
    ];
    let mut cleanup = Cleanup::new();
    for name in names {
        cleanup.kubectl(&[
            "delete",
            "apiservice",
            name,
            "--ignore-not-found",
            "--wait=false",
        ]);
    }
    cleanup.kubectl(&[
        "delete",
        "lease",
        "-n",
        ns,
        &lease_name(&id),
        "--ignore-not-found",
    ]);
    let api_service = |name: &str, owner: &str| {
        let group = name.strip_prefix("v1alpha1.").unwrap();
        format!(
            "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {{name: {name}, labels: {{{SESSION_LABEL}: {owner}}}, \
             annotations: {{{NAMESPACE_ANNOTATION}: {ns}}}}}\nspec:\n  group: {group}\n  version: v1alpha1\n  \
             insecureSkipTLSVerify: true\n  groupPriorityMinimum: 1000\n  versionPriority: 15\n  \
             service: {{namespace: {ns}, name: kubectl-cozy-{owner}, port: {}}}\n",
            dead_port()
        )
    };
    let exists = |name: &str| kubectl(&["get", "apiservice", name]).status.success();
    let client = plane().client().await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), ns);
    let put_lease = |renewed: k8s_openapi::jiff::Timestamp, record: SessionRecord| {
        let leases = leases.clone();
        let id = id.clone();
        async move {
            let _ = leases
                .delete(&lease_name(&id), &DeleteParams::default())
                .await;
            let lease: Lease =
                serde_json::from_str(&session_lease(&id, ns, renewed, 15, &record)).unwrap();
            leases
                .create(&PostParams::default(), &lease)
                .await
                .expect("create the Lease");
        }
    };
    let target = Target {
        id: id.clone(),
        namespace: ns.to_owned(),
        objects: names
            .iter()
            .map(|n| SessionObject::of(&API_SERVICE, None, n))
            .collect(),
    };
    let limit = Duration::from_secs(10);
    let now = k8s_openapi::jiff::Timestamp::now;

    // Alive: nothing is touched.
    kubectl_apply(&api_service(names[0], &id));
    put_lease(now(), SessionRecord::default()).await;
    let reaped = reap(&client, &target, limit).await.expect("reap");
    assert!(
        matches!(reaped, Reaped::Alive { holder: Some(_) }),
        "{reaped:?}"
    );
    assert!(exists(names[0]));

    // Expired; the second APIService belongs to another session by now.
    kubectl_apply(&api_service(names[1], &other));
    put_lease(now() - Duration::from_secs(3600), SessionRecord::default()).await;
    let Reaped::Reaped(report) = reap(&client, &target, limit).await.expect("reap") else {
        panic!("the session was judged alive");
    };
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(report.unverified.is_empty(), "{report:?}");
    let deleted: Vec<&str> = report.deleted.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(deleted, [names[0], lease_name(&id).as_str()], "{report:?}");
    assert_eq!(report.left.len(), 1, "{report:?}");
    assert_eq!(report.left[0].0.name, names[1]);
    assert!(report.left[0].1.contains(&other), "{report:?}");
    assert!(!exists(names[0]));
    assert!(exists(names[1]));

    // The Lease names saved originals that are gone: nothing is deleted, and
    // the Lease stays for a later reap.
    kubectl_apply(&api_service(names[0], &id));
    put_lease(
        now() - Duration::from_secs(3600),
        SessionRecord {
            saved_api_services: Some(format!("kubectl-cozy-{id}-originals")),
            ..SessionRecord::default()
        },
    )
    .await;
    let Reaped::Reaped(report) = reap(&client, &target, limit).await.expect("reap") else {
        panic!("the session was judged alive");
    };
    assert!(report.deleted.is_empty(), "{report:?}");
    let left: Vec<&str> = report.left.iter().map(|(o, _)| o.name.as_str()).collect();
    assert_eq!(
        left,
        [names[0], names[1], lease_name(&id).as_str()],
        "{report:?}"
    );
    assert!(report.left[0].1.contains("saved originals"), "{report:?}");
    assert!(exists(names[0]));
    assert!(
        kubectl(&["get", "lease", "-n", ns, &lease_name(&id)])
            .status
            .success()
    );
    drop(cleanup);
}

/// Regression (issue 16 §18): doctor pointed at a standalone server exited 5
/// ("could not run every check") without saying why. It now says what it is
/// talking to, checks readiness and discovery, and exits 0.
#[test]
fn doctor_recognises_a_standalone_server() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("standalone.kubeconfig");
    let kinds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
    let mut serve = crate::support::standalone::serve_command(&kinds, dir.path(), &kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start serve --standalone");
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _guard = Kill(&mut serve);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !kubeconfig.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "no kubeconfig written"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }

    // `kubectl cozy doctor ARGS` against the standalone server.
    let doctor = |args: &[&str]| {
        Command::new(bins::kubectl_cozy())
            .arg("doctor")
            .args(args)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .stdin(Stdio::null())
            .output()
            .expect("run doctor")
    };
    let out = doctor(&[]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(stdout.contains("a standalone server"), "{stdout}");
    assert!(stdout.contains("READY: yes"), "{stdout}");
    assert!(
        stdout.contains("postgreses.apps.cozystack.io/v1alpha1"),
        "{stdout}"
    );
    assert!(!stdout.contains("NOT CHECKED"), "{stdout}");

    let out = doctor(&["-o", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(report["result"], "Healthy");
    assert_eq!(report["standalone"]["ready"], true);

    // With --fix and nothing to fix: the plan says so, and the verdict
    // follows it once (it was also said before the plan).
    let out = doctor(&["--fix"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        stdout.matches("Result: healthy (exit 0).").count(),
        1,
        "{stdout}"
    );
    let plan = stdout.find("FIX PLAN: nothing doctor can fix automatically");
    let verdict = stdout.find("Result: healthy");
    assert!(plan.is_some() && plan < verdict, "{stdout}");

    // A namespace kept Terminating by an app's finalizer is found and
    // explained, as on a cluster.
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        crate::support::standalone::kubectl(&kubeconfig, args, stdin)
    };
    crate::support::standalone::ok(&kubectl(&["create", "namespace", "held"], None));
    crate::support::standalone::ok(&kubectl(
        &["apply", "-f", "-"],
        Some(
            "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: db\n  \
             namespace: held\n  finalizers: [example.com/block]\nspec: {}\n",
        ),
    ));
    crate::support::standalone::ok(&kubectl(
        &["delete", "namespace", "held", "--wait=false"],
        None,
    ));
    // The server deletes the namespace's apps (as the namespace controller
    // does); until then a finalizer is nothing to remove.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let out = kubectl(
            &[
                "get",
                "postgres",
                "db",
                "-n",
                "held",
                "-o",
                "jsonpath={.metadata.deletionTimestamp}",
            ],
            None,
        );
        if !text(&out.stdout).trim().is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the app was never deleted"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // What is left shows in the namespace's deletion conditions, in the
    // namespace controller's words.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let conditions = loop {
        let out = kubectl(
            &[
                "get",
                "namespace",
                "held",
                "-o",
                "jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason}: {.message}{\"\\n\"}{end}",
            ],
            None,
        );
        let said = text(&out.stdout);
        if said.contains("NamespaceFinalizersRemaining") {
            break said;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no conditions: {}",
            describe(&out)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(
        conditions,
        "NamespaceDeletionDiscoveryFailure=False/ResourcesDiscovered: All resources successfully discovered\n\
         NamespaceDeletionGroupVersionParsingFailure=False/ParsedGroupVersions: All legacy kube types successfully parsed\n\
         NamespaceDeletionContentFailure=False/ContentDeleted: All content successfully deleted, may be waiting on finalization\n\
         NamespaceContentRemaining=True/SomeResourcesRemain: Some resources are remaining: postgreses.apps.cozystack.io has 1 resource instances\n\
         NamespaceFinalizersRemaining=True/SomeFinalizersRemain: Some content in the namespace has finalizers remaining: example.com/block in 1 resource instances\n"
    );
    let out = doctor(&["--stuck-after", "0s"]);
    let stdout = text(&out.stdout);
    println!("{stdout}");
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(stdout.contains("a standalone server"), "{stdout}");
    assert!(stdout.contains("TERMINATING NAMESPACES"), "{stdout}");
    assert!(stdout.contains("held"), "{stdout}");
    assert!(stdout.contains("example.com/block"), "{stdout}");
    assert!(!stdout.contains("NOT CHECKED"), "{stdout}");

    // Its fix works there too: the finalizer goes, then the namespace.
    let out = doctor(&["--fix", "--yes", "--stuck-after", "0s"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let out = kubectl(&["get", "namespace", "held"], None);
        if text(&out.stderr).contains("NotFound") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "namespace held stayed: {}",
            text(&out.stdout)
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }

    // A client's spec.finalizers hold a namespace there as on a cluster:
    // only /finalize clears them, the last resort behind its flag.
    crate::support::standalone::ok(&kubectl(
        &["apply", "-f", "-"],
        Some(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kept\nspec:\n  \
             finalizers: [example.com/keep]\n",
        ),
    ));
    crate::support::standalone::ok(&kubectl(
        &["delete", "namespace", "kept", "--wait=false"],
        None,
    ));
    let out = doctor(&["--fix", "--yes", "--stuck-after", "0s"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(
        stdout.contains("example.com/keep") && stdout.contains("add --finalize-namespaces"),
        "{stdout}"
    );
    let out = doctor(&[
        "--fix",
        "--yes",
        "--finalize-namespaces",
        "--stuck-after",
        "0s",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = kubectl(&["get", "namespace", "kept"], None);
    assert!(text(&out.stderr).contains("NotFound"), "{}", describe(&out));

    // An app an earlier version left with the garbage collector's finalizer
    // (here set by hand, then deleted): nothing there would ever remove it,
    // so `--fix` plans its removal, outside any Terminating namespace too.
    crate::support::standalone::ok(&kubectl(
        &["apply", "-f", "-"],
        Some(
            "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: old\n  \
             finalizers: [foregroundDeletion]\nspec: {}\n",
        ),
    ));
    crate::support::standalone::ok(&kubectl(
        &["delete", "postgres", "old", "--wait=false"],
        None,
    ));
    let out = doctor(&["-A", "--fix", "--yes", "--stuck-after", "0s"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let left = kubectl(&["get", "postgres", "old"], None);
    assert!(
        text(&left.stderr).contains("NotFound"),
        "{}",
        describe(&left)
    );
}

/// An extension server that answers discovery of `group`/v1 (one
/// namespaced type, `widgets`) and never answers anything under it: the
/// APIService stays Available while every list of widgets hangs. Returns
/// its port; it serves until the test binary exits.
fn spawn_hanging_server(group: &'static str) -> u16 {
    use rustls::pki_types::pem::PemObject as _;
    let ca = kubectl_cozy::pki::Ca::new("doctor-hang-ca").expect("CA");
    let leaf = ca
        .issue(&kubectl_cozy::pki::LeafSpec {
            common_name: "localhost".into(),
            dns_names: vec!["localhost".into()],
            ips: vec![std::net::Ipv4Addr::LOCALHOST.into()],
            server: true,
            ..Default::default()
        })
        .expect("serving certificate");
    let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_no_client_auth()
    .with_single_cert(
        rustls::pki_types::CertificateDer::pem_slice_iter(leaf.cert_pem.as_bytes())
            .map(Result::unwrap)
            .collect(),
        rustls::pki_types::PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).unwrap(),
    )
    .expect("TLS config");
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let discovery = serde_json::json!({
                "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("{group}/v1"),
                "resources": [{"name": "widgets", "singularName": "widget", "namespaced": true, "kind": "Widget",
                               "verbs": ["create", "delete", "deletecollection", "get", "list", "watch"]}]
            })
            .to_string();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let acceptor = acceptor.clone();
                let discovery = discovery.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |req: http::Request<_>| {
                        let discovery = discovery.clone();
                        async move {
                            let path = req.uri().path();
                            let (status, body) = if path == format!("/apis/{group}/v1") {
                                (200, discovery)
                            } else if path.starts_with(&format!("/apis/{group}/v1/")) {
                                std::future::pending::<()>().await;
                                unreachable!()
                            } else {
                                (404, String::new())
                            };
                            Ok::<_, std::convert::Infallible>(
                                http::Response::builder()
                                    .status(status)
                                    .header("content-type", "application/json")
                                    .body(http_body_util::Full::new(bytes::Bytes::from(body)))
                                    .unwrap(),
                            )
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                });
            }
        });
    });
    port
}

/// The extension server is up and its discovery answers, so the APIService
/// is Available — but its lists never answer. The namespace controller
/// lists every type to delete a namespace's content, so the namespace stays
/// Terminating (NamespaceDeletionContentFailure); doctor names the
/// APIService as the cause, rather than "no blocker was found" and
/// `/finalize`.
#[tokio::test]
async fn an_apiservice_whose_lists_hang_is_named_as_what_keeps_namespaces_terminating() {
    const GROUP: &str = "doctor-hang.example.com";
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    no_terminating_namespaces().await;
    let port = spawn_hanging_server(GROUP);
    let mut cleanup = Cleanup::new();
    let name = register_api_service(&mut cleanup, GROUP, "v1", "doctor-hang", port);
    eventually(
        "APIService Available=True",
        Duration::from_secs(60),
        || async {
            let out = kubectl(&[
                "get",
                "apiservice",
                &name,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Available\")].status}",
            ]);
            text(&out.stdout).trim() == "True"
        },
    )
    .await;
    let ns = plane.namespace("doctor-hang").await;
    Api::<Namespace>::all(plane.client().await)
        .delete(&ns, &DeleteParams::default())
        .await
        .expect("delete namespace");

    let out = cozy(&["doctor", "-n", &ns, "--request-timeout", "3s", "-o", "json"]);
    let r = report(&out);
    let unresponsive = findings_with(&r, "APIServiceUnresponsive");
    assert_eq!(unresponsive.len(), 1, "{r:#}");
    let cause = unresponsive[0];
    assert_eq!(cause["subject"]["name"], name.as_str(), "{cause:#}");
    assert_eq!(cause["severity"], "error");
    assert!(
        cause["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b == ns.as_str()),
        "{cause:#}"
    );
    assert_eq!(cause["remedy"]["automatic"], false, "{cause:#}");
    // Available by its status, but not healthy: the table and the summary
    // say so with the finding.
    let report_of = r["apiServices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name.as_str())
        .unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(report_of["healthy"], false, "{report_of:#}");
    let content = findings_with(&r, "NamespaceContentFailure");
    assert_eq!(content.len(), 1, "{r:#}");
    assert_eq!(content[0]["subject"]["name"], ns.as_str());
    assert!(
        content[0]["causedBy"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == cause["id"].as_str().unwrap()),
        "{:#}",
        content[0]
    );
    assert!(
        findings_with(&r, "NamespaceTerminating").is_empty(),
        "no 'no blocker was found': {r:#}"
    );
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let table = cozy(&["doctor", "-n", &ns, "--request-timeout", "3s"]);
    assert!(
        text(&table.stdout).contains(&format!(
            "APIService {name} answers discovery, but lists of {GROUP}/v1 resources do not answer"
        )),
        "{}",
        describe(&table)
    );

    // Its remedy works: without the APIService the namespace goes.
    kubectl(&["delete", "apiservice", &name]);
    eventually("the namespace gone", Duration::from_secs(90), || {
        namespace_gone(&ns)
    })
    .await;
    drop(cleanup);
}

/// A namespace whose `spec.finalizers` were cleared (through `/finalize`)
/// before it was deleted: kube-apiserver marks it Terminating, and nothing
/// removes it — the namespace controller acts on its own finalizer only —
/// until it is deleted again. Doctor names it and its fix deletes it.
#[tokio::test]
async fn a_terminating_namespace_with_no_finalizer_left_is_deleted_again() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    no_terminating_namespaces().await;
    let ns = plane.namespace("doctor-finalized").await;
    let finalized = serde_json::json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns}, "spec": {"finalizers": []}
    })
    .to_string();
    let path = std::env::temp_dir().join(format!("{ns}-finalize.json"));
    std::fs::write(&path, &finalized).expect("write");
    let out = kubectl(&[
        "replace",
        "--raw",
        &format!("/api/v1/namespaces/{ns}/finalize"),
        "-f",
        path.to_str().expect("path"),
    ]);
    assert!(out.status.success(), "{}", describe(&out));
    let out = kubectl(&["delete", "namespace", &ns, "--wait=false"]);
    assert!(out.status.success(), "{}", describe(&out));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let out = kubectl(&["get", "namespace", &ns, "-o", "jsonpath={.status.phase}"]);
    assert_eq!(text(&out.stdout), "Terminating", "{}", describe(&out));

    let out = cozy(&["doctor", "-n", &ns, "--stuck-after", "0s", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let r = report(&out);
    let found = findings_with(&r, "NamespaceFinalizedNotDeleted");
    assert_eq!(found.len(), 1, "{r:#}");
    assert_eq!(found[0]["severity"], "error", "{r:#}");
    assert_eq!(found[0]["remedy"]["automatic"], true, "{r:#}");
    assert!(
        findings_with(&r, "NamespaceTerminating").is_empty(),
        "not the generic finding: {r:#}"
    );
    // The plan (a dry run: no --yes, no terminal).
    let out = cozy(&[
        "doctor",
        "-n",
        &ns,
        "--stuck-after",
        "0s",
        "--fix",
        "-o",
        "json",
    ]);
    let r = report(&out);
    assert_eq!(r["fix"]["mode"], "dryRun", "{r:#}");
    let action = &r["fix"]["actions"][0]["action"];
    assert_eq!(action["type"], "DeleteNamespace", "{r:#}");
    assert_eq!(action["name"], ns.as_str(), "{r:#}");
    assert!(
        action["uid"].as_str().is_some_and(|u| !u.is_empty()),
        "{r:#}"
    );

    let out = cozy(&[
        "doctor",
        "-n",
        &ns,
        "--stuck-after",
        "0s",
        "--fix",
        "--yes",
        "--wait",
        "30s",
    ]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("delete namespace {ns} again")),
        "{}",
        describe(&out)
    );
    assert!(
        stdout.contains("1. done: deleted namespace"),
        "{}",
        describe(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = kubectl(&["get", "namespace", &ns, "--ignore-not-found", "-o", "name"]);
    assert_eq!(text(&out.stdout), "", "{}", describe(&out));
}
