//! Standalone mode's credentials: a CA kept in the state directory (so
//! kubeconfigs stay valid across restarts), a serving certificate for the
//! listen address, an admin client certificate, and the kubeconfig that
//! makes `kubectl --kubeconfig … get postgreses` work at once.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::pki::{Ca, CertPair, LeafSpec};

/// Credentials of a standalone server.
pub struct Credentials {
    /// The CA, PEM (trusted by the kubeconfig; signs client certificates).
    pub ca_pem: String,
    /// Serving certificate and key.
    pub serving: CertPair,
    /// The admin client certificate written into the kubeconfig.
    pub client: CertPair,
}

/// Failures preparing credentials.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// File I/O in the state directory.
    #[error("{what} {path}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Certificate generation.
    #[error(transparent)]
    Pki(#[from] crate::pki::Error),
    /// A stored CA could not be loaded.
    #[error("the CA in {path} is unusable ({message}); remove the directory to start afresh")]
    BadCa {
        /// The directory.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// The default state directory: `$XDG_STATE_HOME/kubectl-cozy` or `~/.local/state/kubectl-cozy`.
pub fn default_state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("kubectl-cozy");
    }
    home().join(".local/state/kubectl-cozy")
}

/// The default kubeconfig path: `$XDG_CONFIG_HOME/kubectl-cozy/standalone.kubeconfig`
/// or `~/.config/kubectl-cozy/standalone.kubeconfig`.
pub fn default_kubeconfig_path() -> PathBuf {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".config"));
    base.join("kubectl-cozy").join("standalone.kubeconfig")
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error + use<> {
    let path = path.to_owned();
    move |source| Error::Io { what, path, source }
}

/// Loads (or creates) the CA in `state_dir` and issues fresh serving and client certificates.
pub fn credentials(state_dir: &Path, listen: SocketAddr) -> Result<Credentials, Error> {
    std::fs::create_dir_all(state_dir).map_err(io("create", state_dir))?;
    let ca_cert = state_dir.join("ca.crt");
    let ca_key = state_dir.join("ca.key");
    let ca = if ca_cert.exists() && ca_key.exists() {
        let cert = std::fs::read_to_string(&ca_cert).map_err(io("read", &ca_cert))?;
        let key = std::fs::read_to_string(&ca_key).map_err(io("read", &ca_key))?;
        Ca::from_pem(&cert, &key).map_err(|e| Error::BadCa {
            path: state_dir.to_owned(),
            message: e.to_string(),
        })?
    } else {
        let ca = Ca::new("kubectl-cozy standalone CA")?;
        write_private(&ca_key, &ca.pair().key_pem)?;
        std::fs::write(&ca_cert, ca.cert_pem()).map_err(io("write", &ca_cert))?;
        ca
    };
    let mut ips = vec!["127.0.0.1".parse().expect("ip"), "::1".parse().expect("ip")];
    if !listen.ip().is_unspecified() && !ips.contains(&listen.ip()) {
        ips.push(listen.ip());
    }
    let serving = ca.issue(&LeafSpec::server("kubectl-cozy", &["localhost"], &ips))?;
    let client = ca.issue(&LeafSpec::client("kubectl-cozy-admin", &["system:masters"]))?;
    Ok(Credentials {
        ca_pem: ca.cert_pem().to_owned(),
        serving,
        client,
    })
}

/// Writes `text` to `path` readable by the owner only, atomically: into a
/// temporary file beside it, then renamed over it, so a reader (a kubectl
/// started the moment `serve` says it is ready) never sees half a file.
fn write_private(path: &Path, text: &str) -> Result<(), Error> {
    use std::io::Write;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())
                .and_then(|()| file.sync_all())
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(io("write", path))
}

/// Writes a kubeconfig (context `kubectl-cozy`) for `server` and returns its text.
pub fn write_kubeconfig(path: &Path, server: &str, credentials: &Credentials) -> Result<(), Error> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: kubectl-cozy\nclusters:\n- name: kubectl-cozy\n  cluster:\n    \
         server: {server}\n    certificate-authority-data: {ca}\ncontexts:\n- name: kubectl-cozy\n  context:\n    \
         cluster: kubectl-cozy\n    user: kubectl-cozy-admin\n    namespace: default\nusers:\n- name: kubectl-cozy-admin\n  \
         user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\n",
        ca = b64(&credentials.ca_pem),
        cert = b64(&credentials.client.cert_pem),
        key = b64(&credentials.client.key_pem),
    );
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io("create", parent))?;
    }
    write_private(path, &text)
}
