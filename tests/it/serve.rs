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

fn kubectl_stdin(plane: &Plane, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut child = plane
        .kubectl()
        .arg("--request-timeout=30s")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("kubectl");
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
        log.contains(&format!("GET /apis/{}/v1alpha1", s.kinds.group)),
        "no access log:\n{log}"
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
    match wait_session_gone(&client, &ready.id, END).await {
        Ok(d) => eprintln!(
            "[serve] labelled objects gone {:.2}s after exit",
            d.as_secs_f64()
        ),
        Err(left) => panic!("left behind: {left:?}\n{}", s.serve.output()),
    }
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
