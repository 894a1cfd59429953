//! Security tests of delegated authentication and authorization on the real
//! control plane, through the aggregator (kubectl as a user) and straight at
//! the server (a raw TLS client that can present any certificate and any
//! header): per-kind RBAC, front-proxy spoofing, TokenReview, a dead
//! SubjectAccessReview endpoint, CA rotation without restart, the built-in
//! roles aggregating `--print-rbac`'s roles, impersonation, TLS versions,
//! slow clients, and credentials kept out of the logs.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kubectl_cozy::auth::config::{self, ConfigMapRef};
use kubectl_cozy::auth::review::{KubeReviewer, Reviewer};
use kubectl_cozy::auth::{Auth, Authenticator, Authorizer, DynamicAuthConfig};
use kubectl_cozy::pki::{Ca, CertPair, LeafSpec};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::aggregated::{aggregated, apply, start_server};
use crate::support::plane::{Plane, plane};
use crate::support::standalone::{kubectl, ok, text};
use crate::support::{bins, metric_sample};

const GV: &str = "/apis/apps.cozystack.io/v1alpha1";

/// A raw HTTP/1.1 answer.
#[derive(Debug)]
struct Reply {
    status: u16,
    body: String,
}

impl Reply {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_default()
    }
}

/// Writes `start`, then `tick` every 500 ms, until the server closes the
/// connection or `gives_up` says what it read is a final answer (or 30 s
/// pass, which fails the test); returns how long that took.
async fn time_until_cut_off<S>(
    stream: &mut S,
    start: &[u8],
    tick: &[u8],
    gives_up: fn(&[u8]) -> bool,
) -> Duration
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let started = Instant::now();
    stream.write_all(start).await.unwrap();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if stream.write_all(tick).await.is_err() || stream.flush().await.is_err() {
            return started.elapsed();
        }
        let mut buf = [0u8; 256];
        match tokio::time::timeout(Duration::from_millis(10), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return started.elapsed(),
            Ok(Ok(n)) if gives_up(&buf[..n]) => return started.elapsed(),
            Ok(Ok(_)) | Err(_) => {}
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "a trickling client was never cut off"
        );
    }
}

/// A client TLS config trusting `ca_pem`, without a client certificate.
pub(crate) fn client_config(ca_pem: &str) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("CA");
    }
    Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth(),
    )
}

fn connector(
    ca_pem: &str,
    identity: Option<&CertPair>,
    tls12_only: bool,
) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("CA");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] = if tls12_only {
        &[&rustls::version::TLS12]
    } else {
        &[&rustls::version::TLS13, &rustls::version::TLS12]
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .expect("versions")
        .with_root_certificates(roots);
    let config = match identity {
        Some(pair) => builder
            .with_client_auth_cert(
                CertificateDer::pem_slice_iter(pair.cert_pem.as_bytes())
                    .collect::<Result<Vec<_>, _>>()
                    .expect("cert"),
                PrivateKeyDer::from_pem_slice(pair.key_pem.as_bytes()).expect("key"),
            )
            .expect("client auth"),
        None => builder.with_no_client_auth(),
    };
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

/// Sends one request (`Connection: close`) and reads the whole answer.
async fn request(
    addr: SocketAddr,
    ca_pem: &str,
    identity: Option<&CertPair>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Reply {
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let name = ServerName::IpAddress(addr.ip().into());
    let mut tls = connector(ca_pem, identity, false)
        .connect(name, tcp)
        .await
        .expect("TLS handshake");
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(body) = body {
        text.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    text.push_str("\r\n");
    text.push_str(body.unwrap_or(""));
    tls.write_all(text.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(60), tls.read_to_end(&mut raw)).await;
    parse_reply(&raw)
}

fn parse_reply(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw);
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        let mut out = String::new();
        let mut rest = rest;
        while let Some((size, tail)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 || tail.len() < n {
                break;
            }
            out.push_str(&tail[..n]);
            rest = tail[n..].trim_start_matches("\r\n");
        }
        out
    } else {
        rest.to_owned()
    };
    Reply { status, body }
}

fn addr(url: &str) -> SocketAddr {
    url.trim_start_matches("https://").parse().expect("address")
}

fn postgres(name: &str) -> String {
    format!(
        "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata: {{name: {name}}}\nspec: {{replicas: 1}}\n"
    )
}

/// A Role allowing everything on `postgreses` only, bound to `user`.
fn postgres_only_role(plane: &Plane, ns: &str, user: &str) {
    apply(
        plane,
        &format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: pg-only, namespace: {ns}}}\n\
             rules:\n- {{apiGroups: [apps.cozystack.io], resources: [postgreses], verbs: ['*']}}\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: pg-only, namespace: {ns}}}\n\
             roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: pg-only}}\n\
             subjects: [{{apiGroup: rbac.authorization.k8s.io, kind: User, name: {user}}}]\n"
        ),
    )
    .expect("apply the Role");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_naming_postgreses_allows_postgreses_and_denies_redises() {
    let plane = plane();
    let server = aggregated();
    let ns = plane.namespace("authz").await;
    postgres_only_role(plane, &ns, "pat");
    let pat = plane.user_kubeconfig("pat", &["dev"]);

    // Through the aggregator (kube-apiserver's RBAC, then ours).
    ok(&kubectl(&pat, &["-n", &ns, "get", "postgreses"], None));
    let out = kubectl(&pat, &["-n", &ns, "get", "redises"], None);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Forbidden") || text(&out.stderr).contains("forbidden"));

    // Straight at the server as an x509 user of the client CA.
    let a = addr(&server.direct_url);
    let cert = plane
        .client_ca
        .issue(&LeafSpec::client("pat", &["dev"]))
        .unwrap();
    let ok = request(
        a,
        &server.ca_pem,
        Some(&cert),
        "GET",
        &format!("{GV}/namespaces/{ns}/postgreses"),
        &[],
        None,
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let denied = request(
        a,
        &server.ca_pem,
        Some(&cert),
        "GET",
        &format!("{GV}/namespaces/{ns}/redises"),
        &[],
        None,
    )
    .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    let status = denied.json();
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        format!(
            "redises.apps.cozystack.io is forbidden: User \"pat\" cannot list resource \"redises\" in API group \"apps.cozystack.io\" in the namespace \"{ns}\""
        )
    );
    assert_eq!(
        status["details"],
        serde_json::json!({"group": "apps.cozystack.io", "kind": "redises"})
    );

    // Straight at the server as the front proxy, for the same user.
    let proxy = &plane.front_proxy_client;
    let as_pat = [("X-Remote-User", "pat"), ("X-Remote-Group", "dev")];
    let ok = request(
        a,
        &server.ca_pem,
        Some(proxy),
        "GET",
        &format!("{GV}/namespaces/{ns}/postgreses"),
        &as_pat,
        None,
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let denied = request(
        a,
        &server.ca_pem,
        Some(proxy),
        "GET",
        &format!("{GV}/namespaces/{ns}/redises"),
        &as_pat,
        None,
    )
    .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    // A single-object watch is authorized by name.
    let one = request(
        a,
        &server.ca_pem,
        Some(proxy),
        "GET",
        &format!(
            "{GV}/namespaces/{ns}/redises?watch=1&fieldSelector=metadata.name%3Dx&timeoutSeconds=1"
        ),
        &as_pat,
        None,
    )
    .await;
    assert_eq!(one.status, 403);
    assert!(
        one.json()["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("redises.apps.cozystack.io \"x\" is forbidden: User \"pat\" cannot watch"),
        "{}",
        one.body
    );
}

/// A watch of one object (`/watch/…/postgreses/a`) streamed every app of
/// the namespace (of the cluster, without one): a user allowed to watch
/// `a` alone (RBAC `resourceNames`) read `b`'s spec and its passwords. It
/// streams `a` only, as kube-apiserver makes the name a field selector, a
/// selector naming another object beside it is a 400, and a named GET with
/// `watch=true` is a get, as kube-apiserver routes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_of_one_object_streams_that_object_only() {
    let plane = plane();
    let server = aggregated();
    let ns = plane.namespace("watch-one").await;
    apply(
        plane,
        &format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: only-a, namespace: {ns}}}\n\
             rules:\n- {{apiGroups: [apps.cozystack.io], resources: [postgreses], resourceNames: [a], verbs: [get, watch]}}\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: only-a, namespace: {ns}}}\n\
             roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: only-a}}\n\
             subjects: [{{apiGroup: rbac.authorization.k8s.io, kind: User, name: alex}}]\n"
        ),
    )
    .expect("apply the Role");
    let admin = &plane.kubeconfig;
    for name in ["a", "b"] {
        ok(&kubectl(
            admin,
            &["-n", &ns, "apply", "-f", "-"],
            Some(&postgres(name)),
        ));
    }
    let alex = plane.user_kubeconfig("alex", &["dev"]);
    let watch_a = format!("{GV}/watch/namespaces/{ns}/postgreses/a?timeoutSeconds=2");
    let out = kubectl(&alex, &["get", "--raw", &watch_a], None);
    let events = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(events.contains("\"name\":\"a\""), "{events}");
    assert!(!events.contains("\"name\":\"b\""), "b leaked: {events}");
    assert_eq!(events.lines().count(), 1, "{events}");
    // Without a namespace (served across namespaces, as kube-apiserver
    // serves a custom resource's watch of one name): still `a` alone.
    let all = format!("{GV}/watch/postgreses/a?timeoutSeconds=2");
    let out = kubectl(admin, &["get", "--raw", &all], None);
    let events = text(&out.stdout);
    assert!(events.contains("\"name\":\"a\""), "{events}");
    assert!(!events.contains("\"name\":\"b\""), "{events}");

    // Straight at the server, as the front proxy for the admin.
    let a = addr(&server.direct_url);
    let proxy = &plane.front_proxy_client;
    let as_admin = [
        ("X-Remote-User", "admin"),
        ("X-Remote-Group", "system:masters"),
    ];
    let other = request(
        a,
        &server.ca_pem,
        Some(proxy),
        "GET",
        &format!("{watch_a}&fieldSelector=metadata.name%3Db"),
        &as_admin,
        None,
    )
    .await;
    assert_eq!(other.status, 400, "{}", other.body);
    assert_eq!(
        other.json()["message"],
        "fieldSelector metadata.name doesn't match requested name"
    );
    let same = request(
        a,
        &server.ca_pem,
        Some(proxy),
        "GET",
        &format!("{watch_a}&fieldSelector=metadata.name%3Da"),
        &as_admin,
        None,
    )
    .await;
    assert_eq!(same.status, 200, "{}", same.body);
    assert!(same.body.contains("\"name\":\"a\""), "{}", same.body);
    let get = request(
        a,
        &server.ca_pem,
        Some(proxy),
        "GET",
        &format!("{GV}/namespaces/{ns}/postgreses/a?watch=true"),
        &as_admin,
        None,
    )
    .await;
    assert_eq!(get.status, 200, "{}", get.body);
    assert_eq!(get.json()["kind"], "Postgres", "{}", get.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spoofed_identities_are_refused() {
    let plane = plane();
    let server = aggregated();
    let a = addr(&server.direct_url);
    let ca = &server.ca_pem;
    let path = format!("{GV}/namespaces/default/postgreses");
    let admin = [
        ("X-Remote-User", "system:admin"),
        ("X-Remote-Group", "system:masters"),
    ];

    // Health needs nothing.
    assert_eq!(
        request(a, ca, None, "GET", "/readyz", &[], None)
            .await
            .status,
        200
    );
    assert_eq!(
        request(a, ca, None, "GET", "/livez", &admin, None)
            .await
            .status,
        200
    );

    // Headers without a certificate are ignored: nobody, so 401.
    let r = request(a, ca, None, "GET", &path, &admin, None).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(r.json()["reason"], "Unauthorized");

    // A front-proxy-looking certificate from another CA: 401.
    let other = Ca::new("not-the-front-proxy-ca").unwrap();
    let fake = other
        .issue(&LeafSpec::client("front-proxy-client", &[]))
        .unwrap();
    assert_eq!(
        request(a, ca, Some(&fake), "GET", &path, &admin, None)
            .await
            .status,
        401
    );

    // The real front-proxy CA but a CN outside the allowed names: 401.
    let evil = plane
        .front_proxy
        .issue(&LeafSpec::client("evil", &[]))
        .unwrap();
    assert_eq!(
        request(a, ca, Some(&evil), "GET", &path, &admin, None)
            .await
            .status,
        401
    );

    // A client-CA user cannot borrow the front proxy's headers: the request
    // is theirs, and they may not list.
    let mallory = plane
        .client_ca
        .issue(&LeafSpec::client("mallory", &[]))
        .unwrap();
    let r = request(a, ca, Some(&mallory), "GET", &path, &admin, None).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap_or_default()
            .contains("User \"mallory\""),
        "{}",
        r.body
    );

    // The front proxy without a user header is nobody in particular: 401.
    let r = request(
        a,
        ca,
        Some(&plane.front_proxy_client),
        "GET",
        &path,
        &[],
        None,
    )
    .await;
    assert_eq!(r.status, 401, "{}", r.body);

    // A bad bearer token is 401, with no anonymous fallback.
    let r = request(
        a,
        ca,
        None,
        "GET",
        &path,
        &[("Authorization", "Bearer not-a-token")],
        None,
    )
    .await;
    assert_eq!(r.status, 401, "{}", r.body);

    // The real front proxy as system:masters passes without any review.
    let r = request(
        a,
        ca,
        Some(&plane.front_proxy_client),
        "GET",
        &path,
        &admin,
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

/// Creates ServiceAccount `name` in `ns` and returns a token for it.
async fn service_account_token(client: &kube::Client, ns: &str, name: &str) -> String {
    use k8s_openapi::api::authentication::v1::TokenRequest;
    use k8s_openapi::api::core::v1::ServiceAccount;
    use kube::api::{Api, PostParams};
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    let sa: ServiceAccount =
        serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap();
    sas.create(&PostParams::default(), &sa)
        .await
        .expect("create ServiceAccount");
    let request: TokenRequest =
        serde_json::from_value(serde_json::json!({"spec": {"expirationSeconds": 3600}})).unwrap();
    let answer = sas
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .expect("token request");
    answer.status.and_then(|s| s.token).expect("token")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_account_token_works_directly() {
    let plane = plane();
    let server = aggregated();
    let ns = plane.namespace("token").await;
    let client = plane.client().await;
    let token = service_account_token(&client, &ns, "robot").await;
    postgres_only_role(plane, &ns, &format!("system:serviceaccount:{ns}:robot"));
    let bearer = format!("Bearer {token}");
    let h = [("Authorization", bearer.as_str())];
    let a = addr(&server.direct_url);
    let r = request(
        a,
        &server.ca_pem,
        None,
        "GET",
        &format!("{GV}/namespaces/{ns}/postgreses"),
        &h,
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = request(
        a,
        &server.ca_pem,
        None,
        "GET",
        &format!("{GV}/namespaces/{ns}/redises"),
        &h,
        None,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("User \"system:serviceaccount:{ns}:robot\"")),
        "{}",
        r.body
    );
}

/// `/metrics` is a non-resource path for RBAC: kube's built-in
/// `system:monitoring` group (bound to the ClusterRole of that name) may get
/// it, a user without it is refused as kube-apiserver refuses one. It
/// counts requests with kube-apiserver's metric names and labels, as
/// kube-apiserver only those authorized for a resource it serves (a refused
/// list, a made-up resource and `/metrics` itself are not), and a watch as
/// long-running while it streams, then as answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_kube_apiservers_for_who_may_read_them() {
    const AS_MO: [(&str, &str); 2] = [("X-Remote-User", "mo"), ("X-Remote-Group", "dev")];
    const AS_ADMIN: [(&str, &str); 2] = [
        ("X-Remote-User", "admin"),
        ("X-Remote-Group", "system:masters"),
    ];
    const AS_PROMETHEUS: [(&str, &str); 2] = [
        ("X-Remote-User", "prometheus"),
        ("X-Remote-Group", "system:monitoring"),
    ];
    let plane = plane();
    let server = aggregated();
    let ns = plane.namespace("metrics").await;
    postgres_only_role(plane, &ns, "mo");
    let a = addr(&server.direct_url);
    let proxy = &plane.front_proxy_client;
    let ask = |path: String, who: &'static [(&'static str, &'static str)]| async move {
        request(a, &server.ca_pem, Some(proxy), "GET", &path, who, None).await
    };
    let scrape = || async {
        let scraped = ask("/metrics".to_owned(), &AS_PROMETHEUS).await;
        assert_eq!(scraped.status, 200, "{}", scraped.body);
        scraped.body
    };

    let refused = ask("/metrics".to_owned(), &AS_MO).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused
            .body
            .contains(r#"User \"mo\" cannot get path \"/metrics\""#),
        "{}",
        refused.body
    );
    let listed = ask(format!("{GV}/namespaces/{ns}/postgreses"), &AS_MO).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let denied = ask(format!("{GV}/namespaces/{ns}/redises"), &AS_MO).await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    let unknown = ask(format!("{GV}/namespaces/{ns}/nonsenses"), &AS_ADMIN).await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);

    let watch_path = format!("{GV}/namespaces/{ns}/postgreses?watch=1&timeoutSeconds=3");
    let watching = tokio::spawn(async move {
        request(
            a,
            &server.ca_pem,
            Some(&plane.front_proxy_client),
            "GET",
            &watch_path,
            &AS_MO,
            None,
        )
        .await
    });
    let group = r#"group="apps.cozystack.io",version="v1alpha1""#;
    let streaming = format!(
        r#"verb="WATCH",{group},resource="postgreses",subresource="",scope="namespace",component="apiserver""#
    );
    let answered = |verb: &str, resource: &str, code: u16| {
        format!(
            r#"verb="{verb}",dry_run="",{group},resource="{resource}",subresource="",scope="namespace",component="apiserver",code="{code}""#
        )
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    let text = loop {
        let text = scrape().await;
        let open = metric_sample(&text, "apiserver_longrunning_requests", &streaming);
        if open.is_some_and(|n| n >= 1.0) || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        metric_sample(&text, "apiserver_longrunning_requests", &streaming) >= Some(1.0),
        "the watch streams: {text}"
    );
    assert!(
        metric_sample(
            &text,
            "apiserver_request_total",
            &answered("LIST", "postgreses", 200)
        ) >= Some(1.0),
        "{text}"
    );
    assert_eq!(
        metric_sample(
            &text,
            "apiserver_request_total",
            &answered("LIST", "redises", 403)
        ),
        None,
        "a refused request is not counted: {text}"
    );
    for never in [r#"resource="nonsenses""#, r#"version="",resource="""#] {
        assert!(!text.contains(never), "{never}: {text}");
    }
    for line in [
        "# HELP apiserver_request [STABLE] Counter of apiserver requests broken out for each verb, \
         dry run value, group, version, resource, scope, component, and HTTP response code.\n",
        "kubectl_cozy_watch_cache_ready 1",
        // The cache's list and watch of HelmReleases, as client-go counts them.
        "rest_client_requests_total{code=\"200\",host=\"127.0.0.1:",
        "rest_client_request_duration_seconds_count{verb=\"GET\",host=\"127.0.0.1:",
        "process_resident_memory_bytes ",
        "# EOF",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }

    let watched = watching.await.expect("the watch");
    assert_eq!(watched.status, 200, "{}", watched.body);
    // Counted once its stream ended.
    let deadline = Instant::now() + Duration::from_secs(3);
    let watches = loop {
        let watches = metric_sample(
            &scrape().await,
            "apiserver_request_total",
            &answered("WATCH", "postgreses", 200),
        );
        if watches >= Some(1.0) || Instant::now() > deadline {
            break watches;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(watches >= Some(1.0), "{watches:?}");
}

/// A client whose every call fails to connect.
fn dead_client() -> kube::Client {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // The listener is dropped: nothing listens there any more.
    let mut config = kube::Config::new(format!("https://127.0.0.1:{port}").parse().unwrap());
    config.accept_invalid_certs = true;
    kube::Client::try_from(config).expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_review_endpoint_is_a_500_never_an_allow() {
    let plane = plane();
    let client = plane.client().await;
    let trust = DynamicAuthConfig::new(
        config::load(&client, &ConfigMapRef::default())
            .await
            .expect("trust"),
    );
    let dead: Arc<dyn Reviewer> = Arc::new(KubeReviewer::new(dead_client()));
    let auth = Auth::new(
        trust.clone(),
        Authenticator::new(trust).with_token_review(dead.clone()),
        Authorizer::new(dead),
    );
    let (running, ca) = start_server(plane.config().await, Arc::new(auth), false)
        .await
        .expect("server");
    let a = running.local_addr;
    let pat = plane
        .client_ca
        .issue(&LeafSpec::client("pat", &["dev"]))
        .unwrap();
    let started = Instant::now();
    let r = request(
        a,
        &ca,
        Some(&pat),
        "GET",
        &format!("{GV}/namespaces/default/postgreses"),
        &[],
        None,
    )
    .await;
    assert_eq!(r.status, 500, "{}", r.body);
    assert_eq!(r.json()["reason"], "InternalError");
    eprintln!(
        "SAR failure answered after {:?} (with retries)",
        started.elapsed()
    );
    // A token cannot be reviewed either: 401, not anonymous.
    let r = request(
        a,
        &ca,
        None,
        "GET",
        GV,
        &[("Authorization", "Bearer abc")],
        None,
    )
    .await;
    assert_eq!(r.status, 401, "{}", r.body);
    // system:masters needs no review.
    let admin = plane
        .client_ca
        .issue(&LeafSpec::client("root", &["system:masters"]))
        .unwrap();
    let r = request(
        a,
        &ca,
        Some(&admin),
        "GET",
        &format!("{GV}/namespaces/default/postgreses"),
        &[],
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_front_proxy_ca_is_picked_up_without_restart() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, Patch, PatchParams, PostParams};
    let plane = plane();
    let client = plane.client().await;
    let ns = plane.namespace("rotate").await;
    // A copy of kube-apiserver's ConfigMap that the test may change (the
    // real one is rewritten by kube-apiserver and shared by other tests).
    let real: ConfigMap = Api::namespaced(client.clone(), "kube-system")
        .get("extension-apiserver-authentication")
        .await
        .expect("read the trust ConfigMap");
    let copies: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let copy: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "trust"}, "data": real.data,
    }))
    .unwrap();
    copies
        .create(&PostParams::default(), &copy)
        .await
        .expect("copy the ConfigMap");
    let source = ConfigMapRef {
        namespace: ns.clone(),
        name: "trust".into(),
    };
    let auth = Auth::delegated(client.clone(), source).await.expect("auth");
    let (running, ca) = start_server(plane.config().await, Arc::new(auth), false)
        .await
        .expect("server");
    let a = running.local_addr;
    let path = format!("{GV}/namespaces/default/postgreses");
    let masters = [
        ("X-Remote-User", "rotator"),
        ("X-Remote-Group", "system:masters"),
    ];

    let rotated = Ca::new("rotated-front-proxy-ca").unwrap();
    let new_proxy = rotated
        .issue(&LeafSpec::client("front-proxy-client", &[]))
        .unwrap();
    let old_proxy = &plane.front_proxy_client;
    assert_eq!(
        request(a, &ca, Some(old_proxy), "GET", &path, &masters, None)
            .await
            .status,
        200
    );
    assert_eq!(
        request(a, &ca, Some(&new_proxy), "GET", &path, &masters, None)
            .await
            .status,
        401
    );

    let patch = serde_json::json!({"data": {"requestheader-client-ca-file": rotated.cert_pem()}});
    copies
        .patch("trust", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("rotate the CA");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = request(a, &ca, Some(&new_proxy), "GET", &path, &masters, None).await;
        if r.status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the rotated CA was not picked up: {} {}",
            r.status,
            r.body
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The old front proxy is no longer trusted.
    assert_eq!(
        request(a, &ca, Some(old_proxy), "GET", &path, &masters, None)
            .await
            .status,
        401
    );
    running.shutdown(Duration::from_secs(1)).await;
}

fn print_rbac(args: &[&str]) -> String {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
    let out = Command::new(bins::kubectl_cozy())
        .args(["serve", "--print-rbac", "--kinds"])
        .arg(&examples)
        .args(args)
        .output()
        .expect("serve --print-rbac");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// Waits until the built-in ClusterRole `role` has aggregated `resource`.
fn wait_aggregated(plane: &Plane, role: &str, resource: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = plane
            .kubectl()
            .args(["get", "clusterrole", role, "-o", "json"])
            .output()
            .expect("kubectl");
        if text(&out.stdout).contains(&format!("\"{resource}\"")) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "ClusterRole {role} never aggregated {resource}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_roles_aggregate_the_printed_roles_and_the_printed_server_role_suffices() {
    let plane = plane();
    let _server = aggregated();
    let server_user = "kubectl-cozy-test-server";
    apply(
        plane,
        &print_rbac(&[
            "--impersonate",
            "--rbac-subject",
            &format!("user:{server_user}"),
        ]),
    )
    .expect("apply --print-rbac");
    wait_aggregated(plane, "edit", "postgreses");
    wait_aggregated(plane, "view", "redises");
    let ns = plane.namespace("roles").await;
    for (user, role) in [("erin", "edit"), ("vic", "view")] {
        let status = plane
            .kubectl()
            .args([
                "-n",
                &ns,
                "create",
                "rolebinding",
                user,
                &format!("--clusterrole={role}"),
                &format!("--user={user}"),
            ])
            .status()
            .expect("kubectl");
        assert!(status.success());
    }
    let erin = plane.user_kubeconfig("erin", &[]);
    let vic = plane.user_kubeconfig("vic", &[]);

    // Through the aggregator with nothing but the built-in roles.
    ok(&kubectl(
        &erin,
        &["-n", &ns, "apply", "-f", "-"],
        Some(&postgres("by-erin")),
    ));
    ok(&kubectl(&erin, &["-n", &ns, "get", "redises"], None));
    assert!(ok(&kubectl(&vic, &["-n", &ns, "get", "postgreses"], None)).contains("by-erin"));
    let out = kubectl(
        &vic,
        &["-n", &ns, "apply", "-f", "-"],
        Some(&postgres("by-vic")),
    );
    assert!(!out.status.success(), "view may not create");
    assert!(
        text(&out.stderr).to_lowercase().contains("forbidden"),
        "{}",
        text(&out.stderr)
    );

    // A server running as the printed identity (not an admin) does its whole
    // job: reads its trust ConfigMap, reviews, and writes HelmReleases.
    let kubeconfig = plane.user_kubeconfig(server_user, &[]);
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&kubeconfig).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let server_client = kube::Client::try_from(config.clone()).unwrap();
    for impersonate in [false, true] {
        let auth = Auth::delegated(server_client.clone(), ConfigMapRef::default())
            .await
            .expect("the printed RBAC lets the server read its trust ConfigMap");
        let (running, ca) = start_server(config.clone(), Arc::new(auth), impersonate)
            .await
            .expect("server");
        let a = running.local_addr;
        let as_erin = [("X-Remote-User", "erin")];
        let name = if impersonate { "imp" } else { "own" };
        let body =
            serde_json::json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
            "metadata": {"name": name}, "spec": {"replicas": 1}})
            .to_string();
        let create = format!("{GV}/namespaces/{ns}/postgreses");
        let r = request(
            a,
            &ca,
            Some(&plane.front_proxy_client),
            "POST",
            &create,
            &as_erin,
            Some(&body),
        )
        .await;
        if impersonate {
            // erin may edit Postgres objects but not HelmReleases.
            assert_eq!(r.status, 403, "{}", r.body);
            assert!(r.body.contains("helmreleases"), "{}", r.body);
            apply(
                plane,
                &format!(
                    "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: hr, namespace: {ns}}}\n\
                     rules:\n- {{apiGroups: [helm.toolkit.fluxcd.io], resources: [helmreleases], verbs: ['*']}}\n---\n\
                     apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: hr, namespace: {ns}}}\n\
                     roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: hr}}\n\
                     subjects: [{{apiGroup: rbac.authorization.k8s.io, kind: User, name: erin}}]\n"
                ),
            )
            .expect("grant HelmReleases");
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let r = request(
                    a,
                    &ca,
                    Some(&plane.front_proxy_client),
                    "POST",
                    &create,
                    &as_erin,
                    Some(&body),
                )
                .await;
                if r.status == 201 {
                    break;
                }
                assert!(Instant::now() < deadline, "{} {}", r.status, r.body);
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        } else {
            assert_eq!(r.status, 201, "{}", r.body);
        }
        running.shutdown(Duration::from_secs(1)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_is_1_2_or_newer_and_slow_clients_are_cut_off() {
    let plane = plane();
    let server = aggregated();
    let a = addr(&server.direct_url);

    // TLS 1.2 is fine.
    let tcp = tokio::net::TcpStream::connect(a).await.unwrap();
    let tls = connector(&server.ca_pem, Some(&plane.front_proxy_client), true)
        .connect(ServerName::IpAddress(a.ip().into()), tcp)
        .await
        .expect("a TLS 1.2 handshake");
    assert_eq!(
        tls.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_2)
    );

    // A TLS 1.1 ClientHello gets no ServerHello.
    let mut hello: Vec<u8> = vec![0x03, 0x02];
    hello.extend([7u8; 32]);
    hello.extend([
        0x00, 0x00, 0x06, 0xc0, 0x0a, 0xc0, 0x09, 0x00, 0x2f, 0x01, 0x00,
    ]);
    let mut handshake = vec![0x01, 0x00, (hello.len() >> 8) as u8, hello.len() as u8];
    handshake.extend(hello);
    let mut record = vec![
        0x16,
        0x03,
        0x01,
        (handshake.len() >> 8) as u8,
        handshake.len() as u8,
    ];
    record.extend(handshake);
    let mut tcp = tokio::net::TcpStream::connect(a).await.unwrap();
    tcp.write_all(&record).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer)).await;
    assert_ne!(
        answer.first(),
        Some(&0x16),
        "the server answered a TLS 1.1 hello with a handshake: {answer:02x?}"
    );
    if let Some(&0x15) = answer.first() {
        // A fatal alert: protocol_version (70) or handshake_failure (40).
        assert_eq!(answer.get(5), Some(&2), "a fatal alert: {answer:02x?}");
        assert!(matches!(answer.get(6), Some(&70 | &40)), "{answer:02x?}");
    }

    // Headers trickled a byte at a time: the connection is closed.
    let tcp = tokio::net::TcpStream::connect(a).await.unwrap();
    let mut tls = connector(&server.ca_pem, None, false)
        .connect(ServerName::IpAddress(a.ip().into()), tcp)
        .await
        .unwrap();
    let closed_after = time_until_cut_off(
        &mut tls,
        b"GET /readyz HTTP/1.1\r\nHost: x\r\nX-Slow: ",
        b"a",
        |_| true,
    )
    .await;
    assert!(
        closed_after <= Duration::from_secs(15),
        "closed only after {closed_after:?}"
    );

    // The same over HTTP/2: a HEADERS frame announced at 1,000 bytes whose
    // bytes then come one at a time.
    let tcp = tokio::net::TcpStream::connect(a).await.unwrap();
    let mut config = (*client_config(&server.ca_pem)).clone();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let mut h2 = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::IpAddress(a.ip().into()), tcp)
        .await
        .unwrap();
    assert_eq!(h2.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let mut start = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    start.extend([0, 0, 0, 0x4, 0, 0, 0, 0, 0]); // SETTINGS
    start.extend([0, 0x03, 0xe8, 0x1, 0x4, 0, 0, 0, 1]); // HEADERS, 1,000 bytes, END_HEADERS
    // The server's SETTINGS, ACKs and WINDOW_UPDATEs are not an answer; a GOAWAY is.
    let goaway = |read: &[u8]| {
        let mut at = 0;
        while at + 9 <= read.len() {
            if read[at + 3] == 0x7 {
                return true;
            }
            at += 9
                + ((read[at] as usize) << 16
                    | (read[at + 1] as usize) << 8
                    | read[at + 2] as usize);
        }
        false
    };
    let closed_after = time_until_cut_off(&mut h2, &start, &[0x82], goaway).await;
    assert!(
        closed_after <= Duration::from_secs(15),
        "HTTP/2: closed only after {closed_after:?}"
    );

    // HTTP/2 only where ALPN chose it (RFC 9113 §3.2): a client offering
    // both gets h2; one offering no protocol is served HTTP/1.1, even when
    // it opens with HTTP/2's preface (no SETTINGS frame comes back).
    let mut config = (*client_config(&server.ca_pem)).clone();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let both = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(
            ServerName::IpAddress(a.ip().into()),
            tokio::net::TcpStream::connect(a).await.unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(both.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let mut plain = connector(&server.ca_pem, None, false)
        .connect(
            ServerName::IpAddress(a.ip().into()),
            tokio::net::TcpStream::connect(a).await.unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(plain.get_ref().1.alpn_protocol(), None);
    plain
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(15), plain.read_to_end(&mut answer)).await;
    assert!(
        answer.is_empty() || answer.starts_with(b"HTTP/1.1 "),
        "HTTP/2 without ALPN: {:?}",
        String::from_utf8_lossy(&answer[..answer.len().min(64)])
    );

    // A client that never finishes the handshake is dropped too.
    let mut idle = tokio::net::TcpStream::connect(a).await.unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(30), idle.read(&mut buf)).await;
    assert!(
        matches!(n, Ok(Ok(0)) | Ok(Err(_))),
        "idle connection still open: {n:?}"
    );
    assert!(started.elapsed() <= Duration::from_secs(15));
}

#[test]
fn credentials_never_reach_the_logs() {
    let plane = plane();
    let _server = aggregated();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ns = runtime.block_on(plane.namespace("logs"));
    let token = runtime.block_on(async {
        let client = plane.client().await;
        service_account_token(&client, &ns, "logged").await
    });
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("logs-serving-ca").unwrap();
    let serving = ca
        .issue(&LeafSpec::server(
            "kubectl-cozy",
            &["localhost"],
            &["127.0.0.1".parse().unwrap()],
        ))
        .unwrap();
    std::fs::write(dir.path().join("tls.crt"), &serving.cert_pem).unwrap();
    std::fs::write(dir.path().join("tls.key"), &serving.key_pem).unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
    let mut child = Command::new(bins::kubectl_cozy())
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig)
        .args(["serve", "--listen", "127.0.0.1:0", "--kinds"])
        .arg(&examples)
        .arg("--tls-cert-file")
        .arg(dir.path().join("tls.crt"))
        .arg("--tls-key-file")
        .arg(dir.path().join("tls.key"))
        .env("RUST_LOG", "trace")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve");
    let stderr = child.stderr.take().unwrap();
    let log = Arc::new(std::sync::Mutex::new(String::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = {
        let log = log.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut sent = false;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if !sent
                    && line.starts_with("Serving ")
                    && let Some(url) = line.split("on https://").nth(1)
                {
                    let _ = tx.send(
                        url.split_whitespace()
                            .next()
                            .unwrap_or_default()
                            .trim_end_matches(',')
                            .to_owned(),
                    );
                    sent = true;
                }
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        })
    };
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("serve printed its address");
    let a: SocketAddr = url.parse().expect("address");
    let user_cert = plane
        .client_ca
        .issue(&LeafSpec::client("logged-user", &[]))
        .unwrap();
    let bearer = format!("Bearer {token}");
    runtime.block_on(async {
        let ca = ca.cert_pem();
        let path = format!("{GV}/namespaces/{ns}/postgreses");
        request(
            a,
            ca,
            None,
            "GET",
            &path,
            &[("Authorization", bearer.as_str())],
            None,
        )
        .await;
        request(
            a,
            ca,
            None,
            "GET",
            &path,
            &[("Authorization", "Bearer wrong-token-1234567890")],
            None,
        )
        .await;
        request(a, ca, Some(&user_cert), "GET", &path, &[], None).await;
        request(
            a,
            ca,
            Some(&plane.front_proxy_client),
            "GET",
            &path,
            &[("X-Remote-User", "proxied")],
            None,
        )
        .await;
    });
    let _ = child.kill();
    let _ = child.wait();
    let _ = reader.join();
    let log = log.lock().unwrap().clone();
    assert!(
        log.contains("logged-user"),
        "the server did not log the requests:\n{log}"
    );
    let body = |pem: &str| -> Vec<String> {
        // Each base64 line of a PEM, and the DER in one piece.
        pem.lines()
            .filter(|l| !l.starts_with("-----") && l.len() > 20)
            .map(str::to_owned)
            .collect()
    };
    assert!(!log.contains(&token), "a token reached the logs");
    assert!(
        !log.contains("wrong-token-1234567890"),
        "a rejected token reached the logs"
    );
    for secret in body(&user_cert.cert_pem)
        .into_iter()
        .chain(body(&user_cert.key_pem))
        .chain(body(&plane.front_proxy_client.cert_pem))
        .chain(body(&plane.front_proxy_client.key_pem))
    {
        assert!(
            !log.contains(&secret),
            "certificate material reached the logs: {secret}"
        );
    }
}

/// The aggregator's own calls (contract §2.4): some carry no groups at all
/// and pass only because `system:authenticated` is added and bound to
/// `system:discovery`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_aggregators_own_identities_pass() {
    let plane = plane();
    let server = aggregated();
    let a = addr(&server.direct_url);
    let proxy = Some(&plane.front_proxy_client);
    let cases: [(&str, &[(&str, &str)]); 4] = [
        ("/openapi/v2", &[("X-Remote-User", "system:aggregator")]),
        ("/openapi/v3", &[("X-Remote-User", "system:aggregator")]),
        (GV, &[("X-Remote-User", "system:kube-aggregator")]),
        (
            "/apis",
            &[
                ("X-Remote-User", "system:kube-aggregator"),
                ("X-Remote-Group", "system:masters"),
            ],
        ),
    ];
    for (path, headers) in cases {
        let r = request(a, &server.ca_pem, proxy, "GET", path, headers, None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
    }
    // Without system:discovery's paths, the same groupless user is refused.
    let r = request(
        a,
        &server.ca_pem,
        proxy,
        "GET",
        &format!("{GV}/namespaces/default/postgreses"),
        &[("X-Remote-User", "system:aggregator")],
        None,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
}
