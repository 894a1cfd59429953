//! The install's serving certificate.
//!
//! **Generated** (the default): a CA kept in Secret [`CA_SECRET`] (never
//! mounted) and a serving certificate for `kubectl-cozy.<ns>.svc` in Secret
//! [`SERVING_SECRET`] (`kubernetes.io/tls` plus `ca.crt`), which the pods
//! mount; the APIServices' `caBundle` is the CA. [`prepare`] reuses what the
//! cluster holds while it is valid: the CA while it parses with its key and
//! is valid for more than [`certs::RENEW_BEFORE_DAYS`], the serving
//! certificate while [`certs::reusable`] says so (issued by that CA, the
//! right names, more than 30 days left); otherwise it issues anew — a
//! rotation, which rolls the pods through the Deployment's certificate
//! digest annotation.
//!
//! **cert-manager** (`--cert-manager`): a self-signed Issuer makes a CA
//! Certificate, a CA Issuer signs the serving Certificate into the same
//! [`SERVING_SECRET`], and cert-manager's CA injector fills the APIServices'
//! `caBundle` (annotation [`super::INJECT_CA_FROM`]). cert-manager renews the
//! Secret; the pods read it at start, so a renewal needs a rollout
//! (`docs/install.md`). Whether the cluster has cert-manager at all is
//! [`super::served_resources`]'s to say, of [`CERT_MANAGER_API`].

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use serde_json::{Value, json};

use super::{InstallSpec, NAME, labels, metadata};
use crate::pki::{Ca, CertPair};
use crate::register::cert_files::CertFilesError;
use crate::register::certs::{self, RENEW_BEFORE_DAYS};

/// The Secret holding the CA (certificate and key).
pub const CA_SECRET: &str = "kubectl-cozy-ca";
/// The Secret the pods mount: `tls.crt`, `tls.key`, `ca.crt`.
pub const SERVING_SECRET: &str = "kubectl-cozy-serving";
/// The CA's common name.
const CA_NAME: &str = "kubectl-cozy install CA";

/// The certificates of a generated install.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The CA, PEM (with its key).
    pub ca: CertPair,
    /// The serving certificate and key, PEM.
    pub serving: CertPair,
    /// What happened: reused, or issued and why.
    pub notes: Vec<String>,
}

impl Generated {
    /// Whether nothing was issued (both reused).
    pub fn reused(&self) -> bool {
        self.notes.is_empty()
    }
}

/// The names the serving certificate carries in `namespace`.
pub fn hosts(namespace: &str) -> (Vec<String>, Vec<std::net::IpAddr>) {
    certs::hosts(NAME, namespace)
}

fn field(secret: Option<&Secret>, key: &str) -> Option<String> {
    let bytes = secret?.data.as_ref()?.get(key)?;
    String::from_utf8(bytes.0.clone()).ok()
}

/// The CA and serving certificate for `namespace`: those in `ca_secret` and
/// `serving_secret` (as read from the cluster) while valid at `now`, else
/// new ones.
pub fn prepare(
    ca_secret: Option<&Secret>,
    serving_secret: Option<&Secret>,
    namespace: &str,
    now: jiff::Timestamp,
) -> Result<Generated, CertFilesError> {
    let mut notes = Vec::new();
    let renew_at = now.as_second() + RENEW_BEFORE_DAYS * 86_400;
    let stored = match (field(ca_secret, "tls.crt"), field(ca_secret, "tls.key")) {
        (Some(cert), Some(key)) => match Ca::from_pem(&cert, &key) {
            Ok(ca) if certs::not_after(&cert).is_some_and(|t| t > renew_at) => Some(ca),
            Ok(_) => {
                notes.push(format!(
                    "new CA: Secret {CA_SECRET}'s expires within {RENEW_BEFORE_DAYS} days"
                ));
                None
            }
            Err(e) => {
                notes.push(format!("new CA: Secret {CA_SECRET}'s is unusable ({e})"));
                None
            }
        },
        _ if ca_secret.is_some() => {
            notes.push(format!(
                "new CA: Secret {CA_SECRET} lacks tls.crt or tls.key"
            ));
            None
        }
        _ => {
            notes.push("new CA (none in the cluster)".to_owned());
            None
        }
    };
    let ca = match stored {
        Some(ca) => ca,
        None => Ca::new(CA_NAME)?,
    };
    let (dns, ips) = hosts(namespace);
    let cert = field(serving_secret, "tls.crt");
    let key = field(serving_secret, "tls.key");
    let serving = match (cert, key) {
        (Some(cert_pem), Some(key_pem))
            if certs::reusable(&cert_pem, ca.cert_pem(), &dns, &ips, now) =>
        {
            CertPair { cert_pem, key_pem }
        }
        (cert, _) => {
            notes.push(match cert {
                None => "new serving certificate (none in the cluster)".to_owned(),
                Some(_) => format!(
                    "new serving certificate: Secret {SERVING_SECRET}'s is from another CA, names other hosts or expires within {RENEW_BEFORE_DAYS} days"
                ),
            });
            certs::issue(&ca, &dns, &ips)?
        }
    };
    Ok(Generated {
        ca: ca.pair().clone(),
        serving,
        notes,
    })
}

fn tls_secret(name: &str, namespace: &str, data: &[(&str, &str)]) -> Secret {
    Secret {
        metadata: metadata(name, Some(namespace)),
        type_: Some("kubernetes.io/tls".to_owned()),
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                .collect::<BTreeMap<_, _>>(),
        ),
        ..Secret::default()
    }
}

/// The CA's Secret (read back by the next install; not mounted).
pub fn ca_secret(spec: &InstallSpec, g: &Generated) -> Secret {
    tls_secret(
        CA_SECRET,
        &spec.namespace,
        &[("tls.crt", &g.ca.cert_pem), ("tls.key", &g.ca.key_pem)],
    )
}

/// The serving Secret the pods mount.
pub fn serving_secret(spec: &InstallSpec, g: &Generated) -> Secret {
    tls_secret(
        SERVING_SECRET,
        &spec.namespace,
        &[
            ("tls.crt", &g.serving.cert_pem),
            ("tls.key", &g.serving.key_pem),
            ("ca.crt", &g.ca.cert_pem),
        ],
    )
}

/// The API group/version cert-manager serves its Issuers and Certificates
/// in.
pub const CERT_MANAGER_API: &str = "cert-manager.io/v1";

/// cert-manager's objects: a self-signed Issuer, the CA Certificate, the CA
/// Issuer, the serving Certificate (into [`SERVING_SECRET`]).
pub fn cert_manager(spec: &InstallSpec) -> Vec<Value> {
    let ns = &spec.namespace;
    let meta = |name: &str| json!({"name": name, "namespace": ns, "labels": labels()});
    let self_signed = format!("{NAME}-selfsigned");
    let (dns, _) = hosts(ns);
    let service_names: Vec<&String> = dns.iter().filter(|d| d.ends_with(".svc")).collect();
    vec![
        json!({
            "apiVersion": "cert-manager.io/v1", "kind": "Issuer",
            "metadata": meta(&self_signed),
            "spec": {"selfSigned": {}},
        }),
        json!({
            "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": meta(CA_SECRET),
            "spec": {
                "isCA": true,
                "commonName": CA_NAME,
                "secretName": CA_SECRET,
                "duration": "87600h",
                "privateKey": {"algorithm": "ECDSA", "size": 256},
                "issuerRef": {"name": self_signed, "kind": "Issuer", "group": "cert-manager.io"},
            },
        }),
        json!({
            "apiVersion": "cert-manager.io/v1", "kind": "Issuer",
            "metadata": meta(CA_SECRET),
            "spec": {"ca": {"secretName": CA_SECRET}},
        }),
        json!({
            "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": meta(SERVING_SECRET),
            "spec": {
                "secretName": SERVING_SECRET,
                "dnsNames": service_names,
                "duration": format!("{}h", certs::SERVING_DAYS * 24),
                "renewBefore": format!("{}h", RENEW_BEFORE_DAYS * 24),
                "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
                "usages": ["server auth", "digital signature", "key encipherment"],
                "issuerRef": {"name": CA_SECRET, "kind": "Issuer", "group": "cert-manager.io"},
            },
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::Certificates;
    use super::super::tests::spec;
    use super::*;

    #[test]
    fn certificates_are_reused_while_valid_and_rotated_otherwise() {
        let now = jiff::Timestamp::now();
        let first = prepare(None, None, "cozy-test", now).unwrap();
        assert_eq!(first.notes.len(), 2, "{:?}", first.notes);
        let s = spec(Certificates::Generated(first.clone()));
        let (ca, serving) = (ca_secret(&s, &first), serving_secret(&s, &first));
        assert_eq!(serving.type_.as_deref(), Some("kubernetes.io/tls"));
        let keys: Vec<&String> = serving.data.as_ref().unwrap().keys().collect();
        assert_eq!(keys, ["ca.crt", "tls.crt", "tls.key"]);

        // Read back: both reused, nothing issued.
        let again = prepare(Some(&ca), Some(&serving), "cozy-test", now).unwrap();
        assert!(again.reused(), "{:?}", again.notes);
        assert_eq!(again.serving.cert_pem, first.serving.cert_pem);
        assert_eq!(again.ca.cert_pem, first.ca.cert_pem);

        // Within 30 days of the serving certificate's expiry: a new one, same CA.
        let later = now + std::time::Duration::from_secs(340 * 86_400);
        let rotated = prepare(Some(&ca), Some(&serving), "cozy-test", later).unwrap();
        assert_eq!(rotated.ca.cert_pem, first.ca.cert_pem);
        assert_ne!(rotated.serving.cert_pem, first.serving.cert_pem);
        assert!(
            rotated.notes[0].contains("expires within 30 days"),
            "{:?}",
            rotated.notes
        );

        // Another namespace: the names differ, a new serving certificate.
        let moved = prepare(Some(&ca), Some(&serving), "elsewhere", now).unwrap();
        assert_ne!(moved.serving.cert_pem, first.serving.cert_pem);
        assert_eq!(moved.ca.cert_pem, first.ca.cert_pem);

        // A broken CA Secret: a new CA, said so.
        let mut broken = ca.clone();
        broken
            .data
            .as_mut()
            .unwrap()
            .insert("tls.key".into(), ByteString(b"junk".to_vec()));
        let fresh = prepare(Some(&broken), Some(&serving), "cozy-test", now).unwrap();
        assert_ne!(fresh.ca.cert_pem, first.ca.cert_pem);
        assert!(fresh.notes[0].contains("unusable"), "{:?}", fresh.notes);
    }

    #[test]
    fn cert_manager_chains_a_ca_issuer_to_the_serving_secret() {
        let s = spec(Certificates::CertManager);
        let objects = cert_manager(&s);
        let kinds: Vec<&str> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["Issuer", "Certificate", "Issuer", "Certificate"]);
        let serving = &objects[3];
        assert_eq!(serving["spec"]["secretName"], SERVING_SECRET);
        assert_eq!(
            serving["spec"]["dnsNames"],
            json!([format!("{NAME}.cozy-test.svc")])
        );
        assert_eq!(
            serving["spec"]["issuerRef"]["name"],
            objects[2]["metadata"]["name"]
        );
        assert_eq!(objects[1]["spec"]["isCA"], true);
    }
}
