//! Standalone mode's credentials: a CA kept in the state directory (so
//! kubeconfigs stay valid across restarts), a serving certificate for the
//! listen address, an admin client certificate, and the kubeconfig that
//! makes `kubectl --kubeconfig … get postgreses` work at once.
//!
//! Every start issues fresh leaf certificates (one year at most) and renews
//! the CA when it has less than a year left or was made without a bound (by
//! versions that issued certificates valid until 4096). The serving
//! certificate names loopback, `localhost`, the host name, and the listen
//! address — every address of the host's interfaces when it is a wildcard —
//! and the kubeconfig points at an address it names.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::cert_files::{CertFilesError, io, store_ca, stored_ca, write_private};
use super::file_lock::FileLock;
use super::kubeconfig_file;
pub use super::kubeconfig_file::Kept;
use crate::pki::{CA_LIFETIME, Ca, CertPair, LEAF_LIFETIME, LeafSpec};

/// Credentials of a standalone server.
pub struct Credentials {
    /// The CA, PEM (trusted by the kubeconfig; signs client certificates).
    pub ca_pem: String,
    /// Serving certificate and key.
    pub serving: CertPair,
    /// The admin client certificate written into the kubeconfig.
    pub client: CertPair,
}

/// The default state directory: `$XDG_STATE_HOME/kubectl-cozy` or
/// `~/.local/state/kubectl-cozy`; with neither variable set, an error that
/// names `--state-dir`.
pub fn default_state_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("kubectl-cozy"));
    }
    Ok(home("XDG_STATE_HOME", "--state-dir DIR")?.join(".local/state/kubectl-cozy"))
}

/// The default kubeconfig path: `$XDG_CONFIG_HOME/kubectl-cozy/standalone.kubeconfig`
/// or `~/.config/kubectl-cozy/standalone.kubeconfig`; with neither variable
/// set, an error that names `--write-kubeconfig`.
pub fn default_kubeconfig_path() -> Result<PathBuf, String> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => home("XDG_CONFIG_HOME", "--write-kubeconfig PATH")?.join(".config"),
    };
    Ok(base.join("kubectl-cozy").join("standalone.kubeconfig"))
}

/// `$HOME`, or an error naming the variable and the flag that would do
/// instead: a shared temporary directory, which another user could have
/// prepared with a CA of theirs, is never the default.
fn home(variable: &str, flag: &str) -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| format!("neither HOME nor {variable} is set: pass {flag}"))
}

/// Loads (or creates, or renews) the CA in `state_dir` and issues fresh
/// serving and client certificates.
pub fn credentials(state_dir: &Path, listen: SocketAddr) -> Result<Credentials, CertFilesError> {
    crate::storage::private_files::create_dir(state_dir).map_err(io("create", state_dir))?;
    crate::storage::private_files::check_trusted_dir(state_dir)
        .map_err(io("use the state directory", state_dir))?;
    let stored = stored_ca(state_dir)?
        .filter(|ca| ca_is_current(ca.not_after(), time::OffsetDateTime::now_utc()));
    let ca = match stored {
        Some(ca) => ca,
        None => {
            let ca = Ca::new("kubectl-cozy standalone CA")?;
            store_ca(state_dir, &ca)?;
            ca
        }
    };
    let ips = serving_ips(listen.ip(), &host_ips());
    let mut dns = vec!["localhost".to_owned()];
    if let Some(host) = hostname::get().ok().and_then(|h| h.into_string().ok())
        && !host.is_empty()
        && host != "localhost"
        && rcgen::string::Ia5String::try_from(host.as_str()).is_ok()
    {
        dns.push(host);
    }
    let dns: Vec<&str> = dns.iter().map(String::as_str).collect();
    let serving = ca.issue(&LeafSpec::server("kubectl-cozy", &dns, &ips))?;
    let client = ca.issue(&LeafSpec::client("kubectl-cozy-admin", &["system:masters"]))?;
    Ok(Credentials {
        ca_pem: ca.cert_pem().to_owned(),
        serving,
        client,
    })
}

/// Whether a stored CA ending at `not_after` is kept: it has at least a
/// leaf's lifetime left and was made with a bounded lifetime.
fn ca_is_current(not_after: time::OffsetDateTime, now: time::OffsetDateTime) -> bool {
    not_after > now + LEAF_LIFETIME && not_after <= now + CA_LIFETIME + time::Duration::days(1)
}

/// The addresses of the host's interfaces (none when they cannot be read).
fn host_ips() -> Vec<IpAddr> {
    match if_addrs::get_if_addrs() {
        Ok(interfaces) => interfaces.into_iter().map(|i| i.ip()).collect(),
        Err(e) => {
            tracing::warn!("list network interfaces for the serving certificate: {e}");
            Vec::new()
        }
    }
}

/// The IP SANs of the serving certificate: loopback, and the listen address
/// or, for a wildcard, every host address of its family (both for `::`,
/// which takes IPv4 too on most hosts).
fn serving_ips(listen: IpAddr, host: &[IpAddr]) -> Vec<IpAddr> {
    let mut ips: Vec<IpAddr> = vec![Ipv4Addr::LOCALHOST.into(), Ipv6Addr::LOCALHOST.into()];
    let wanted: Vec<IpAddr> = match listen {
        IpAddr::V4(v4) if v4.is_unspecified() => {
            host.iter().filter(|ip| ip.is_ipv4()).copied().collect()
        }
        IpAddr::V6(v6) if v6.is_unspecified() => host.to_vec(),
        other => vec![other],
    };
    for ip in wanted {
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    ips
}

/// The URL a client uses to reach a server bound to `bound`: a wildcard
/// address is no destination, so loopback of its family stands for it.
pub fn server_url(bound: SocketAddr) -> String {
    let ip: IpAddr = match bound.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => Ipv4Addr::LOCALHOST.into(),
        IpAddr::V6(v6) if v6.is_unspecified() => Ipv6Addr::LOCALHOST.into(),
        other => other,
    };
    format!("https://{}", SocketAddr::new(ip, bound.port()))
}

/// What [`write_kubeconfig`] changed beside writing our entries.
#[derive(Debug, Default)]
pub struct KubeconfigWritten {
    /// The server the context named before, when it named another one.
    pub replaced_server: Option<String>,
    /// The context current before, when it was another one: made current
    /// again by [`restore_kubeconfig_context`] when the server stops.
    pub previous_context: Option<String>,
    /// Whether our context was current already: a server before this one
    /// stopped without restoring the one before it.
    pub ours_was_current: bool,
    /// The file written: the path given, symlinks resolved.
    pub file: PathBuf,
}

/// Writes the context `kubectl-cozy` for `server` into the kubeconfig at
/// `path`, keeping whatever else the file holds
/// ([`super::kubeconfig_file`]), and makes it current.
pub fn write_kubeconfig(
    path: &Path,
    server: &str,
    credentials: &Credentials,
) -> Result<KubeconfigWritten, CertFilesError> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let (ca_data, cert_data, key_data) = (
        b64(&credentials.ca_pem),
        b64(&credentials.client.cert_pem),
        b64(&credentials.client.key_pem),
    );
    let given = path;
    let path = real_path(path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io("create", parent))?;
    }
    // Named as kubectl names it: after the path as given, symlink or not.
    let _lock = FileLock::acquire(given)?;
    let existing = read_kubeconfig(&path)?;
    let merged = kubeconfig_file::merge(
        existing.as_deref(),
        &kubeconfig_file::Entries {
            server,
            ca_data: &ca_data,
            cert_data: &cert_data,
            key_data: &key_data,
        },
    )
    .map_err(|message| not_kubeconfig(&path, message))?;
    write_private(&path, &merged.text)?;
    Ok(KubeconfigWritten {
        replaced_server: merged.replaced_server,
        previous_context: merged.previous_context,
        ours_was_current: merged.ours_was_current,
        file: path,
    })
}

/// Makes `previous` the current context of the kubeconfig at `path` again,
/// if ours, for `server`, still is ([`kubeconfig_file::restore_context`]):
/// `Ok(None)` when it did, else why not (a file gone meanwhile is left
/// gone, as [`Kept::AnotherCurrent`]).
pub fn restore_kubeconfig_context(
    path: &Path,
    server: &str,
    previous: &str,
) -> Result<Option<Kept>, CertFilesError> {
    let given = path;
    let path = real_path(path);
    if !path.exists() {
        return Ok(Some(Kept::AnotherCurrent));
    }
    let _lock = FileLock::acquire(given)?;
    let Some(existing) = read_kubeconfig(&path)? else {
        return Ok(Some(Kept::AnotherCurrent));
    };
    let restored = kubeconfig_file::restore_context(&existing, server, previous)
        .map_err(|message| not_kubeconfig(&path, message))?;
    match restored {
        Ok(text) => write_private(&path, &text).map(|()| None),
        Err(kept) => Ok(Some(kept)),
    }
}

/// The file a kubeconfig path names: a kubeconfig kept elsewhere behind a
/// symlink (dotfiles) is written where it lives, and the link stays.
fn real_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// The kubeconfig's text, if the file exists.
fn read_kubeconfig(path: &Path) -> Result<Option<String>, CertFilesError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", path)(e)),
    }
}

fn not_kubeconfig(path: &Path, message: String) -> CertFilesError {
    CertFilesError::NotKubeconfig {
        path: path.to_owned(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use time::{Duration, OffsetDateTime};

    use super::*;

    #[test]
    fn kubeconfig_server_for_a_wildcard_listen_is_loopback() {
        assert_eq!(
            server_url("0.0.0.0:7443".parse().unwrap()),
            "https://127.0.0.1:7443"
        );
        assert_eq!(
            server_url("[::]:7443".parse().unwrap()),
            "https://[::1]:7443"
        );
        assert_eq!(
            server_url("10.1.2.3:7443".parse().unwrap()),
            "https://10.1.2.3:7443"
        );
    }

    #[test]
    fn serving_certificate_names_the_real_addresses_of_a_wildcard() {
        let host: Vec<IpAddr> = vec![
            "127.0.0.1".parse().unwrap(),
            "10.1.2.3".parse().unwrap(),
            "fd00::5".parse().unwrap(),
        ];
        let v4 = serving_ips("0.0.0.0".parse().unwrap(), &host);
        assert!(v4.contains(&"10.1.2.3".parse().unwrap()), "{v4:?}");
        assert!(!v4.contains(&"fd00::5".parse().unwrap()), "{v4:?}");
        assert!(!v4.iter().any(IpAddr::is_unspecified), "{v4:?}");
        let v6 = serving_ips("::".parse().unwrap(), &host);
        assert!(
            v6.contains(&"fd00::5".parse().unwrap()) && v6.contains(&"10.1.2.3".parse().unwrap())
        );
        let one = serving_ips("192.168.0.9".parse().unwrap(), &host);
        assert_eq!(one.len(), 3, "{one:?}");
        assert!(one.contains(&"192.168.0.9".parse().unwrap()));
    }

    #[test]
    fn unbounded_or_expiring_cas_are_renewed_on_start() {
        let now = OffsetDateTime::now_utc();
        assert!(ca_is_current(now + CA_LIFETIME, now));
        assert!(ca_is_current(now + Duration::days(400), now));
        assert!(!ca_is_current(now + Duration::days(100), now), "expiring");
        let year_4096 = OffsetDateTime::new_utc(
            time::Date::from_calendar_date(4096, time::Month::January, 1).unwrap(),
            time::Time::MIDNIGHT,
        );
        assert!(!ca_is_current(year_4096, now), "unbounded");
    }

    #[cfg(unix)]
    #[test]
    fn a_kubeconfig_behind_a_symlink_is_written_where_it_lives() {
        let tmp = tempfile::tempdir().unwrap();
        let credentials =
            credentials(&tmp.path().join("state"), "127.0.0.1:0".parse().unwrap()).unwrap();
        let real = tmp.path().join("dotfiles-kubeconfig");
        std::fs::write(
            &real,
            "apiVersion: v1\nkind: Config\ncontexts:\n- name: work\n",
        )
        .unwrap();
        let link = tmp.path().join("config");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_kubeconfig(&link, "https://127.0.0.1:6443", &credentials).unwrap();
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        let text = std::fs::read_to_string(&real).unwrap();
        assert!(
            text.contains("name: work") && text.contains("current-context: kubectl-cozy"),
            "{text}"
        );
    }

    #[test]
    fn the_context_current_before_is_restored_when_the_server_stops() {
        let tmp = tempfile::tempdir().unwrap();
        let credentials =
            credentials(&tmp.path().join("state"), "127.0.0.1:0".parse().unwrap()).unwrap();
        let path = tmp.path().join("config");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\ncurrent-context: work\ncontexts:\n- name: work\n",
        )
        .unwrap();
        let server = "https://127.0.0.1:6443";
        let written = write_kubeconfig(&path, server, &credentials).unwrap();
        assert_eq!(written.previous_context.as_deref(), Some("work"));
        // kubectl's lock was taken and released.
        assert!(!tmp.path().join("config.lock").exists());
        let held = FileLock::acquire(&path).unwrap();
        let err = restore_kubeconfig_context(&path, server, "work").unwrap_err();
        assert!(matches!(err, CertFilesError::Locked { .. }), "{err}");
        drop(held);
        assert_eq!(
            restore_kubeconfig_context(&path, server, "work").unwrap(),
            None
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("current-context: work") && text.contains("name: kubectl-cozy"),
            "{text}"
        );
        // Ours is no longer current: left alone.
        assert_eq!(
            restore_kubeconfig_context(&path, server, "work").unwrap(),
            Some(Kept::AnotherCurrent)
        );
        // A file removed meanwhile is not recreated.
        std::fs::remove_file(&path).unwrap();
        assert!(
            restore_kubeconfig_context(&path, server, "work")
                .unwrap()
                .is_some()
        );
        assert!(!path.exists());
    }

    #[test]
    fn a_stored_ca_is_kept_across_starts_and_leaves_are_fresh() {
        let tmp = tempfile::tempdir().unwrap();
        let listen: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let first = credentials(tmp.path(), listen).unwrap();
        let second = credentials(tmp.path(), listen).unwrap();
        assert_eq!(first.ca_pem, second.ca_pem);
        assert_ne!(first.serving.cert_pem, second.serving.cert_pem);
        let end = crate::pki::not_after(&second.serving.cert_pem).unwrap();
        assert!(end <= OffsetDateTime::now_utc() + LEAF_LIFETIME);
    }
}
