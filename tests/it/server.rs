//! The extension API server with real clients: kubectl straight at
//! `serve --standalone`, kubectl through the real aggregator of the test
//! control plane (cluster-backed, apps stored as HelmReleases), namespace
//! deletion and garbage collection by kube-controller-manager, and bad input.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::aggregated::aggregated;
use crate::support::standalone::{
    self, Standalone, example_kinds as examples, kubectl as kubectl_with, ok, refused, text,
};
use crate::support::{metric_sample, plane};

const POSTGRES: &str = "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: NAME\n  labels: {team: a}\nspec:\n  replicas: 3\n  synchronousCommit: \"on\"\n";

fn postgres(name: &str) -> String {
    POSTGRES.replace("NAME", name)
}

#[test]
fn standalone_server_works_with_kubectl() {
    let server = Standalone::start();
    let resources = ok(&server.kubectl(&[
        "api-resources",
        "--api-group=apps.cozystack.io",
        "-o",
        "name",
    ]));
    for r in [
        "buckets.apps.cozystack.io",
        "postgreses.apps.cozystack.io",
        "redises.apps.cozystack.io",
    ] {
        assert!(resources.contains(r), "{r} missing: {resources}");
    }
    ok(&kubectl_with(
        &server.kubeconfig(),
        &["apply", "-f", "-"],
        Some(&postgres("db1")),
    ));
    let table = ok(&server.kubectl(&["get", "postgreses"]));
    let header = table.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("NAME") && header.contains("READY") && header.contains("AGE"),
        "{table}"
    );
    assert!(table.contains("db1"), "{table}");

    // Defaults from the schema are applied on create; strings stay strings.
    let json: serde_json::Value = serde_json::from_str(&ok(
        &server.kubectl(&["get", "postgres", "db1", "-o", "json"])
    ))
    .unwrap();
    assert_eq!(json["spec"]["replicas"], 3);
    assert_eq!(json["spec"]["synchronousCommit"], "on");
    assert_eq!(json["spec"]["version"], "17", "default not applied: {json}");
    assert_eq!(json["metadata"]["labels"]["team"], "a");

    // Schema violations are refused with a cause per field.
    let bad = postgres("db2").replace("replicas: 3", "replicas: 100");
    let out = kubectl_with(&server.kubeconfig(), &["apply", "-f", "-"], Some(&bad));
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("spec.replicas"),
        "{}",
        text(&out.stderr)
    );

    // Label selectors and names.
    assert_eq!(
        ok(&server.kubectl(&["get", "postgreses", "-l", "team=a", "-o", "name"])).trim(),
        "postgres.apps.cozystack.io/db1"
    );
    assert_eq!(
        ok(&server.kubectl(&["get", "postgreses", "-l", "team!=a", "-o", "name"])).trim(),
        ""
    );

    ok(&server.kubectl(&["delete", "postgres", "db1", "--wait", "--timeout=30s"]));
    assert!(
        ok(&server.kubectl(&["get", "postgreses", "-o", "name"]))
            .trim()
            .is_empty()
    );

    // No garbage collector runs here, so a foreground or orphan delete adds
    // no finalizer only it would remove: it completes, as plain deletes do.
    for cascade in ["foreground", "orphan"] {
        ok(&kubectl_with(
            &server.kubeconfig(),
            &["apply", "-f", "-"],
            Some(&postgres("db3")),
        ));
        ok(&server.kubectl(&[
            "delete",
            "postgres",
            "db3",
            &format!("--cascade={cascade}"),
            "--timeout=30s",
        ]));
        let left = server.kubectl(&["get", "postgres", "db3"]);
        assert!(
            text(&left.stderr).contains("NotFound"),
            "--cascade={cascade}: {}{}",
            text(&left.stdout),
            text(&left.stderr)
        );
    }
}

/// A whole number written as a float (`3.0`, `5e0`) is stored and served
/// as the integer, as kube-apiserver's round trip through Go's float64
/// writes it (the differential tests hold the cluster-backed server to
/// kube-apiserver itself): a typed Go client cannot read `3.0` into an
/// `int32`. kubectl re-encodes what it sends, so these go `--raw`.
#[test]
fn whole_numbers_sent_as_floats_are_stored_as_integers() {
    let server = Standalone::start();
    let path = "/apis/apps.cozystack.io/v1alpha1/namespaces/default/postgreses";
    let dir = server.dir().to_path_buf();
    let body = |name: &str, rv: Option<&str>, replicas: &str| {
        let rv = rv.map_or(String::new(), |rv| format!(r#","resourceVersion":"{rv}""#));
        let file = dir.join(format!("{name}.json"));
        std::fs::write(
            &file,
            format!(
                r#"{{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"Postgres","metadata":{{"name":"{name}"{rv}}},"spec":{{"replicas":{replicas},"resources":{{"cpu":1.0}}}}}}"#
            ),
        )
        .unwrap();
        file.display().to_string()
    };
    let created = ok(&server.kubectl(&["create", "--raw", path, "-f", &body("f1", None, "3.0")]));
    assert!(created.contains(r#""replicas":3,"#), "{created}");
    assert!(created.contains(r#""cpu":1}"#), "{created}");
    let stored = ok(&server.kubectl(&["get", "--raw", &format!("{path}/f1")]));
    assert!(stored.contains(r#""replicas":3,"#), "{stored}");
    let rv: serde_json::Value = serde_json::from_str(&stored).unwrap();
    let rv = rv["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let replaced = ok(&server.kubectl(&[
        "replace",
        "--raw",
        &format!("{path}/f1"),
        "-f",
        &body("f1", Some(&rv), "5e0"),
    ]));
    assert!(replaced.contains(r#""replicas":5,"#), "{replaced}");
    // A fraction stays one (and is refused where the schema wants an integer).
    let refused =
        refused(&server.kubectl(&["create", "--raw", path, "-f", &body("f2", None, "2.5")]));
    assert!(refused.contains("spec.replicas"), "{refused}");
}

/// `kubectl cozy kinds list` against a standalone server lists what it
/// serves; a group it does not serve is explained as a standalone server's
/// (which has no APIServices to check).
#[test]
fn kinds_list_reads_a_standalone_server() {
    let server = Standalone::start();
    let cozy = |args: &[&str]| {
        Command::new(crate::support::bins::kubectl_cozy())
            .args(["kinds", "list", "--kubeconfig"])
            .arg(server.kubeconfig())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("kubectl cozy")
    };
    let table = ok(&cozy(&[]));
    for plural in ["buckets", "postgreses", "redises"] {
        assert!(table.contains(plural), "{plural}: {table}");
    }
    let out = cozy(&["--group", "nothing.example.com"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "the server serves no API group nothing.example.com: it is a standalone server, serving apps.cozystack.io"
        ) && !stderr.contains("apiservices"),
        "{stderr}"
    );
}

/// `kubectl auth can-i` and `whoami` get the standalone authorizer's
/// answers: its client is in `system:masters`, which may do everything.
#[test]
fn kubectl_auth_asks_a_standalone_server() {
    let server = Standalone::start();
    assert_eq!(
        ok(&server.kubectl(&["auth", "can-i", "create", "postgreses"])).trim(),
        "yes"
    );
    assert_eq!(
        ok(&server.kubectl(&["auth", "can-i", "delete", "namespaces", "-A"])).trim(),
        "yes"
    );
    let rules = ok(&server.kubectl(&["auth", "can-i", "--list"]));
    assert!(
        rules
            .lines()
            .any(|l| l.starts_with("*.*") && l.contains("[*]")),
        "{rules}"
    );
    let whoami = ok(&server.kubectl(&["auth", "whoami", "-o", "json"]));
    let whoami: serde_json::Value = serde_json::from_str(&whoami).unwrap();
    assert_eq!(whoami["kind"], "SelfSubjectReview", "{whoami}");
    let groups = whoami["status"]["userInfo"]["groups"].to_string();
    assert!(groups.contains("system:masters"), "{whoami}");

    // Impersonation, as kube-apiserver serves it to system:masters: the
    // request is the impersonated user's, and bob may do nothing here.
    let whoami = ok(&server.kubectl(&["auth", "whoami", "--as=bob", "-o", "json"]));
    let whoami: serde_json::Value = serde_json::from_str(&whoami).unwrap();
    assert_eq!(whoami["status"]["userInfo"]["username"], "bob", "{whoami}");
    let can = server.kubectl(&["auth", "can-i", "create", "postgreses", "--as=bob"]);
    assert!(
        text(&can.stdout).starts_with("no - "),
        "{}{}",
        text(&can.stdout),
        text(&can.stderr)
    );
    let refused = server.kubectl(&["get", "postgreses", "--as=bob"]);
    assert!(
        !refused.status.success()
            && text(&refused.stderr).contains("User \"bob\" cannot list resource \"postgreses\""),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(
        ok(&server.kubectl(&[
            "auth",
            "can-i",
            "create",
            "postgreses",
            "--as=bob",
            "--as-group=system:masters"
        ]))
        .trim(),
        "yes"
    );

    // Reviews kube-apiserver refuses are refused alike.
    let plane = plane::plane();
    let mut differ = Vec::new();
    for spec in [
        r#"{}"#,
        r#"{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"path":"/","verb":"get"}}"#,
    ] {
        let body = format!(
            r#"{{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{spec}}}"#
        );
        let args = [
            "create",
            "--raw",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            "-f",
            "-",
        ];
        let ours = server.kubectl_stdin(&args, &body);
        let theirs = plane.kubectl_stdin(&args, &body);
        let answer = |o: &Output| (o.status.code(), text(&o.stdout), text(&o.stderr));
        if answer(&ours) != answer(&theirs) {
            differ.push(format!(
                "{spec}:\n  ours:   {:?}\n  theirs: {:?}",
                answer(&ours),
                answer(&theirs)
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// kubectl validates a manifest whose kind no OpenAPI v3 document names
/// against OpenAPI v2, which it asks for only as gnostic protobuf
/// (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`): a
/// misspelled kind ends in kubectl's own "no matches for kind", as with
/// kube-apiserver, not in `failed to download openapi: proto: cannot parse
/// invalid wire-format data`. Decoding the document also runs it through
/// kube-openapi's model parser.
#[test]
fn a_misspelled_kind_is_reported_as_kube_apiserver_reports_it() {
    let server = Standalone::start();
    let typo = postgres("typo").replace("kind: Postgres", "kind: Postgress");
    for verb in ["apply", "create"] {
        let err = refused(&server.kubectl_stdin(&[verb, "-f", "-"], &typo));
        assert!(
            err.contains(
                "resource mapping not found for name: \"typo\" namespace: \"\" from \"STDIN\": \
                 no matches for kind \"Postgress\" in version \"apps.cozystack.io/v1alpha1\""
            ),
            "{verb}: {err}"
        );
        assert!(!err.contains("openapi"), "{verb}: {err}");
    }
    // Correct manifests still go through, beside a misspelled one too.
    ok(&server.kubectl_stdin(&["create", "-f", "-"], &postgres("db1")));
    ok(&server.kubectl_stdin(&["apply", "-f", "-"], &postgres("db2")));
    let both = format!("{}---\n{typo}", postgres("db3"));
    let err = refused(&server.kubectl_stdin(&["apply", "-f", "-"], &both));
    assert!(err.contains("no matches for kind \"Postgress\""), "{err}");
    let names = ok(&server.kubectl(&["get", "postgreses", "-o", "name"]));
    for name in ["db1", "db2", "db3"] {
        assert!(names.contains(name), "{name}: {names}");
    }
}

#[test]
fn charts_are_served_as_kinds_and_rescaffolded_when_they_change() {
    // The chart author's loop: serve a directory of charts, edit a chart's
    // values, and kubectl sees the new field without a restart. The
    // chart's annotations set the kind's table columns.
    let charts = tempfile::tempdir().expect("tempdir");
    let chart = charts.path().join("cache");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: cache\nversion: 0.1.0\ndescription: An in-memory cache\n\
         annotations:\n  kubectl-cozy.io/printer-columns: |\n    \
         - {name: Size, type: string, jsonPath: .spec.size}\n    \
         - {name: Replicas, type: integer, jsonPath: .spec.replicas}\n    \
         - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}\n",
    )
    .expect("write");
    std::fs::write(
        chart.join("values.yaml"),
        "## @param size Memory per replica\nsize: 512Mi\n",
    )
    .expect("write");
    let server = Standalone::serving("--charts", charts.path());
    let resources = ok(&server.kubectl(&[
        "api-resources",
        "--api-group",
        "apps.cozystack.io",
        "-o",
        "name",
    ]));
    assert_eq!(resources.trim(), "caches.apps.cozystack.io");
    let explain = ok(&server.kubectl(&["explain", "cache.spec"]));
    assert!(
        explain.contains("size") && !explain.contains("replicas"),
        "{explain}"
    );

    std::fs::write(
        chart.join("values.yaml"),
        "## @param size Memory per replica\nsize: 512Mi\n## @param replicas Number of replicas\nreplicas: 2\n",
    )
    .expect("write");
    // kubectl caches discovery and OpenAPI per server under HOME; a new
    // field shows once the server swapped its snapshot.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = server.kubectl(&["explain", "cache.spec.replicas"]);
        if out.status.success() {
            assert!(text(&out.stdout).contains("Number of replicas"));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new value never showed: {}",
            text(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let created = server.kubectl_stdin(
        &["apply", "-f", "-"],
        "apiVersion: apps.cozystack.io/v1alpha1\nkind: Cache\nmetadata: {name: c1}\nspec: {replicas: 3}\n",
    );
    ok(&created);
    let got = ok(&server.kubectl(&[
        "get",
        "cache",
        "c1",
        "-o",
        "jsonpath={.spec.size}/{.spec.replicas}",
    ]));
    assert_eq!(got, "512Mi/3");
    let table = ok(&server.kubectl(&["get", "caches"]));
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "SIZE", "REPLICAS", "AGE"], "{table}");
    assert_eq!(rows[1][..3], ["c1", "512Mi", "3"], "{table}");
}

/// `/metrics` counts each served resource's objects as kube-apiserver
/// counts a resource's: `apiserver_resource_objects` by group and resource
/// and the deprecated `apiserver_storage_objects` kube-apiserver 1.36 still
/// serves beside it, a resource with none at zero, under kube-apiserver's
/// own help and type lines (the control plane's scrape is the reference).
#[test]
fn metrics_count_each_resources_objects_as_kube_apiserver_does() {
    let server = Standalone::start();
    ok(&server.kubectl(&["create", "namespace", "other"]));
    for (name, namespace) in [("a", "default"), ("b", "default"), ("c", "other")] {
        ok(&kubectl_with(
            &server.kubeconfig(),
            &["apply", "-n", namespace, "-f", "-"],
            Some(&postgres(name)),
        ));
    }
    ok(&kubectl_with(
        &server.kubeconfig(),
        &["apply", "-f", "-"],
        Some(
            "apiVersion: apps.cozystack.io/v1alpha1\nkind: Redis\nmetadata:\n  name: cache\nspec: {}\n",
        ),
    ));
    let counts = |scrape: &str| {
        ["postgreses", "redises", "buckets"].map(|resource| {
            let by_group = metric_sample(
                scrape,
                "apiserver_resource_objects",
                &format!(r#"group="apps.cozystack.io",resource="{resource}""#),
            );
            let by_name = metric_sample(
                scrape,
                "apiserver_storage_objects",
                &format!(r#"resource="{resource}.apps.cozystack.io""#),
            );
            assert_eq!(by_group, by_name, "{resource}: {scrape}");
            by_group
        })
    };
    let scrape = ok(&server.kubectl(&["get", "--raw", "/metrics"]));
    assert_eq!(
        counts(&scrape),
        [Some(3.0), Some(1.0), Some(0.0)],
        "{scrape}"
    );

    ok(&server.kubectl(&["delete", "postgres", "a", "--wait=false"]));
    let scrape = ok(&server.kubectl(&["get", "--raw", "/metrics"]));
    assert_eq!(
        counts(&scrape),
        [Some(2.0), Some(1.0), Some(0.0)],
        "{scrape}"
    );

    let reference = ok(&plane()
        .kubectl()
        .args(["get", "--raw", "/metrics"])
        .output()
        .unwrap());
    for name in ["apiserver_resource_objects", "apiserver_storage_objects"] {
        for line in [format!("# HELP {name} "), format!("# TYPE {name} ")] {
            let of = |text: &str| {
                text.lines()
                    .find(|l| l.starts_with(&line))
                    .map(str::to_owned)
            };
            assert!(of(&reference).is_some(), "{line}: {reference}");
            assert_eq!(of(&scrape), of(&reference), "{line}");
        }
    }
}

#[test]
fn standalone_keeps_data_across_restarts() {
    let server = Standalone::start();
    ok(&kubectl_with(
        &server.kubeconfig(),
        &["apply", "-f", "-"],
        Some(&postgres("kept")),
    ));
    let mut server = server;
    server.restart().expect("serve restarts on its store");
    assert_eq!(
        ok(&server.kubectl(&["get", "postgreses", "-o", "name"])).trim(),
        "postgres.apps.cozystack.io/kept"
    );

    // After a clean stop the store's file alone holds everything: a server
    // on a copy of just that file serves the app.
    server.interrupt();
    let wal = server.dir().join("store.sqlite-wal");
    assert_eq!(std::fs::metadata(&wal).map_or(0, |m| m.len()), 0);
    let copy = tempfile::tempdir().unwrap();
    std::fs::copy(
        server.dir().join("store.sqlite"),
        copy.path().join("store.sqlite"),
    )
    .unwrap();
    let from_copy =
        Standalone::launch("127.0.0.1:0", "--kinds", &examples(), copy).expect("serve the copy");
    assert_eq!(
        ok(&from_copy.kubectl(&["get", "postgreses", "-o", "name"])).trim(),
        "postgres.apps.cozystack.io/kept"
    );
}

#[test]
fn a_second_standalone_server_on_the_same_store_is_refused() {
    let server = Standalone::start();
    let dir = server.dir();
    let out = standalone::serve_command(&examples(), dir, &dir.join("kubeconfig2"))
        .output()
        .expect("second serve");
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "a second server started: {stderr}");
    let kubeconfig = std::fs::read_to_string(server.kubeconfig()).unwrap();
    let url = kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .expect("server in kubeconfig");
    assert!(
        stderr.contains("in use by another server")
            && stderr.contains(&format!("PID {}", server.pid()))
            && stderr.contains(url),
        "{stderr}"
    );
    assert!(!dir.join("kubeconfig2").exists());
    // The first server is unharmed.
    ok(&server.kubectl(&["get", "postgreses"]));
}

/// A second server writing its context into the kubeconfig a running one's
/// is in is refused (writing over it would cut kubectl off from the first,
/// and leave the file naming a server that is gone once the second stops);
/// once the first is gone, the file is the next server's.
#[test]
fn a_second_standalone_server_on_the_same_kubeconfig_is_refused_while_the_first_runs() {
    let mut first = Standalone::start();
    let kubeconfig = first.kubeconfig();
    let second_dir = tempfile::tempdir().unwrap();
    let second = || {
        standalone::serve_command(&examples(), second_dir.path(), &kubeconfig)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("second serve")
    };
    let before = std::fs::read_to_string(first.kubeconfig()).unwrap();
    let url = before
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .expect("server in kubeconfig")
        .to_owned();
    /// A child killed (and reaped) however the test ends.
    struct Killed(Option<std::process::Child>);
    impl Drop for Killed {
        fn drop(&mut self) {
            if let Some(child) = &mut self.0 {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
    let mut refused = Killed(Some(second()));
    let deadline = Instant::now() + Duration::from_secs(30);
    while refused.0.as_mut().unwrap().try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the second server ran on the first one's kubeconfig"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = refused.0.take().unwrap().wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "context kubectl-cozy in {} is the standalone server running at {url}",
            first.kubeconfig().display()
        )) && stderr.contains("--write-kubeconfig PATH"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(first.kubeconfig()).unwrap(), before);
    ok(&first.kubectl(&["get", "postgreses"]));

    // Gone (killed: its context is left in the file), it no longer holds it.
    first.kill();
    let mut taken = Killed(Some(second()));
    let deadline = Instant::now() + Duration::from_secs(30);
    let written = loop {
        let text = std::fs::read_to_string(first.kubeconfig()).unwrap();
        if !text.contains(&url) {
            break text;
        }
        if let Some(status) = taken.0.as_mut().unwrap().try_wait().unwrap() {
            panic!("the second server exited with {status}");
        }
        assert!(Instant::now() < deadline, "the second server wrote nothing");
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(taken);
    assert!(written.contains("server: https://127.0.0.1:"), "{written}");
}

/// `--write-kubeconfig` onto a kubeconfig that holds other clusters adds
/// its context and keeps theirs (as `kind` does), and refuses a file that
/// is not a kubeconfig, leaving it as it was.
#[test]
fn standalone_writes_its_context_into_an_existing_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\ncurrent-context: work\nclusters:\n- name: work\n  cluster:\n    \
         server: https://10.0.0.1:6443\ncontexts:\n- name: work\n  context:\n    cluster: work\n    user: me\n\
         users:\n- name: me\n  user:\n    token: abc\n",
    )
    .unwrap();
    let server = Standalone::launch("127.0.0.1:0", "--kinds", &examples(), dir).expect("serve");
    ok(&server.kubectl(&["get", "postgreses"]));
    let contexts = ok(&server.kubectl(&["config", "get-contexts", "-o", "name"]));
    let mut contexts: Vec<&str> = contexts.lines().collect();
    contexts.sort_unstable();
    assert_eq!(contexts, ["kubectl-cozy", "work"]);
    let token = ok(&server.kubectl(&[
        "config",
        "view",
        "--raw",
        "-o",
        "jsonpath={.users[?(@.name==\"me\")].user.token}",
    ]));
    assert_eq!(token, "abc");
    // Stopped, it makes the context that was current before current again.
    let kubeconfig = server.kubeconfig();
    let mut server = server;
    let stderr = server.interrupt();
    let current = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(
        current.contains("current-context: work") && current.contains("name: kubectl-cozy"),
        "{current}"
    );
    assert!(stderr.contains("context work is current again"), "{stderr}");
    // Killed, it cannot; the next server on the file finds its context
    // current, and makes `work` current again when it stops.
    server.start_again().expect("serve again");
    // Killed once it has recorded the context to restore.
    let records = server.dir().join("state/previous-contexts.json");
    let recorded = |records: &std::path::Path| {
        std::fs::read_to_string(records).is_ok_and(|t| t.contains("\"work\""))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !recorded(&records) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(recorded(&records), "no record in {}", records.display());
    server.kill();
    let current = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(
        current.contains("current-context: kubectl-cozy"),
        "{current}"
    );
    server.start_again().expect("serve after a kill");
    let stderr = server.interrupt();
    let current = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(current.contains("current-context: work"), "{current}");
    assert!(
        stderr.contains("a server before this one stopped without making it current")
            && stderr.contains("context work is current again"),
        "{stderr}"
    );
    // Restored, the record is gone.
    assert!(!recorded(&records), "a record left after a clean stop");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    let not_a_kubeconfig = "notes: [unclosed\n";
    std::fs::write(&path, not_a_kubeconfig).unwrap();
    let args: Vec<std::ffi::OsString> = [
        "serve",
        "--standalone",
        "--listen",
        "127.0.0.1:0",
        "--kinds",
    ]
    .into_iter()
    .map(Into::into)
    .chain([examples().into_os_string()])
    .collect();
    let mut serve = standalone::spawn(&args, dir.path()).expect("serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    while serve.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = serve.kill();
            panic!("serve kept running beside a kubeconfig it could not write into");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = serve.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("is not a kubeconfig"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), not_a_kubeconfig);
}

#[cfg(unix)]
#[test]
fn standalone_store_and_state_are_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let server = Standalone::start();
    ok(&kubectl_with(
        &server.kubeconfig(),
        &["apply", "-f", "-"],
        Some(&postgres("secret")),
    ));
    let dir = server.dir();
    for file in [
        "store.sqlite",
        "store.sqlite-wal",
        "store.sqlite-shm",
        "state/ca.key",
    ] {
        let mode = std::fs::metadata(dir.join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{file} is {mode:o}");
    }
    let mode = std::fs::metadata(dir.join("state"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "state dir is {mode:o}");
}

#[test]
fn standalone_on_a_wildcard_address_writes_a_usable_kubeconfig() {
    let server = Standalone::start_on("0.0.0.0:0");
    let kubeconfig = std::fs::read_to_string(server.kubeconfig()).unwrap();
    assert!(
        kubeconfig.contains("server: https://127.0.0.1:") && !kubeconfig.contains("0.0.0.0"),
        "{kubeconfig}"
    );
    // kubectl verifies the serving certificate against the kubeconfig's CA.
    ok(&server.kubectl(&["get", "postgreses"]));
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let server = Standalone::start();
    let kc = server.kubeconfig();
    let raw = |method: &str, path: &str, body: &[u8]| -> Output {
        let file = server.dir().join("body");
        std::fs::write(&file, body).unwrap();
        let bin_dir = plane::binaries().expect("binaries");
        // kubectl's raw client sends the body with the content type we name.
        Command::new(bin_dir.join("kubectl"))
            .arg("--kubeconfig")
            .arg(&kc)
            .args([method, "--raw", path, "-f"])
            .arg(&file)
            .env("HOME", std::env::temp_dir())
            .output()
            .expect("kubectl")
    };
    let base = "/apis/apps.cozystack.io/v1alpha1/namespaces/default/postgreses";
    let out = raw("create", base, b"{not json");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("BadRequest")
            || text(&out.stderr).contains("400")
            || text(&out.stderr).contains("json"),
        "{}",
        text(&out.stderr)
    );

    let invalid = br#"{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"Postgres","metadata":{"name":"x"},"spec":{"replicas":"many","version":"9"}}"#;
    let out = raw("create", base, invalid);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("spec.replicas") && stderr.contains("spec.version"),
        "{stderr}"
    );

    let mismatch = br#"{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"Postgres","metadata":{"name":"x","namespace":"other"},"spec":{}}"#;
    let out = raw("create", base, mismatch);
    assert!(
        text(&out.stderr).contains("does not match the namespace"),
        "{}",
        text(&out.stderr)
    );

    let big = format!(
        r#"{{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"Postgres","metadata":{{"name":"x"}},"spec":{{"pad":"{}"}}}}"#,
        "x".repeat(4 * 1024 * 1024)
    );
    let out = raw("create", base, big.as_bytes());
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).to_lowercase().contains("too large") || text(&out.stderr).contains("413"),
        "{}",
        text(&out.stderr)
    );

    // Under the body limit but over what etcd stores (1.5 MiB): refused in
    // kube-apiserver's words, as a cluster refuses the HelmRelease.
    let users: serde_json::Map<String, serde_json::Value> = (0..17)
        .map(|i| (format!("user{i}"), json!({"password": "x".repeat(100_000)})))
        .collect();
    let large = json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
        "metadata": {"name": "x"}, "spec": {"users": users}});
    let out = raw("create", base, large.to_string().as_bytes());
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("Error from server: etcdserver: request is too large"),
        "{}",
        text(&out.stderr)
    );

    let out = server.kubectl(&[
        "get",
        "--raw",
        "/apis/apps.cozystack.io/v1alpha1/namespaces/default/mysqls",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("NotFound") || text(&out.stderr).contains("not found"),
        "{}",
        text(&out.stderr)
    );

    assert!(
        ok(&server.kubectl(&["get", "postgreses", "-o", "name"]))
            .trim()
            .is_empty(),
        "a refused write stored something"
    );
}

#[test]
fn kubectl_through_the_aggregator() {
    // `get all` and `get cozy` read discovery of every group, so a serve
    // test's session whose APIService is briefly unavailable (agent restart,
    // teardown) would fail them: run apart from the tests that hold the lock.
    let _serial = crate::support::CLUSTER_LOCK.blocking_lock();
    let plane = plane::plane();
    let _aggregated = aggregated();
    let ns = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(plane.namespace("agg"));
    let kc = plane.kubeconfig.clone();
    let k = |args: &[&str]| {
        let mut all = vec!["-n", ns.as_str()];
        all.extend_from_slice(args);
        kubectl_with(&kc, &all, None)
    };
    // kubectl's discovery cache (shared by every test's kubectl) may still
    // hold a group an earlier test served the same kinds in and has since
    // removed (`install`'s): `get postgreses` would resolve to it. `kubectl
    // api-resources` reads discovery afresh.
    ok(&k(&["api-resources", "--api-group", "apps.cozystack.io"]));
    let manifest = postgres("db1");
    ok(&kubectl_with(
        &kc,
        &["-n", &ns, "apply", "-f", "-"],
        Some(&manifest),
    ));
    assert!(ok(&k(&["get", "postgreses"])).contains("db1"));
    // Short name and categories from the kind definition, through discovery.
    assert!(ok(&k(&["get", "pg"])).contains("db1"));
    let all = ok(&k(&["get", "all"]));
    assert!(all.contains("postgres.apps.cozystack.io/db1"), "{all}");
    let cozy = ok(&k(&["get", "cozy"]));
    assert!(cozy.contains("postgres.apps.cozystack.io/db1"), "{cozy}");
    let wide = ok(&k(&["get", "postgreses", "-o", "wide"]));
    assert!(
        wide.lines().next().unwrap_or_default().contains("VERSION"),
        "{wide}"
    );

    // The HelmRelease behind it.
    let hr: serde_json::Value = serde_json::from_str(&ok(&k(&[
        "get",
        "helmreleases.helm.toolkit.fluxcd.io",
        "postgres-db1",
        "-o",
        "json",
    ])))
    .unwrap();
    assert_eq!(hr["spec"]["values"]["replicas"], 3);
    assert_eq!(
        hr["metadata"]["labels"]["apps.cozystack.io/application.kind"],
        "Postgres"
    );

    // A watch from before the cache's first list is too old: as kube-apiserver's
    // watch cache, the watch starts and its one event is the 410 Expired.
    let out = k(&[
        "get",
        "--raw",
        "/apis/apps.cozystack.io/v1alpha1/postgreses?watch=true&resourceVersion=1",
    ]);
    let event: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(
        (
            &event["type"],
            &event["object"]["code"],
            &event["object"]["reason"]
        ),
        (
            &serde_json::json!("ERROR"),
            &serde_json::json!(410),
            &serde_json::json!("Expired")
        ),
        "{event}"
    );
    assert!(
        event["object"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("too old resource version: 1 (")),
        "{event}"
    );

    // The aggregator publishes an APIService's OpenAPI a moment after it
    // is Available (when this test started the server, it just was).
    let deadline = Instant::now() + Duration::from_secs(30);
    let explained = loop {
        let out = k(&["explain", "postgreses.spec"]);
        if out.status.success() || Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let explain = ok(&explained);
    assert!(explain.contains("replicas"), "{explain}");
    // kube-apiserver owns core/v1: the server publishes no api/v1 document
    // here (the aggregator would merge it into the cluster's v3 root).
    let explain = ok(&k(&["explain", "ns"]));
    assert!(
        explain.contains("KIND:       Namespace")
            && !explain.contains("apps in different namespaces may share a name"),
        "{explain}"
    );
    // kube-apiserver's OpenAPI v2 (merged from this server's JSON) reports
    // a misspelled kind as ever.
    let typo = postgres("typo").replace("kind: Postgres", "kind: Postgress");
    let err = refused(&kubectl_with(
        &kc,
        &["-n", &ns, "apply", "-f", "-"],
        Some(&typo),
    ));
    assert!(
        err.contains("no matches for kind \"Postgress\" in version \"apps.cozystack.io/v1alpha1\""),
        "{err}"
    );
    let resources = ok(&k(&["api-resources", "--api-group=apps.cozystack.io"]));
    assert!(resources.contains("postgreses"), "{resources}");

    // diff shows the change and exits 1.
    let changed = manifest.replace("replicas: 3", "replicas: 5");
    let out = kubectl_with(&kc, &["-n", &ns, "diff", "-f", "-"], Some(&changed));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("replicas: 5"),
        "{}",
        text(&out.stdout)
    );

    // A watch sees the edit made by a scripted editor. Names qualified, and
    // the same discovery cache as the rest of the test: kubectl's default
    // cache may still name an earlier test's group serving these kinds.
    let bin_dir = plane::binaries().unwrap();
    let mut watch = Command::new(bin_dir.join("kubectl"))
        .arg("--kubeconfig")
        .arg(&kc)
        .env("HOME", std::env::temp_dir())
        .args([
            "-n",
            &ns,
            "get",
            "postgreses.apps.cozystack.io",
            "-w",
            "-o",
            "jsonpath={.spec.replicas}{\"\\n\"}",
            "--request-timeout=30s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let out = Command::new(bin_dir.join("kubectl"))
        .arg("--kubeconfig")
        .arg(&kc)
        .env("HOME", std::env::temp_dir())
        .args(["-n", &ns, "edit", "postgres.apps.cozystack.io", "db1"])
        .env("KUBE_EDITOR", "sed -i s/replicas:\\ 3/replicas:\\ 4/")
        .output()
        .unwrap();
    ok(&out);
    std::thread::sleep(Duration::from_secs(2));
    let _ = watch.kill();
    let seen = text(&watch.wait_with_output().unwrap().stdout);
    assert!(
        seen.lines().any(|l| l == "3") && seen.lines().any(|l| l == "4"),
        "watch saw: {seen:?}"
    );

    // Server-side apply, then delete with --wait.
    let applied = manifest.replace("replicas: 3", "replicas: 6");
    ok(&kubectl_with(
        &kc,
        &[
            "-n",
            &ns,
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            "-",
        ],
        Some(&applied),
    ));
    assert_eq!(
        ok(&k(&[
            "get",
            "postgres",
            "db1",
            "-o",
            "jsonpath={.spec.replicas}"
        ])),
        "6"
    );
    ok(&k(&[
        "delete",
        "postgres",
        "db1",
        "--wait",
        "--timeout=60s",
    ]));
    assert!(
        ok(&k(&["get", "postgreses", "-o", "name"]))
            .trim()
            .is_empty()
    );
}

#[test]
fn namespace_deletion_and_garbage_collection_reach_apps() {
    let _lock = crate::support::CLUSTER_LOCK.blocking_lock();
    let plane = plane::plane();
    let _aggregated = aggregated();
    let kc = plane.kubeconfig.clone();
    let ns = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(plane.namespace("agg-gc"));

    // (d) an app owned by a ConfigMap goes when the ConfigMap goes.
    ok(&kubectl_with(
        &kc,
        &["-n", &ns, "create", "configmap", "owner"],
        None,
    ));
    let uid = ok(&kubectl_with(
        &kc,
        &[
            "-n",
            &ns,
            "get",
            "configmap",
            "owner",
            "-o",
            "jsonpath={.metadata.uid}",
        ],
        None,
    ));
    let owned = format!(
        "apiVersion: apps.cozystack.io/v1alpha1\nkind: Redis\nmetadata:\n  name: cache\n  ownerReferences:\n  - {{apiVersion: v1, kind: ConfigMap, name: owner, uid: {uid}}}\nspec: {{}}\n"
    );
    ok(&kubectl_with(
        &kc,
        &["-n", &ns, "apply", "-f", "-"],
        Some(&owned),
    ));
    ok(&kubectl_with(
        &kc,
        &["-n", &ns, "delete", "configmap", "owner"],
        None,
    ));
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let names = ok(&kubectl_with(
            &kc,
            &["-n", &ns, "get", "redises", "-o", "name"],
            None,
        ));
        if names.trim().is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the garbage collector never removed the owned app"
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    // (c) deleting a namespace that holds apps completes.
    ok(&kubectl_with(
        &kc,
        &["-n", &ns, "apply", "-f", "-"],
        Some(&postgres("in-ns")),
    ));
    ok(&kubectl_with(
        &kc,
        &["delete", "namespace", &ns, "--wait", "--timeout=120s"],
        None,
    ));
}

#[test]
fn creates_in_missing_or_terminating_namespaces_are_refused_like_kube_apiserver() {
    let plane = plane::plane();
    let _aggregated = aggregated();
    let kc = plane.kubeconfig.clone();
    let manifest = postgres("db");

    let missing = format!("missing-{}", std::process::id());
    let out = kubectl_with(&kc, &["-n", &missing, "create", "-f", "-"], Some(&manifest));
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("namespaces \"{missing}\" not found")),
        "{stderr}"
    );

    // A namespace held in Terminating by a finalizer on a ConfigMap.
    let ns = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(plane.namespace("terminating"));
    ok(&kubectl_with(
        &kc,
        &["-n", &ns, "create", "-f", "-"],
        Some(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hold, finalizers: [kubectl-cozy.io/test-hold]}\n",
        ),
    ));
    ok(&kubectl_with(
        &kc,
        &["delete", "namespace", &ns, "--wait=false"],
        None,
    ));
    let out = kubectl_with(&kc, &["-n", &ns, "create", "-f", "-"], Some(&manifest));
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!(
            "postgreses.apps.cozystack.io \"db\" is forbidden: unable to create new content in namespace {ns} because it is being terminated"
        )),
        "{stderr}"
    );
    // Dry runs are refused the same way, and nothing was stored.
    let out = kubectl_with(
        &kc,
        &["-n", &ns, "create", "--dry-run=server", "-f", "-"],
        Some(&manifest),
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("being terminated"));
    let listed = ok(&kubectl_with(
        &kc,
        &[
            "-n",
            &ns,
            "get",
            "helmreleases.helm.toolkit.fluxcd.io",
            "-o",
            "name",
        ],
        None,
    ));
    assert!(listed.trim().is_empty(), "{listed}");
    ok(&kubectl_with(
        &kc,
        &[
            "-n",
            &ns,
            "patch",
            "configmap",
            "hold",
            "--type=merge",
            "-p",
            "{\"metadata\":{\"finalizers\":null}}",
        ],
        None,
    ));
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Issue 16 §19: 10 rounds of creating and deleting 1,000 apps must not
/// leave the server holding the memory of the work once it is idle again.
/// Ignored (about three minutes); run with `--ignored --nocapture` for figures.
#[test]
#[ignore = "three minutes of churn and idling; run on purpose"]
fn memory_is_returned_after_churn() {
    use futures::StreamExt;
    let server = Standalone::start();
    let pid = server.pid();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = runtime.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(server.kubeconfig()).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        kube::Client::try_from(config).unwrap()
    });
    let path = "/apis/apps.cozystack.io/v1alpha1/namespaces/default/postgreses";
    let send = |method: http::Method, uri: String, body: Vec<u8>| {
        let client = client.clone();
        async move {
            let req = http::Request::builder()
                .method(method)
                .uri(uri)
                .header("content-type", "application/json")
                .body(kube::client::Body::from(body))
                .unwrap();
            let resp = client.send(req).await.expect("request");
            assert!(resp.status().is_success(), "{}", resp.status());
        }
    };
    std::thread::sleep(Duration::from_secs(2));
    let fresh = rss_kib(pid);
    for _round in 0..10 {
        runtime.block_on(async {
            futures::stream::iter(0..1000)
                .map(|i| {
                    let body = serde_json::to_vec(&serde_json::json!({
                        "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
                        "metadata": {"name": format!("churn-{i}")}, "spec": {"replicas": 1}}))
                    .unwrap();
                    send(http::Method::POST, path.to_owned(), body)
                })
                .buffer_unordered(16)
                .collect::<Vec<()>>()
                .await;
            futures::stream::iter(0..1000)
                .map(|i| {
                    send(
                        http::Method::DELETE,
                        format!("{path}/churn-{i}"),
                        Vec::new(),
                    )
                })
                .buffer_unordered(16)
                .collect::<Vec<()>>()
                .await;
        });
    }
    let busy = rss_kib(pid);
    // Watch history is kept for 75 s (as kube-apiserver's watch cache);
    // then it is dropped and malloc gives the memory back.
    std::thread::sleep(Duration::from_secs(90));
    let idle = rss_kib(pid);
    eprintln!(
        "RSS KiB: fresh {} | right after churn {} (peak {}) | idle 90 s later {}",
        fresh.0, busy.0, busy.1, idle.0
    );
    // Measured (debug build): fresh 37.5 MiB, 119 MiB after the churn,
    // 119 MiB still 90 s later before the fix, 67 MiB after it.
    assert!(
        idle.0.saturating_sub(fresh.0) < busy.0.saturating_sub(fresh.0) / 2,
        "the server kept {} KiB after the churn (fresh {} KiB, busy {} KiB)",
        idle.0,
        fresh.0,
        busy.0
    );
}

#[test]
fn kubectl_learns_the_core_group_from_api_alone() {
    // kube-apiserver answers `/api` with aggregated discovery, so kubectl
    // never asks `/api/v1`; a server that answers only `APIVersions` costs
    // every fresh discovery that extra request.
    let server = Standalone::start();
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = format!("--cache-dir={}", cache.path().display());
    let out = server.kubectl(&["get", "ns", "-v=6", &cache_dir]);
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("default"), "{stdout}");
    assert!(log.contains("/api?timeout="), "kubectl asked /api: {log}");
    assert!(
        !log.contains("/api/v1?timeout="),
        "kubectl fell back to legacy discovery of /api/v1: {log}"
    );
    let resources = ok(&server.kubectl(&["api-resources", "--api-group=", &cache_dir]));
    let ns = resources
        .lines()
        .find(|l| l.starts_with("namespaces "))
        .unwrap_or_else(|| panic!("{resources}"));
    let cells: Vec<&str> = ns.split_whitespace().collect();
    assert_eq!(
        cells,
        ["namespaces", "ns", "v1", "false", "Namespace"],
        "{resources}"
    );
}

#[tokio::test]
async fn core_aggregated_discovery_is_kube_apiservers() {
    // `/api` as aggregated discovery, from kube-apiserver and from a
    // standalone server: the same core group and namespaces resource, its
    // `finalize` and `status` subresources included.
    const ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    async fn core(client: &kube::Client) -> serde_json::Value {
        let request = http::Request::get("/api")
            .header("accept", ACCEPT)
            .body(Vec::new())
            .unwrap();
        let doc: serde_json::Value =
            serde_json::from_str(&client.request_text(request).await.unwrap()).unwrap();
        assert_eq!(doc["kind"], "APIGroupDiscoveryList", "{doc}");
        assert_eq!(doc["items"].as_array().map(Vec::len), Some(1), "{doc}");
        doc["items"][0].clone()
    }
    let theirs = core(&plane::plane().client().await).await;
    let server = Standalone::start();
    let kubeconfig = kube::config::Kubeconfig::read_from(server.kubeconfig()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let ours = core(&kube::Client::try_from(config).unwrap()).await;

    assert_eq!(ours["metadata"], theirs["metadata"], "ours {ours}");
    let version = |group: &serde_json::Value| {
        let v1 = group["versions"][0].clone();
        assert_eq!(
            group["versions"].as_array().map(Vec::len),
            Some(1),
            "{group}"
        );
        v1
    };
    let (our_v1, their_v1) = (version(&ours), version(&theirs));
    assert_eq!(our_v1["version"], their_v1["version"]);
    assert_eq!(our_v1["freshness"], their_v1["freshness"]);
    let namespaces = |v1: &serde_json::Value| {
        v1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "namespaces")
            .cloned()
            .unwrap_or_else(|| panic!("no namespaces in {v1}"))
    };
    assert_eq!(namespaces(&our_v1), namespaces(&their_v1));
    assert_eq!(our_v1["resources"].as_array().map(Vec::len), Some(1));
}

#[test]
fn standalone_serves_namespaces_to_kubectl() {
    let server = Standalone::start();
    let kc = server.kubeconfig();
    ok(&server.kubectl(&["create", "namespace", "team-a"]));
    let table = ok(&server.kubectl(&["get", "ns"]));
    assert!(
        table.lines().next().unwrap_or_default().contains("STATUS"),
        "{table}"
    );
    assert!(
        table.contains("default") && table.contains("team-a"),
        "{table}"
    );
    assert!(table.contains("Active"), "{table}");
    ok(&kubectl_with(
        &kc,
        &["apply", "-n", "team-a", "-f", "-"],
        Some(&postgres("db-a")),
    ));
    ok(&kubectl_with(
        &kc,
        &["apply", "-f", "-"],
        Some(&postgres("db-default")),
    ));
    let all = ok(&server.kubectl(&["get", "pg", "-A", "-o", "name"]));
    assert!(all.contains("db-a") && all.contains("db-default"), "{all}");

    // kubectl explain reads the core v1 document (/openapi/v3/api/v1).
    let explain = ok(&server.kubectl(&["explain", "ns"]));
    assert!(
        explain.contains("KIND:       Namespace")
            && explain.contains("VERSION:    v1")
            && !explain.contains("GROUP:"),
        "{explain}"
    );
    for field in ["metadata", "spec", "status"] {
        assert!(explain.contains(field), "{field}: {explain}");
    }
    let spec = ok(&server.kubectl(&["explain", "ns.spec"]));
    assert!(
        spec.contains("FIELD: spec <NamespaceSpec>") && spec.contains("finalizers\t<[]string>"),
        "{spec}"
    );
    let phase = ok(&server.kubectl(&["explain", "namespace.status.phase"]));
    assert!(phase.contains("Terminating"), "{phase}");
    // A Namespace manifest is validated by kubectl against OpenAPI v2 (no v3
    // patch operation declares fieldValidation for it): a good one is
    // created, a misspelled field is refused before anything is sent.
    ok(&kubectl_with(
        &kc,
        &["apply", "-f", "-"],
        Some("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-b\n"),
    ));
    let err = refused(&kubectl_with(
        &kc,
        &["create", "-f", "-"],
        Some(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-c\nspec:\n  finalizer: []\n",
        ),
    ));
    assert!(
        err.contains("unknown field \"finalizer\" in io.k8s.api.core.v1.NamespaceSpec"),
        "{err}"
    );
    ok(&server.kubectl(&["delete", "namespace", "team-b", "--timeout=30s"]));

    // Objects go only into namespaces that exist, as with kube-apiserver.
    let out = kubectl_with(
        &kc,
        &["apply", "-n", "nope", "-f", "-"],
        Some(&postgres("db-x")),
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("namespaces \"nope\" not found"),
        "{}",
        text(&out.stderr)
    );
    let out = server.kubectl(&["create", "namespace", "Bad_Name"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("metadata.name: Invalid value"),
        "{}",
        text(&out.stderr)
    );
    let out = server.kubectl(&["create", "namespace", "team-a"]);
    assert!(
        text(&out.stderr).contains("already exists"),
        "{}",
        text(&out.stderr)
    );

    // Deleting a namespace deletes its apps and finishes.
    ok(&server.kubectl(&["delete", "namespace", "team-a", "--timeout=30s"]));
    let left = ok(&server.kubectl(&["get", "ns", "-o", "name"]));
    assert_eq!(left.trim(), "namespace/default");
    let all = ok(&server.kubectl(&["get", "pg", "-A", "-o", "name"]));
    assert_eq!(all.trim(), "postgres.apps.cozystack.io/db-default");
    let out = server.kubectl(&["get", "ns", "team-a"]);
    assert!(
        text(&out.stderr).contains("not found"),
        "{}",
        text(&out.stderr)
    );

    // `default` may not be deleted (kube-apiserver's NamespaceLifecycle),
    // dry run or not, and its apps stay.
    for dry_run in ["--dry-run=none", "--dry-run=server"] {
        let out = server.kubectl(&["delete", "namespace", "default", dry_run]);
        assert!(!out.status.success(), "{dry_run}");
        assert!(
            text(&out.stderr)
                .contains("namespaces \"default\" is forbidden: this namespace may not be deleted"),
            "{}",
            text(&out.stderr)
        );
    }
    let left = ok(&server.kubectl(&["get", "ns", "default", "-o", "name"]));
    assert_eq!(left.trim(), "namespace/default");
    let all = ok(&server.kubectl(&["get", "pg", "-A", "-o", "name"]));
    assert_eq!(all.trim(), "postgres.apps.cozystack.io/db-default");
}

/// Namespaces as kubectl manages them in a cluster: `kubectl apply -f`
/// keeps annotations and labels and may run again (client-side, then with
/// changes), `apply --server-side` creates and updates one, `label` and
/// `annotate` patch it, `get ns -w` sees changes, and `delete -f` of a
/// namespace and an app in it succeeds (the app's delete finds it, as the
/// namespace's content goes in the background).
#[test]
fn standalone_namespaces_take_apply_patch_and_delete_of_manifests() {
    let server = Standalone::start();
    let kc = server.kubeconfig();
    let apply = |args: &[&str], manifest: &str| kubectl_with(&kc, args, Some(manifest));
    let json = |name: &str| -> serde_json::Value {
        serde_json::from_str(&ok(&server.kubectl(&[
            "get",
            "ns",
            name,
            "-o",
            "json",
            "--show-managed-fields",
        ])))
        .unwrap()
    };
    let team_x = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-x\n  labels: {team: x, tier: gold}\n  \
                  annotations: {owner: platform, cost-center: \"42\"}\n";
    let out = ok(&apply(&["apply", "-f", "-"], team_x));
    assert!(out.contains("namespace/team-x created"), "{out}");
    let ns = json("team-x");
    assert_eq!(ns["metadata"]["annotations"]["owner"], "platform");
    assert_eq!(ns["metadata"]["annotations"]["cost-center"], "42");
    assert!(
        ns["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string(),
        "{ns}"
    );
    assert_eq!(ns["metadata"]["labels"]["tier"], "gold");
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team-x"
    );
    assert_eq!(
        ns["metadata"]["managedFields"][0]["manager"],
        "kubectl-client-side-apply"
    );
    // Again: unchanged, no warning, no error.
    let again = apply(&["apply", "-f", "-"], team_x);
    let out = ok(&again);
    assert!(out.contains("namespace/team-x unchanged"), "{out}");
    assert!(text(&again.stderr).is_empty(), "{}", text(&again.stderr));
    // Changed: a label dropped, an annotation changed (a strategic merge patch).
    let changed = team_x
        .replace(", tier: gold", "")
        .replace("owner: platform", "owner: data");
    let out = ok(&apply(&["apply", "-f", "-"], &changed));
    assert!(out.contains("namespace/team-x configured"), "{out}");
    let ns = json("team-x");
    assert_eq!(ns["metadata"]["annotations"]["owner"], "data");
    assert!(ns["metadata"]["labels"].get("tier").is_none(), "{ns}");
    assert_eq!(ns["status"]["phase"], "Active");
    ok(&server.kubectl(&["label", "ns", "team-x", "reviewed=yes"]));
    ok(&server.kubectl(&["annotate", "ns", "team-x", "note=hello"]));
    let ns = json("team-x");
    assert_eq!(ns["metadata"]["labels"]["reviewed"], "yes");
    assert_eq!(ns["metadata"]["annotations"]["note"], "hello");
    // A stale resourceVersion is a conflict.
    let out = server.kubectl(&[
        "patch",
        "ns",
        "team-x",
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"resourceVersion":"1","labels":{"x":"y"}}}"#,
    ]);
    assert!(
        text(&out.stderr).contains("the object has been modified"),
        "{}",
        text(&out.stderr)
    );

    // Server-side apply creates and then updates one.
    let team_y = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-y\n";
    let labelled = format!("{team_y}  labels: {{team: yellow}}\n");
    let out = ok(&apply(&["apply", "--server-side", "-f", "-"], &labelled));
    assert!(out.contains("namespace/team-y serverside-applied"), "{out}");
    let ns = json("team-y");
    assert_eq!(ns["metadata"]["labels"]["team"], "yellow");
    let managers: Vec<(&str, &str)> = ns["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["manager"].as_str().unwrap(),
                m["operation"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(managers, [("kubectl", "Apply")], "{ns}");
    // Dropped from the applied configuration, the label goes.
    let out = ok(&apply(&["apply", "--server-side", "-f", "-"], team_y));
    assert!(out.contains("namespace/team-y serverside-applied"), "{out}");
    assert!(json("team-y")["metadata"]["labels"].get("team").is_none());

    // A watch sees a change.
    let mut watch = Command::new(plane::binaries().expect("binaries").join("kubectl"))
        .arg("--kubeconfig")
        .arg(&kc)
        .args([
            "get",
            "ns",
            "team-y",
            "-w",
            "-o",
            "name",
            "--request-timeout=20s",
        ])
        .env("HOME", std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl get -w");
    std::thread::sleep(Duration::from_millis(1500));
    ok(&server.kubectl(&["label", "ns", "team-y", "watched=yes"]));
    std::thread::sleep(Duration::from_millis(1500));
    let _ = watch.kill();
    let watched = watch.wait_with_output().unwrap();
    assert_eq!(
        text(&watched.stdout).matches("namespace/team-y").count(),
        2,
        "{}{}",
        text(&watched.stdout),
        text(&watched.stderr)
    );
    // A field selector's every term applies (`!=` too).
    let others = ok(&server.kubectl(&[
        "get",
        "ns",
        "--field-selector",
        "metadata.name!=default",
        "-o",
        "name",
    ]));
    assert!(
        others.contains("namespace/team-y") && !others.contains("namespace/default\n"),
        "{others}"
    );
    // A watch of all namespaces goes on from the list's resourceVersion:
    // each namespace is printed once, not again as the watch starts — as
    // names (a JSON list) and as the table (a Table list, whose
    // resourceVersion is the list's too).
    for (output, line) in [
        (&["-o", "name"][..], "namespace/team-y\n"),
        (&[][..], "team-y "),
    ] {
        let mut watch_all = Command::new(plane::binaries().expect("binaries").join("kubectl"))
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["get", "ns", "-w", "--request-timeout=20s"])
            .args(output)
            .env("HOME", std::env::temp_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl get ns -w");
        std::thread::sleep(Duration::from_millis(1500));
        let _ = watch_all.kill();
        let watched = watch_all.wait_with_output().unwrap();
        assert_eq!(
            text(&watched.stdout).matches(line).count(),
            1,
            "{output:?}: {}{}",
            text(&watched.stdout),
            text(&watched.stderr)
        );
    }

    // A namespace deleted empty goes at once; one of its name created right
    // after keeps its apps (the first one's deletion, which waits a second
    // before deleting apps, acts on that namespace alone).
    ok(&server.kubectl(&["create", "ns", "again"]));
    ok(&server.kubectl(&["delete", "ns", "again", "--wait=false"]));
    let out = server.kubectl(&["get", "ns", "again"]);
    assert!(
        text(&out.stderr).contains("not found"),
        "{}",
        text(&out.stderr)
    );
    ok(&server.kubectl(&["create", "ns", "again"]));
    let kept = "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: kept\n  namespace: again\n\
                spec:\n  replicas: 1\n";
    ok(&apply(&["apply", "-f", "-"], kept));
    std::thread::sleep(Duration::from_secs(2));
    ok(&server.kubectl(&["get", "postgres", "kept", "-n", "again"]));

    // kubectl delete -f of a namespace and an app in it.
    let mixed = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: mixed\n---\n\
                 apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: m1\n  namespace: mixed\n\
                 spec:\n  replicas: 3\n";
    ok(&apply(&["apply", "-f", "-"], mixed));
    let out = apply(&["delete", "-f", "-", "--timeout=30s"], mixed);
    let stdout = ok(&out);
    assert!(
        stdout.contains("namespace \"mixed\" deleted")
            && stdout.contains("postgres.apps.cozystack.io \"m1\" deleted"),
        "{stdout}{}",
        text(&out.stderr)
    );
    let out = server.kubectl(&["get", "ns", "mixed"]);
    assert!(
        text(&out.stderr).contains("not found"),
        "{}",
        text(&out.stderr)
    );
}

/// Issue 14 §4: a storm of 2,000 unauthenticated keep-alive connections
/// (each one TLS handshake and one refused request) must not leave the
/// server's memory on a plateau once they are gone; and the server holds
/// no more than `MAX_UNPROVEN_CONNECTIONS` of them (the rest are closed
/// after their handshake). Ignored (half a minute); run with `--ignored
/// --nocapture` for figures.
#[test]
#[ignore = "a storm of 2,000 connections; run on purpose"]
fn memory_is_returned_after_an_unauthenticated_connection_storm() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = Standalone::start();
    let pid = server.pid();
    let ca = std::fs::read_to_string(server.dir().join("state/ca.crt")).unwrap();
    let kubeconfig = std::fs::read_to_string(server.kubeconfig()).unwrap();
    let addr: std::net::SocketAddr = kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: https://"))
        .unwrap()
        .parse()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let fresh = rss_kib(pid);
    let connector = tokio_rustls::TlsConnector::from(crate::auth::client_config(&ca));
    let (held, closed) = runtime.block_on(async {
        let (mut held, mut closed) = (Vec::new(), 0);
        for _ in 0..2000 {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
            let Ok(mut tls) = connector.connect(name, tcp).await else {
                closed += 1;
                continue;
            };
            let _ = tls
                .write_all(b"GET /apis HTTP/1.1\r\nHost: localhost\r\n\r\n")
                .await;
            let mut buf = [0u8; 512];
            match tls.read(&mut buf).await {
                Ok(n) if n > 0 => {
                    assert!(buf[..n].starts_with(b"HTTP/1.1 401"), "{}", text(&buf[..n]));
                    held.push(tls);
                }
                _ => closed += 1,
            }
        }
        (held, closed)
    });
    assert_eq!(
        held.len(),
        kubectl_cozy::apiserver::server::MAX_UNPROVEN_CONNECTIONS,
        "held at once"
    );
    assert_eq!(held.len() + closed, 2000);
    let storm = rss_kib(pid);
    drop(held);
    std::thread::sleep(Duration::from_secs(15));
    let after = rss_kib(pid);
    eprintln!(
        "RSS KiB: fresh {} | 2,000 connections open {} | 15 s after they closed {}",
        fresh.0, storm.0, after.0
    );
    assert!(
        after.0.saturating_sub(fresh.0) < storm.0.saturating_sub(fresh.0) / 2,
        "the server kept {} KiB after the storm (fresh {} KiB, storm {} KiB)",
        after.0,
        fresh.0,
        storm.0
    );
}
