//! Consistent reads on the cluster backend: a get, list or watch with no
//! resourceVersion reflects upstream's current state, even a HelmRelease
//! change made behind the server's back a moment earlier (Flux writing
//! status, a user editing the HelmRelease), not just whatever the watch cache
//! had received by then. Reads with `resourceVersion=0` may lag; they are not
//! checked here.
//!
//! To make the lag certain rather than a race, the server under test reaches
//! kube-apiserver through a TCP proxy that delays every byte by
//! [`UPSTREAM_DELAY`]: its watch hears of a change that long after it
//! happened.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GetParams, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams, WatchEvent, WatchParams,
};
use kubectl_cozy::auth::Auth;
use kubectl_cozy::pki::{Ca, LeafSpec};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::support::aggregated::start_server;
use crate::support::plane::plane;

/// How late the server under test hears from kube-apiserver.
const UPSTREAM_DELAY: Duration = Duration::from_millis(150);

/// Starts a TCP proxy to `target` that delivers every byte `delay` late, in
/// order, both ways; returns its address.
async fn delaying_proxy(target: std::net::SocketAddr, delay: Duration) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(upstream) = TcpStream::connect(target).await else {
                continue;
            };
            let (client_read, client_write) = client.into_split();
            let (upstream_read, upstream_write) = upstream.into_split();
            tokio::spawn(pipe(client_read, upstream_write, delay));
            tokio::spawn(pipe(upstream_read, client_write, delay));
        }
    });
    addr
}

async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Duration,
) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    tokio::spawn(async move {
        while let Some((due, chunk)) = rx.recv().await {
            tokio::time::sleep_until(due.into()).await;
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    });
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0
            || tx
                .send((Instant::now() + delay, buf[..n].to_vec()))
                .is_err()
        {
            return;
        }
    }
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// A server over the plane reached through a delaying proxy, and a client
/// (in `system:masters` of the server's own client CA) straight at it.
async fn lagging_server() -> (kubectl_cozy::apiserver::server::RunningServer, kube::Client) {
    let plane = plane();
    let mut upstream_config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&plane.kubeconfig).expect("kubeconfig"),
        &Default::default(),
    )
    .await
    .expect("config");
    let apiserver: std::net::SocketAddr = upstream_config
        .cluster_url
        .authority()
        .expect("authority")
        .as_str()
        .parse()
        .expect("kube-apiserver address");
    let proxy = delaying_proxy(apiserver, UPSTREAM_DELAY).await;
    upstream_config.cluster_url = format!("https://{proxy}").parse().expect("url");

    let client_ca = Ca::new("consistency-test-client-ca").expect("CA");
    let auth = Auth::standalone(client_ca.cert_pem()).expect("auth");
    let (running, serving_ca_pem) = start_server(upstream_config, Arc::new(auth), false)
        .await
        .expect("server");
    let user = client_ca
        .issue(&LeafSpec::client("admin", &["system:masters"]))
        .expect("client cert");
    let b64 = |text: &str| {
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, text.as_bytes())
    };
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
         clusters: [{{name: c, cluster: {{server: 'https://{}', certificate-authority-data: {}}}}}]\n\
         users: [{{name: u, user: {{client-certificate-data: {}, client-key-data: {}}}}}]\n\
         contexts: [{{name: c, context: {{cluster: c, user: u}}}}]\n",
        running.local_addr,
        b64(&serving_ca_pem),
        b64(&user.cert_pem),
        b64(&user.key_pem),
    );
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::from_yaml(&kubeconfig).expect("kubeconfig"),
        &Default::default(),
    )
    .await
    .expect("config");
    (running, kube::Client::try_from(config).expect("client"))
}

/// The Postgres apps of `ns` through the server (`direct`: a client of it),
/// and their HelmReleases straight at kube-apiserver.
async fn apps_and_releases(
    direct: kube::Client,
    ns: &str,
) -> (Api<DynamicObject>, Api<DynamicObject>) {
    let apps = Api::namespaced_with(
        direct,
        ns,
        &resource("apps.cozystack.io", "v1alpha1", "Postgres", "postgreses"),
    );
    let releases = Api::namespaced_with(
        plane().client().await,
        ns,
        &resource(
            "helm.toolkit.fluxcd.io",
            "v2",
            "HelmRelease",
            "helmreleases",
        ),
    );
    (apps, releases)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_without_a_resource_version_see_changes_made_upstream_just_before() {
    let plane = plane();
    let ns = plane.namespace("consistent").await;
    let (_server, direct) = lagging_server().await;
    let (apps, releases) = apps_and_releases(direct, &ns).await;
    let app: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apps.cozystack.io/v1alpha1",
        "kind": "Postgres",
        "metadata": {"name": "db"},
        "spec": {"replicas": 1},
    }))
    .unwrap();
    apps.create(&PostParams::default(), &app)
        .await
        .expect("create");

    // Each round changes the HelmRelease directly (a user label, stored with
    // the prefix) and reads the app back at once. The cache hears of the
    // change a little later; a read that served whatever the cache had would
    // see the previous round's value in some of these rounds.
    for round in 0..9 {
        let value = format!("r{round}");
        let patch = json!({"metadata": {"labels": {"apps.cozystack.io-round": value}}});
        releases
            .patch(
                "postgres-db",
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .expect("patch the HelmRelease");
        let kind = ["get", "list", "watch"][round % 3];
        let seen = match kind {
            "get" => apps.get("db").await.expect("get").metadata.labels,
            "list" => {
                apps.list(&Default::default())
                    .await
                    .expect("list")
                    .items
                    .into_iter()
                    .find(|a| a.metadata.name.as_deref() == Some("db"))
                    .expect("db listed")
                    .metadata
                    .labels
            }
            _ => {
                let events = apps
                    .watch(&WatchParams::default().timeout(5), "")
                    .await
                    .expect("watch");
                futures::pin_mut!(events);
                match events.try_next().await.expect("watch event") {
                    Some(WatchEvent::Added(app)) => app.metadata.labels,
                    other => panic!("round {round}: the watch began with {other:?}"),
                }
            }
        };
        let seen = seen.unwrap_or_default();
        assert_eq!(
            seen.get("round"),
            Some(&value),
            "round {round}: {kind} served a state older than upstream's: {seen:?}"
        );
    }

    // A deletion made upstream is visible at once too.
    releases
        .delete("postgres-db", &Default::default())
        .await
        .expect("delete the HelmRelease");
    let err = apps.get("db").await.expect_err("deleted upstream");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404),
        "{err}"
    );
}

/// A consistent list with a limit (what `kubectl get` asks for) is checked
/// upstream page by page: its pages come in kube-apiserver's key order
/// (`<namespace>/<name>`, so `x-b/…` before `x/…`), together they are
/// upstream's state when the first page was asked for (a change made
/// upstream just before it shows, one made between pages does not), and a
/// continue token that is not ours, or is another namespace's, is a 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paged_consistent_lists_follow_upstreams_pages_and_key_order() {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::ListParams;
    let plane = plane();
    let first = plane.namespace("paged").await;
    let second = format!("{first}-b");
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": second}})).unwrap();
    Api::<Namespace>::all(plane.client().await)
        .create(&PostParams::default(), &namespace)
        .await
        .expect("create namespace");
    let (_server, direct) = lagging_server().await;
    let postgres = resource("apps.cozystack.io", "v1alpha1", "Postgres", "postgreses");
    let helm_release = resource(
        "helm.toolkit.fluxcd.io",
        "v2",
        "HelmRelease",
        "helmreleases",
    );
    for ns in [&first, &second] {
        let apps: Api<DynamicObject> = Api::namespaced_with(direct.clone(), ns, &postgres);
        for name in ["a", "b", "c"] {
            let app: DynamicObject = serde_json::from_value(json!({
                "apiVersion": "apps.cozystack.io/v1alpha1",
                "kind": "Postgres",
                "metadata": {"name": name, "labels": {"paged": first}},
                "spec": {"replicas": 1},
            }))
            .unwrap();
            apps.create(&PostParams::default(), &app)
                .await
                .expect("create");
        }
    }
    let releases: Api<DynamicObject> =
        Api::namespaced_with(plane.client().await, &first, &helm_release);
    let mark = |value: &str| json!({"metadata": {"labels": {"apps.cozystack.io-round": value}}});
    let all: Api<DynamicObject> = Api::all_with(direct.clone(), &postgres);
    let selected = ListParams::default()
        .labels(&format!("paged={first}"))
        .limit(2);

    // Changed upstream just before the first page: its last page shows it;
    // changed again between pages: the list still shows the first change.
    releases
        .patch(
            "postgres-c",
            &PatchParams::default(),
            &Patch::Merge(&mark("r1")),
        )
        .await
        .expect("patch the HelmRelease");
    let mut page = all.list(&selected).await.expect("first page");
    releases
        .patch(
            "postgres-c",
            &PatchParams::default(),
            &Patch::Merge(&mark("r2")),
        )
        .await
        .expect("patch the HelmRelease");
    let list_rv = page.metadata.resource_version.clone();
    let mut seen = Vec::new();
    let mut pages = 1;
    loop {
        assert!(page.items.len() <= 2, "a page holds at most the limit");
        assert_eq!(
            page.metadata.resource_version, list_rv,
            "one list, one resourceVersion"
        );
        for app in &page.items {
            let round = app
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("round"))
                .cloned();
            seen.push((
                app.metadata.namespace.clone().unwrap_or_default(),
                app.metadata.name.clone().unwrap_or_default(),
                round,
            ));
        }
        let Some(token) = page.metadata.continue_.clone().filter(|t| !t.is_empty()) else {
            break;
        };
        pages += 1;
        page = all
            .list(&selected.clone().continue_token(&token))
            .await
            .expect("next page");
    }
    let expected: Vec<(String, String, Option<String>)> = [&second, &first]
        .iter()
        .flat_map(|ns| ["a", "b", "c"].map(|n| ((*ns).clone(), n.to_owned())))
        .map(|(ns, name)| {
            let round = (ns == first && name == "c").then(|| "r1".to_owned());
            (ns, name, round)
        })
        .collect();
    assert_eq!(
        seen, expected,
        "key order, and upstream's state at the first page"
    );
    assert!(pages >= 3, "paged by the limit: {pages} pages");

    // A namespaced list pages the same way.
    let in_first: Api<DynamicObject> = Api::namespaced_with(direct.clone(), &first, &postgres);
    let page = in_first
        .list(&ListParams::default().limit(2))
        .await
        .expect("first page");
    let names: Vec<_> = page
        .items
        .iter()
        .filter_map(|a| a.metadata.name.clone())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let token = page.metadata.continue_.expect("more");
    let rest = in_first
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .expect("next page");
    let names: Vec<_> = rest
        .items
        .iter()
        .filter_map(|a| a.metadata.name.clone())
        .collect();
    assert_eq!(names, ["c"]);
    assert_eq!(rest.metadata.continue_, None);

    // Tokens: another namespace's, one that is not ours, one whose
    // upstream part is not upstream's.
    let in_second: Api<DynamicObject> = Api::namespaced_with(direct.clone(), &second, &postgres);
    let refused = |err: kube::Error| match err {
        kube::Error::Api(status) => (status.code, status.message),
        other => panic!("{other}"),
    };
    let (code, message) = refused(
        in_second
            .list(&ListParams::default().limit(2).continue_token(&token))
            .await
            .expect_err("another namespace's token"),
    );
    assert_eq!(code, 400, "{message}");
    assert!(
        message.starts_with("invalid continue token: continue key is not valid: "),
        "{message}"
    );
    let (code, _) = refused(
        in_first
            .list(
                &ListParams::default()
                    .limit(2)
                    .continue_token("bm90LWEtdG9rZW4"),
            )
            .await
            .expect_err("not a token"),
    );
    assert_eq!(code, 400);
    let forged = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        format!(r#"{{"rv":1,"ns":"{first}","name":"postgres-a","up":"garbage"}}"#),
    );
    let (code, message) = refused(
        in_first
            .list(&ListParams::default().limit(2).continue_token(&forged))
            .await
            .expect_err("a forged upstream token"),
    );
    assert_eq!(code, 400, "{message}");
}

/// A consistent list with a label selector is checked upstream with the
/// same selector (on the HelmReleases' stored labels), and still sees every
/// change made upstream just before it: an app whose labels moved into the
/// selection is listed, one whose labels moved out of it is not, paged
/// (`kubectl get -l`) or not, and so is a watch's initial state. A selector
/// whose stored form no server would accept (a key too long once prefixed)
/// is checked over the whole scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_selected_lists_see_label_changes_made_upstream_just_before() {
    use kube::api::ListParams;
    let plane = plane();
    let ns = plane.namespace("selected").await;
    let (_server, direct) = lagging_server().await;
    let (apps, releases) = apps_and_releases(direct, &ns).await;
    let mut teams = std::collections::BTreeMap::new();
    for (name, team) in [("a", "red"), ("b", "blue"), ("c", "red"), ("d", "blue")] {
        let app: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "apps.cozystack.io/v1alpha1",
            "kind": "Postgres",
            "metadata": {"name": name, "labels": {"team": team}},
            "spec": {"replicas": 1},
        }))
        .unwrap();
        apps.create(&PostParams::default(), &app)
            .await
            .expect("create");
        teams.insert(name, team);
    }

    // Each round moves one app to the other team straight on its
    // HelmRelease, then lists team=red at once, paged and unpaged (which
    // first alternates): the cache hears of the move 150 ms later, so a
    // check that missed it would list the old team. Twice nobody is left
    // in the team, where a check that compared nothing would pass.
    let red = ListParams::default().labels("team=red");
    for (round, name) in ["c", "a", "b", "b", "a", "d"].into_iter().enumerate() {
        let team = if teams[name] == "red" { "blue" } else { "red" };
        teams.insert(name, team);
        let patch = json!({"metadata": {"labels": {"apps.cozystack.io-team": team}}});
        releases
            .patch(
                &format!("postgres-{name}"),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .expect("patch the HelmRelease");
        let expected: Vec<String> = teams
            .iter()
            .filter(|(_, team)| **team == "red")
            .map(|(name, _)| (*name).to_owned())
            .collect();
        if round == 1 || round == 2 {
            // A watch without a resourceVersion starts from the same check:
            // its ADDED events are the selection (no other change follows
            // before the server ends it).
            let events = apps
                .watch(&WatchParams::default().labels("team=red").timeout(2), "")
                .await
                .expect("watch");
            let events: Vec<_> = events.try_collect().await.expect("watch events");
            let added: Vec<String> = events
                .into_iter()
                .filter_map(|e| match e {
                    WatchEvent::Added(app) => app.metadata.name,
                    _ => None,
                })
                .collect();
            assert_eq!(
                added, expected,
                "round {round} (watch): team=red after moving {name} to {team}"
            );
        }
        let paged_first = (round / 2) % 2 == 1;
        for paged in [paged_first, !paged_first] {
            let mut listed = Vec::new();
            let mut params = if paged {
                red.clone().limit(1)
            } else {
                red.clone()
            };
            loop {
                let page = apps.list(&params).await.expect("list");
                listed.extend(page.items.iter().filter_map(|a| a.metadata.name.clone()));
                match page.metadata.continue_.filter(|t| !t.is_empty()) {
                    Some(token) => params = red.clone().limit(1).continue_token(&token),
                    None => break,
                }
            }
            assert_eq!(
                listed,
                expected,
                "round {round} ({}): team=red after moving {name} to {team}",
                if paged { "paged" } else { "unpaged" }
            );
        }
    }

    let long_key = format!("{}=red", "k".repeat(50));
    let none = apps
        .list(&ListParams::default().labels(&long_key).limit(2))
        .await
        .expect("a selector that cannot be stored");
    assert!(none.items.is_empty());
    let none = apps
        .list(&ListParams::default().labels(&long_key))
        .await
        .expect("the same, unpaged");
    assert!(none.items.is_empty());
}

/// Deletes through the server on a cluster: kube-apiserver answers each
/// with the release as it was last stored, which the server reads once for
/// its cache and for its own answer (the app). One that finalizers hold is
/// answered and then read marked for deletion; one deleted outright is
/// answered as it was and then gone: at once for a read of that object
/// from the cache (`resourceVersion=0`), which sees a delete taken ahead of
/// the watch (kube-apiserver answers that delete with a bare `Status`, so
/// the cache takes it by the version the server had), and for a list from the cache once the watch has brought the
/// deletes (a `resourceVersion=0` list is the watch's state, and may be
/// stale as kube-apiserver's is). (Whether the cache took the answer
/// before its late watch event is checked in the cache's unit tests: here
/// the delaying proxy delays the answer as much as the watch event.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_answer_the_app_and_leave_held_ones_marked() {
    let plane = plane();
    let ns = plane.namespace("deletes").await;
    let (_server, direct) = lagging_server().await;
    let (apps, releases) = apps_and_releases(direct, &ns).await;
    let app = |name: &str, finalizers: &[&str]| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "apps.cozystack.io/v1alpha1",
            "kind": "Postgres",
            "metadata": {"name": name, "finalizers": finalizers},
            "spec": {"replicas": 2},
        }))
        .unwrap()
    };
    let from_cache = |apps: Api<DynamicObject>| async move {
        apps.list(&ListParams::default().match_any())
            .await
            .expect("list from the cache")
            .items
    };
    for (name, finalizers) in [("held", &["example.com/hold"][..]), ("gone", &[])] {
        apps.create(&PostParams::default(), &app(name, finalizers))
            .await
            .expect("create");
    }

    let held = apps
        .delete("held", &DeleteParams::default())
        .await
        .expect("delete the held app")
        .left()
        .expect("the app, still there");
    assert!(held.metadata.deletion_timestamp.is_some(), "{held:?}");
    assert_eq!(held.data["spec"]["replicas"], 2, "{held:?}");
    let gone = apps
        .delete("gone", &DeleteParams::default())
        .await
        .expect("delete the other app")
        .left()
        .expect("the app as it was last stored");
    assert_eq!(gone.metadata.name.as_deref(), Some("gone"));
    assert_eq!(gone.data["spec"]["replicas"], 2, "{gone:?}");

    // One object read from the cache sees each delete at once.
    let held_cached = apps
        .get_with("held", &GetParams::any())
        .await
        .expect("the held app, from the cache");
    assert!(
        held_cached.metadata.deletion_timestamp.is_some(),
        "{held_cached:?}"
    );
    let err = apps
        .get_with("gone", &GetParams::any())
        .await
        .expect_err("gone from the cache");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404),
        "{err}"
    );
    // A list from the cache shows the same once the watch has both.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let cached = from_cache(apps.clone()).await;
        let names: Vec<_> = cached
            .iter()
            .filter_map(|a| a.metadata.name.as_deref())
            .collect();
        if names == ["held"] && cached[0].metadata.deletion_timestamp.is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the cache's list after the watch: {cached:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Releasing the finalizer (straight at kube-apiserver) completes it.
    releases
        .patch(
            "postgres-held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("release the finalizer");
    let err = apps.get("held").await.expect_err("deleted");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404),
        "{err}"
    );
}
