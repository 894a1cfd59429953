//! A real local Kubernetes control plane for integration tests: etcd,
//! kube-apiserver (RBAC, aggregation layer with its own front-proxy CA, a
//! kubelet CA for the simulated node) and kube-controller-manager (namespace,
//! garbage-collector, ClusterRole aggregation, deployment, replicaset and
//! endpointslice controllers), on free loopback ports, with certificates made
//! by `kubectl_cozy::pki`. The simulated node (kube-scheduler and kwok) starts
//! on first use of [`Plane::node`] (see `node.rs`).
//!
//! One plane per test binary, started on first use by [`plane()`]; tests
//! isolate themselves with [`Plane::namespace`]. The processes die with the
//! test binary however it ends: they are spawned from threads that never
//! exit, with `PR_SET_PDEATHSIG`, and an `atexit` hook stops them gracefully
//! and removes the work directory on a normal exit.
//!
//! Binaries come from `COZY_TEST_BIN_DIR`, else from
//! `tests/control-plane/build.sh` (cached machine-wide, built on first use).

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use kubectl_cozy::pki::{self, Ca, CertPair, LeafSpec};

/// How long the plane may take to become ready (kube-apiserver has been seen
/// to need over 30 s on a loaded 2-core machine).
const START_TIMEOUT: Duration = Duration::from_secs(180);

/// The controllers kube-controller-manager runs.
const CONTROLLERS: [&str; 6] = [
    "namespace-controller",
    "garbage-collector-controller",
    "clusterrole-aggregation-controller",
    "deployment-controller",
    "replicaset-controller",
    "endpointslice-controller",
];

/// The processes whose logs a start-up failure shows.
const LOGGED: [&str; 5] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kwok",
];
/// A running control plane.
#[derive(Debug)]
pub struct Plane {
    /// The directory holding certificates, kubeconfigs, logs and etcd data.
    pub dir: PathBuf,
    /// The directory holding etcd, kube-apiserver, kube-controller-manager and kubectl.
    pub bin_dir: PathBuf,
    /// `https://127.0.0.1:<port>` of kube-apiserver.
    pub server: String,
    /// An admin (`system:masters`) kubeconfig.
    pub kubeconfig: PathBuf,
    /// PEM files of the aggregation layer, for extension servers.
    pub front_proxy_ca: PathBuf,
    /// The front-proxy CA itself (`--requestheader-client-ca-file`), to mint
    /// front-proxy certificates in security tests.
    pub front_proxy: Ca,
    /// The aggregator's own client certificate (`--proxy-client-cert-file`).
    pub front_proxy_client: CertPair,
    /// The CA that signs client certificates (`--client-ca-file`).
    pub client_ca: Ca,
    /// The CA of kube-apiserver's serving certificate.
    pub serving_ca_pem: String,
    /// The CA kube-apiserver trusts for kubelet serving certificates
    /// (`--kubelet-certificate-authority`); the simulated node's kubelet API
    /// serves a certificate it signs.
    pub kubelet_ca: Ca,
}

static PLANE: OnceLock<Result<Plane, String>> = OnceLock::new();
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static WORK_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The test binary's control plane, started on first use.
pub fn plane() -> &'static Plane {
    let result = PLANE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        // Children get PR_SET_PDEATHSIG, which fires when the *spawning thread*
        // exits; this thread lives as long as the process.
        std::thread::Builder::new()
            .name("control-plane".into())
            .spawn(move || {
                let _ = tx.send(start());
                loop {
                    std::thread::park();
                }
            })
            .map_err(|e| format!("spawn control-plane thread: {e}"))?;
        rx.recv()
            .map_err(|e| format!("control-plane thread died: {e}"))?
    });
    match result {
        Ok(plane) => plane,
        Err(e) => panic!("the test control plane did not start: {e}"),
    }
}

impl Plane {
    /// The simulated node (kube-scheduler and kwok) of the test binary's
    /// plane, started on first use; panics when it cannot start.
    pub fn node(&self) -> &'static super::node::Node {
        super::node::node()
    }

    /// The path of the built kubectl.
    pub fn kubectl_path(&self) -> PathBuf {
        self.bin_dir.join("kubectl")
    }

    /// A `kubectl` command aimed at the plane as admin.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new(self.kubectl_path());
        cmd.arg("--kubeconfig").arg(&self.kubeconfig);
        cmd
    }

    /// `kubectl <args>` as admin with `input` on stdin (60 s request timeout).
    pub fn kubectl_stdin(&self, args: &[&str], input: &str) -> std::process::Output {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = self
            .kubectl()
            .arg("--request-timeout=60s")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write");
        child.wait_with_output().expect("kubectl")
    }

    /// A fresh kube client (one per test: clients are bound to the test's runtime).
    pub async fn client(&self) -> kube::Client {
        kube::Client::try_from(self.config().await).expect("kube client")
    }

    /// The admin kubeconfig's client config.
    pub async fn config(&self) -> kube::Config {
        let kubeconfig =
            kube::config::Kubeconfig::read_from(&self.kubeconfig).expect("read admin kubeconfig");
        kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("admin kubeconfig")
    }

    /// Creates a uniquely named namespace for one test and returns its name.
    pub async fn namespace(&self, prefix: &str) -> String {
        use k8s_openapi::api::core::v1::Namespace;
        use kube::api::{Api, PostParams};
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{prefix}-{}-{n}", std::process::id());
        let ns: Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap();
        Api::<Namespace>::all(self.client().await)
            .create(&PostParams::default(), &ns)
            .await
            .expect("create namespace");
        name
    }

    /// Makes `namespace` (created if missing) one where no pod may be
    /// created, as a quota or Pod Security admission can make one (here a
    /// ValidatingAdmissionPolicy named after it, saying "no pods in this
    /// namespace"), and waits until kube-apiserver enforces it. Undone by
    /// [`Plane::allow_pods`].
    pub async fn forbid_pods(&self, namespace: &str) {
        let out = self.kubectl_stdin(
            &["apply", "-f", "-"],
            &format!(
                "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {namespace}}}\n---\n\
                 apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n\
                 metadata: {{name: {namespace}}}\nspec:\n  failurePolicy: Fail\n  matchConstraints:\n    \
                 resourceRules: [{{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}}]\n  \
                 validations: [{{expression: \"false\", message: no pods in this namespace}}]\n---\n\
                 apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n\
                 metadata: {{name: {namespace}}}\nspec:\n  policyName: {namespace}\n  validationActions: [Deny]\n  \
                 matchResources: {{namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: {namespace}}}}}}}\n"
            ),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The policy binds once kube-apiserver has loaded it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let out = self
                .kubectl()
                .args([
                    "run",
                    "probe",
                    "-n",
                    namespace,
                    "--image=none",
                    "--dry-run=server",
                ])
                .output()
                .expect("kubectl run");
            if String::from_utf8_lossy(&out.stderr).contains("no pods in this namespace") {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the admission policy never applied"
            );
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    /// Removes [`Plane::forbid_pods`]'s policy for `namespace`.
    pub fn allow_pods(&self, namespace: &str) {
        let _ = self
            .kubectl()
            .args([
                "delete",
                "validatingadmissionpolicybinding,validatingadmissionpolicy",
                namespace,
                "--ignore-not-found",
            ])
            .output();
    }

    /// Writes a kubeconfig for a user with a client certificate signed by the
    /// cluster's client CA, and returns its path.
    pub fn user_kubeconfig(&self, user: &str, groups: &[&str]) -> PathBuf {
        let pair = self
            .client_ca
            .issue(&LeafSpec::client(user, groups))
            .expect("user certificate");
        let path = self.dir.join(format!("{user}.kubeconfig"));
        write_kubeconfig(&path, &self.server, &self.serving_ca_pem, &pair)
            .expect("write user kubeconfig");
        path
    }
}

fn start() -> Result<Plane, String> {
    let bin_dir = binaries()?;
    sweep_stale_work_dirs();
    let dir = std::env::temp_dir().join(format!("kubectl-cozy-plane-{}", std::process::id()));
    WORK_DIRS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(dir.clone());
    install_exit_hook();
    let (plane, layout) = prepare(dir, bin_dir)?;
    let dir = &plane.dir;
    let deadline = Instant::now() + START_TIMEOUT;
    spawn(dir, "etcd", &mut layout.etcd())?;
    wait_for(dir, "etcd", deadline, || layout.etcd_healthy())?;
    spawn(dir, "kube-apiserver", &mut layout.kube_apiserver())?;
    wait_for(dir, "kube-apiserver", deadline, || layout.apiserver_ready())?;
    spawn(
        dir,
        "kube-controller-manager",
        &mut layout.kube_controller_manager(),
    )?;
    wait_for(dir, "kube-controller-manager", deadline, || {
        tls_port_open(layout.kcm_port)
    })?;
    install_crd(&plane, deadline)?;
    Ok(plane)
}

/// Where one plane's processes listen and keep their files, and how each is
/// started (the same command restarts it).
#[derive(Debug, Clone)]
pub(super) struct Layout {
    dir: PathBuf,
    bin_dir: PathBuf,
    kubeconfig: PathBuf,
    kcm_kubeconfig: PathBuf,
    /// etcd's client port.
    pub etcd_client: u16,
    etcd_peer: u16,
    api_port: u16,
    kcm_port: u16,
}

impl Layout {
    fn pki(&self, name: &str) -> String {
        self.dir.join("pki").join(name).display().to_string()
    }

    /// `http://127.0.0.1:<port>` of etcd's client API.
    pub fn etcd_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.etcd_client)
    }

    /// etcd, with its data in `<dir>/etcd`.
    pub fn etcd(&self) -> Command {
        let etcd_url = self.etcd_url();
        let peer_url = format!("http://127.0.0.1:{}", self.etcd_peer);
        let mut cmd = Command::new(self.bin_dir.join("etcd"));
        cmd.args([
            "--name=default".to_owned(),
            format!("--data-dir={}", self.dir.join("etcd").display()),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=default={peer_url}"),
            "--unsafe-no-fsync=true".to_owned(),
            "--log-level=warn".to_owned(),
        ]);
        cmd
    }

    /// Whether etcd answers `/health`.
    pub fn etcd_healthy(&self) -> bool {
        http_get_ok(self.etcd_client, "/health")
    }

    /// kube-apiserver over this plane's etcd.
    pub fn kube_apiserver(&self) -> Command {
        let api_port = self.api_port;
        let pf = |name: &str| self.pki(name);
        let mut cmd = Command::new(self.bin_dir.join("kube-apiserver"));
        cmd.args([
            format!("--etcd-servers={}", self.etcd_url()),
            "--bind-address=127.0.0.1".to_owned(),
            "--advertise-address=127.0.0.1".to_owned(),
            format!("--secure-port={api_port}"),
            "--endpoint-reconciler-type=none".to_owned(),
            format!("--cert-dir={}", self.dir.join("pki").display()),
            format!("--tls-cert-file={}", pf("apiserver.crt")),
            format!("--tls-private-key-file={}", pf("apiserver.key")),
            format!("--client-ca-file={}", pf("client-ca.crt")),
            "--authorization-mode=RBAC".to_owned(),
            "--allow-privileged=true".to_owned(),
            "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
            "--disable-admission-plugins=ServiceAccount".to_owned(),
            format!("--service-account-issuer=https://127.0.0.1:{api_port}/"),
            format!("--service-account-key-file={}", pf("sa.pub")),
            format!("--service-account-signing-key-file={}", pf("sa.key")),
            format!(
                "--requestheader-client-ca-file={}",
                pf("front-proxy-ca.crt")
            ),
            "--requestheader-allowed-names=front-proxy-client".to_owned(),
            "--requestheader-username-headers=X-Remote-User".to_owned(),
            "--requestheader-uid-headers=X-Remote-Uid".to_owned(),
            "--requestheader-group-headers=X-Remote-Group".to_owned(),
            "--requestheader-extra-headers-prefix=X-Remote-Extra-".to_owned(),
            format!("--proxy-client-cert-file={}", pf("front-proxy-client.crt")),
            format!("--proxy-client-key-file={}", pf("front-proxy-client.key")),
            "--enable-aggregator-routing=false".to_owned(),
            // The simulated node's kubelet API (kwok) listens on a loopback
            // address it reports as the node's InternalIP, with a serving
            // certificate from this CA.
            "--kubelet-preferred-address-types=InternalIP,Hostname".to_owned(),
            format!("--kubelet-certificate-authority={}", pf("kubelet-ca.crt")),
        ]);
        cmd
    }

    /// Whether kube-apiserver answers `/readyz` with 200.
    pub fn apiserver_ready(&self) -> bool {
        kubectl_ok(
            &self.bin_dir.join("kubectl"),
            &self.kubeconfig,
            &["get", "--raw", "/readyz"],
        )
    }

    /// kube-controller-manager with [`CONTROLLERS`].
    fn kube_controller_manager(&self) -> Command {
        let mut cmd = Command::new(self.bin_dir.join("kube-controller-manager"));
        cmd.args([
            format!("--kubeconfig={}", self.kcm_kubeconfig.display()),
            format!(
                "--authentication-kubeconfig={}",
                self.kcm_kubeconfig.display()
            ),
            format!(
                "--authorization-kubeconfig={}",
                self.kcm_kubeconfig.display()
            ),
            // Aggregation fills the built-in view/edit/admin roles from
            // labelled ClusterRoles (`serve --print-rbac`); the deployment,
            // replicaset and endpointslice controllers run workloads on the
            // simulated node (no node-lifecycle controller: the node harness
            // clears the node's not-ready taint itself).
            format!("--controllers={}", CONTROLLERS.join(",")),
            "--leader-elect=false".to_owned(),
            "--use-service-account-credentials=false".to_owned(),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--secure-port={}", self.kcm_port),
            format!("--cert-dir={}", self.dir.join("kcm-certs").display()),
        ]);
        cmd
    }
}

/// Creates `dir` with the plane's certificates and kubeconfigs and picks its
/// ports; starts nothing.
pub(super) fn prepare(dir: PathBuf, bin_dir: PathBuf) -> Result<(Plane, Layout), String> {
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("pki"))
        .map_err(|e| format!("create {}: {e}", dir.display()))?;
    let p = dir.join("pki");
    let file = |name: &str| p.join(name);
    let write = |name: &str, text: &str| {
        std::fs::write(file(name), text).map_err(|e| format!("write {name}: {e}"))
    };
    let ca_err = |e: pki::Error| format!("{e}: {:?}", std::error::Error::source(&e));
    let write_pair = |name: &str, pair: &CertPair| -> Result<(), String> {
        write(&format!("{name}.crt"), &pair.cert_pem)?;
        write(&format!("{name}.key"), &pair.key_pem)
    };

    let serving_ca = Ca::new("kubectl-cozy-test-serving-ca").map_err(ca_err)?;
    let client_ca = Ca::new("kubectl-cozy-test-client-ca").map_err(ca_err)?;
    let front_proxy_ca = Ca::new("kubectl-cozy-test-front-proxy-ca").map_err(ca_err)?;
    let kubelet_ca = Ca::new("kubectl-cozy-test-kubelet-ca").map_err(ca_err)?;
    let loopback = "127.0.0.1".parse().expect("ip");
    write("ca.crt", serving_ca.cert_pem())?;
    write("client-ca.crt", client_ca.cert_pem())?;
    write("front-proxy-ca.crt", front_proxy_ca.cert_pem())?;
    write("kubelet-ca.crt", kubelet_ca.cert_pem())?;
    let apiserver_cert = serving_ca
        .issue(&LeafSpec::server(
            "kube-apiserver",
            &[
                "localhost",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
            ],
            &[loopback, "10.0.0.1".parse().expect("ip")],
        ))
        .map_err(ca_err)?;
    write_pair("apiserver", &apiserver_cert)?;
    let front_proxy_client = front_proxy_ca
        .issue(&LeafSpec::client("front-proxy-client", &[]))
        .map_err(ca_err)?;
    write_pair("front-proxy-client", &front_proxy_client)?;
    let (sa_key, sa_pub) = pki::key_pair().map_err(ca_err)?;
    write("sa.key", &sa_key)?;
    write("sa.pub", &sa_pub)?;

    let layout_ports = (free_port()?, free_port()?, free_port()?, free_port()?);
    let (etcd_client, etcd_peer, api_port, kcm_port) = layout_ports;
    let server = format!("https://127.0.0.1:{api_port}");

    let admin = client_ca
        .issue(&LeafSpec::client(
            "kubectl-cozy-test-admin",
            &["system:masters"],
        ))
        .map_err(ca_err)?;
    let kubeconfig = dir.join("admin.kubeconfig");
    write_kubeconfig(&kubeconfig, &server, serving_ca.cert_pem(), &admin)?;
    let kcm = client_ca
        .issue(&LeafSpec::client(
            "system:kube-controller-manager",
            &["system:masters"],
        ))
        .map_err(ca_err)?;
    let kcm_kubeconfig = dir.join("kcm.kubeconfig");
    write_kubeconfig(&kcm_kubeconfig, &server, serving_ca.cert_pem(), &kcm)?;

    let layout = Layout {
        dir: dir.clone(),
        bin_dir: bin_dir.clone(),
        kubeconfig: kubeconfig.clone(),
        kcm_kubeconfig,
        etcd_client,
        etcd_peer,
        api_port,
        kcm_port,
    };
    let plane = Plane {
        front_proxy_ca: file("front-proxy-ca.crt"),
        front_proxy: front_proxy_ca,
        front_proxy_client,
        serving_ca_pem: serving_ca.cert_pem().to_owned(),
        dir,
        bin_dir,
        server,
        kubeconfig,
        client_ca,
        kubelet_ca,
    };
    Ok((plane, layout))
}

/// Applies the HelmRelease CRD (taken from the helm-controller module at
/// build time) and waits until it is Established.
pub(super) fn install_crd(plane: &Plane, deadline: Instant) -> Result<(), String> {
    let kubectl = plane.kubectl_path();
    let crd = plane.bin_dir.join("helmreleases.crd.yaml");
    let crd_arg = crd.display().to_string();
    wait_for(&plane.dir, "HelmRelease CRD", deadline, || {
        kubectl_ok(
            &kubectl,
            &plane.kubeconfig,
            &["apply", "--server-side", "-f", &crd_arg],
        )
    })?;
    wait_for(&plane.dir, "HelmRelease CRD established", deadline, || {
        kubectl_ok(
            &kubectl,
            &plane.kubeconfig,
            &[
                "wait",
                "--for=condition=Established",
                "--timeout=5s",
                "crd/helmreleases.helm.toolkit.fluxcd.io",
            ],
        )
    })
}

/// The directory with the control plane binaries: `COZY_TEST_BIN_DIR`, or
/// what `tests/control-plane/build.sh` built (or found in its cache).
pub fn binaries() -> Result<PathBuf, String> {
    super::built_dir("COZY_TEST_BIN_DIR", "tests/control-plane/build.sh")
}

/// Starts `cmd` with its output in `<dir>/<name>.log`, to be stopped by the
/// exit hook. Call it only from a thread that never exits (`PR_SET_PDEATHSIG`
/// fires when the spawning thread ends).
pub(super) fn spawn(dir: &Path, name: &str, cmd: &mut Command) -> Result<(), String> {
    let log = std::fs::File::create(dir.join(format!("{name}.log")))
        .map_err(|e| format!("create {name}.log: {e}"))?;
    let log2 = log.try_clone().map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        .process_group(0);
    die_with_parent(cmd);
    let child: Child = cmd.spawn().map_err(|e| format!("start {name}: {e}"))?;
    CHILDREN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(child.id());
    // The Child handle is dropped on purpose: the exit hook and PDEATHSIG own
    // the process's lifetime, and waitpid reaps it there.
    Ok(())
}

#[expect(
    unsafe_code,
    reason = "prctl(PR_SET_PDEATHSIG) in the forked child before exec"
)]
pub(super) fn die_with_parent(cmd: &mut Command) {
    // SAFETY: prctl and getppid are async-signal-safe; nothing is allocated.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[expect(
    unsafe_code,
    reason = "registering a C atexit hook and signalling child processes"
)]
fn install_exit_hook() {
    extern "C" fn stop_plane() {
        let pids: Vec<u32> = CHILDREN.lock().map(|c| c.clone()).unwrap_or_default();
        // Stop in reverse start order: controller-manager, apiserver, etcd.
        for pid in pids.iter().rev() {
            let pid = *pid as libc::pid_t;
            // SAFETY: plain syscalls on our own children.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                let mut status = 0;
                // SAFETY: as above.
                let reaped = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
                if reaped != 0 || Instant::now() > deadline {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            // SAFETY: as above; harmless if it already exited.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
        if std::env::var_os("COZY_TEST_KEEP_PLANE").is_none() {
            for dir in WORK_DIRS.lock().map(|d| d.clone()).unwrap_or_default() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registering a plain `extern "C" fn()`.
        unsafe {
            libc::atexit(stop_plane);
        }
    });
}

/// Removes work directories of test processes that no longer exist (killed
/// before their exit hook ran, or before a private plane was dropped).
fn sweep_stale_work_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name
            .strip_prefix("kubectl-cozy-plane-")
            // `<pid>` (the shared plane) or `<pid>-<name>` (a private one).
            .and_then(|p| p.split('-').next()?.parse::<u32>().ok())
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Polls `ready` until it holds or `deadline` passes; the error shows the
/// last log lines of every plane process.
pub(super) fn wait_for(
    dir: &Path,
    what: &str,
    deadline: Instant,
    mut ready: impl FnMut() -> bool,
) -> Result<(), String> {
    let started = Instant::now();
    while Instant::now() < deadline {
        if ready() {
            eprintln!(
                "[control-plane] {what} ready after {:.1}s",
                started.elapsed().as_secs_f64()
            );
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let mut logs = String::new();
    for name in LOGGED {
        if let Ok(text) = std::fs::read_to_string(dir.join(format!("{name}.log"))) {
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            logs.push_str(&format!("\n--- {name}.log (last lines) ---\n"));
            logs.extend(tail.into_iter().rev().map(|l| format!("{l}\n")));
        }
    }
    Err(format!(
        "{what} not ready within {}s{logs}",
        START_TIMEOUT.as_secs()
    ))
}

/// A free TCP port on 127.0.0.1.
pub(super) fn free_port() -> Result<u16, String> {
    free_port_on("127.0.0.1")
}

/// A free TCP port on the given local address.
pub(super) fn free_port_on(ip: &str) -> Result<u16, String> {
    let listener =
        TcpListener::bind((ip, 0)).map_err(|e| format!("find a free port on {ip}: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

fn http_get_ok(port: u16, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.starts_with("HTTP/1.0 200") || response.starts_with("HTTP/1.1 200")
}

pub(super) fn tls_port_open(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

pub(super) fn kubectl_ok(kubectl: &Path, kubeconfig: &Path, args: &[&str]) -> bool {
    Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--request-timeout=5s")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Writes a kubeconfig with an embedded CA and client certificate.
pub fn write_kubeconfig(
    path: &Path,
    server: &str,
    ca_pem: &str,
    client: &CertPair,
) -> Result<(), String> {
    use base64::Engine as _;
    use std::fmt::Write as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut text = String::new();
    let _ = write!(
        text,
        "apiVersion: v1\nkind: Config\ncurrent-context: test\nclusters:\n- name: test\n  cluster:\n    server: {server}\n    \
         certificate-authority-data: {ca}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n    \
         namespace: default\nusers:\n- name: test\n  user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\n",
        ca = b64(ca_pem),
        cert = b64(&client.cert_pem),
        key = b64(&client.key_pem),
    );
    std::fs::write(path, text).map_err(|e| format!("write {}: {e}", path.display()))
}
