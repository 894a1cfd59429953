//! `kubectl-cozy serve --standalone` as a process for the fault tests (its
//! own store file, kinds from `examples/kinds`, `--listen 127.0.0.1:0`), a
//! kube client from the kubeconfig it writes, and raw TLS connections with
//! that kubeconfig's credentials for clients that misbehave on purpose
//! (trickled bodies, readers that never read).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::support::bins;

/// A running standalone server.
pub struct Standalone {
    /// The process.
    pub child: tokio::process::Child,
    /// The kubeconfig it wrote.
    pub kubeconfig: PathBuf,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Standalone {
    /// Starts a server on the store in `dir` (created on first start, reused
    /// after), draining for `drain` on SIGTERM; returns once it wrote its
    /// kubeconfig.
    pub async fn start(dir: &Path, drain: &str) -> Standalone {
        Standalone::start_with_open_files(dir, drain, None).await
    }

    /// [`Standalone::start`], the process started with a soft open-file
    /// limit of `soft` (a desktop's usual 1,024) when given.
    pub async fn start_with_open_files(dir: &Path, drain: &str, soft: Option<u64>) -> Standalone {
        let kubeconfig = dir.join("kubeconfig");
        let _ = std::fs::remove_file(&kubeconfig);
        let kinds = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
        let mut cmd = tokio::process::Command::new(bins::kubectl_cozy());
        if let Some(soft) = soft {
            soft_open_files(&mut cmd, soft);
        }
        let child = cmd
            .args([
                "serve",
                "--standalone",
                "--listen",
                "127.0.0.1:0",
                "--kinds",
            ])
            .arg(&kinds)
            .arg("--data")
            .arg(dir.join("store.sqlite"))
            .arg("--write-kubeconfig")
            .arg(&kubeconfig)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .args(["--drain-timeout", drain])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start serve --standalone");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !kubeconfig.exists() {
            assert!(
                Instant::now() < deadline,
                "serve --standalone wrote no kubeconfig"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Written in one go, but give a concurrent reader no partial file.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let config = read_kubeconfig(&kubeconfig);
        let server = config["clusters"][0]["cluster"]["server"]
            .as_str()
            .expect("server");
        let addr = server
            .strip_prefix("https://")
            .expect("https URL")
            .parse()
            .expect("server address");
        Standalone {
            child,
            kubeconfig,
            addr,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("running")
    }

    /// Sends `signal` to the server.
    #[expect(unsafe_code, reason = "kill(2) on our own child")]
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: a plain syscall on our own child.
        unsafe {
            libc::kill(self.pid() as libc::pid_t, signal);
        }
    }

    /// A kube client from its kubeconfig.
    pub async fn client(&self) -> kube::Client {
        let config = kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(&self.kubeconfig).expect("kubeconfig"),
            &Default::default(),
        )
        .await
        .expect("config");
        kube::Client::try_from(config).expect("client")
    }

    /// A raw TLS dialer with its kubeconfig's credentials.
    pub fn raw(&self) -> RawTls {
        RawTls::new(&self.kubeconfig, self.addr)
    }

    /// The server's resident and peak memory (`VmRSS`, `VmHWM`), in KiB.
    pub fn memory_kib(&self) -> (u64, u64) {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

#[expect(unsafe_code, reason = "setrlimit in the forked child before exec")]
fn soft_open_files(cmd: &mut tokio::process::Command, soft: u64) {
    // SAFETY: getrlimit and setrlimit are async-signal-safe; nothing is allocated.
    unsafe {
        cmd.pre_exec(move || {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            limit.rlim_cur = soft.min(limit.rlim_max);
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn read_kubeconfig(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read kubeconfig");
    serde_saphyr::from_str(&text).expect("kubeconfig YAML")
}

/// Opens TLS connections to a server as the kubeconfig's user.
#[derive(Clone)]
pub struct RawTls {
    connector: tokio_rustls::TlsConnector,
    addr: SocketAddr,
}

/// A raw client connection.
pub type TlsStream = tokio_rustls::client::TlsStream<tokio::net::TcpStream>;

impl RawTls {
    fn new(kubeconfig: &Path, addr: SocketAddr) -> RawTls {
        let config = read_kubeconfig(kubeconfig);
        let b64 = |v: &Value| {
            base64::engine::general_purpose::STANDARD
                .decode(v.as_str().expect("base64 field"))
                .expect("base64")
        };
        let ca = b64(&config["clusters"][0]["cluster"]["certificate-authority-data"]);
        let cert = b64(&config["users"][0]["user"]["client-certificate-data"]);
        let key = b64(&config["users"][0]["user"]["client-key-data"]);
        let mut roots = rustls::RootCertStore::empty();
        for ca in CertificateDer::pem_slice_iter(&ca) {
            roots.add(ca.expect("CA PEM")).expect("CA");
        }
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert)
            .collect::<Result<_, _>>()
            .expect("client certificate PEM");
        let key = PrivateKeyDer::from_pem_slice(&key).expect("client key PEM");
        let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .expect("client auth");
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        RawTls {
            connector: tokio_rustls::TlsConnector::from(Arc::new(tls)),
            addr,
        }
    }

    /// A new TLS connection.
    pub async fn connect(&self) -> std::io::Result<TlsStream> {
        let tcp = tokio::net::TcpStream::connect(self.addr).await?;
        let name = ServerName::IpAddress(self.addr.ip().into());
        self.connector.connect(name, tcp).await
    }

    /// A new connection that has sent `head` (a request head, with its
    /// blank line) and `body`.
    pub async fn send(&self, head: &str, body: &[u8]) -> std::io::Result<TlsStream> {
        let mut stream = self.connect().await?;
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body).await?;
        stream.flush().await?;
        Ok(stream)
    }
}
