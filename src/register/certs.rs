//! The serving certificate a cluster-mode `serve` session presents to
//! kube-apiserver's aggregator, and the CA the APIService trusts through
//! `caBundle`.
//!
//! The aggregator always dials with `ServerName: <service>.<namespace>.svc`
//! (whatever the Service type), so the certificate names that, plus
//! `localhost` and `127.0.0.1` for direct use. The CA is kept per cluster and
//! served groups under the state directory
//! (`<state>/serve/<cluster>/<groups>/ca.{crt,key}`), so `caBundle` stays the
//! same across sessions; the serving certificate next to it
//! (`serving.{crt,key}`) is reused while it names the same hosts and is valid
//! for more than [`RENEW_BEFORE_DAYS`], else a new one is issued (valid
//! [`SERVING_DAYS`]). The directory is 0700 and every file 0600.
//! [`ephemeral`] makes a throw-away set in memory (`--dry-run` writes no
//! state).

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::cert_files::{
    CertFilesError, create_private_dir, read, store_ca, stored_ca, write_private,
};
use crate::pki::{Ca, CertPair, LeafSpec};

/// How long a new serving certificate is valid.
pub const SERVING_DAYS: u32 = 365;
/// A serving certificate expiring sooner than this is replaced.
pub const RENEW_BEFORE_DAYS: i64 = 30;

/// What the server presents and what kube-apiserver trusts.
#[derive(Debug, Clone)]
pub struct ServingCerts {
    /// The CA, PEM: the APIService's `caBundle`.
    pub ca_pem: String,
    /// The serving certificate and key, PEM.
    pub serving: CertPair,
    /// Whether the serving certificate was issued now (not reused).
    pub issued: bool,
    /// Where they are kept (`None` for [`ephemeral`] ones).
    pub dir: Option<PathBuf>,
}

impl ServingCerts {
    /// The certificate chain the server presents: leaf, then CA.
    pub fn chain_pem(&self) -> String {
        format!("{}{}", self.serving.cert_pem, self.ca_pem)
    }
}

/// The names the serving certificate must carry for Service `service` in
/// `namespace`.
pub fn hosts(service: &str, namespace: &str) -> (Vec<String>, Vec<IpAddr>) {
    (
        vec![format!("{service}.{namespace}.svc"), "localhost".to_owned()],
        vec![IpAddr::from([127, 0, 0, 1])],
    )
}

/// The directory for `cluster_url` and `groups` under `state_dir`: the
/// cluster's host and port made path-safe plus a short hash of the URL, then
/// the groups (sorted, `+`-joined).
pub fn dir_for(state_dir: &Path, cluster_url: &str, groups: &[String]) -> PathBuf {
    let digest = Sha256::digest(cluster_url.as_bytes());
    let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let host = cluster_url
        .split_once("://")
        .map(|(_, rest)| rest)
        .unwrap_or(cluster_url)
        .split('/')
        .next()
        .unwrap_or_default();
    let cluster = format!("{}-{hash}", safe(host));
    let mut groups: Vec<&str> = groups.iter().map(String::as_str).collect();
    groups.sort_unstable();
    groups.dedup();
    let groups = if groups.is_empty() {
        "none".to_owned()
    } else {
        safe(&groups.join("+"))
    };
    state_dir.join("serve").join(cluster).join(groups)
}

fn safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Loads the CA in `dir` (creating it the first time) and reuses or issues
/// the serving certificate for Service `service` in `namespace`.
pub fn load_or_create(
    dir: &Path,
    service: &str,
    namespace: &str,
) -> Result<ServingCerts, CertFilesError> {
    create_private_dir(dir)?;
    let ca = match stored_ca(dir)? {
        Some(ca) => ca,
        None => {
            let ca = Ca::new("kubectl-cozy serve CA")?;
            store_ca(dir, &ca)?;
            ca
        }
    };
    let (dns, ips) = hosts(service, namespace);
    let serving_cert = dir.join("serving.crt");
    let serving_key = dir.join("serving.key");
    let now = jiff::Timestamp::now();
    if serving_cert.exists() && serving_key.exists() {
        let cert_pem = read(&serving_cert)?;
        let key_pem = read(&serving_key)?;
        if reusable(&cert_pem, ca.cert_pem(), &dns, &ips, now) {
            return Ok(ServingCerts {
                ca_pem: ca.cert_pem().to_owned(),
                serving: CertPair { cert_pem, key_pem },
                issued: false,
                dir: Some(dir.to_owned()),
            });
        }
    }
    let serving = issue(&ca, &dns, &ips)?;
    write_private(&serving_key, &serving.key_pem)?;
    write_private(&serving_cert, &serving.cert_pem)?;
    Ok(ServingCerts {
        ca_pem: ca.cert_pem().to_owned(),
        serving,
        issued: true,
        dir: Some(dir.to_owned()),
    })
}

/// A throw-away CA and serving certificate, in memory only.
pub fn ephemeral(service: &str, namespace: &str) -> Result<ServingCerts, CertFilesError> {
    let ca = Ca::new("kubectl-cozy serve CA")?;
    let (dns, ips) = hosts(service, namespace);
    let serving = issue(&ca, &dns, &ips)?;
    Ok(ServingCerts {
        ca_pem: ca.cert_pem().to_owned(),
        serving,
        issued: true,
        dir: None,
    })
}

/// A serving certificate for `dns` and `ips` from `ca`, valid [`SERVING_DAYS`].
pub fn issue(ca: &Ca, dns: &[String], ips: &[IpAddr]) -> Result<CertPair, CertFilesError> {
    let names: Vec<&str> = dns.iter().map(String::as_str).collect();
    let mut spec = LeafSpec::server("kubectl-cozy serve", &names, ips);
    spec.valid_days = Some(SERVING_DAYS);
    Ok(ca.issue(&spec)?)
}

/// Whether a stored serving certificate can be used again: it parses, was
/// issued by this CA, names exactly `dns` and `ips`, and is valid for more
/// than [`RENEW_BEFORE_DAYS`] from `now`.
pub fn reusable(
    cert_pem: &str,
    ca_pem: &str,
    dns: &[String],
    ips: &[IpAddr],
    now: jiff::Timestamp,
) -> bool {
    let Some((not_before, not_after, issuer, names, addrs)) = inspect(cert_pem) else {
        return false;
    };
    let Some(ca_key_id) = key_id(ca_pem, false) else {
        return false;
    };
    let renew_at = now.as_second() + RENEW_BEFORE_DAYS * 86_400;
    let mut want_dns: Vec<&str> = dns.iter().map(String::as_str).collect();
    want_dns.sort_unstable();
    let mut have_dns: Vec<&str> = names.iter().map(String::as_str).collect();
    have_dns.sort_unstable();
    let mut want_ips = ips.to_vec();
    want_ips.sort_unstable();
    let mut have_ips = addrs;
    have_ips.sort_unstable();
    not_before <= now.as_second()
        && not_after > renew_at
        && issuer == Some(ca_key_id)
        && want_dns == have_dns
        && want_ips == have_ips
}

/// When the first certificate in `cert_pem` expires (Unix seconds), if it
/// parses.
pub fn not_after(cert_pem: &str) -> Option<i64> {
    inspect(cert_pem).map(|(_, not_after, ..)| not_after)
}

type Inspected = (i64, i64, Option<Vec<u8>>, Vec<String>, Vec<IpAddr>);

/// Validity, issuer key id and subject alternative names of the first
/// certificate in `pem`.
fn inspect(pem_text: &str) -> Option<Inspected> {
    use x509_parser::extensions::GeneralName;
    let (_, pem) = x509_parser::pem::parse_x509_pem(pem_text.as_bytes()).ok()?;
    let cert = pem.parse_x509().ok()?;
    let validity = cert.validity();
    let mut names = Vec::new();
    let mut addrs = Vec::new();
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                GeneralName::DNSName(d) => names.push((*d).to_owned()),
                GeneralName::IPAddress(bytes) => match bytes.len() {
                    4 => addrs.push(IpAddr::from(<[u8; 4]>::try_from(*bytes).ok()?)),
                    16 => addrs.push(IpAddr::from(<[u8; 16]>::try_from(*bytes).ok()?)),
                    _ => {}
                },
                _ => {}
            }
        }
    }
    Some((
        validity.not_before.timestamp(),
        validity.not_after.timestamp(),
        key_id(pem_text, true),
        names,
        addrs,
    ))
}

/// The authority key id (`authority`) or the subject key id of the first
/// certificate in `pem`: a leaf's authority key id equals its CA's subject
/// key id.
fn key_id(pem: &str, authority: bool) -> Option<Vec<u8>> {
    use x509_parser::extensions::ParsedExtension;
    let (_, pem) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).ok()?;
    let cert = pem.parse_x509().ok()?;
    cert.extensions()
        .iter()
        .find_map(|e| match e.parsed_extension() {
            ParsedExtension::AuthorityKeyIdentifier(aki) if authority => {
                aki.key_identifier.as_ref().map(|k| k.0.to_vec())
            }
            ParsedExtension::SubjectKeyIdentifier(ski) if !authority => Some(ski.0.to_vec()),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_per_cluster_and_groups() {
        let base = Path::new("/state");
        let a = dir_for(
            base,
            "https://127.0.0.1:6443",
            &["b.io".into(), "a.io".into()],
        );
        assert!(
            a.to_string_lossy()
                .starts_with("/state/serve/127.0.0.1-6443-"),
            "{}",
            a.display()
        );
        assert!(a.ends_with("a.io+b.io"), "{}", a.display());
        let b = dir_for(
            base,
            "https://127.0.0.1:6444",
            &["a.io".into(), "b.io".into()],
        );
        assert_ne!(a.parent(), b.parent());
        let c = dir_for(base, "https://127.0.0.1:6443/", &["a.io".into()]);
        assert_ne!(a, c);
    }

    #[test]
    fn stored_certificates_are_reused_while_valid_and_renewed_otherwise() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let first = load_or_create(&dir, "kubectl-cozy-a", "ns").unwrap();
        assert!(first.issued);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir), 0o700);
            for f in ["ca.crt", "ca.key", "serving.crt", "serving.key"] {
                assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
            }
        }
        // Same names: reused, same CA.
        let again = load_or_create(&dir, "kubectl-cozy-a", "ns").unwrap();
        assert!(!again.issued);
        assert_eq!(again.serving.cert_pem, first.serving.cert_pem);
        assert_eq!(again.ca_pem, first.ca_pem);
        // Another Service: a new serving certificate from the same CA.
        let other = load_or_create(&dir, "kubectl-cozy-b", "ns").unwrap();
        assert!(other.issued);
        assert_eq!(other.ca_pem, first.ca_pem);
        assert_ne!(other.serving.cert_pem, first.serving.cert_pem);

        let (dns, ips) = hosts("kubectl-cozy-b", "ns");
        assert_eq!(dns, ["kubectl-cozy-b.ns.svc", "localhost"]);
        let now = jiff::Timestamp::now();
        assert!(reusable(
            &other.serving.cert_pem,
            &other.ca_pem,
            &dns,
            &ips,
            now
        ));
        // Close to expiry (a year on), or from another CA: not reusable.
        let later = now + std::time::Duration::from_secs(340 * 86_400);
        assert!(!reusable(
            &other.serving.cert_pem,
            &other.ca_pem,
            &dns,
            &ips,
            later
        ));
        let stranger = ephemeral("kubectl-cozy-b", "ns").unwrap();
        assert!(!reusable(
            &other.serving.cert_pem,
            &stranger.ca_pem,
            &dns,
            &ips,
            now
        ));
        assert!(!reusable(
            "not a certificate",
            &other.ca_pem,
            &dns,
            &ips,
            now
        ));
    }

    #[test]
    fn a_broken_ca_is_reported_with_its_directory() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("ca.crt"), "junk").unwrap();
        std::fs::write(tmp.path().join("ca.key"), "junk").unwrap();
        let err = load_or_create(tmp.path(), "s", "ns").unwrap_err();
        assert!(
            err.to_string()
                .contains("remove the directory to start afresh"),
            "{err}"
        );
    }
}
