//! Certificates made in-process with rcgen: certificate authorities and the
//! serving and client certificates they sign (ECDSA P-256, PEM). Used for the
//! extension server's own TLS and, in tests, for a whole local control plane.
//!
//! Lifetimes are bounded as kubeadm bounds them: a CA for ten years, a leaf
//! for one year and never past its CA; both start a few minutes in the past
//! to forgive clock skew.

use std::net::IpAddr;

use time::{Duration, OffsetDateTime};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};

/// How long a new CA is valid.
pub const CA_LIFETIME: Duration = Duration::days(3650);
/// How long a new leaf certificate is valid (at most; never past its CA).
pub const LEAF_LIFETIME: Duration = Duration::days(365);
/// How far in the past validity starts, for clients whose clock is behind.
const BACKDATE: Duration = Duration::minutes(5);

/// Certificate generation failed.
#[derive(Debug, thiserror::Error)]
#[error("generate certificate {common_name}")]
pub struct Error {
    common_name: String,
    #[source]
    source: rcgen::Error,
}

/// A PEM certificate and its PEM (PKCS#8) private key.
#[derive(Debug, Clone)]
pub struct CertPair {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PEM (PKCS#8).
    pub key_pem: String,
}

/// What a leaf certificate is for.
#[derive(Debug, Clone, Default)]
pub struct LeafSpec {
    /// Subject CN: the user name for client certificates.
    pub common_name: String,
    /// Subject O entry: the group of a client certificate. At most one:
    /// rcgen writes one value per attribute type, so [`Ca::issue`] refuses
    /// more rather than silently dropping groups.
    pub organizations: Vec<String>,
    /// DNS subject alternative names.
    pub dns_names: Vec<String>,
    /// IP subject alternative names.
    pub ips: Vec<IpAddr>,
    /// Usable as a TLS server certificate.
    pub server: bool,
    /// Usable as a TLS client certificate.
    pub client: bool,
    /// Valid from yesterday for this many days; `None`: rcgen's default
    /// (1975 to 4096, for throw-away test certificates).
    pub valid_days: Option<u32>,
}

impl LeafSpec {
    /// A client certificate for `user` in `groups` (at most one, see
    /// [`LeafSpec::organizations`]).
    pub fn client(user: &str, groups: &[&str]) -> Self {
        LeafSpec {
            common_name: user.to_owned(),
            organizations: groups.iter().map(|g| (*g).to_owned()).collect(),
            client: true,
            ..Default::default()
        }
    }

    /// A serving certificate for these DNS names and IPs.
    pub fn server(common_name: &str, dns_names: &[&str], ips: &[IpAddr]) -> Self {
        LeafSpec {
            common_name: common_name.to_owned(),
            dns_names: dns_names.iter().map(|d| (*d).to_owned()).collect(),
            ips: ips.to_vec(),
            server: true,
            ..Default::default()
        }
    }
}

/// A certificate authority able to sign leaf certificates.
pub struct Ca {
    pem: CertPair,
    issuer: Issuer<'static, KeyPair>,
    not_after: OffsetDateTime,
}

impl std::fmt::Debug for Ca {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ca")
            .field("cert_pem", &self.pem.cert_pem)
            .finish_non_exhaustive()
    }
}

impl Ca {
    /// A new self-signed CA with this common name.
    pub fn new(common_name: &str) -> Result<Ca, Error> {
        let wrap = |source| Error {
            common_name: common_name.to_owned(),
            source,
        };
        let key = KeyPair::generate().map_err(wrap)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(wrap)?;
        let now = OffsetDateTime::now_utc();
        params.not_before = now - BACKDATE;
        params.not_after = now + CA_LIFETIME;
        let not_after = params.not_after;
        params.distinguished_name = dn(common_name, &[]);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).map_err(wrap)?;
        let pem = CertPair {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        };
        Ok(Ca {
            pem,
            issuer: Issuer::new(params, key),
            not_after,
        })
    }

    /// Loads a CA from its PEM certificate and key.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Ca, Error> {
        let wrap = |source| Error {
            common_name: "(stored CA)".into(),
            source,
        };
        let key = KeyPair::from_pem(key_pem).map_err(wrap)?;
        let issuer = Issuer::from_ca_cert_pem(cert_pem, key).map_err(wrap)?;
        let not_after = not_after(cert_pem).map_err(|e| wrap(rcgen::Error::X509(e)))?;
        Ok(Ca {
            pem: CertPair {
                cert_pem: cert_pem.to_owned(),
                key_pem: key_pem.to_owned(),
            },
            issuer,
            not_after,
        })
    }

    /// When the CA certificate expires.
    pub fn not_after(&self) -> OffsetDateTime {
        self.not_after
    }

    /// The CA certificate, PEM.
    pub fn cert_pem(&self) -> &str {
        &self.pem.cert_pem
    }

    /// The CA certificate and key, PEM.
    pub fn pair(&self) -> &CertPair {
        &self.pem
    }

    /// Signs a new leaf certificate.
    pub fn issue(&self, spec: &LeafSpec) -> Result<CertPair, Error> {
        let wrap = |source| Error {
            common_name: spec.common_name.clone(),
            source,
        };
        if spec.organizations.len() > 1 {
            return Err(wrap(rcgen::Error::X509(format!(
                "one subject organization (group) at most, got {:?}",
                spec.organizations
            ))));
        }
        let key = KeyPair::generate().map_err(wrap)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(wrap)?;
        let now = OffsetDateTime::now_utc();
        params.not_before = now - BACKDATE;
        params.not_after = (now + LEAF_LIFETIME).min(self.not_after);
        params.distinguished_name = dn(&spec.common_name, &spec.organizations);
        for name in &spec.dns_names {
            params
                .subject_alt_names
                .push(SanType::DnsName(name.clone().try_into().map_err(wrap)?));
        }
        for ip in &spec.ips {
            params.subject_alt_names.push(SanType::IpAddress(*ip));
        }
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        if spec.server {
            params
                .extended_key_usages
                .push(ExtendedKeyUsagePurpose::ServerAuth);
        }
        if spec.client {
            params
                .extended_key_usages
                .push(ExtendedKeyUsagePurpose::ClientAuth);
        }
        params.use_authority_key_identifier_extension = true;
        if let Some(days) = spec.valid_days {
            let day = |offset: i64| {
                let date = jiff::tz::Offset::UTC
                    .to_datetime(jiff::Timestamp::now())
                    .date()
                    .checked_add(jiff::Span::new().days(offset))
                    .unwrap_or(jiff::civil::Date::MAX);
                rcgen::date_time_ymd(
                    i32::from(date.year()),
                    u8::try_from(date.month()).unwrap_or(1),
                    u8::try_from(date.day()).unwrap_or(1),
                )
            };
            params.not_before = day(-1);
            params.not_after = day(i64::from(days));
        }
        let cert = params.signed_by(&key, &self.issuer).map_err(wrap)?;
        Ok(CertPair {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// A bare key pair (for service-account token signing): private key PEM
/// (PKCS#8) and public key PEM (SPKI).
pub fn key_pair() -> Result<(String, String), Error> {
    let key = KeyPair::generate().map_err(|source| Error {
        common_name: "(key pair)".into(),
        source,
    })?;
    Ok((key.serialize_pem(), key.public_key_pem()))
}

/// When the (first) certificate in `cert_pem` expires.
pub fn not_after(cert_pem: &str) -> Result<OffsetDateTime, String> {
    let (_, pem) =
        x509_parser::pem::parse_x509_pem(cert_pem.as_bytes()).map_err(|e| e.to_string())?;
    let cert = pem.parse_x509().map_err(|e| e.to_string())?;
    Ok(cert.validity().not_after.to_datetime())
}

fn dn(common_name: &str, organizations: &[String]) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    for org in organizations {
        dn.push(DnType::OrganizationName, org.clone());
    }
    dn.push(DnType::CommonName, common_name);
    dn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_parseable_server_and_client_certificates() {
        let ca = Ca::new("test-ca").unwrap();
        let server = ca
            .issue(&LeafSpec::server(
                "ext",
                &["ext.default.svc", "localhost"],
                &["127.0.0.1".parse().unwrap()],
            ))
            .unwrap();
        let client = ca
            .issue(&LeafSpec::client("admin", &["system:masters"]))
            .unwrap();
        for pair in [&server, &client] {
            assert!(pair.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
            assert!(pair.key_pem.contains("PRIVATE KEY"));
            // The issuer must be able to parse what it signed.
            let key = KeyPair::from_pem(&pair.key_pem).unwrap();
            Issuer::from_ca_cert_pem(&pair.cert_pem, key).unwrap();
        }
        let (private, public) = key_pair().unwrap();
        assert!(private.contains("PRIVATE KEY") && public.contains("PUBLIC KEY"));
    }

    #[test]
    fn certificates_have_bounded_lifetimes() {
        let ca = Ca::new("test-ca").unwrap();
        let now = OffsetDateTime::now_utc();
        let ca_end = not_after(ca.cert_pem()).unwrap();
        assert!(ca_end > now + CA_LIFETIME - Duration::days(1) && ca_end <= now + CA_LIFETIME);
        let leaf = ca.issue(&LeafSpec::client("admin", &[])).unwrap();
        let leaf_end = not_after(&leaf.cert_pem).unwrap();
        assert!(
            leaf_end > now + LEAF_LIFETIME - Duration::days(1) && leaf_end <= now + LEAF_LIFETIME
        );
        // A stored CA keeps its end, and no leaf outlives it.
        let reloaded = Ca::from_pem(ca.cert_pem(), &ca.pair().key_pem).unwrap();
        assert_eq!(
            reloaded.not_after().unix_timestamp(),
            ca_end.unix_timestamp()
        );
    }

    #[test]
    fn refuses_several_groups_rather_than_dropping_some() {
        let ca = Ca::new("test-ca").unwrap();
        let err = ca
            .issue(&LeafSpec::client("bob", &["dev", "ops"]))
            .unwrap_err();
        let chain = format!("{err}: {}", std::error::Error::source(&err).unwrap());
        assert!(chain.contains("one subject organization"), "{chain}");
    }
}
