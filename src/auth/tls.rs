//! The TLS half of authentication: a rustls [`ClientCertVerifier`] that
//! *requests* a client certificate, accepts any chain at the handshake and
//! only checks that the client holds the certificate's key (the handshake
//! signature), plus [`PeerCertificates`], what a connection presented.
//!
//! Why defer the chain check: two CAs apply (the requestheader CA for the
//! aggregator's front proxy, the client CA for x509 users), and both can
//! change at run time when `extension-apiserver-authentication` changes. A
//! handshake-time verifier holds one fixed root store; verifying per request
//! in [`super::authn`] against the current [`super::AuthConfig`] does not.
//! Kubelet probes and bearer-token clients send no certificate at all, so the
//! certificate is optional (contract §1.1).
//!
//! Verifying a chain costs signature checks, so each connection remembers its
//! verdicts per trust generation for a minute ([`PeerCertificates::verdict`]).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};

/// How long a connection's chain verdict stays valid before the chain is
/// verified again (certificates expire; connections live long).
const VERDICT_TTL: Duration = Duration::from_secs(60);

/// Requests a client certificate, never requires one, and defers chain
/// verification to the application layer; handshake signatures are verified
/// here, so a presented certificate always belongs to the client.
#[derive(Debug)]
pub(crate) struct DeferredClientCertVerifier {
    algorithms: WebPkiSupportedAlgorithms,
}

impl DeferredClientCertVerifier {
    /// A verifier using ring's signature algorithms.
    pub(crate) fn new() -> DeferredClientCertVerifier {
        DeferredClientCertVerifier {
            algorithms: provider().signature_verification_algorithms,
        }
    }
}

impl Default for DeferredClientCertVerifier {
    fn default() -> Self {
        DeferredClientCertVerifier::new()
    }
}

/// The crypto provider every TLS piece of the server uses.
pub(crate) fn provider() -> CryptoProvider {
    rustls::crypto::ring::default_provider()
}

impl ClientCertVerifier for DeferredClientCertVerifier {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        // No hints: client-go and kubectl then send whatever certificate they
        // have, and which CA will judge it is only known per request.
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Which CA a verdict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// `requestheader-client-ca-file`.
    RequestHeader,
    /// `client-ca-file`.
    ClientCa,
}

/// The subject of a leaf certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    /// The first CN.
    pub common_name: String,
    /// Every O, in order.
    pub organizations: Vec<String>,
}

#[derive(Debug)]
struct Verdict {
    trust: Trust,
    generation: u64,
    at: Instant,
    result: Result<(), String>,
}

/// The certificate chain a connection presented (leaf first), its parsed
/// subject, and remembered verification verdicts.
#[derive(Debug, Default)]
pub struct PeerCertificates {
    chain: Vec<CertificateDer<'static>>,
    subject: Option<Subject>,
    verdicts: Mutex<Vec<Verdict>>,
}

impl PeerCertificates {
    /// A connection without a client certificate.
    pub fn none() -> PeerCertificates {
        PeerCertificates::default()
    }

    /// What rustls reports for a connection.
    pub fn from_chain(chain: Option<&[CertificateDer<'_>]>) -> PeerCertificates {
        let chain: Vec<CertificateDer<'static>> = chain
            .unwrap_or_default()
            .iter()
            .map(|c| c.clone().into_owned())
            .collect();
        let subject = chain.first().and_then(|leaf| subject_of(leaf.as_ref()));
        PeerCertificates {
            chain,
            subject,
            verdicts: Mutex::new(Vec::new()),
        }
    }

    /// Whether a certificate was presented.
    pub fn present(&self) -> bool {
        !self.chain.is_empty()
    }

    /// The leaf's subject (None without a certificate or when unparsable).
    pub fn subject(&self) -> Option<&Subject> {
        self.subject.as_ref()
    }

    /// Whether the chain verifies against `trust` at `generation`, computed
    /// by `verify(leaf, intermediates)` at most once a minute per generation.
    pub(crate) fn verdict(
        &self,
        trust: Trust,
        generation: u64,
        verify: impl FnOnce(&CertificateDer<'static>, &[CertificateDer<'static>]) -> Result<(), String>,
    ) -> Result<(), String> {
        let Some((leaf, intermediates)) = self.chain.split_first() else {
            return Err("no client certificate".to_owned());
        };
        let now = Instant::now();
        let mut verdicts = self.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = verdicts.iter().find(|v| {
            v.trust == trust && v.generation == generation && now.duration_since(v.at) < VERDICT_TTL
        }) {
            return v.result.clone();
        }
        let result = verify(leaf, intermediates);
        verdicts.retain(|v| v.trust != trust);
        verdicts.push(Verdict {
            trust,
            generation,
            at: now,
            result: result.clone(),
        });
        result
    }
}

fn subject_of(der: &[u8]) -> Option<Subject> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let subject = cert.subject();
    let common_name = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .unwrap_or_default()
        .to_owned();
    let organizations = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_owned))
        .collect();
    Some(Subject {
        common_name,
        organizations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pki::{Ca, LeafSpec};
    use rustls::pki_types::pem::PemObject;

    fn der(pem: &str) -> CertificateDer<'static> {
        CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
    }

    #[test]
    fn subject_and_memoised_verdicts() {
        let ca = Ca::new("t").unwrap();
        // One O only: rcgen keeps a single value per attribute type.
        let pair = ca.issue(&LeafSpec::client("alice", &["dev"])).unwrap();
        let peer = PeerCertificates::from_chain(Some(&[der(&pair.cert_pem)]));
        assert!(peer.present());
        assert_eq!(
            peer.subject(),
            Some(&Subject {
                common_name: "alice".into(),
                organizations: vec!["dev".into()],
            })
        );
        let mut calls = 0;
        for _ in 0..3 {
            let r = peer.verdict(Trust::ClientCa, 1, |_, _| {
                calls += 1;
                Ok(())
            });
            assert!(r.is_ok());
        }
        assert_eq!(calls, 1, "the verdict is remembered");
        let r = peer.verdict(Trust::ClientCa, 2, |_, _| Err("rotated".into()));
        assert_eq!(r, Err("rotated".into()), "a new generation verifies again");
        assert!(
            PeerCertificates::none()
                .verdict(Trust::RequestHeader, 1, |_, _| Ok(()))
                .is_err()
        );
    }
}
