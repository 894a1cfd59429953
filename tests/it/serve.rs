//! `kubectl cozy serve` registering itself in the test plane: the real binary,
//! the real kubectl through kube-apiserver's aggregator, the tunnel over the
//! real pods/portforward path (kube-apiserver → kwok's kubelet API → the
//! agent's control port), the agent as a local process started by
//! `support::agent` from the pod's own spec with the pod's ServiceAccount's
//! token (so its RBAC is the real one).
//!
//! The seam (`support::agent`, docs/serve.md): the plane has no kube-proxy
//! and kwok pod IPs are not dialable, so serve is started with the hidden
//! `--agent-service-external-name localhost:<port>`: the Service is an
//! ExternalName and the aggregator dials the agent's data port directly.
//!
//! Every test registers APIServices that are unavailable for a while (at
//! start, or after a SIGKILL), which stalls namespace deletion and doctor's
//! "healthy" checks cluster-wide: every test holds [`CLUSTER_LOCK`]. Each
//! uses its own API group and session namespace. Timeouts are hang guards;
//! durations are printed, never asserted.

use std::collections::BTreeSet;
use std::process::Output;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, DeleteParams};

use crate::support::agent::AgentRuntime;
use crate::support::plane::{Plane, plane};
use crate::support::serve::{
    KindsDir, ServeProcess, group, kinds_dir, session_objects, wait_session_gone,
};
use crate::support::{CLUSTER_LOCK, bins};

/// Hang guard of a start (plane, node, agent, Available).
const START: Duration = Duration::from_secs(180);
/// Hang guard of a teardown or a reap.
const END: Duration = Duration::from_secs(90);

fn kubectl(plane: &Plane, args: &[&str]) -> Output {
    plane
        .kubectl()
        .arg("--request-timeout=30s")
        .args(args)
        .output()
        .expect("run kubectl")
}

fn kubectl_ok(plane: &Plane, args: &[&str]) -> String {
    let out = kubectl(plane, args);
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `kubectl <args>` with `input` on stdin, which must succeed; its stdout.
fn kubectl_stdin(plane: &Plane, args: &[&str], input: &str) -> String {
    let out = plane.kubectl_stdin(args, input);
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A unique session namespace (serve creates it).
fn session_namespace(name: &str) -> String {
    format!("serve-{name}-{}", std::process::id())
}

/// serve's arguments for the external-name route to `localhost` with
/// session namespace `ns` (a 150 s start limit), then `extra`.
fn external_name_args<'a>(ns: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    external_name_args_to("localhost", ns, extra)
}

/// [`external_name_args`] to `host` (`127.0.0.2`: an address the cluster
/// cannot reach serve at, since serve listens on 127.0.0.1).
fn external_name_args_to<'a>(host: &'a str, ns: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--route",
        "external-name",
        "--host",
        host,
        "--listen",
        "127.0.0.1:0",
        "--session-namespace",
        ns,
        "--timeout",
        "150s",
    ];
    args.extend_from_slice(extra);
    args
}

/// Waits until namespace `name` no longer exists.
async fn namespace_gone(
    client: &kube::Client,
    name: &str,
    limit: Duration,
) -> Result<Duration, String> {
    let api: Api<Namespace> = Api::all(client.clone());
    let started = Instant::now();
    loop {
        match api.get_opt(name).await {
            Ok(None) => return Ok(started.elapsed()),
            Ok(Some(ns)) if started.elapsed() > limit => {
                return Err(format!(
                    "namespace {name} still there after {limit:?}: {:?}",
                    ns.status
                ));
            }
            Ok(Some(_)) => {}
            Err(e) => return Err(format!("get namespace {name}: {e}")),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A tunnel-route session: the agent runtime for its namespace and serve.
struct TunnelSession {
    runtime: AgentRuntime,
    serve: ServeProcess,
    kinds: KindsDir,
    namespace: String,
}

impl TunnelSession {
    async fn start(client: &kube::Client, name: &str, extra: &[&str]) -> TunnelSession {
        let plane = plane();
        let namespace = session_namespace(name);
        let mut runtime = AgentRuntime::prepare(plane, client, &namespace).await;
        runtime.start(plane, client.clone());
        let kinds = kinds_dir(&group(name));
        let seam = runtime.seam();
        let mut args = vec![
            "--session-namespace",
            &namespace,
            "--agent-service-external-name",
            &seam,
            "--timeout",
            "150s",
        ];
        args.extend_from_slice(extra);
        let serve = ServeProcess::start(plane, &kinds, &args);
        TunnelSession {
            runtime,
            serve,
            kinds,
            namespace,
        }
    }

    async fn ready(&mut self) -> crate::support::serve::Ready {
        match self.serve.ready(START).await {
            Ok(ready) => ready,
            Err(e) => panic!("{e}\n--- agents ---\n{}", self.runtime.logs()),
        }
    }

    fn resource(&self, plural: &str) -> String {
        format!("{plural}.{}", self.kinds.group)
    }

    /// Waits (up to [`END`]) until nothing labelled with session `id` is
    /// left; panics otherwise with what is left, the state of any namespace
    /// among it, the agents' journal and logs, and serve's output.
    async fn expect_gone(&self, client: &kube::Client, id: &str) -> Duration {
        match wait_session_gone(client, id, END).await {
            Ok(took) => took,
            Err(left) => panic!("{}", self.left_behind(client, &left).await),
        }
    }

    /// A failure message for objects `left` behind by the session.
    async fn left_behind(&self, client: &kube::Client, left: &[String]) -> String {
        format!(
            "left behind: {left:?}\n{}\nagents: {:#?}\n{}\n--- serve ---\n{}",
            namespaces_left(client, left).await,
            self.runtime.journal(),
            self.runtime.logs(),
            self.serve.output()
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tunnel_route_end_to_end_then_nothing_of_the_session_remains() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let mut s = TunnelSession::start(&client, "tunnel", &["--lease-duration", "6s"]).await;
    let started = Instant::now();
    let ready = s.ready().await;
    eprintln!(
        "[serve] tunnel route ready after {:.1}s: {}",
        started.elapsed().as_secs_f64(),
        ready.line
    );
    assert!(
        s.serve.output().contains("Tunnel: connected to pod/"),
        "{}",
        s.serve.output()
    );

    // kubectl through kube-apiserver, the aggregator, the agent, the tunnel.
    let apps = plane.namespace("serve-apps").await;
    let pg = s.resource("postgreses");
    let manifest = format!(
        "apiVersion: {}/v1alpha1\nkind: Postgres\nmetadata: {{name: db1, namespace: {apps}}}\nspec: {{replicas: 3}}\n",
        s.kinds.group
    );
    kubectl_stdin(plane, &["apply", "-f", "-"], &manifest);
    let got = kubectl_ok(
        plane,
        &[
            "get",
            &pg,
            "db1",
            "-n",
            &apps,
            "-o",
            "jsonpath={.spec.replicas}",
        ],
    );
    assert_eq!(got, "3");
    let listed = kubectl_ok(plane, &["get", &pg, "-A", "-o", "name"]);
    assert!(listed.contains("db1"), "{listed}");
    // A watch sees a change made while it runs.
    let mut watch = plane
        .kubectl()
        .args([
            "get",
            &pg,
            "-n",
            &apps,
            "--watch",
            "-o",
            "name",
            "--request-timeout=60s",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("kubectl get --watch");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let second = manifest.replace("db1", "db2");
    kubectl_stdin(plane, &["apply", "-f", "-"], &second);
    let stdout = watch.stdout.take().expect("watch stdout");
    let seen = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(stdout).lines();
        let mut seen = Vec::new();
        while let Some(Ok(line)) = lines.next() {
            seen.push(line.clone());
            if line.contains("db2") {
                break;
            }
        }
        seen
    });
    let seen = tokio::time::timeout(Duration::from_secs(60), seen)
        .await
        .expect("the watch saw db2 in time")
        .expect("watch reader");
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(seen.iter().any(|l| l.contains("db2")), "{seen:?}");
    kubectl_ok(plane, &["delete", &pg, "db1", "db2", "-n", &apps]);
    let after = kubectl_ok(plane, &["get", &pg, "-n", &apps, "-o", "name"]);
    assert!(after.trim().is_empty(), "{after}");
    let log = s.serve.output();
    assert!(
        log.contains(&format!(
            "GET /apis/{}/v1alpha1/namespaces/{apps}/",
            s.kinds.group
        )),
        "no access log:\n{log}"
    );
    // kubectl's watch, named as kube-apiserver's log names one.
    assert!(
        log.contains(&format!(
            "WATCH /apis/{}/v1alpha1/namespaces/{apps}/",
            s.kinds.group
        )),
        "no WATCH in the access log:\n{log}"
    );
    // The aggregator's probes are the cluster's business, not the log's.
    assert!(
        !log.lines()
            .any(|l| l.contains(" 200 ") && l.ends_with(" system:kube-aggregator")),
        "{log}"
    );

    // A namespace deletion started during the session.
    let doomed = plane.namespace("serve-doomed").await;
    kubectl_stdin(
        plane,
        &["apply", "-f", "-"],
        &manifest.replace(&apps, &doomed),
    );
    Api::<Namespace>::all(client.clone())
        .delete(&doomed, &DeleteParams::default())
        .await
        .expect("delete namespace");

    // Ctrl-C: everything goes.
    let stopping = Instant::now();
    s.serve.signal("-INT");
    let status = s.serve.exit(END).await.expect("serve exits");
    eprintln!(
        "[serve] SIGINT to exit: {:.2}s; {}",
        stopping.elapsed().as_secs_f64(),
        s.serve
            .output()
            .lines()
            .filter(|l| l.starts_with("Removed"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    assert!(status.success(), "{status}\n{}", s.serve.output());
    let gone = s.expect_gone(&client, &ready.id).await;
    eprintln!(
        "[serve] labelled objects gone {:.2}s after exit",
        gone.as_secs_f64()
    );
    let api: Api<APIService> = Api::all(client.clone());
    for version in ["v1alpha1"] {
        let name = format!("{version}.{}", s.kinds.group);
        assert!(
            api.get_opt(&name).await.expect("get").is_none(),
            "{name} remains"
        );
    }
    namespace_gone(&client, &s.namespace, END)
        .await
        .expect("the session namespace serve created is gone");
    namespace_gone(&client, &doomed, END)
        .await
        .expect("the namespace deleted during the session is gone");
    s.runtime.shutdown(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_prints_every_object_and_creates_nothing() {
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("dry-run"));
    let ns = session_namespace("dry-run");
    let state = tempfile::tempdir().expect("state");
    let out = std::process::Command::new(bins::kubectl_cozy())
        .arg("serve")
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig)
        .arg("--kinds")
        .arg(kinds.dir.path())
        .arg("--state-dir")
        .arg(state.path())
        .args(["--dry-run", "--session-namespace", &ns])
        .output()
        .expect("serve --dry-run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for kind in [
        "kind: Namespace",
        "kind: Lease",
        "kind: Service",
        "kind: ServiceAccount",
        "kind: Role",
        "kind: RoleBinding",
        "kind: ClusterRole",
        "kind: ClusterRoleBinding",
        "kind: Deployment",
        "kind: APIService",
    ] {
        assert!(text.contains(kind), "no {kind}:\n{text}");
    }
    // kubectl reads it as objects (client-side, no cluster change).
    let parsed = kubectl_stdin(
        plane,
        &["create", "--dry-run=client", "-o", "name", "-f", "-"],
        &text,
    );
    assert!(
        parsed.contains(&format!(
            "apiservice.apiregistration.k8s.io/v1alpha1.{}",
            kinds.group
        )),
        "{parsed}"
    );
    // Nothing in the cluster, nothing in the state directory.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    assert!(namespaces.get_opt(&ns).await.expect("get").is_none());
    let api: Api<APIService> = Api::all(client.clone());
    assert!(
        api.get_opt(&format!("v1alpha1.{}", kinds.group))
            .await
            .expect("get")
            .is_none()
    );
    assert_eq!(std::fs::read_dir(state.path()).expect("state").count(), 0);
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("# kubectl cozy serve --dry-run: what session "))
        .and_then(|l| l.split_whitespace().next())
        .expect("session id in the header");
    assert!(session_objects(&client, id).await.is_empty());
}

/// The APIService's `spec`, labels and annotations, exactly as JSON text.
async fn exact(client: &kube::Client, name: &str) -> Option<String> {
    let api: Api<APIService> = Api::all(client.clone());
    let a = api.get_opt(name).await.expect("get APIService")?;
    let v = serde_json::to_value(&a).expect("json");
    Some(format!(
        "{}|{}|{}",
        v["spec"], v["metadata"]["labels"], v["metadata"]["annotations"]
    ))
}

/// Waits until APIService `name` reads as `want` (or is gone when `None`).
async fn apiservice_becomes(
    client: &kube::Client,
    name: &str,
    want: Option<&str>,
    limit: Duration,
) -> Result<Duration, String> {
    let started = Instant::now();
    loop {
        let now = exact(client, name).await;
        if now.as_deref() == want {
            return Ok(started.elapsed());
        }
        if started.elapsed() > limit {
            return Err(format!("APIService {name} is {now:?}, not {want:?}"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// An APIService someone else registered for `group` (its Service does not
/// exist: it is unavailable, as a real one would be with its server down).
/// A foreign APIService a test made: deleted if the test panics, since once
/// its session is reaped it is restored pointing at a backend that does not
/// exist, and an unavailable APIService blocks every later test's namespace
/// deletion.
struct Foreign {
    name: String,
}

impl Drop for Foreign {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = plane()
                .kubectl()
                .args([
                    "delete",
                    "apiservice",
                    &self.name,
                    "--ignore-not-found",
                    "--wait=false",
                ])
                .output();
        }
    }
}

async fn foreign_apiservice(plane: &Plane, group: &str) -> String {
    let name = format!("v1alpha1.{group}");
    kubectl_stdin(
        plane,
        &["apply", "--server-side", "-f", "-"],
        &format!(
            "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: {name}\n  \
             labels: {{team: platform, app.kubernetes.io/name: cozystack-api}}\n  \
             annotations: {{note: \"the real one, 100% original\"}}\nspec:\n  group: {group}\n  version: v1alpha1\n  \
             service: {{namespace: cozy-system, name: cozystack-api, port: 443}}\n  insecureSkipTLSVerify: true\n  \
             groupPriorityMinimum: 900\n  versionPriority: 12\n"
        ),
    );
    name
}

/// Without a guard (or with the machine gone), the agent reaps a killed
/// session once its Lease expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_serve_is_reaped_by_the_agent_within_the_lease_ttl() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let mut s = TunnelSession::start(
        &client,
        "sigkill",
        &["--lease-duration", "6s", "--no-session-guard"],
    )
    .await;
    let ready = s.ready().await;
    let killed = Instant::now();
    s.serve.signal("-KILL");
    s.serve.exit(END).await.expect("serve killed");
    s.expect_gone(&client, &ready.id).await;
    let reaped = killed.elapsed();
    eprintln!(
        "[serve] SIGKILL → every labelled object gone after {:.1}s (Lease 6s, renewed every 2s; agent grace 2s, poll 1s)",
        reaped.as_secs_f64()
    );
    let line = s
        .runtime
        .wait_line(&format!("tunnel-agent reaped session {}", ready.id), END)
        .await
        .unwrap_or_else(|| panic!("the agent did not reap:\n{}", s.runtime.logs()));
    assert!(!line.contains("not done"), "{line}\n{}", s.runtime.logs());
    assert_eq!(
        exact(&client, &format!("v1alpha1.{}", s.kinds.group)).await,
        None
    );
    namespace_gone(&client, &s.namespace, END)
        .await
        .expect("the agent deleted the namespace serve created");
    s.runtime.shutdown(&client).await;
}

/// The agent cannot see serve's process, only its Lease; the guard serve
/// starts beside itself sees the process go and reaps the session at once —
/// here with a Lease of 300 s, longer than the test waits — the agent's
/// Deployment with the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_tunnel_session_is_reaped_by_its_guard_without_waiting_for_the_lease() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let mut s = TunnelSession::start(&client, "guarded", &["--lease-duration", "300s"]).await;
    let ready = s.ready().await;
    let said = s.serve.output();
    let log = guard_log(&said);
    s.serve.signal("-KILL");
    s.serve.exit(END).await.expect("serve killed");
    let killed = Instant::now();
    s.expect_gone(&client, &ready.id).await;
    eprintln!(
        "[serve] tunnel route, SIGKILL → every labelled object gone after {:.1}s (Lease 300s: the guard's reap)",
        killed.elapsed().as_secs_f64()
    );
    let reaped = format!("session-guard reaped session {}: ", ready.id);
    let logged = loop {
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        if logged.contains(&reaped) || killed.elapsed() > END {
            break logged;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let line = logged
        .lines()
        .find(|l| l.contains(&reaped))
        .unwrap_or_else(|| {
            panic!(
                "the guard did not reap:\n{logged}\n--- agents ---\n{}",
                s.runtime.logs()
            )
        });
    assert!(!line.contains("not done"), "{line}");
    assert_eq!(
        exact(&client, &format!("v1alpha1.{}", s.kinds.group)).await,
        None
    );
    namespace_gone(&client, &s.namespace, END)
        .await
        .expect("the guard deleted the namespace serve created");
    s.runtime.shutdown(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_pod_that_never_runs_is_named_and_nothing_is_left() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    // A namespace where no pod may be created: the agent's Deployment gets
    // no pod.
    let namespace = session_namespace("no-pods");
    plane.forbid_pods(&namespace).await;
    let kinds = kinds_dir(&group("no-pods"));
    let out = tokio::process::Command::new(bins::kubectl_cozy())
        .arg("serve")
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig)
        .arg("--kinds")
        .arg(kinds.dir.path())
        .args([
            "--session-namespace",
            &namespace,
            "--agent-service-external-name",
            "localhost:1",
            "--timeout",
            "8s",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("serve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the tunnel to the agent in namespace {namespace} never connected"
        )) && stderr.contains("agent: no agent pod could be created (FailedCreate: ")
            && stderr.contains("no pods in this namespace"),
        "{stderr}"
    );
    // Waiting for the pod is not a reconnect, nor a warning.
    assert!(
        !stderr.contains("Tunnel: reconnecting") && !stderr.contains("Warning:"),
        "{stderr}"
    );
    // The session's objects are gone; the namespace was not its own.
    let api: Api<APIService> = Api::all(client.clone());
    assert!(
        api.get_opt(&format!("v1alpha1.{}", kinds.group))
            .await
            .expect("get APIService")
            .is_none()
    );
    plane.allow_pods(&namespace);
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let _ = namespaces
        .delete(&namespace, &DeleteParams::default())
        .await;
    namespace_gone(&client, &namespace, END)
        .await
        .expect("the test's namespace goes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_watch_ends_cleanly_when_serve_stops() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let mut s = TunnelSession::start(&client, "watch-end", &[]).await;
    let ready = s.ready().await;
    let mut watch = tokio::process::Command::from(plane.kubectl());
    let watch = watch
        .args(["get", &s.resource("postgreses"), "-A", "-w"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl get -w");
    // The watch is open once serve has answered kubectl's list and then its
    // watch (the access log has no query: two GETs of the collection).
    let deadline = Instant::now() + END;
    let collection = format!("/{}/v1alpha1/postgreses 200", s.kinds.group);
    while s.serve.output().matches(&collection).count() < 2 {
        assert!(
            Instant::now() < deadline,
            "no watch reached serve:\n{}",
            s.serve.output()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.serve.stop_cleanly("-INT", &client, &ready.id, END).await;
    let out = tokio::time::timeout(END, watch.wait_with_output())
        .await
        .expect("kubectl's watch ends when serve stops")
        .expect("kubectl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("kubectl get -w: {:?}\n{stderr}", out.status);
    assert!(
        !stderr.contains("INTERNAL_ERROR") && !stderr.contains("stream error"),
        "{stderr}"
    );
    s.runtime.shutdown(&client).await;
}

/// The status of every namespace among `left` (phase, conditions, pods left
/// in it), for a failure message: a namespace outliving its session is
/// usually held by its controller's discovery or by a pod.
async fn namespaces_left(client: &kube::Client, left: &[String]) -> String {
    use k8s_openapi::api::core::v1::{Namespace, Pod};
    let mut out = String::new();
    for name in left.iter().filter_map(|l| l.strip_prefix("Namespace /")) {
        let ns = Api::<Namespace>::all(client.clone()).get_opt(name).await;
        let pods = Api::<Pod>::namespaced(client.clone(), name)
            .list(&Default::default())
            .await
            .map(|l| {
                l.items
                    .iter()
                    .map(|p| {
                        format!(
                            "{:?} deleting since {:?}",
                            p.metadata.name, p.metadata.deletion_timestamp
                        )
                    })
                    .collect::<Vec<_>>()
            });
        out.push_str(&format!(
            "namespace {name}: {}\npods: {pods:?}\n",
            serde_json::to_string(&ns.ok().flatten().map(|n| n.status)).unwrap_or_default()
        ));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_serve_is_reaped_and_says_so_when_it_wakes() {
    // The laptop lid closes (SIGSTOP): no Lease renewal, no tunnel traffic;
    // the port-forward and the Lease both go silent, as with a lost network.
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let mut s = TunnelSession::start(&client, "frozen", &["--lease-duration", "6s"]).await;
    let ready = s.ready().await;
    let guard_log = guard_log(&s.serve.output());
    let frozen = Instant::now();
    s.serve.signal("-STOP");
    let gone = wait_session_gone(&client, &ready.id, END).await;
    let reaped = frozen.elapsed();
    s.serve.signal("-CONT");
    if let Err(left) = gone {
        panic!("not reaped: {}", s.left_behind(&client, &left).await);
    }
    // The agent's reap: the guard, which sees serve's process still there,
    // gives an expired Lease a Lease's duration more than the agent does.
    let line = s
        .runtime
        .wait_line(&format!("tunnel-agent reaped session {}", ready.id), END)
        .await
        .unwrap_or_else(|| panic!("the agent did not reap:\n{}", s.runtime.logs()));
    assert!(!line.contains("not done"), "{line}");
    let guarded = std::fs::read_to_string(&guard_log).unwrap_or_default();
    assert!(
        !guarded.contains("session-guard reaped session"),
        "{guarded}"
    );
    eprintln!(
        "[serve] SIGSTOP → reaped by the agent after {:.1}s",
        reaped.as_secs_f64()
    );
    let status = s.serve.exit(END).await.expect("serve exits once awake");
    assert!(!status.success(), "{}", s.serve.output());
    assert!(
        s.serve.output().contains("the session was reaped"),
        "{}",
        s.serve.output()
    );
    assert!(session_objects(&client, &ready.id).await.is_empty());
    s.runtime.shutdown(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_over_apiservice_is_restored_byte_for_byte_on_sigint_and_on_sigkill() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    for (round, signal) in [(0, "-INT"), (1, "-KILL")] {
        let name_prefix = format!("takeover{round}");
        let name = foreign_apiservice(plane, &group(&name_prefix)).await;
        let _foreign = Foreign { name: name.clone() };
        let before = exact(&client, &name).await.expect("the original");
        let mut s = TunnelSession::start(
            &client,
            &name_prefix,
            &["--lease-duration", "6s", "--takeover"],
        )
        .await;
        let ready = s.ready().await;
        assert!(
            s.serve
                .output()
                .contains(&format!("Took over APIService {name} from service ")),
            "{}",
            s.serve.output()
        );
        let during = exact(&client, &name).await.expect("taken over");
        assert_ne!(during, before);
        assert!(during.contains(&ready.id), "{during}");
        let pg = s.resource("postgreses");
        kubectl_ok(plane, &["get", &pg, "-A"]);

        let stopped = Instant::now();
        s.serve.signal(signal);
        let _ = s.serve.exit(END).await.expect("serve exits");
        match apiservice_becomes(&client, &name, Some(&before), END).await {
            Ok(_) => eprintln!(
                "[serve] takeover, {signal}: original restored after {:.1}s",
                stopped.elapsed().as_secs_f64()
            ),
            Err(e) => {
                delete_apiservice(&client, &name).await;
                panic!(
                    "{e}\n{}\n--- agents ---\n{}",
                    s.serve.output(),
                    s.runtime.logs()
                )
            }
        }
        // The restored original points at a backend that does not exist, so
        // kube-apiserver marks it unavailable — and an unavailable
        // APIService blocks every namespace deletion, the session's
        // namespace included (and every later test's). It was restored byte
        // for byte; now it goes, before the session's namespace is awaited.
        delete_apiservice(&client, &name).await;
        s.expect_gone(&client, &ready.id).await;
        s.runtime.shutdown(&client).await;
    }
}

/// Deletes the foreign APIService a test made (gone already is fine).
async fn delete_apiservice(client: &kube::Client, name: &str) {
    let api: Api<APIService> = Api::all(client.clone());
    let _ = api.delete(name, &DeleteParams::default()).await;
}

/// A `serve --takeover` of `kinds` with its agent runtime, in `namespace`.
async fn start_taker(
    client: &kube::Client,
    kinds: &KindsDir,
    namespace: &str,
) -> (AgentRuntime, ServeProcess) {
    let plane = plane();
    let mut runtime = AgentRuntime::prepare(plane, client, namespace).await;
    runtime.start(plane, client.clone());
    let seam = runtime.seam();
    let serve = ServeProcess::start(
        plane,
        kinds,
        &[
            "--session-namespace",
            namespace,
            "--agent-service-external-name",
            &seam,
            "--timeout",
            "150s",
            "--lease-duration",
            "6s",
            "--takeover",
        ],
    );
    (runtime, serve)
}

/// The label of namespace `ns` naming its session, and who last moved in.
fn namespace_session(plane: &Plane, ns: &str) -> (String, String) {
    let out = kubectl_ok(
        plane,
        &[
            "get",
            "namespace",
            ns,
            "-o",
            "jsonpath={.metadata.labels.kubectl-cozy\\.io/session}|{.metadata.annotations.kubectl-cozy\\.io/last-joined-by}",
        ],
    );
    let (label, joined) = out.trim().split_once('|').unwrap_or((out.trim(), ""));
    (label.to_owned(), joined.to_owned())
}

/// Stops session `leaving` (its id `id`) with Ctrl-C and expects it to
/// have handed namespace `ns` over to session `heir`, still in it.
async fn leave_to_heir(
    client: &kube::Client,
    ns: &str,
    leaving: &mut ServeProcess,
    id: &str,
    heir: &str,
) {
    leaving.stop_cleanly("-INT", client, id, END).await;
    assert_eq!(
        namespace_session(plane(), ns).0,
        heir,
        "handed over to the session still in it:\n{}",
        leaving.output()
    );
}

/// A session namespace left labelled by a session killed between creating
/// it and its Lease is adopted by the next serve in it; a second session
/// moving in says so on it; the first one out hands it over to the second,
/// and the last one out removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_left_session_namespace_is_adopted_shared_handed_over_and_removed_by_the_last() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let ns = session_namespace("orphan");
    kubectl_stdin(
        plane,
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n  \
             labels: {{kubectl-cozy.io/session: dead0001}}\n  \
             annotations: {{kubectl-cozy.io/session-namespace: {ns}}}\n"
        ),
    );
    let first_kinds = kinds_dir(&group("orphan-a"));
    let mut first = ServeProcess::start(plane, &first_kinds, &external_name_args(&ns, &[]));
    let first_ready = first.ready(START).await.expect("the first session");
    assert_eq!(
        namespace_session(plane, &ns),
        (first_ready.id.clone(), first_ready.id.clone()),
        "adopted by the first session"
    );

    let second_kinds = kinds_dir(&group("orphan-b"));
    let mut second = ServeProcess::start(plane, &second_kinds, &external_name_args(&ns, &[]));
    let second_ready = second.ready(START).await.expect("the second session");
    assert_eq!(
        namespace_session(plane, &ns),
        (first_ready.id.clone(), second_ready.id.clone()),
        "the second session moved in"
    );

    leave_to_heir(&client, &ns, &mut first, &first_ready.id, &second_ready.id).await;
    second
        .stop_cleanly("-INT", &client, &second_ready.id, END)
        .await;
    namespace_gone(&client, &ns, END)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", second.output()));
}

/// A tunnel session that moved into another session's namespace and was
/// handed it when that one left removes it through its agent after a
/// SIGKILL (no guard: the agent's reap is the one tested): the namespace
/// falls to the last session out even when it crashes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handed_over_namespace_is_removed_by_the_heirs_agent_after_a_sigkill() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let ns = session_namespace("heir");
    let mut runtime = AgentRuntime::prepare(plane, &client, &ns).await;
    runtime.start(plane, client.clone());

    // The creator: no agent (external-name), so the runtime serves the heir's.
    let creator_kinds = kinds_dir(&group("heir-a"));
    let mut creator = ServeProcess::start(
        plane,
        &creator_kinds,
        &external_name_args(&ns, &["--lease-duration", "6s"]),
    );
    let creator_ready = creator.ready(START).await.expect("the creating session");

    let heir_kinds = kinds_dir(&group("heir-b"));
    let seam = runtime.seam();
    let mut heir = ServeProcess::start(
        plane,
        &heir_kinds,
        &[
            "--session-namespace",
            &ns,
            "--agent-service-external-name",
            &seam,
            "--timeout",
            "150s",
            "--lease-duration",
            "6s",
            "--no-session-guard",
        ],
    );
    let heir_ready = match heir.ready(START).await {
        Ok(ready) => ready,
        Err(e) => panic!("{e}\n--- agents ---\n{}", runtime.logs()),
    };
    leave_to_heir(
        &client,
        &ns,
        &mut creator,
        &creator_ready.id,
        &heir_ready.id,
    )
    .await;

    heir.signal("-KILL");
    heir.exit(END).await.expect("serve killed");
    let line = runtime
        .wait_line(
            &format!("tunnel-agent reaped session {}", heir_ready.id),
            END,
        )
        .await
        .unwrap_or_else(|| panic!("the agent did not reap:\n{}", runtime.logs()));
    assert!(!line.contains("not done"), "{line}\n{}", runtime.logs());
    namespace_gone(&client, &ns, END)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{line}\n--- agents ---\n{}", runtime.logs()));
    runtime.shutdown(&client).await;
}

/// An ExternalName the cluster cannot reach (here a loopback address serve
/// does not listen on) fails the start in seconds, saying so, and never
/// touches the group: the reachability probe's own APIService fails, not the
/// served group's — here one taken over (`--takeover`) from a session that
/// answers throughout. Nothing of the taker is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_name_the_cluster_cannot_reach_fails_fast_and_never_touches_the_group() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let holder_ns = session_namespace("reached");
    let kinds = kinds_dir(&group("unreachable"));
    let mut holder = ServeProcess::start(plane, &kinds, &external_name_args(&holder_ns, &[]));
    let holder_ready = holder.ready(START).await.expect("ready");
    let name = format!("v1alpha1.{}", kinds.group);
    let original = exact(&client, &name).await.expect("the holder's");

    let ns = session_namespace("unreachable");
    let started = Instant::now();
    let mut taker = ServeProcess::start(
        plane,
        &kinds,
        &external_name_args_to("127.0.0.2", &ns, &["--takeover"]),
    );
    let mut probes_seen = BTreeSet::new();
    let (status, _) = exit_with_the_group_kept(&mut taker, &client, &name, &original, || {
        let probes = kubectl_ok(plane, &["get", "apiservices", "-o", "name"]);
        probes_seen.extend(
            probes
                .lines()
                .filter(|l| l.ends_with(".probe.kubectl-cozy.io"))
                .map(str::to_owned),
        );
    })
    .await;
    let took = started.elapsed();
    let said = taker.output();
    assert_eq!(status.code(), Some(1), "{said}");
    // Its guard, which found the originals' copies gone with the Lease,
    // ends too (it once retried their restore for ever).
    guard_exits(guard_pid(&said)).await;
    assert!(
        said.contains("kube-apiserver cannot connect to this server")
            && said.contains("the cluster does not reach 127.0.0.2:")
            && said.contains("--route tunnel")
            && !said.contains("Took over"),
        "{said}"
    );
    // The taker's probe was there while it waited, and is gone.
    let probe = format!(
        "apiservice.apiregistration.k8s.io/v1.{}.probe.kubectl-cozy.io",
        guard_session(&said)
    );
    assert!(probes_seen.contains(&probe), "{probes_seen:?}\n{said}");
    let probe = probe.trim_start_matches("apiservice.apiregistration.k8s.io/");
    assert_eq!(exact(&client, probe).await, None, "{said}");
    // Far less than --timeout: the unreachable condition for 8 s, then the
    // teardown.
    assert!(took < Duration::from_secs(60), "{took:?}\n{said}");
    eprintln!(
        "[serve] unreachable external-name: exit 1 after {:.1}s",
        took.as_secs_f64()
    );
    // The group never left the holder, which was never told.
    kubectl_ok(
        plane,
        &["get", &format!("postgreses.{}", kinds.group), "-A"],
    );
    assert_eq!(
        exact(&client, &name).await.as_deref(),
        Some(original.as_str())
    );
    assert!(
        !holder.output().contains("was taken over"),
        "{}",
        holder.output()
    );
    namespace_gone(&client, &ns, END)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{said}"));
    holder
        .stop_cleanly("-INT", &client, &holder_ready.id, END)
        .await;
}

/// Waits for `taker` to end, checking every 250 ms (up to 240 times) that
/// APIService `name` is still `original` — never switched to the taker —
/// and calling `each` per check; its exit status and the checks made.
async fn exit_with_the_group_kept(
    taker: &mut ServeProcess,
    client: &kube::Client,
    name: &str,
    original: &str,
    mut each: impl FnMut(),
) -> (std::process::ExitStatus, usize) {
    let mut checks = 0;
    loop {
        if let Ok(status) = taker.exit(Duration::from_millis(250)).await {
            return (status, checks);
        }
        assert_eq!(
            exact(client, name).await.as_deref(),
            Some(original),
            "switched to the taker:\n{}",
            taker.output()
        );
        each();
        checks += 1;
        assert!(checks < 240, "the taker still runs:\n{}", taker.output());
    }
}

/// A session killed while its reachability probe waits leaves its Lease,
/// which records the probe's APIService (unavailable, so stalling namespace
/// deletions like any dead APIService): the session's local guard reaps the
/// probe with the rest, and says so in its log — as soon as serve's process
/// is gone, not when the Lease expires (here in 300 s, more than the test
/// waits).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_while_probing_is_reaped_by_its_guard() {
    let _serial = CLUSTER_LOCK.lock().await;
    let client = plane().client().await;
    let (mut serve, ns, id, probe) = start_probing(&client, "probing", "300s").await;
    let said = serve.output();
    let log = guard_log(&said);
    serve.signal("-KILL");
    serve.exit(END).await.expect("serve killed");
    let killed = Instant::now();
    if let Err(left) = wait_session_gone(&client, &id, END).await {
        panic!("left by session {id}: {left:?}\n{said}");
    }
    eprintln!(
        "[serve] SIGKILL while probing → reaped by the guard in {:.1}s (Lease 300s)",
        killed.elapsed().as_secs_f64()
    );
    assert_eq!(exact(&client, &probe).await, None, "{said}");
    // Its last request done, the guard says so.
    let reaped = format!("session-guard reaped session {id}: ");
    let logged = loop {
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        if logged.contains(&reaped) || killed.elapsed() > END {
            break logged;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(logged.contains(&reaped), "{logged}");
    // What it never made (the external-name route's ClusterRole, the
    // group's APIService it never switched) is not counted as deleted.
    let line = logged
        .lines()
        .find(|l| l.contains(&reaped))
        .unwrap_or_default();
    let counts = line.split(';').next().unwrap_or_default();
    let gone: usize = counts
        .split(", ")
        .find_map(|part| part.strip_suffix(" already gone")?.parse().ok())
        .unwrap_or_else(|| panic!("no count of objects already gone: {line}"));
    assert!(gone >= 2, "{line}");
    namespace_gone(&client, &ns, END)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{said}"));
}

/// Starts `serve --route external-name` for the group and session
/// namespace of `name`, to a host the cluster cannot reach, with a Lease of
/// `lease`, and waits until it probes ([`probing`]): the process, its
/// session namespace, session id and probe APIService.
async fn start_probing(
    client: &kube::Client,
    name: &str,
    lease: &str,
) -> (ServeProcess, String, String, String) {
    let kinds = kinds_dir(&group(name));
    let ns = session_namespace(name);
    let mut serve = ServeProcess::start(
        plane(),
        &kinds,
        &external_name_args_to("127.0.0.2", &ns, &["--lease-duration", lease]),
    );
    let (id, probe) = probing(&mut serve, client).await;
    (serve, ns, id, probe)
}

/// Waits (up to 30 s) until `serve` (external-name, to a host the cluster
/// cannot reach) has started its guard — with the Lease, before the probe —
/// and registered its reachability probe; the session id and the probe's
/// APIService.
async fn probing(serve: &mut ServeProcess, client: &kube::Client) -> (String, String) {
    let started = Instant::now();
    let said = loop {
        let said = serve.output();
        if said.contains("Guard: process ") {
            break said;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no guard:\n{said}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let id = guard_session(&said);
    let probe = format!("v1.{id}.probe.kubectl-cozy.io");
    while exact(client, &probe).await.is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no probe APIService:\n{}",
            serve.output()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (id, probe)
}

/// A start frozen (Ctrl-Z) while its probe waits is reaped by its guard,
/// which is not frozen with it; woken, serve sees its session gone and
/// ends at once instead of waiting out `--timeout` for a probe that no
/// longer exists, leaving nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_frozen_while_probing_is_reaped_and_ends_when_woken() {
    let _serial = CLUSTER_LOCK.lock().await;
    let client = plane().client().await;
    let (mut serve, ns, id, probe) = start_probing(&client, "frozen-start", "3s").await;
    serve.signal("-STOP");
    let gone = wait_session_gone(&client, &id, END).await;
    serve.signal("-CONT");
    let woken = Instant::now();
    if let Err(left) = gone {
        panic!("the guard did not reap the frozen start: {left:?}");
    }
    let status = serve
        .exit(Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", serve.output()));
    let said = serve.output();
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(
        said.contains("the session was reaped while it started")
            || said.contains(&format!(
                "APIService {probe} was deleted while serve waited"
            )),
        "{said}"
    );
    eprintln!(
        "[serve] a start frozen while probing, reaped: ended {:.1}s after it was woken",
        woken.elapsed().as_secs_f64()
    );
    namespace_gone(&client, &ns, END)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{said}"));
}

/// The guard's log, from serve's `Guard: process N … (log: PATH)` line.
fn guard_log(said: &str) -> std::path::PathBuf {
    said.lines()
        .find_map(|l| l.strip_prefix("Guard: process ")?.split_once("(log: "))
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| panic!("no guard line:\n{said}"))
}

/// Waits (up to 20 s) until the guard process `pid` has exited (a zombie
/// counts: under a PID 1 that reaps no orphans it stays one).
async fn guard_exits(pid: u32) {
    let since = Instant::now();
    let running = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            // `pid (comm) STATE …`: the state follows the last `)`.
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
    };
    while running() {
        assert!(
            since.elapsed() < Duration::from_secs(20),
            "guard {pid} still runs after serve's teardown"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The session id, from the guard's log's name (`<id>.log`).
fn guard_session(said: &str) -> String {
    let log = guard_log(said);
    log.file_stem()
        .and_then(|s| s.to_str())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no session id in {}", log.display()))
}

/// The guard's process id, from the same line.
fn guard_pid(said: &str) -> u32 {
    said.lines()
        .find_map(|l| l.strip_prefix("Guard: process ")?.split_once(' '))
        .and_then(|(pid, _)| pid.parse().ok())
        .unwrap_or_else(|| panic!("no guard line:\n{said}"))
}

/// A takeover whose agent never connects never touches the group: the
/// session it would take over answers throughout and is never told, and the
/// taker leaves nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_whose_agent_never_runs_leaves_the_group_with_its_holder() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let mut first = TunnelSession::start(&client, "held", &["--lease-duration", "6s"]).await;
    let first_ready = first.ready().await;
    let name = format!("v1alpha1.{}", first.kinds.group);
    let original = exact(&client, &name).await.expect("the first session's");

    // No agent runtime for its namespace: its agent's pod never runs.
    let taker_ns = session_namespace("held-taker");
    let mut taker = ServeProcess::start(
        plane,
        &first.kinds,
        &[
            "--session-namespace",
            &taker_ns,
            "--agent-service-external-name",
            "localhost:1",
            "--timeout",
            "8s",
            "--lease-duration",
            "6s",
            "--takeover",
        ],
    );
    let (status, reads) =
        exit_with_the_group_kept(&mut taker, &client, &name, &original, || {}).await;
    let said = taker.output();
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(reads > 10, "the taker ended too soon to tell:\n{said}");
    assert!(
        said.contains(&format!(
            "the tunnel to the agent in namespace {taker_ns} never connected"
        )) && !said.contains("Took over"),
        "{said}"
    );
    // The group never left the first session.
    kubectl_ok(plane, &["get", &first.resource("postgreses"), "-A"]);
    assert_eq!(
        exact(&client, &name).await.as_deref(),
        Some(original.as_str())
    );
    assert!(
        !first.serve.output().contains("was taken over"),
        "{}",
        first.serve.output()
    );
    // The taker left nothing: not its namespace, not its cluster-wide RBAC.
    namespace_gone(&client, &taker_ns, END)
        .await
        .expect("no namespace left by the taker");
    let roles = kubectl_ok(
        plane,
        &[
            "get",
            "clusterroles",
            "-l",
            "kubectl-cozy.io/session",
            "-o",
            "name",
        ],
    );
    assert!(
        roles.lines().all(|l| l.contains(&first_ready.id)),
        "{roles}"
    );
    first
        .serve
        .stop_cleanly("-INT", &client, &first_ready.id, END)
        .await;
    first.runtime.shutdown(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_serve_for_the_same_group_is_refused_and_takeover_takes_it() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let mut first = TunnelSession::start(&client, "shared", &["--lease-duration", "6s"]).await;
    let first_ready = first.ready().await;
    let name = format!("v1alpha1.{}", first.kinds.group);
    let original = exact(&client, &name).await.expect("the first session's");

    // Without --takeover: refused, naming who, where and since when.
    let second_ns = session_namespace("shared-2");
    let refused = std::process::Command::new(bins::kubectl_cozy())
        .arg("serve")
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig)
        .arg("--kinds")
        .arg(first.kinds.dir.path())
        .args([
            "--session-namespace",
            &second_ns,
            "--agent-service-external-name",
            "localhost:1",
        ])
        .output()
        .expect("second serve");
    let text = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("kubectl cozy serve session {} (", first_ready.id))
            && text.contains(", pid ")
            && text.contains("since ")
            && text.contains("--takeover"),
        "{text}"
    );
    // It left nothing: not even the namespace it had to create.
    namespace_gone(&client, &second_ns, END)
        .await
        .expect("no namespace left by the refused serve");
    assert_eq!(
        exact(&client, &name).await.as_deref(),
        Some(original.as_str())
    );

    // With --takeover: it serves, and gives the group back when it ends.
    let (second_runtime, mut second) = start_taker(&client, &first.kinds, &second_ns).await;
    let second_ready = match second.ready(START).await {
        Ok(r) => r,
        Err(e) => panic!("{e}\n{}", second_runtime.logs()),
    };
    let during = exact(&client, &name).await.expect("taken over");
    assert!(during.contains(&second_ready.id), "{during}");
    kubectl_ok(plane, &["get", &first.resource("postgreses"), "-A"]);
    // The first session is told, and told again when it gets it back.
    let taken_line = format!(
        "APIService {name} was taken over by serve session {}",
        second_ready.id
    );
    assert!(
        first.serve.wait_line(&taken_line, END).await.is_some(),
        "{}",
        first.serve.output()
    );
    second.signal("-INT");
    assert!(
        second.exit(END).await.expect("exit").success(),
        "{}",
        second.output()
    );
    apiservice_becomes(&client, &name, Some(&original), END)
        .await
        .expect("given back to the first session, byte for byte");
    if let Err(left) = wait_session_gone(&client, &second_ready.id, END).await {
        panic!("left by the second session: {left:?}");
    }
    assert!(
        first
            .serve
            .wait_line(&format!("APIService {name} is back with this session"), END)
            .await
            .is_some(),
        "{}",
        first.serve.output()
    );
    second_runtime.shutdown(&client).await;

    // Taken over again at once, in the namespace the second session has just
    // deleted (serve waits for it to be gone), and then the first session
    // ends while its group is taken: when the taker ends, the first
    // session's APIService is not brought back (its Service went with the
    // first session), so nothing is left to stall discovery and namespace
    // deletion.
    let (third_runtime, mut third) = start_taker(&client, &first.kinds, &second_ns).await;
    let third_ready = match third.ready(START).await {
        Ok(r) => r,
        Err(e) => panic!("{e}\n{}\n{}", third.output(), third_runtime.logs()),
    };
    assert!(
        third.output().contains(&format!(
            "Took over APIService {name} from serve session {} (",
            first_ready.id
        )),
        "{}",
        third.output()
    );
    // The kinds change (both sessions read the same files) while the group
    // is taken: the taker nudges its APIService, the first session leaves
    // it alone (it wrote its kinds' hash on the taker's).
    std::fs::write(
        first.kinds.dir.path().join("nudge.yaml"),
        format!(
            "kind: Nudge\ngroup: {}\nrelease: {{chartRef: {{kind: ExternalArtifact, name: nudge}}}}\n",
            first.kinds.group
        ),
    )
    .expect("write a kind");
    first
        .serve
        .wait_line(
            &format!(
                "Kinds: APIService {name} is not this session's now; its discovery is left alone"
            ),
            Duration::from_secs(20),
        )
        .await
        .unwrap_or_else(|| panic!("no word of the taken APIService: {}", first.serve.output()));
    third
        .wait_line(
            "Kinds: reloaded (nudges added), serving ",
            Duration::from_secs(20),
        )
        .await
        .unwrap_or_else(|| panic!("the taker did not reload: {}", third.output()));
    assert!(
        !first.serve.output().contains("could not nudge"),
        "{}",
        first.serve.output()
    );
    first.serve.signal("-INT");
    first
        .serve
        .exit(END)
        .await
        .expect("the first session exits");
    assert!(
        first.serve.output().contains(&format!(
            "it now belongs to serve session {}; not touched",
            third_ready.id
        )),
        "{}",
        first.serve.output()
    );
    third.signal("-INT");
    assert!(
        third.exit(END).await.expect("exit").success(),
        "{}",
        third.output()
    );
    assert!(
        third.output().contains(&format!(
            "APIService {name}: its original belonged to serve session {}, which has ended; deleted instead of restored",
            first_ready.id
        )),
        "{}",
        third.output()
    );
    apiservice_becomes(&client, &name, None, END)
        .await
        .expect("the ended session's APIService is not restored");
    for id in [&first_ready.id, &third_ready.id] {
        if let Err(left) = wait_session_gone(&client, id, END).await {
            panic!("left by session {id}: {left:?}");
        }
    }
    third_runtime.shutdown(&client).await;
    first.runtime.shutdown(&client).await;

    // The same when the taker is killed: its agent reaps it with its own
    // scoped rights, which let it read the Lease of the session it took the
    // APIService from, and deletes the APIService instead of restoring it.
    let origin_ns = session_namespace("shared-origin");
    let mut origin_runtime = AgentRuntime::prepare(plane, &client, &origin_ns).await;
    origin_runtime.start(plane, client.clone());
    let seam = origin_runtime.seam();
    let mut origin = ServeProcess::start(
        plane,
        &first.kinds,
        &[
            "--session-namespace",
            &origin_ns,
            "--agent-service-external-name",
            &seam,
            "--timeout",
            "150s",
            "--lease-duration",
            "6s",
        ],
    );
    let origin_ready = origin.ready(START).await.expect("the origin session");
    let (taker_runtime, mut taker) = start_taker(&client, &first.kinds, &second_ns).await;
    let taker_ready = taker.ready(START).await.expect("the taker");
    origin
        .stop_cleanly("-INT", &client, &origin_ready.id, END)
        .await;
    taker.signal("-KILL");
    taker.exit(END).await.expect("the taker killed");
    apiservice_becomes(&client, &name, None, END)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", taker_runtime.logs()));
    if let Err(left) = wait_session_gone(&client, &taker_ready.id, END).await {
        panic!(
            "left by the killed taker: {left:?}\n{}",
            taker_runtime.logs()
        );
    }
    taker_runtime.shutdown(&client).await;
    origin_runtime.shutdown(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_restart_and_port_forward_drop_under_load_fail_visibly_and_recover() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let mut s = TunnelSession::start(&client, "load", &["--lease-duration", "15s"]).await;
    let ready = s.ready().await;
    let apps = plane.namespace("serve-load").await;
    let path = format!(
        "/apis/{}/v1alpha1/namespaces/{apps}/postgreses",
        s.kinds.group
    );

    // A bounded loop of requests through kube-apiserver, each with a limit.
    const LIMIT: Duration = Duration::from_secs(20);
    let load = {
        let client = client.clone();
        let path = path.clone();
        tokio::spawn(async move {
            let mut outcomes: Vec<(Duration, Result<(), String>)> = Vec::new();
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(40) {
                let t = Instant::now();
                let request = http::Request::get(&path).body(Vec::new()).expect("request");
                let result = tokio::time::timeout(LIMIT, client.request_text(request)).await;
                let outcome = match result {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err("HUNG".to_owned()),
                };
                outcomes.push((t.elapsed(), outcome));
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            outcomes
        })
    };
    // 1. The agent's process dies (its control listener with it): the
    //    port-forward drops; the kubelet (here the runtime) restarts it.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let crashed = s.runtime.crash().await.expect("an agent process to crash");
    eprintln!("[serve] crashed the agent of {crashed}");
    // 2. The agent pod is deleted: the Deployment makes a new one.
    tokio::time::sleep(Duration::from_secs(12)).await;
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), &s.namespace);
    pods.delete(&crashed, &DeleteParams::default())
        .await
        .expect("delete the agent pod");
    eprintln!("[serve] deleted pod {crashed}");

    let outcomes = load.await.expect("load");
    let hung = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Err(e) if e == "HUNG"))
        .count();
    let failed: Vec<&String> = outcomes
        .iter()
        .filter_map(|(_, o)| o.as_ref().err())
        .collect();
    let slowest = outcomes.iter().map(|(d, _)| *d).max().unwrap_or_default();
    eprintln!(
        "[serve] {} requests: {} ok, {} failed visibly, {hung} hung; slowest {:.2}s; first errors: {:?}",
        outcomes.len(),
        outcomes.len() - failed.len(),
        failed.len(),
        slowest.as_secs_f64(),
        failed.iter().take(3).collect::<Vec<_>>()
    );
    assert_eq!(hung, 0, "requests hung past {LIMIT:?}");
    assert!(outcomes.iter().any(|(_, o)| o.is_ok()));
    // Service resumes by itself: a request succeeds again.
    let resumed = Instant::now();
    loop {
        let request = http::Request::get(&path).body(Vec::new()).expect("request");
        if let Ok(Ok(_)) = tokio::time::timeout(LIMIT, client.request_text(request)).await {
            break;
        }
        assert!(
            resumed.elapsed() < Duration::from_secs(90),
            "no recovery:\n{}\n{}",
            s.serve.output(),
            s.runtime.logs()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let journal = s.runtime.journal();
    assert!(journal.started.len() >= 3, "{journal:?}");
    let reconnects = s.serve.output().matches("Tunnel: connected").count();
    assert!(reconnects >= 3, "{}", s.serve.output());
    s.serve.stop_cleanly("-INT", &client, &ready.id, END).await;
    s.runtime.shutdown(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_name_route_end_to_end_with_doctor_seeing_a_live_session() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("external"));
    let ns = session_namespace("external");
    let mut serve = ServeProcess::start(plane, &kinds, &external_name_args(&ns, &[]));
    let ready = serve.ready(START).await.expect("ready");
    eprintln!("[serve] external-name route: {}", ready.line);
    // The reachability probe turned Available before the group was switched,
    // and is gone.
    assert_eq!(
        exact(&client, &format!("v1.{}.probe.kubectl-cozy.io", ready.id)).await,
        None
    );
    let objects = session_objects(&client, &ready.id).await;
    assert!(
        objects
            .iter()
            .all(|o| !o.starts_with("Deployment") && !o.starts_with("ClusterRole")),
        "no agent on this route: {objects:?}"
    );
    let svc = kubectl_ok(
        plane,
        &[
            "get",
            "service",
            "-n",
            &ns,
            &format!("kubectl-cozy-{}", ready.id),
            "-o",
            "jsonpath={.spec.type} {.spec.externalName}",
        ],
    );
    assert_eq!(svc, "ExternalName localhost");
    let pg = format!("postgreses.{}", kinds.group);
    let apps = plane.namespace("serve-external-apps").await;
    kubectl_stdin(
        plane,
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: {}/v1alpha1\nkind: Postgres\nmetadata: {{name: db1, namespace: {apps}}}\nspec: {{}}\n",
            kinds.group
        ),
    );
    assert!(kubectl_ok(plane, &["get", &pg, "-n", &apps, "-o", "name"]).contains("db1"));

    // doctor sees the live session as healthy.
    let out = std::process::Command::new(bins::kubectl_cozy())
        .args(["doctor", "-o", "json", "--kubeconfig"])
        .arg(&plane.kubeconfig)
        .output()
        .expect("doctor");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let sessions = report["serveSessions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let live = sessions
        .iter()
        .find(|s| s["id"] == ready.id.as_str())
        .unwrap_or_else(|| panic!("doctor does not list session {}: {report:#}", ready.id));
    assert_eq!(live["state"], "alive", "{live:#}");
    let api = report["apiServices"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|a| a["name"] == format!("v1alpha1.{}", kinds.group).as_str())
                .cloned()
        })
        .expect("the APIService in doctor's report");
    assert_eq!(api["healthy"], true, "{api:#}");
    assert_eq!(api["session"]["state"], "alive", "{api:#}");
    assert!(
        report["findings"]
            .as_array()
            .map(|f| f.iter().all(|f| !f.to_string().contains(&ready.id)))
            .unwrap_or(true),
        "{report:#}"
    );

    // The kind edited while its app exists (a field with a default, a newer
    // chart): `kubectl label` changes the HelmRelease's metadata only, as
    // a custom resource's metadata-only update leaves its spec and
    // generation alone — no values rewritten, no Helm upgrade. A change of
    // the spec writes what the kind makes now.
    let release = |field: &str| {
        kubectl_ok(
            plane,
            &[
                "get",
                "helmreleases",
                "-n",
                &apps,
                "postgres-db1",
                "-o",
                &format!("jsonpath={field}"),
            ],
        )
    };
    let before = (
        release("{.metadata.generation}"),
        release("{.spec.values}"),
        release("{.spec.chart.spec.version}"),
    );
    assert_eq!(before.2, "0.4.0");
    let postgres = kinds.dir.path().join("postgres.yaml");
    let text = std::fs::read_to_string(&postgres).expect("read postgres.yaml");
    let edited = text
        .replacen(
            "  properties:\n    replicas:\n",
            "  properties:\n    maintenanceWindow:\n      type: string\n      default: sun-02\n    replicas:\n",
            1,
        )
        .replacen("version: \"0.4.0\"", "version: \"0.5.0\"", 1);
    assert_ne!(edited, text);
    std::fs::write(&postgres, edited).expect("edit postgres.yaml");
    let reloaded = serve
        .wait_line(
            "Kinds: reloaded (postgreses changed), serving ",
            Duration::from_secs(20),
        )
        .await
        .unwrap_or_else(|| panic!("no reload: {}", serve.output()));
    assert!(
        reloaded
            .ends_with("; their open watches ended (kubectl get -w exits; informers watch again)"),
        "{reloaded}"
    );
    // Read as the kind is now: defaulted.
    assert_eq!(
        kubectl_ok(
            plane,
            &[
                "get",
                &pg,
                "-n",
                &apps,
                "db1",
                "-o",
                "jsonpath={.spec.maintenanceWindow}"
            ]
        ),
        "sun-02"
    );
    kubectl_ok(plane, &["label", &pg, "-n", &apps, "db1", "team=a"]);
    assert_eq!(
        (
            release("{.metadata.generation}"),
            release("{.spec.values}"),
            release("{.spec.chart.spec.version}"),
        ),
        before,
        "a label rewrote the HelmRelease's spec"
    );
    assert_eq!(
        release("{.metadata.labels.apps\\.cozystack\\.io-team}"),
        "a"
    );
    kubectl_ok(
        plane,
        &[
            "patch",
            &pg,
            "-n",
            &apps,
            "db1",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":3}}"#,
        ],
    );
    assert_ne!(release("{.metadata.generation}"), before.0);
    assert_eq!(release("{.spec.chart.spec.version}"), "0.5.0");
    assert_eq!(release("{.spec.values.maintenanceWindow}"), "sun-02");

    // A kind added while serving reaches kubectl through kube-apiserver at
    // once: serve nudges its APIService so the aggregator re-reads
    // discovery instead of waiting for its one-minute poll.
    std::fs::write(
        kinds.dir.path().join("cache.yaml"),
        format!(
            "kind: Cache\ngroup: {}\nrelease: {{chartRef: {{kind: ExternalArtifact, name: cache}}}}\n",
            kinds.group
        ),
    )
    .expect("write a new kind");
    let added = Instant::now();
    serve
        .wait_line(
            "Kinds: reloaded (caches added), serving ",
            Duration::from_secs(20),
        )
        .await
        .unwrap_or_else(|| panic!("no reload: {}", serve.output()));
    let caches = format!("caches.{}", kinds.group);
    loop {
        let out = kubectl(plane, &["get", &caches, "-n", &apps, "-o", "name"]);
        if out.status.success() {
            break;
        }
        assert!(
            added.elapsed() < Duration::from_secs(30),
            "the new kind never reached discovery: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            serve.output()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!(
        "[serve] a new kind was usable through kube-apiserver {:.2}s after its file was written",
        added.elapsed().as_secs_f64()
    );

    // The kind renamed, its release prefix kept: its app is not served as
    // the new kind (its HelmRelease carries the old kind's label), and
    // serve says how to move it over; relabelled as it says, it is.
    let text = std::fs::read_to_string(&postgres).expect("read postgres.yaml");
    let renamed = text
        .replacen(
            "kind: Postgres\nsingular: postgres\nplural: postgreses\n",
            "kind: PostgreSQL\n",
            1,
        )
        .replacen("release:\n", "release:\n  prefix: postgres-\n", 1);
    assert_ne!(renamed, text);
    std::fs::write(&postgres, renamed).expect("rename the kind");
    let said = serve
        .wait_line(
            "is no longer defined, and the new kind PostgreSQL has its release prefix",
            Duration::from_secs(20),
        )
        .await
        .unwrap_or_else(|| panic!("the rename not said: {}", serve.output()));
    let relabel = said
        .split_once("relabel it: ")
        .map(|(_, command)| command.to_owned())
        .unwrap_or_else(|| panic!("{said}"));
    assert_eq!(
        relabel,
        format!(
            "kubectl label helmreleases.helm.toolkit.fluxcd.io -n {apps} postgres-db1 \
             apps.cozystack.io/application.kind=PostgreSQL --overwrite"
        ),
        "{said}"
    );
    let postgresqls = format!("postgresqls.{}", kinds.group);
    let served = |plane: &Plane| {
        let out = kubectl(plane, &["get", &postgresqls, "-n", &apps, "-o", "name"]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let renamed_at = Instant::now();
    while !kubectl(plane, &["get", &postgresqls, "-n", &apps])
        .status
        .success()
    {
        assert!(
            renamed_at.elapsed() < Duration::from_secs(30),
            "{}",
            serve.output()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        served(plane),
        "",
        "served as the new kind before its relabel"
    );
    let args: Vec<String> = relabel
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect();
    kubectl_ok(plane, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let relabelled = Instant::now();
    while served(plane) != format!("postgresql.{}/db1", kinds.group) {
        assert!(
            relabelled.elapsed() < Duration::from_secs(20),
            "not served after its relabel: {:?}\n{}",
            served(plane),
            serve.output()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pg = postgresqls;

    kubectl_ok(plane, &["delete", &pg, "db1", "-n", &apps]);
    let said = serve.output();
    let (guard, log) = (guard_pid(&said), guard_log(&said));
    assert!(log.exists(), "{said}");
    serve.stop_cleanly("-TERM", &client, &ready.id, END).await;
    namespace_gone(&client, &ns, END)
        .await
        .expect("namespace gone");
    // The guard saw the Lease gone and exited; a complete teardown removed
    // its log.
    guard_exits(guard).await;
    assert!(!log.exists(), "{}", log.display());
}

/// The external-name route has no agent: a SIGKILLed session stays until
/// something reaps it — its local guard, or without one (here
/// `--no-session-guard`; a guard gone with its machine) the next `serve`
/// of the group, which says so when it happens (before waiting for the
/// namespace the reap is deleting), and starts on the group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_serve_reaps_an_expired_session_and_says_so_before_its_waits() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("reaped"));
    let ns = session_namespace("reaped");
    let args = external_name_args(&ns, &["--lease-duration", "6s", "--no-session-guard"]);
    let mut first = ServeProcess::start(plane, &kinds, &args);
    let killed = first.ready(START).await.expect("first ready");
    first.signal("-KILL");
    first.exit(END).await.expect("first killed");
    // As a session of another machine records its process (this one's
    // would be judged gone at once: the next test).
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(client.clone(), &ns);
    leases
        .patch(
            &kubectl_cozy::register::session::lease_name(&killed.id),
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({"metadata": {"annotations": {
                kubectl_cozy::register::session::PROCESS_ANNOTATION:
                    "00000000-0000-0000-0000-000000000000 pid:[1] 1 1 0"}}})),
        )
        .await
        .expect("annotate the Lease");
    // Expired: its Lease was last renewed at most 6 s ago.
    tokio::time::sleep(Duration::from_secs(8)).await;
    assert!(
        !session_objects(&client, &killed.id).await.is_empty(),
        "nothing reaps a session of this route before the next serve"
    );

    let mut next = ServeProcess::start(plane, &kinds, &args);
    let ready = next.ready(START).await.expect("next ready");
    let out = next.output();
    let position = |text: &str| out.lines().position(|l| l.contains(text));
    let reaped = position(&format!("Reaped expired serve session {}", killed.id))
        .unwrap_or_else(|| panic!("no reap line:\n{out}"));
    if let Some(waited) = position("waiting for namespace") {
        assert!(reaped < waited, "the reap is said after its wait:\n{out}");
    }
    assert!(reaped < position("Ready in ").expect("ready"), "{out}");
    if let Err(left) = wait_session_gone(&client, &killed.id, END).await {
        panic!("the killed session's objects remain: {left:?}\n{out}");
    }
    next.stop_cleanly("-TERM", &client, &ready.id, END).await;
    namespace_gone(&client, &ns, END)
        .await
        .expect("namespace gone");
}

/// A session killed on this machine is reaped by the next `serve` of its
/// group at once, its Lease still valid: the Lease records where its
/// process ran, and this machine's `/proc` says it is gone. (Without the
/// check the next serve was refused, naming a process that was not there.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_serve_on_the_same_machine_reaps_a_killed_session_at_once() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("gone"));
    let ns = session_namespace("gone");
    let args = external_name_args(&ns, &["--lease-duration", "300s", "--no-session-guard"]);
    let mut first = ServeProcess::start(plane, &kinds, &args);
    let killed = first.ready(START).await.expect("first ready");
    let pid = first.child.id().expect("pid");
    first.signal("-KILL");
    first.exit(END).await.expect("first killed");

    let mut next = ServeProcess::start(plane, &kinds, &args);
    let ready = next.ready(START).await.expect("next ready");
    let out = next.output();
    assert!(
        out.contains(&format!(
            "Reaped serve session {}: its process (pid {pid}) on this machine is gone",
            killed.id
        )),
        "{out}"
    );
    assert!(!out.contains("still renews its Lease"), "{out}");
    if let Err(left) = wait_session_gone(&client, &killed.id, END).await {
        panic!("the killed session's objects remain: {left:?}\n{out}");
    }
    next.stop_cleanly("-TERM", &client, &ready.id, END).await;
    namespace_gone(&client, &ns, END)
        .await
        .expect("namespace gone");
}

/// Another machine's clock may run behind this one's: a Lease that looks
/// expired by a few seconds may still be renewed. A second serve of the
/// group watches it for its duration before reaping, and refuses when it
/// is renewed meanwhile; the first session lives on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_that_only_looks_expired_is_watched_before_a_reap() {
    use k8s_openapi::api::coordination::v1::Lease;
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("skewed"));
    let ns = session_namespace("skewed");
    // No guard: it would judge the frozen session by its own clock.
    let args = external_name_args(&ns, &["--lease-duration", "6s", "--no-session-guard"]);
    let mut first = ServeProcess::start(plane, &kinds, &args);
    let live = first.ready(START).await.expect("first ready");
    // Frozen a moment, its last renewal read as 7 s old: expired by a
    // second on this clock, as a clock 7 s ahead would see it.
    first.signal("-STOP");
    let leases: Api<Lease> = Api::namespaced(client.clone(), &ns);
    let lease = kubectl_cozy::register::session::lease_name(&live.id);
    let back = k8s_openapi::jiff::Timestamp::now() - Duration::from_secs(7);
    leases
        .patch(
            &lease,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({"spec": {"renewTime":
                back.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()}})),
        )
        .await
        .expect("back-date the Lease");
    let mut second = ServeProcess::start(plane, &kinds, &args);
    second
        .wait_line("still renews its Lease", Duration::from_secs(60))
        .await
        .unwrap_or_else(|| panic!("no watch of the Lease:\n{}", second.output()));
    first.signal("-CONT");
    let status = second.exit(START).await.expect("the second ends");
    assert!(!status.success(), "{}", second.output());
    let out = second.output();
    assert!(!out.contains("Reaped expired serve session"), "{out}");
    assert!(
        out.contains(&live.id),
        "the refusal names the session: {out}"
    );
    assert!(
        !session_objects(&client, &live.id).await.is_empty(),
        "the live session was reaped"
    );
    first.stop_cleanly("-TERM", &client, &live.id, END).await;
    namespace_gone(&client, &ns, END)
        .await
        .expect("namespace gone");
}

/// A cluster that accepts connections and never answers: Ctrl-C before
/// anything is registered ends serve at once, rather than after the
/// request's own timeouts (or never, for one that hangs).
#[tokio::test]
async fn ctrl_c_before_registration_ends_at_once_when_the_cluster_never_answers() {
    let mute = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = mute.local_addr().expect("addr").port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((tcp, _)) = mute.accept().await {
            open.push(tcp);
        }
    });
    let dir = tempfile::tempdir().expect("dir");
    let kubeconfig = crate::support::kubeconfig_for_port(dir.path(), port);
    let kinds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
    let child = tokio::process::Command::new(bins::kubectl_cozy())
        .args(["serve", "--route", "external-name", "--host", "localhost"])
        .arg("--kinds")
        .arg(&kinds)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start serve");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pid = child.id().expect("pid").to_string();
    let _ = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status();
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("serve ends within seconds of Ctrl-C")
        .expect("serve's output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Interrupted before anything was created"),
        "{stderr}"
    );
    held.abort();
}

/// A closed terminal tab or a lost SSH connection sends SIGHUP, and leaves
/// serve's stderr going nowhere (as an interrupted `serve … 2>&1 | tee log`
/// does): serve still stops cleanly and leaves nothing behind, instead of
/// dying at once (SIGHUP's default) or panicking on its first line
/// (`eprintln!` on a closed pipe).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_with_stderr_gone_still_stops_cleanly() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("hangup"));
    let ns = session_namespace("hangup");
    let mut serve = ServeProcess::start(plane, &kinds, &external_name_args(&ns, &[]));
    let ready = serve.ready(START).await.expect("ready");
    serve.close_stderr().await;
    serve.signal("-HUP");
    let status = serve.exit(END).await.expect("serve exits");
    assert_eq!(status.code(), Some(0), "{status}");
    if let Err(left) = wait_session_gone(&client, &ready.id, END).await {
        panic!("left behind after SIGHUP: {left:?}");
    }
    namespace_gone(&client, &ns, END)
        .await
        .expect("namespace gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_on_disconnect_cleans_up_and_exits_when_the_tunnel_drops() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let mut s = TunnelSession::start(
        &client,
        "exit-on-disconnect",
        &["--lease-duration", "6s", "--exit-on-disconnect"],
    )
    .await;
    let ready = s.ready().await;
    // The agent's process dies with its control listener: the port-forward
    // drops, and serve gives up instead of reconnecting.
    s.runtime.crash().await.expect("an agent process");
    let status = s.serve.exit(END).await.expect("serve exits by itself");
    assert_eq!(status.code(), Some(1), "{}", s.serve.output());
    assert!(
        s.serve.output().contains("--exit-on-disconnect is set"),
        "{}",
        s.serve.output()
    );
    s.expect_gone(&client, &ready.id).await;
    s.runtime.shutdown(&client).await;
}

/// Benchmarks (`benches/serve.sh`): start → Available and its split, get and
/// list latency through the tunnel vs the external-name route vs straight to
/// serve, and the reap time after SIGKILL. Ratios and differences within one
/// run; nothing asserted about time.
mod bench {
    use std::time::{Duration, Instant};

    use kube::api::{Api, PostParams};

    use super::*;

    fn percentile(sorted: &[f64], p: f64) -> f64 {
        if sorted.is_empty() {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
        sorted[rank.min(sorted.len() - 1)]
    }

    fn summary(mut ms: Vec<f64>) -> (f64, f64) {
        ms.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        (percentile(&ms, 50.0), percentile(&ms, 99.0))
    }

    /// The "Ready in" split: (total, certificates, objects, tunnel, available).
    fn split(line: &str) -> Vec<f64> {
        line.split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|t| t.contains('.') && t.len() > 1)
            .filter_map(|t| t.trim_end_matches('.').parse().ok())
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "benchmark: run with benches/serve.sh"]
    async fn bench_start_to_available_and_reap_after_sigkill() {
        let _serial = CLUSTER_LOCK.lock().await;
        let plane = plane();
        let client = plane.client().await;
        println!("## serve start → Available (tunnel route, default Lease 15s)");
        println!(
            "| run | total s | certificates | objects | tunnel connected | Available | SIGINT → exit s |"
        );
        println!("|---|---|---|---|---|---|---|");
        for run in 0..5 {
            let mut s = TunnelSession::start(&client, &format!("bench-start{run}"), &[]).await;
            let ready = s.ready().await;
            let t = split(&ready.line);
            let stop = Instant::now();
            s.serve.signal("-INT");
            s.serve.exit(END).await.expect("exit");
            println!(
                "| {run} | {} | {} | {} | {} | {} | {:.2} |",
                t.first().copied().unwrap_or(f64::NAN),
                t.get(1).copied().unwrap_or(f64::NAN),
                t.get(2).copied().unwrap_or(f64::NAN),
                t.get(3).copied().unwrap_or(f64::NAN),
                t.get(4).copied().unwrap_or(f64::NAN),
                stop.elapsed().as_secs_f64()
            );
            let _ = wait_session_gone(&client, &ready.id, END).await;
            s.runtime.shutdown(&client).await;
        }
        println!();
        println!(
            "## the agent's reap after SIGKILL (default Lease 15s, renewed every 5s; agent: poll 1s, grace 2s; `--no-session-guard`)"
        );
        println!("| run | SIGKILL → every labelled object gone, s | agent's reap line |");
        println!("|---|---|---|");
        for run in 0..3 {
            let mut s = TunnelSession::start(
                &client,
                &format!("bench-reap{run}"),
                &["--no-session-guard"],
            )
            .await;
            let ready = s.ready().await;
            // Renewals come every 5 s: kill at a random point of the period.
            tokio::time::sleep(Duration::from_millis(1700 * run as u64)).await;
            let killed = Instant::now();
            s.serve.signal("-KILL");
            let _ = s.serve.exit(END).await;
            let gone = wait_session_gone(&client, &ready.id, END).await;
            let line = s
                .runtime
                .wait_line("tunnel-agent reaped", Duration::from_secs(5))
                .await
                .unwrap_or_default();
            println!(
                "| {run} | {} | {} |",
                match gone {
                    Ok(_) => format!("{:.1}", killed.elapsed().as_secs_f64()),
                    Err(left) => format!("not reaped: {left:?}"),
                },
                line
            );
            s.runtime.shutdown(&client).await;
        }
    }

    /// Timed GETs of `path` with `client`.
    async fn gets(client: &kube::Client, path: &str, n: usize) -> Vec<f64> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let request = http::Request::get(path).body(Vec::new()).expect("request");
            let t = Instant::now();
            client.request_text(request).await.expect("GET");
            out.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        out
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "benchmark: run with benches/serve.sh"]
    async fn bench_get_and_list_through_tunnel_external_name_and_direct() {
        let _serial = CLUSTER_LOCK.lock().await;
        let plane = plane();
        let client = plane.client().await;
        let mut tunnel = TunnelSession::start(&client, "bench-path", &["-q"]).await;
        let ready = tunnel.ready().await;
        let group = tunnel.kinds.group.clone();
        let port: u16 = tunnel
            .serve
            .wait_line("Serving ", Duration::from_secs(5))
            .await
            .and_then(|l| {
                l.split("https://127.0.0.1:")
                    .nth(1)
                    .and_then(|r| r.split_whitespace().next().map(str::to_owned))
            })
            .and_then(|p| p.parse().ok())
            .expect("serve's port");
        // Straight to serve: the admin's client certificate, serve's port.
        let mut config = kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(&plane.kubeconfig).expect("kubeconfig"),
            &Default::default(),
        )
        .await
        .expect("config");
        config.cluster_url = format!("https://127.0.0.1:{port}").parse().expect("url");
        config.accept_invalid_certs = true;
        config.root_cert = None;
        let direct = kube::Client::try_from(config).expect("direct client");

        // 5,000 apps in one namespace, created through serve (16 at a time).
        let apps = plane.namespace("serve-bench").await;
        let resource = kube::api::ApiResource {
            group: group.clone(),
            version: "v1alpha1".into(),
            api_version: format!("{group}/v1alpha1"),
            kind: "Postgres".into(),
            plural: "postgreses".into(),
        };
        let api: Api<kube::api::DynamicObject> =
            Api::namespaced_with(direct.clone(), &apps, &resource);
        let created = Instant::now();
        let names: Vec<String> = (0..5000).map(|i| format!("db{i:05}")).collect();
        for chunk in names.chunks(16) {
            let mut set = tokio::task::JoinSet::new();
            for name in chunk {
                let api = api.clone();
                let object: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
                    "apiVersion": format!("{group}/v1alpha1"), "kind": "Postgres",
                    "metadata": {"name": name}, "spec": {}
                }))
                .expect("object");
                set.spawn(async move { api.create(&PostParams::default(), &object).await });
            }
            while let Some(r) = set.join_next().await {
                r.expect("join").expect("create");
            }
        }
        eprintln!(
            "[bench] 5,000 apps created in {:.1}s",
            created.elapsed().as_secs_f64()
        );
        let get = format!(
            "/apis/{group}/v1alpha1/namespaces/{apps}/postgreses/db02500?resourceVersion=0"
        );
        let list = format!("/apis/{group}/v1alpha1/namespaces/{apps}/postgreses?resourceVersion=0");

        let measure = |via: &'static str, c: kube::Client| {
            let get = get.clone();
            let list = list.clone();
            async move {
                let _ = gets(&c, &get, 50).await; // warm
                let mut g = Vec::new();
                let mut l = Vec::new();
                for _ in 0..5 {
                    g.extend(gets(&c, &get, 100).await);
                    l.extend(gets(&c, &list, 1).await);
                }
                (via, summary(g), summary(l))
            }
        };
        // Interleaved: direct and tunnel in the same rounds.
        let mut rows = Vec::new();
        for _ in 0..2 {
            rows.push(measure("direct (straight to serve)", direct.clone()).await);
            rows.push(
                measure(
                    "tunnel (kube-apiserver → agent → port-forward)",
                    client.clone(),
                )
                .await,
            );
        }
        // The external-name route: a second session takes the group over.
        let ns = session_namespace("bench-path-ext");
        let mut external = ServeProcess::start(
            plane,
            &tunnel.kinds,
            &[
                "--route",
                "external-name",
                "--host",
                "localhost",
                "--listen",
                "127.0.0.1:0",
                "--session-namespace",
                &ns,
                "--takeover",
                "-q",
                "--timeout",
                "150s",
            ],
        );
        let ext_ready = external.ready(START).await.expect("external-name ready");
        for _ in 0..2 {
            rows.push(measure("external-name (kube-apiserver → serve)", client.clone()).await);
            rows.push(measure("direct (straight to serve)", direct.clone()).await);
        }
        external.signal("-INT");
        external.exit(END).await.expect("exit");
        let _ = wait_session_gone(&client, &ext_ready.id, END).await;
        for _ in 0..2 {
            rows.push(
                measure(
                    "tunnel (kube-apiserver → agent → port-forward)",
                    client.clone(),
                )
                .await,
            );
        }
        println!("## get and list latency by path (same server, 5,000 apps, resourceVersion=0)");
        println!("| path | get p50 ms | get p99 ms | list 5,000 p50 ms |");
        println!("|---|---|---|---|");
        for (via, (g50, g99), (l50, _)) in &rows {
            println!("| {via} | {g50:.2} | {g99:.2} | {l50:.0} |");
        }
        let p50 = |name: &str| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.0.starts_with(name))
                .map(|r| r.1.0)
                .collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        println!(
            "tunnel − external-name, get p50: {:+.2} ms (target ≤ 2 ms); external-name − direct: {:+.2} ms (the aggregator hop)",
            p50("tunnel") - p50("external-name"),
            p50("external-name") - p50("direct")
        );
        tunnel.serve.signal("-INT");
        tunnel.serve.exit(END).await.expect("exit");
        let _ = wait_session_gone(&client, &ready.id, END).await;
        tunnel.runtime.shutdown(&client).await;
    }
}

/// `kubectl-cozy serve --kubeconfig <kubeconfig> --kinds <kinds> <args>`,
/// run to its end (each start here is refused).
fn refused_serve(kubeconfig: &std::path::Path, kinds: &KindsDir, args: &[&str]) -> (i32, String) {
    let state = tempfile::tempdir().expect("state dir");
    let out = std::process::Command::new(bins::kubectl_cozy())
        .arg("serve")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--kinds")
        .arg(kinds.dir.path())
        .arg("--state-dir")
        .arg(state.path())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run serve");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A start refused before it created anything says nothing of a clean-up
/// (there is none), and every refusal of a user without rights says which
/// rights serve needs — the first one met (delegated authentication's
/// ConfigMap) as well as registration's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_refused_before_creating_anything_says_nothing_of_a_cleanup() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("refused"));
    let ns = session_namespace("refused");
    let user = format!("serve-limited-{}", std::process::id());
    let kubeconfig = plane.user_kubeconfig(&user, &[]);
    let route = [
        "--route",
        "external-name",
        "--host",
        "127.0.0.1",
        "--session-namespace",
        &ns,
    ];
    let no_cleanup = |text: &str| {
        assert!(
            !text.contains("Could not remove") && !text.contains("Removed session"),
            "a clean-up is reported though nothing was created:\n{text}"
        );
    };

    // The admin, with a session namespace that is no name: refused at its
    // creation, nothing to remove.
    let (code, text) = refused_serve(
        &plane.kubeconfig,
        &kinds,
        &[
            "--route",
            "external-name",
            "--host",
            "127.0.0.1",
            "--session-namespace",
            "Not_A_Name",
        ],
    );
    eprintln!("[serve] bad session namespace:\n{text}");
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("Not_A_Name"), "{text}");
    no_cleanup(&text);

    // No rights at all: the authentication configuration is refused first.
    let (code, text) = refused_serve(&kubeconfig, &kinds, &route);
    eprintln!("[serve] no rights:\n{text}");
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("extension-apiserver-authentication")
            && text.contains(
                "hint: serve creates cluster-wide objects (APIServices, ClusterRoles) and needs cluster-admin-like rights"
            ),
        "{text}"
    );
    no_cleanup(&text);

    // Enough to read that and everything else, not to register.
    let binding = format!("{user}-view");
    kubectl_ok(
        plane,
        &[
            "create",
            "clusterrolebinding",
            &binding,
            "--clusterrole=view",
            &format!("--user={user}"),
        ],
    );
    kubectl_ok(
        plane,
        &[
            "create",
            "rolebinding",
            &binding,
            "-n",
            "kube-system",
            "--role=extension-apiserver-authentication-reader",
            &format!("--user={user}"),
        ],
    );
    let (code, text) = refused_serve(&kubeconfig, &kinds, &route);
    kubectl(
        plane,
        &[
            "delete",
            "clusterrolebinding",
            &binding,
            "--ignore-not-found",
        ],
    );
    kubectl(
        plane,
        &[
            "delete",
            "rolebinding",
            "-n",
            "kube-system",
            &binding,
            "--ignore-not-found",
        ],
    );
    eprintln!("[serve] view rights:\n{text}");
    assert_eq!(code, 1, "{text}");
    // `view` has no HelmReleases: refused at the list made before anything
    // is registered.
    assert!(
        text.contains("list HelmReleases") && text.contains("needs cluster-admin-like rights"),
        "{text}"
    );
    no_cleanup(&text);

    assert!(
        Api::<APIService>::all(client.clone())
            .get_opt(&format!("v1alpha1.{}", kinds.group))
            .await
            .expect("get APIService")
            .is_none()
    );
}

/// `--timeout 0` is no limit (as `--request-timeout 0`): the session starts
/// and serves. Without a terminal (serve's stderr is a pipe here) each wait
/// is said once as a line, where a terminal shows a spinner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_0_waits_until_available_and_says_each_wait_once_without_a_terminal() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("timeout-0"));
    let ns = session_namespace("timeout-0");
    let mut serve = ServeProcess::start(
        plane,
        &kinds,
        &[
            "--route",
            "external-name",
            "--host",
            "localhost",
            "--listen",
            "127.0.0.1:0",
            "--session-namespace",
            &ns,
            "--timeout",
            "0",
            "-q",
        ],
    );
    let ready = serve.ready(START).await.expect("ready with --timeout 0");
    let output = serve.output();
    eprintln!("[serve] --timeout 0, stderr not a terminal:\n{output}");
    let waits: Vec<&str> = output
        .lines()
        .filter(|l| l.contains("waiting for"))
        .collect();
    assert!(
        waits.contains(&"waiting for the APIServices to become Available"),
        "{output}"
    );
    let distinct: std::collections::BTreeSet<&&str> = waits.iter().collect();
    assert_eq!(distinct.len(), waits.len(), "a wait said twice:\n{output}");
    serve.stop_cleanly("-INT", &client, &ready.id, END).await;
}
