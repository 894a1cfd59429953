//! `kubectl cozy install` against the test plane: the whole output accepted
//! by kube-apiserver's server-side dry run (real kubectl), an existing
//! namespace left as it is, cert-manager's absence named, a terminating
//! namespace counted as gone by `--delete`, then a real
//! install — applied by the command itself (diff, server-side apply, a
//! second run changes nothing) — whose Deployment lands two pods on the
//! kwok node, whose Service gets their endpoints, and whose APIServices
//! become Available with the two replicas running as local processes
//! (`support::install`: the pods' own args, mounts and ServiceAccount
//! tokens). Requests go through kube-apiserver, measured; the serving
//! replica is stopped (SIGTERM, a rolling update's step), restarted, then
//! the other killed (SIGKILL), and requests still succeed.
//!
//! The seam (`docs/install.md`): kwok pod IPs are not dialable, so once the
//! Service's endpoints are checked the test turns the Service into an
//! ExternalName to `localhost` and points the APIServices' port at a local
//! round-robin balancer over the two replicas. Timeouts are hang guards;
//! durations are printed, never asserted.

use std::process::Output;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};

use crate::support::install::{self as replicas, Balancer, Replica};
use crate::support::plane::{Plane, plane};
use crate::support::serve::{group, kinds_dir};
use crate::support::{CLUSTER_LOCK, bins, tools};

/// Hang guard of each wait.
const WAIT: Duration = Duration::from_secs(150);

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `kubectl-cozy install <args>` as the plane's admin.
fn install(plane: &Plane, args: &[&str]) -> Output {
    std::process::Command::new(bins::kubectl_cozy())
        .arg("install")
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run kubectl-cozy install")
}

/// `kubectl <args>` as the plane's admin, which must succeed; its stdout.
fn kubectl_ok(plane: &Plane, args: &[&str]) -> String {
    let out = plane.kubectl().args(args).output().expect("kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn ok(out: Output, what: &str) -> (String, String) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        text(&out.stderr),
        text(&out.stdout)
    );
    (text(&out.stdout), text(&out.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_install_passes_kube_apiservers_server_side_dry_run() {
    let plane = plane();
    let kinds = kinds_dir(&group("install-dry"));
    // A server dry run cannot create the namespace the other objects go to.
    let ns = plane.namespace("install-dry").await;
    let kinds_path = kinds.dir.path().display().to_string();
    let (yaml, stderr) = ok(
        install(plane, &["--kinds", &kinds_path, "-n", &ns]),
        "install",
    );
    // The namespace exists and is not the install's: it is left out.
    assert!(!yaml.contains("kind: Namespace"), "{yaml}");
    assert!(
        stderr.contains(&format!("namespace {ns} exists and is not the install's")),
        "{stderr}"
    );
    for kind in [
        "kind: ServiceAccount",
        "kind: ClusterRoleBinding",
        "kind: ConfigMap",
        "kind: Secret",
        "kind: Service",
        "kind: Deployment",
        "kind: PodDisruptionBudget",
        "kind: APIService",
    ] {
        assert!(yaml.contains(kind), "no {kind} in:\n{yaml}");
    }
    let out = plane.kubectl_stdin(&["apply", "--dry-run=server", "-f", "-"], &yaml);
    assert!(
        out.status.success(),
        "kubectl apply --dry-run=server refused the install:\n{}\n{}",
        text(&out.stderr),
        text(&out.stdout)
    );
    let applied = text(&out.stdout);
    assert_eq!(
        applied.lines().count(),
        yaml.matches("\n---\n").count() + 1,
        "{applied}"
    );
    assert!(
        applied.contains("deployment.apps/kubectl-cozy created (server dry run)"),
        "{applied}"
    );

    // -o json: a List kubectl takes as well.
    let (json, _) = ok(
        install(
            plane,
            &[
                "--kinds",
                &kinds_path,
                "-n",
                &ns,
                "-o",
                "json",
                "--dry-run=client",
            ],
        ),
        "install -o json",
    );
    // As the docs say to apply it: server-side (a client-side apply would
    // copy the Secrets' keys into the last-applied annotation).
    let out = plane.kubectl_stdin(
        &["apply", "--server-side", "--dry-run=server", "-f", "-"],
        &yaml,
    );
    assert!(
        out.status.success(),
        "kubectl apply --server-side --dry-run=server refused the install:\n{}",
        text(&out.stderr)
    );
    let list: serde_json::Value = serde_json::from_str(&json).expect("a JSON List");
    assert_eq!(list["kind"], "List");
    let out = plane.kubectl_stdin(&["apply", "--dry-run=server", "-f", "-"], &json);
    assert!(out.status.success(), "{}", text(&out.stderr));

    // The command's own server dry run: the diff, nothing stored.
    let (diff, stderr) = ok(
        install(
            plane,
            &[
                "--kinds",
                &kinds_path,
                "-n",
                &ns,
                "--apply",
                "--dry-run=server",
            ],
        ),
        "install --apply --dry-run=server",
    );
    assert!(diff.contains("+kind: Deployment"), "{diff}");
    assert!(stderr.contains("nothing was stored"), "{stderr}");
    // Printing with the server's check, into a namespace that does not exist:
    // the cluster-wide objects are checked, the namespaced ones said to wait.
    let missing = format!("install-missing-{}", std::process::id());
    let (printed, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &missing, "--dry-run=server"],
        ),
        "install --dry-run=server",
    );
    assert!(printed.contains("kind: Deployment"), "{printed}");
    assert!(
        stderr.contains(&format!(
            "not checked: namespace {missing} does not exist yet"
        )),
        "{stderr}"
    );
    let namespaces: Api<Namespace> = Api::all(plane.client().await);
    assert!(namespaces.get_opt(&missing).await.unwrap().is_none());
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(plane.client().await, &ns);
    assert!(deployments.get_opt("kubectl-cozy").await.unwrap().is_none());
}

/// Polls `check` every 250 ms until it returns `Some`, or panics with
/// `what` after [`WAIT`].
async fn wait<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, String>>,
{
    let deadline = Instant::now() + WAIT;
    let mut last = String::new();
    loop {
        match check().await {
            Ok(Some(t)) => return t,
            Ok(None) => {}
            Err(e) => last = e,
        }
        assert!(Instant::now() < deadline, "{what} within {WAIT:?} ({last})");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn available(a: &APIService) -> bool {
    a.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "Available" && c.status == "True")
        })
}

/// Removes what the install made: APIServices first (an unavailable one
/// stalls namespace deletion), then the namespace and the cluster-wide RBAC.
async fn uninstall(client: &kube::Client, ns: &str, api_services: &[String]) {
    let apis: Api<APIService> = Api::all(client.clone());
    for name in api_services {
        let _ = apis.delete(name, &DeleteParams::default()).await;
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let _ = namespaces.delete(ns, &DeleteParams::default()).await;
    let prefix = format!("kubectl-cozy-{ns}:");
    let selector = ListParams::default().labels("app.kubernetes.io/managed-by=kubectl-cozy");
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    for name in roles
        .list_metadata(&selector)
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .filter(|n| n.starts_with(&prefix))
    {
        let _ = roles.delete(&name, &DeleteParams::default()).await;
    }
    for name in bindings
        .list_metadata(&selector)
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .filter(|n| n.starts_with(&prefix))
    {
        let _ = bindings.delete(&name, &DeleteParams::default()).await;
    }
    // Gone before the lock is released: other tests need nothing Terminating.
    let deadline = Instant::now() + WAIT;
    while namespaces.get_opt(ns).await.ok().flatten().is_some() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// `n` list requests through kube-apiserver, `parallel` at a time; returns
/// (failures, latencies).
async fn bench(
    api: &Api<DynamicObject>,
    n: usize,
    parallel: usize,
) -> (Vec<String>, Vec<Duration>) {
    let mut failures = Vec::new();
    let mut latencies = Vec::with_capacity(n);
    for _ in 0..n / parallel {
        let batch = (0..parallel).map(|_| async {
            let t = Instant::now();
            let r = api.list(&ListParams::default()).await;
            (t.elapsed(), r.map(|l| l.items.len()))
        });
        for (latency, result) in futures::future::join_all(batch).await {
            latencies.push(latency);
            match result {
                Ok(1) => {}
                Ok(count) => failures.push(format!("listed {count} objects, not 1")),
                Err(e) => failures.push(e.to_string()),
            }
        }
    }
    (failures, latencies)
}

/// Lists in a loop for `length`: (successes, failures with when they were
/// sent).
async fn requests_for(
    api: &Api<DynamicObject>,
    length: Duration,
) -> (usize, Vec<(Duration, String)>) {
    let began = Instant::now();
    let mut succeeded = 0;
    let mut failures = Vec::new();
    while began.elapsed() < length {
        let sent = began.elapsed();
        match api.list(&ListParams::default()).await {
            Ok(l) if l.items.len() == 1 => succeeded += 1,
            Ok(l) => failures.push((sent, format!("listed {}", l.items.len()))),
            Err(e) => failures.push((sent, e.to_string())),
        }
    }
    (succeeded, failures)
}

fn figures(label: &str, latencies: &mut [Duration], wall: Duration) -> String {
    latencies.sort();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)))
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or_default()
    };
    format!(
        "{label}: {} requests in {:.2}s = {:.0} req/s; p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms",
        latencies.len(),
        wall.as_secs_f64(),
        latencies.len() as f64 / wall.as_secs_f64(),
        at(0.5),
        at(0.9),
        at(0.99)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_behind_the_service_serve_through_the_aggregator() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let _ = plane.node();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("install"));
    let ns = format!("install-{}", std::process::id());
    let kinds_path = kinds.dir.path().display().to_string();
    let api_services = vec![format!("v1alpha1.{}", kinds.group)];
    let started = Instant::now();
    let result = tokio::spawn(run(kinds_path, kinds.group.clone(), ns.clone())).await;
    uninstall(&client, &ns, &api_services).await;
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
    eprintln!(
        "[install] whole test {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

async fn run(kinds_path: String, group: String, ns: String) {
    let plane = plane();
    let client = plane.client().await;

    // Apply with the command itself: a diff, then the server-side apply.
    let t = Instant::now();
    let (diff, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &ns, "--apply", "--yes"],
        ),
        "install --apply",
    );
    assert!(diff.contains("+kind: Deployment"), "{diff}");
    // Secret values are masked: no private key ("-----BEGIN PRIVATE", base64).
    assert!(diff.contains("(hidden, sha256"), "{diff}");
    assert!(
        !diff.contains("LS0tLS1CRUdJTiBQUklWQVRF"),
        "a private key in the diff:\n{diff}"
    );
    // The apply says what it did in the preview's counts.
    let preview = stderr
        .lines()
        .find(|l| l.contains(" to create, "))
        .unwrap_or_else(|| panic!("no preview counts:\n{stderr}"));
    let preview = &preview[..preview.find(" unchanged").expect("unchanged") + " unchanged".len()];
    let applied =
        preview
            .replacen(" to create,", " created,", 1)
            .replacen(" to change,", " changed,", 1);
    assert!(
        !preview.starts_with("0 ") && stderr.contains(&format!("Applied: {applied}.")),
        "{stderr}"
    );
    eprintln!("[install] applied in {:.2}s", t.elapsed().as_secs_f64());
    // Again: the certificates are reused, nothing changes.
    let (diff, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &ns, "--apply", "--yes"],
        ),
        "install --apply (again)",
    );
    assert!(stderr.contains("Nothing to apply"), "{stderr}\n{diff}");

    // The Deployment's two pods run on the kwok node; the Service has them.
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let selector = "app.kubernetes.io/name=kubectl-cozy,app.kubernetes.io/component=server";
    let t = Instant::now();
    let running: Vec<Pod> = wait("two server pods Running", || async {
        let list = pods
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| e.to_string())?;
        let running: Vec<Pod> = list
            .items
            .into_iter()
            .filter(|p| {
                p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                    && p.status.as_ref().and_then(|s| s.pod_ip.as_ref()).is_some()
            })
            .collect();
        Ok((running.len() == 2).then_some(running))
    })
    .await;
    let node = running[0]
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default();
    assert_eq!(node, plane.node().name);
    eprintln!(
        "[install] 2 pods Running in {:.2}s",
        t.elapsed().as_secs_f64()
    );
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), &ns);
    let endpoints: Vec<String> = wait("the Service's endpoints", || async {
        let list = slices
            .list(&ListParams::default().labels("kubernetes.io/service-name=kubectl-cozy"))
            .await
            .map_err(|e| e.to_string())?;
        let addresses: Vec<String> = list
            .items
            .iter()
            .flat_map(|s| s.endpoints.iter().flatten())
            .filter(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
            .flat_map(|e| e.addresses.iter().cloned())
            .collect();
        Ok((addresses.len() == 2).then_some(addresses))
    })
    .await;
    eprintln!("[install] Service endpoints: {endpoints:?}");

    // The pods' servers, as local processes.
    let dir = tempfile::tempdir().expect("replica dir");
    let mut servers: Vec<Replica> = Vec::new();
    for pod in &running {
        servers.push(
            replicas::start(plane, &client, pod, dir.path(), None)
                .await
                .expect("start a replica"),
        );
    }
    let t = Instant::now();
    for server in &mut servers {
        server
            .wait_line("Ready: serving", WAIT)
            .await
            .expect("replica ready");
        // /readyz says why it is ready: the watch cache has synced.
        let out = plane
            .kubectl()
            .args([
                "--server",
                &format!("https://{}", server.addr),
                "--insecure-skip-tls-verify",
                "get",
                "--raw",
                "/readyz?verbose",
            ])
            .output()
            .expect("kubectl get --raw /readyz");
        let body = text(&out.stdout);
        assert!(
            body.contains("[+]watch-cache-sync ok"),
            "{body}{}",
            text(&out.stderr)
        );
    }
    eprintln!(
        "[install] both replicas ready (cache synced) in {:.2}s",
        t.elapsed().as_secs_f64()
    );
    scraped_as_the_service_monitor_says(plane, &kinds_path, &ns, &servers).await;

    // The seam: the Service's data path is a local balancer.
    let balancer = Balancer::start(servers.iter().map(|s| s.addr).collect()).await;
    let services: Api<Service> = Api::namespaced(client.clone(), &ns);
    services
        .patch(
            "kubectl-cozy",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {
                "type": "ExternalName", "externalName": "localhost",
                "clusterIP": null, "clusterIPs": null, "selector": null,
                "ipFamilies": null, "ipFamilyPolicy": null, "internalTrafficPolicy": null,
                "sessionAffinity": null,
            }})),
        )
        .await
        .expect("make the Service an ExternalName");
    let apis: Api<APIService> = Api::all(client.clone());
    let name = format!("v1alpha1.{group}");
    apis.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"service": {"port": balancer.port}}})),
    )
    .await
    .expect("point the APIService at the balancer");
    let t = Instant::now();
    wait("the APIService Available", || async {
        let a = apis.get(&name).await.map_err(|e| e.to_string())?;
        Ok(available(&a).then_some(()))
    })
    .await;
    eprintln!(
        "[install] APIService Available in {:.2}s",
        t.elapsed().as_secs_f64()
    );

    // Through kube-apiserver: create, then measure two replicas.
    let apps = plane.namespace("install-apps").await;
    let manifest = format!(
        "apiVersion: {group}/v1alpha1\nkind: Postgres\nmetadata: {{name: db1, namespace: {apps}}}\nspec: {{replicas: 3}}\n"
    );
    let out = plane.kubectl_stdin(&["apply", "-f", "-"], &manifest);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let resource = ApiResource {
        group: group.clone(),
        version: "v1alpha1".into(),
        api_version: format!("{group}/v1alpha1"),
        kind: "Postgres".into(),
        plural: "postgreses".into(),
    };
    let postgreses: Api<DynamicObject> = Api::namespaced_with(client.clone(), &apps, &resource);
    let path = format!("/apis/{group}/v1alpha1/namespaces/{apps}/postgreses");
    for (n, parallel) in [(200, 1), (400, 8)] {
        let before: Vec<usize> = servers.iter().map(|s| s.count(&path)).collect();
        let t = Instant::now();
        let (failures, mut latencies) = bench(&postgreses, n, parallel).await;
        let wall = t.elapsed();
        assert!(failures.is_empty(), "{failures:?}");
        // A replica logs a request before it answers, but the test reads that
        // log through a pipe and a reader task: the last lines may reach
        // `count` just after the client has its answers (CI once saw 399 of
        // 400), so give them a moment to arrive.
        let served_now = || -> Vec<usize> {
            servers
                .iter()
                .zip(&before)
                .map(|(s, b)| s.count(&path) - b)
                .collect()
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while served_now().iter().sum::<usize>() < n && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let served = served_now();
        eprintln!(
            "[install] {}; served per replica {served:?}",
            figures(
                &format!("two replicas, {parallel} at a time"),
                &mut latencies,
                wall
            )
        );
        assert_eq!(
            served.iter().sum::<usize>(),
            n,
            "every request reached a replica"
        );
    }

    // A rolling update's step: the busiest replica gets SIGTERM (its
    // /readyz fails, connections get GOAWAY, requests in flight finish);
    // no request may fail. kube-apiserver keeps one HTTP/2 connection per
    // backend address, so one replica may have served everything.
    let busiest =
        |servers: &[Replica]| usize::from(servers[1].count(&path) > servers[0].count(&path));
    let first = busiest(&servers);
    let (succeeded, failures) = {
        let loop_ = requests_for(&postgreses, Duration::from_secs(4));
        let stop = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            servers[first].terminate(Duration::from_secs(20)).await
        };
        let (result, stopped) = tokio::join!(loop_, stop);
        let status = stopped.expect("the replica drains and exits");
        assert!(status.success(), "{status}\n{}", servers[first].output());
        result
    };
    eprintln!(
        "[install] SIGTERM of the busiest replica mid-loop: {succeeded} requests succeeded in 4s, {} failed: {failures:?}",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "a graceful stop failed requests: {failures:?}"
    );
    assert!(
        servers[first]
            .output()
            .contains("Shutting down: /readyz fails"),
        "{}",
        servers[first].output()
    );
    // The kubelet restarts it, on its port.
    let port = servers[first].addr.port();
    servers[first] = replicas::start(plane, &client, &running[first], dir.path(), Some(port))
        .await
        .expect("restart the replica");
    servers[first]
        .wait_line("Ready: serving", WAIT)
        .await
        .expect("restarted replica ready");

    // A crash: the replica now serving gets SIGKILL mid-loop; requests keep
    // succeeding through the other.
    let second = 1 - first;
    let before = servers[first].count(&path);
    let ((succeeded, failures), ()) =
        tokio::join!(requests_for(&postgreses, Duration::from_secs(6)), async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            servers[second].kill().await;
        });
    eprintln!(
        "[install] SIGKILL of the serving replica mid-loop: {succeeded} requests succeeded in 6s, {} failed: {failures:?}",
        failures.len()
    );
    // A request in flight on the killed replica's connection may fail (as
    // with a real Service); every one sent a second after the kill must not.
    let late: Vec<&(Duration, String)> = failures
        .iter()
        .filter(|(sent, _)| *sent > Duration::from_millis(1500))
        .collect();
    assert!(
        late.is_empty(),
        "requests failed after the first second: {late:?}"
    );
    assert!(succeeded >= 10, "only {succeeded} requests succeeded");
    assert!(
        servers[first].count(&path) > before,
        "the other replica served after the kill"
    );
    let a = apis.get(&name).await.expect("APIService");
    assert!(available(&a), "{:?}", a.status);

    // A second install of the same kinds in another namespace: the
    // APIService's name is the same, and it is this install's. Applying
    // refuses (and creates nothing), naming the install that holds it;
    // printing warns; deleting keeps it.
    let other = format!("{ns}-b");
    let refused = install(
        plane,
        &["--kinds", &kinds_path, "-n", &other, "--apply", "--yes"],
    );
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    let holder = format!(
        "APIService {name} points at service {ns}/kubectl-cozy (the install of kubectl-cozy in namespace {ns})"
    );
    assert!(stderr.contains(&holder), "{stderr}");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    assert!(
        namespaces.get_opt(&other).await.expect("get").is_none(),
        "a refused install created its namespace: {stderr}"
    );
    let (_, stderr) = ok(
        install(plane, &["--kinds", &kinds_path, "-n", &other]),
        "install (print) into another namespace",
    );
    assert!(
        stderr.contains("Warning: ")
            && stderr.contains(&holder)
            && stderr.contains("applying this output would repoint it")
            && stderr.contains("Note: the output holds private keys (Secrets kubectl-cozy-ca and"),
        "{stderr}"
    );
    let (_, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &other, "--delete", "--yes"],
        ),
        "install --delete of the other namespace",
    );
    assert!(
        stderr.contains(&format!(
            "keep   APIService {name}: it points at service {ns}/kubectl-cozy, not at this install's ({other}/kubectl-cozy)"
        )) && stderr.contains("Nothing to delete"),
        "{stderr}"
    );
    let a = apis.get(&name).await.expect("APIService kept");
    assert_eq!(
        a.spec
            .and_then(|s| s.service)
            .and_then(|s| s.namespace)
            .as_deref(),
        Some(ns.as_str())
    );

    // Removed with the command: it asks (here: refuses without --yes, stdin
    // not being a terminal), deletes the APIServices first and everything
    // labelled as the install's, and keeps a namespace that is not its
    // default one (it may hold more), naming it.
    let out = install(plane, &["--kinds", &kinds_path, "-n", &ns, "--delete"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("pass --yes"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        apis.get_opt(&name).await.expect("get").is_some(),
        "deleted without --yes"
    );
    let (_, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &ns, "--delete", "--yes"],
        ),
        "install --delete",
    );
    let deleted: Vec<&str> = stderr.lines().filter(|l| l.ends_with(" deleted")).collect();
    assert!(
        deleted
            .first()
            .is_some_and(|l| l.starts_with("APIService ")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "keep   Namespace {ns}: it may hold more than the install"
        )),
        "{stderr}"
    );
    assert!(
        apis.get_opt(&name).await.expect("get").is_none(),
        "{stderr}"
    );
    let labelled = ListParams::default().labels("app.kubernetes.io/managed-by=kubectl-cozy");
    let services: Api<Service> = Api::namespaced(client.clone(), &ns);
    assert!(
        services
            .list(&labelled)
            .await
            .expect("list")
            .items
            .is_empty(),
        "{stderr}"
    );
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let prefix = format!("kubectl-cozy-{ns}:");
    let left: Vec<String> = roles
        .list_metadata(&labelled)
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|r| r.metadata.name)
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "{left:?}\n{stderr}");
    // Again: there is nothing left to delete.
    let (_, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &ns, "--delete", "--yes"],
        ),
        "install --delete (again)",
    );
    assert!(stderr.contains("Nothing to delete"), "{stderr}");
}

/// The labels of namespace `ns` as the cluster holds them.
async fn namespace_labels(client: &kube::Client, ns: &str) -> Vec<String> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let held = namespaces.get(ns).await.expect("get the namespace");
    held.metadata
        .labels
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

/// An install into a namespace that exists and is not the install's (here
/// one made by the test, as `default` or `kube-system` would be) leaves it
/// as it is: it is printed, diffed and applied without its Namespace
/// object, so no Pod Security or managed-by label lands on it, and
/// `--delete` keeps it without suggesting to delete it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_namespace_that_is_not_the_installs_is_left_as_it_is() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("install-existing"));
    let ns = plane.namespace("install-existing").await;
    let kinds_path = kinds.dir.path().display().to_string();
    let api_services = vec![format!("v1alpha1.{}", kinds.group)];
    let result = tokio::spawn(existing_namespace(kinds_path, ns.clone())).await;
    uninstall(&client, &ns, &api_services).await;
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
}

async fn existing_namespace(kinds_path: String, ns: String) {
    let plane = plane();
    let client = plane.client().await;
    // `--apply` waits for a server pod before registering the APIServices:
    // the node runs them.
    plane.node();
    let before = namespace_labels(&client, &ns).await;
    let note = format!("namespace {ns} exists and is not the install's");

    // Printing: no Namespace object, and the note.
    let (yaml, stderr) = ok(
        install(plane, &["--kinds", &kinds_path, "-n", &ns]),
        "install (print) into an existing namespace",
    );
    assert!(!yaml.contains("kind: Namespace"), "{yaml}");
    assert!(yaml.contains("kind: Deployment"), "{yaml}");
    assert!(
        stderr.contains(&note) && stderr.contains("restricted"),
        "{stderr}"
    );

    // Applying: the namespace is left out of the diff and of the apply.
    let (diff, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &ns, "--apply", "--yes"],
        ),
        "install --apply into an existing namespace",
    );
    assert!(!diff.contains(&format!("Namespace {ns}")), "{diff}");
    assert!(diff.contains("+kind: Deployment"), "{diff}");
    assert!(stderr.contains(&note), "{stderr}");
    assert!(stderr.contains("Applied"), "{stderr}");
    assert_eq!(namespace_labels(&client, &ns).await, before, "{stderr}");
    let (_, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &ns, "--apply", "--yes"],
        ),
        "install --apply into an existing namespace (again)",
    );
    assert!(stderr.contains("Nothing to apply"), "{stderr}");

    // Deleting: the install goes, the namespace stays as it was, and
    // nothing suggests deleting it.
    let (_, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &ns, "--delete", "--yes"],
        ),
        "install --delete from an existing namespace",
    );
    assert!(stderr.contains("Deleted"), "{stderr}");
    assert!(!stderr.contains("kubectl delete namespace"), "{stderr}");
    assert_eq!(namespace_labels(&client, &ns).await, before, "{stderr}");

    // `default` is printed without its Namespace object too.
    let (yaml, stderr) = ok(
        install(plane, &["--kinds", &kinds_path, "-n", "default"]),
        "install (print) into default",
    );
    assert!(!yaml.contains("kind: Namespace"), "{yaml}");
    assert!(
        stderr.contains("namespace default is one of the cluster's own, never the install's"),
        "{stderr}"
    );
}

/// An install whose pods cannot start (no pod may be created in its
/// namespace) registers no APIService: with nothing to answer it, it would
/// stall discovery and every namespace deletion. `--apply` applies the
/// rest, waits `--timeout` for the Deployment, and says why and what next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_install_whose_pods_cannot_start_registers_no_apiservice() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("install-no-pods"));
    let ns = format!("install-no-pods-{}", std::process::id());
    plane.forbid_pods(&ns).await;
    let name = format!("v1alpha1.{}", kinds.group);
    let out = install(
        plane,
        &[
            "--kinds",
            &kinds.dir.path().display().to_string(),
            "-n",
            &ns,
            "--apply",
            "--yes",
            "--timeout",
            "6s",
        ],
    );
    let stderr = text(&out.stderr);
    eprintln!("[install] pods forbidden:\n{stderr}");
    let apis: Api<APIService> = Api::all(client.clone());
    let registered = apis.get_opt(&name).await.expect("get APIService");
    plane.allow_pods(&ns);
    uninstall(&client, &ns, std::slice::from_ref(&name)).await;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(registered.is_none(), "registered with no pod:\n{stderr}");
    assert!(
        stderr.contains(&format!("Deployment {ns}/kubectl-cozy created")),
        "the rest is applied:\n{stderr}"
    );
    assert!(
        stderr.contains("deployment/kubectl-cozy had no available pod after 6s")
            && stderr.contains("no server pod could be created (FailedCreate: ")
            && stderr.contains("no pods in this namespace")
            && stderr.contains(&format!("the APIServices {name} were not registered"))
            && stderr.contains(&format!("kubectl -n {ns} describe deployment/kubectl-cozy")),
        "{stderr}"
    );
}

/// `--cert-manager` on a cluster without cert-manager (the test plane has
/// none) is refused in one line that names the cause and the fix, before
/// anything is created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cert_manager_missing_from_the_cluster_is_named() {
    let plane = plane();
    let kinds = kinds_dir(&group("install-cm"));
    let kinds_path = kinds.dir.path().display().to_string();
    let ns = format!("install-cm-{}", std::process::id());
    for extra in [&["--apply", "--yes"][..], &["--dry-run=server"][..]] {
        let mut args = vec!["--kinds", &kinds_path, "-n", &ns, "--cert-manager"];
        args.extend_from_slice(extra);
        let out = install(plane, &args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(
            stderr.contains("cert-manager is not installed")
                && stderr.contains("drop --cert-manager"),
            "{extra:?}: {stderr}"
        );
        assert!(
            !stderr.contains("404 page not found") && !stderr.contains("ApiError"),
            "{extra:?}: {stderr}"
        );
    }
    let namespaces: Api<Namespace> = Api::all(plane.client().await);
    assert!(namespaces.get_opt(&ns).await.unwrap().is_none());
    // Printing still prints, and says what applying it needs.
    let (yaml, stderr) = ok(
        install(
            plane,
            &["--kinds", &kinds_path, "-n", &ns, "--cert-manager"],
        ),
        "install --cert-manager (print)",
    );
    assert!(yaml.contains("kind: Certificate"), "{yaml}");
    assert!(stderr.contains("cert-manager is not installed"), "{stderr}");
}

/// Each replica's `/metrics` scraped as the Prometheus Operator would scrape
/// it from the ServiceMonitor `install --service-monitor` makes for this
/// install (printed from the cluster's certificates; the plane has no
/// operator to take it): the Service its selector picks and the port it
/// names, over HTTPS verified with the CA of the Secret it names and its
/// server name, with a ServiceAccount token as Prometheus sends its own —
/// by kubectl, as a client that is not ours, given nothing else. The account may read
/// `/metrics` once bound to `system:monitoring`, as kube-prometheus binds
/// its Prometheus; unbound, it is refused.
async fn scraped_as_the_service_monitor_says(
    plane: &Plane,
    kinds_path: &str,
    ns: &str,
    servers: &[Replica],
) {
    let (json, _) = ok(
        install(
            plane,
            &[
                "--kinds",
                kinds_path,
                "-n",
                ns,
                "--service-monitor",
                "-o",
                "json",
            ],
        ),
        "install --service-monitor -o json",
    );
    let list: serde_json::Value = serde_json::from_str(&json).expect("a List");
    let monitor = list["items"]
        .as_array()
        .and_then(|items| items.iter().find(|o| o["kind"] == "ServiceMonitor"))
        .unwrap_or_else(|| panic!("no ServiceMonitor in {json}"))
        .clone();
    let spec = &monitor["spec"];
    assert_eq!(
        spec["namespaceSelector"]["matchNames"],
        serde_json::json!([ns])
    );
    let client = plane.client().await;
    let services: Api<Service> = Api::namespaced(client.clone(), ns);
    let wanted: std::collections::BTreeMap<String, String> =
        serde_json::from_value(spec["selector"]["matchLabels"].clone()).expect("matchLabels");
    let selector = wanted
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let picked = services
        .list(&ListParams::default().labels(&selector))
        .await
        .expect("list Services");
    assert_eq!(picked.items.len(), 1, "{selector}");
    let endpoint = &spec["endpoints"][0];
    let port = picked.items[0]
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .and_then(|ports| {
            ports
                .iter()
                .find(|p| p.name.as_deref() == endpoint["port"].as_str())
        })
        .unwrap_or_else(|| panic!("no port {} on the Service", endpoint["port"]));
    assert_eq!(endpoint["scheme"], "https");
    let tls = &endpoint["tlsConfig"];
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(client.clone(), ns);
    let secret = secrets
        .get(tls["ca"]["secret"]["name"].as_str().expect("CA Secret"))
        .await
        .expect("the CA's Secret");
    let ca = secret
        .data
        .as_ref()
        .and_then(|d| d.get(tls["ca"]["secret"]["key"].as_str().expect("CA key")))
        .expect("the CA in the Secret");
    let ca_file = tempfile::NamedTempFile::new().expect("CA file");
    std::fs::write(ca_file.path(), &ca.0).expect("write the CA");

    let account = "prometheus";
    let binding = format!("{ns}-prometheus-monitoring");
    let kubectl = |args: &[&str]| kubectl_ok(plane, args);
    kubectl(&["create", "serviceaccount", account, "-n", ns]);
    let token = kubectl(&["create", "token", account, "-n", ns]);
    // kubectl with nothing but what the ServiceMonitor gives (the plane's
    // kubeconfig would present the admin's client certificate).
    let no_kubeconfig = tempfile::NamedTempFile::new().expect("empty kubeconfig");
    let scrape = |server: &Replica| {
        let out = std::process::Command::new(plane.kubectl_path())
            .env("KUBECONFIG", no_kubeconfig.path())
            .args([
                "--server",
                &format!("https://{}", server.addr),
                "--certificate-authority",
                &ca_file.path().display().to_string(),
                "--tls-server-name",
                tls["serverName"].as_str().expect("serverName"),
                "--token",
                token.trim(),
                "get",
                "--raw",
                endpoint["path"].as_str().expect("path"),
            ])
            .output()
            .expect("kubectl get --raw /metrics");
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    };
    let (scraped, _, refused) = scrape(&servers[0]);
    assert!(!scraped, "an unbound account read /metrics");
    assert!(
        refused.contains(&format!("system:serviceaccount:{ns}:{account}"))
            && refused.contains("/metrics"),
        "{refused}"
    );
    kubectl(&[
        "create",
        "clusterrolebinding",
        &binding,
        "--clusterrole=system:monitoring",
        &format!("--serviceaccount={ns}:{account}"),
    ]);
    // RBAC is read from an informer: the binding takes a moment.
    let mut answers = Vec::new();
    for server in servers {
        let deadline = Instant::now() + Duration::from_secs(10);
        let answer = loop {
            let answer = scrape(server);
            if answer.0 || Instant::now() > deadline {
                break answer;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        answers.push(answer);
    }
    kubectl(&["delete", "clusterrolebinding", &binding]);
    for (scraped, metrics, stderr) in answers {
        assert!(scraped, "{stderr}");
        assert!(
            metrics.contains("kubectl_cozy_build_info{version=")
                && metrics.contains("apiserver_resource_objects{group="),
            "{metrics}"
        );
    }
    eprintln!(
        "[install] both replicas scraped as the ServiceMonitor says (port {})",
        port.port
    );
}

/// The PrometheusRule's alerts, evaluated by Prometheus's own rules manager
/// and PromQL engine (`tests/tools/promrules`, which also loads the rules as
/// Prometheus validates them) over series shaped as kube-apiserver and the
/// server expose them and as the Prometheus Operator labels a scrape
/// (`job` the Service's name, `namespace`, `pod`): each fires after its
/// `for` on what it is about — this install's APIService, replicas and
/// requests, not another's — stops when it is over, and names what it is
/// about.
#[test]
fn the_prometheus_rules_fire_on_what_they_are_about() {
    let ns = "cozy-alerts";
    let out = std::process::Command::new(bins::kubectl_cozy())
        .args(["install", "--kinds"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds"))
        .args(["-n", ns, "--service-monitor", "--prometheus-rules"])
        .args(["--dry-run=client", "-o", "json"])
        .output()
        .expect("kubectl-cozy install");
    let (json, _) = ok(out, "install --prometheus-rules");
    let list: serde_json::Value = serde_json::from_str(&json).expect("a List");
    let rule = list["items"]
        .as_array()
        .and_then(|items| items.iter().find(|o| o["kind"] == "PrometheusRule"))
        .unwrap_or_else(|| panic!("no PrometheusRule in {json}"));
    let dir = tempfile::tempdir().expect("dir");
    // What the operator writes for Prometheus: the rule file is the spec.
    let rules = dir.path().join("rules.yaml");
    std::fs::write(&rules, rule["spec"].to_string()).expect("write rules");

    // One sample a minute from 0 to 14 minutes.
    let minutes = 15;
    let ours = format!(r#"job="kubectl-cozy",namespace="{ns}""#);
    let each = |f: &dyn Fn(usize) -> f64| (0..minutes).map(f).collect::<Vec<f64>>();
    let series: Vec<(String, Vec<f64>)> = vec![
        // Our APIService unavailable from 2 to 9 minutes; others always.
        (
            r#"aggregator_unavailable_apiservice{name="v1alpha1.apps.cozystack.io"}"#.into(),
            each(&|m| if (2..10).contains(&m) { 1.0 } else { 0.0 }),
        ),
        (
            r#"aggregator_unavailable_apiservice{name="v1alpha1xappsxcozystackxio"}"#.into(),
            each(&|_| 1.0),
        ),
        (
            r#"aggregator_unavailable_apiservice{name="v1beta1.metrics.k8s.io"}"#.into(),
            each(&|_| 1.0),
        ),
        // Our only replica stops answering at 2 minutes; another install's
        // answers throughout.
        (
            format!(r#"up{{{ours},pod="a"}}"#),
            each(&|m| if m < 2 { 1.0 } else { 0.0 }),
        ),
        (
            r#"up{job="kubectl-cozy",namespace="other",pod="x"}"#.into(),
            each(&|_| 1.0),
        ),
        // Replica b's cache is unsynced from 1 minute on.
        (
            format!(r#"kubectl_cozy_watch_cache_ready{{{ours},pod="b"}}"#),
            each(&|m| if m < 1 { 1.0 } else { 0.0 }),
        ),
        // 100 requests a minute, and 20 failing from 3 minutes on.
        (
            format!(r#"apiserver_request_total{{{ours},pod="b",code="200"}}"#),
            each(&|m| 100.0 * m as f64),
        ),
        (
            format!(r#"apiserver_request_total{{{ours},pod="b",code="503"}}"#),
            each(&|m| 20.0 * m.saturating_sub(2) as f64),
        ),
    ];
    let mut load = "load 1m\n".to_owned();
    for (name, values) in &series {
        let values: Vec<String> = values.iter().map(f64::to_string).collect();
        load.push_str(&format!("  {name} {}\n", values.join(" ")));
    }
    // Minute by minute, the alerts firing then, over the series `load`
    // gives.
    let evaluate = |load: &str| -> Vec<Vec<serde_json::Value>> {
        let series_file = dir.path().join("series.txt");
        std::fs::write(&series_file, load).expect("write series");
        let out = std::process::Command::new(tools::promrules())
            .arg(&rules)
            .arg(&series_file)
            .args(["1m", &format!("{}m", minutes - 1)])
            .output()
            .expect("promrules");
        let (steps, _) = ok(out, "promrules");
        let firing: Vec<Vec<serde_json::Value>> = steps
            .lines()
            .map(|line| {
                let step: serde_json::Value = serde_json::from_str(line).expect("a step");
                step["firing"].as_array().cloned().unwrap_or_default()
            })
            .collect();
        assert_eq!(firing.len(), minutes, "{steps}");
        firing
    };
    let firing = evaluate(&load);
    let steps = format!("{firing:?}");
    let alerts = |minute: usize, name: &str| -> Vec<serde_json::Value> {
        firing[minute]
            .iter()
            .filter(|a| a["alert"] == name)
            .cloned()
            .collect()
    };
    let when = |name: &str| -> Vec<usize> {
        (0..minutes)
            .filter(|m| !alerts(*m, name).is_empty())
            .collect()
    };
    // Each from its `for` after the first minute its condition held.
    assert_eq!(
        when("KubectlCozyAPIServiceUnavailable"),
        [7, 8, 9],
        "{steps}"
    );
    assert_eq!(
        when("KubectlCozyDown"),
        (7..minutes).collect::<Vec<_>>(),
        "{steps}"
    );
    assert_eq!(
        when("KubectlCozyWatchCacheNotSynced"),
        (11..minutes).collect::<Vec<_>>(),
        "{steps}"
    );
    assert_eq!(
        when("KubectlCozyErrors"),
        (13..minutes).collect::<Vec<_>>(),
        "{steps}"
    );
    let unavailable = alerts(8, "KubectlCozyAPIServiceUnavailable");
    assert_eq!(unavailable.len(), 1, "only ours: {unavailable:?}");
    assert_eq!(
        unavailable[0]["labels"]["name"],
        "v1alpha1.apps.cozystack.io"
    );
    assert_eq!(unavailable[0]["labels"]["severity"], "critical");
    let description = unavailable[0]["annotations"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(
        description.contains("APIService v1alpha1.apps.cozystack.io unavailable")
            && description.contains(&format!("namespace {ns}"))
            && description.contains("kubectl cozy doctor"),
        "{description}"
    );
    let down = alerts(8, "KubectlCozyDown");
    assert_eq!(down.len(), 1, "{down:?}");
    assert_eq!(down[0]["labels"]["namespace"], ns);
    assert_eq!(
        alerts(12, "KubectlCozyWatchCacheNotSynced")[0]["labels"]["pod"],
        "b"
    );
    let errors = alerts(14, "KubectlCozyErrors");
    let description = errors[0]["annotations"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(
        description.starts_with("16.67% of the requests") && description.contains(ns),
        "{description}"
    );

    // No replica left to scrape (its series end at 2 minutes): down once
    // Prometheus's 5-minute lookback has passed, and 5 minutes on.
    let gone = format!("load 1m\n  up{{{ours},pod=\"a\"}} 1 1\n");
    let firing = evaluate(&gone);
    let down: Vec<usize> = (0..minutes)
        .filter(|m| firing[*m].iter().any(|a| a["alert"] == "KubectlCozyDown"))
        .collect();
    assert_eq!(down, (11..minutes).collect::<Vec<_>>(), "{firing:?}");
    let alert = firing[11].iter().find(|a| a["alert"] == "KubectlCozyDown");
    assert_eq!(
        alert.map(|a| &a["labels"]["namespace"]),
        Some(&serde_json::json!(ns))
    );
}

/// Serializes the tests that install the ServiceMonitor CRD or need the
/// cluster without it.
static SERVICE_MONITORS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `--service-monitor` on a cluster without the Prometheus Operator (the
/// plane has none) is refused in one line that names the cause and the
/// fix; with the operator's own ServiceMonitor CRD (from its release, as
/// `tests/tools/build.sh` fetches it) the ServiceMonitor, with the labels
/// given, passes kube-apiserver's strict server-side dry run against the
/// operator's schema (no unknown field, no wrong type).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_monitor_takes_the_prometheus_operators_schema_and_is_named_when_missing() {
    let _serial = SERVICE_MONITORS.lock().await;
    let plane = plane();
    let kinds = kinds_dir(&group("install-sm"));
    let kinds_path = kinds.dir.path().display().to_string();
    let ns = plane.namespace("install-sm").await;
    let args = ["--kinds", &kinds_path, "-n", &ns, "--service-monitor"];

    let out = install(plane, &[&args[..], &["--apply", "--yes"]].concat());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the Prometheus Operator is not installed: the cluster serves no monitoring.coreos.com/v1 ServiceMonitors")
            && stderr.contains("drop --service-monitor"),
        "{stderr}"
    );
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(plane.client().await, &ns);
    assert!(deployments.get_opt("kubectl-cozy").await.unwrap().is_none());

    let crd_names = [
        "crd/servicemonitors.monitoring.coreos.com",
        "crd/prometheusrules.monitoring.coreos.com",
    ];
    let kubectl = |args: &[&str]| {
        kubectl_ok(plane, args);
    };
    for (crd, name) in tools::prometheus_operator_crds().iter().zip(crd_names) {
        kubectl(&["apply", "--server-side", "-f", &crd.display().to_string()]);
        kubectl(&["wait", "--for=condition=Established", "--timeout=30s", name]);
    }
    let labelled = [
        "release=kube-prometheus-stack",
        "--prometheus-rules",
        "release=kube-prometheus-stack",
    ];
    let (yaml, stderr) = ok(
        install(plane, &[&args[..], &labelled].concat()),
        "install --service-monitor --prometheus-rules",
    );
    assert!(!stderr.contains("Prometheus Operator"), "{stderr}");
    assert!(yaml.contains("kind: ServiceMonitor"), "{yaml}");
    assert!(yaml.contains("kind: PrometheusRule"), "{yaml}");
    assert_eq!(
        yaml.matches("release: kube-prometheus-stack").count(),
        2,
        "{yaml}"
    );
    let out = plane.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--dry-run=server",
            "--validate=strict",
            "-f",
            "-",
        ],
        &yaml,
    );
    let checked = (text(&out.stdout), text(&out.stderr));
    for name in crd_names {
        kubectl(&["delete", name, "--wait=true", "--timeout=60s"]);
    }
    assert!(out.status.success(), "{checked:?}");
    for applied in [
        "servicemonitor.monitoring.coreos.com/kubectl-cozy serverside-applied (server dry run)",
        "prometheusrule.monitoring.coreos.com/kubectl-cozy serverside-applied (server dry run)",
    ] {
        assert!(checked.0.contains(applied), "{checked:?}");
    }
    assert!(!checked.1.contains("unknown field"), "{checked:?}");
}

/// A second `--delete` while the install's namespace is still terminating
/// has nothing to delete (the namespace is going, with what it holds), and
/// no `--delete` speaks of certificates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_counts_a_terminating_namespace_as_gone() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let client = plane.client().await;
    let kinds = kinds_dir(&group("install-terminating"));
    let kinds_path = kinds.dir.path().display().to_string();
    // The install's default namespace, held in Terminating by a finalizer.
    let ns = "kubectl-cozy";
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let held: Namespace = serde_json::from_value(serde_json::json!({"metadata": {
        "name": ns,
        "labels": {"app.kubernetes.io/managed-by": "kubectl-cozy"},
        "finalizers": ["kubectl-cozy.io/test-hold"],
    }}))
    .unwrap();
    namespaces
        .create(&Default::default(), &held)
        .await
        .expect("create the namespace");
    namespaces
        .delete(ns, &DeleteParams::default())
        .await
        .expect("delete the namespace");
    let out = install(plane, &["--kinds", &kinds_path, "--delete", "--yes"]);
    // Let it go before asserting: other tests need nothing Terminating.
    namespaces
        .patch(
            ns,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("drop the finalizer");
    let deadline = Instant::now() + WAIT;
    while namespaces.get_opt(ns).await.ok().flatten().is_some() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (_, stderr) = ok(out, "install --delete of a terminating namespace");
    // The namespace counts as gone, not deleted again (cluster-wide objects
    // an earlier test's install left may be deleted beside it).
    assert!(
        stderr.contains(&format!(
            "going  Namespace {ns}: already being deleted (still terminating)"
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&format!("delete Namespace {ns}"))
            && !stderr.contains(&format!("Namespace {ns} deleted")),
        "{stderr}"
    );
    assert!(!stderr.contains("Certificates:"), "{stderr}");
    // Run again with nothing left: nothing to delete.
    let out = install(plane, &["--kinds", &kinds_path, "--delete", "--yes"]);
    let (_, stderr) = ok(out, "install --delete again");
    assert!(stderr.contains("Nothing to delete"), "{stderr}");
}

/// Printing with a context whose cluster cannot be reached: one note, in
/// the words of the tool's other connection errors, and no line claiming
/// the cluster holds no certificates.
#[test]
fn printing_without_a_reachable_cluster_says_so_once() {
    let kinds = kinds_dir(&group("install-dead"));
    let dir = tempfile::tempdir().expect("temp dir");
    let dead = crate::support::kubeconfig_for_port(dir.path(), 9);
    let install = |extra: &[&str]| {
        std::process::Command::new(bins::kubectl_cozy())
            .args(["install", "--request-timeout", "3s"])
            .args(extra)
            .arg("--kinds")
            .arg(kinds.dir.path())
            .arg("--kubeconfig")
            .arg(&dead)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run kubectl-cozy install")
    };
    let (yaml, stderr) = ok(install(&[]), "install (print) without a cluster");
    assert!(yaml.contains("kind: Deployment"), "{yaml}");
    assert!(
        stderr.contains("cannot reach the cluster at https://127.0.0.1:9")
            && stderr.contains("connection refused"),
        "{stderr}"
    );
    assert!(!stderr.contains("ServiceError"), "{stderr}");
    assert!(!stderr.contains("none in the cluster"), "{stderr}");
    // The cluster's own namespaces are known without it: never printed
    // (with the Pod Security `restricted` labels an apply would set on
    // kube-system), whether the cluster is reachable or not asked.
    for dry_run in [&[][..], &["--dry-run=client"]] {
        for system in ["kube-system", "default"] {
            let args = [&["-n", system][..], dry_run].concat();
            let (yaml, stderr) = ok(install(&args), "install (print) into a system namespace");
            assert!(yaml.contains("kind: Deployment"), "{yaml}");
            assert!(!yaml.contains("kind: Namespace"), "{system}: {yaml}");
            assert!(
                stderr.contains(&format!("namespace {system} is one of the cluster's own")),
                "{stderr}"
            );
        }
    }
}

/// A context that names a standalone server (`serve --standalone`, as its
/// README exports) is no cluster: install said "new CA (none in the
/// cluster)" and then failed on a dump of kube's error; it is refused at
/// once, by name, for printing, checking and applying alike.
#[test]
fn a_standalone_server_is_no_cluster_to_install_into() {
    let standalone = crate::support::standalone::Standalone::start();
    let kinds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
    for extra in [&[][..], &["--dry-run=server"], &["--apply", "--yes"]] {
        let out = std::process::Command::new(bins::kubectl_cozy())
            .args(["install", "--kinds"])
            .arg(&kinds)
            .args(extra)
            .arg("--kubeconfig")
            .arg(standalone.kubeconfig())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run kubectl-cozy install");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?}: {stderr}");
        assert!(
            stderr.contains(
                "is a kubectl-cozy standalone server (serve --standalone), not a cluster"
            ),
            "{extra:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{extra:?}");
        assert!(!stderr.contains("Status {"), "{stderr}");
    }
}
