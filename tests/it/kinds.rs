//! `kubectl cozy kinds list|scaffold` as users run them, the committed
//! examples, bad input, and ApplicationDefinitions watched in a real cluster.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};

use crate::support::{bins, plane};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cozy(args: &[&str]) -> Output {
    Command::new(bins::kubectl_cozy())
        .args(args)
        .current_dir(manifest_dir())
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .stdin(Stdio::null())
        .output()
        .expect("run kubectl-cozy")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The example charts and the scaffold flags their committed kinds were made
/// with (postgres's short name and categories are its Chart.yaml's
/// `kubectl-cozy.io/` annotations).
const EXAMPLE_CHARTS: [(&str, &[&str]); 3] = [
    ("bucket", &["--category", "cozy"]),
    ("postgres", &[]),
    ("redis", &["--category", "all", "--category", "cozy"]),
];

#[test]
fn committed_example_kinds_are_current() {
    let update = std::env::var_os("COZY_UPDATE_EXAMPLES").is_some();
    let mut stale = Vec::new();
    for (chart, flags) in EXAMPLE_CHARTS {
        let dir = format!("examples/charts/{chart}");
        let mut args = vec!["kinds", "scaffold", dir.as_str()];
        args.extend_from_slice(flags);
        let out = cozy(&args);
        assert!(
            out.status.success(),
            "scaffold {chart}: {}",
            text(&out.stderr)
        );
        let path = manifest_dir().join(format!("examples/kinds/{chart}.yaml"));
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &out.stdout).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(out.stdout.as_slice()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale {stale:?}: run COZY_UPDATE_EXAMPLES=1 cargo test --test it committed_example"
    );
}

#[test]
fn list_local_definitions_like_kubectl() {
    let out = cozy(&["kinds", "list", "--kinds", "examples/kinds"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap()
        .split("   ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(
        header,
        [
            "KIND",
            "PLURAL",
            "SHORTNAMES",
            "CHART",
            "CHART VERSION",
            "SOURCE"
        ]
    );
    let kinds: Vec<&str> = lines
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(kinds, ["Bucket", "Postgres", "Redis"]);
    assert!(
        stdout.contains("postgreses") && stdout.contains("redises"),
        "{stdout}"
    );

    let out = cozy(&["kinds", "list", "--kinds", "examples/kinds", "-o", "json"]);
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(listed["apiVersion"], "v1");
    assert_eq!(listed["kind"], "List");
    let postgres = &listed["items"][1];
    assert_eq!(postgres["kind"], "Postgres");
    assert_eq!(postgres["groupVersion"], "apps.cozystack.io/v1alpha1");
    assert_eq!(postgres["chart"], "postgres");
    assert_eq!(
        postgres["definition"]["openAPISchema"]["properties"]["replicas"]["maximum"],
        9
    );
    // An item's definition is a kind definition file as it was loaded: it
    // loads back as the same kind.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("postgres.json");
    std::fs::write(&file, postgres["definition"].to_string()).unwrap();
    let out = cozy(&[
        "kinds",
        "list",
        "--kinds",
        file.to_str().unwrap(),
        "-o",
        "name",
    ]);
    assert_eq!(
        text(&out.stdout),
        "postgreses.apps.cozystack.io\n",
        "{}",
        text(&out.stderr)
    );
    let out = cozy(&["kinds", "list", "--kinds", "examples/kinds", "-o", "yaml"]);
    let yaml = text(&out.stdout);
    assert!(
        yaml.starts_with("apiVersion: v1\nkind: List\nitems:\n") && yaml.contains("openAPISchema:"),
        "{yaml}"
    );
    let out = cozy(&["kinds", "list", "--kinds", "examples/kinds", "-o", "name"]);
    assert_eq!(
        text(&out.stdout),
        "buckets.apps.cozystack.io\npostgreses.apps.cozystack.io\nredises.apps.cozystack.io\n"
    );
    let out = cozy(&["kinds", "list", "--kinds", "examples/kinds", "-o", "wide"]);
    assert!(
        text(&out.stdout)
            .lines()
            .next()
            .unwrap()
            .contains("RELEASE PREFIX")
    );
}

#[test]
fn broken_definitions_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "kind: Good\nrelease: {chartRef: {kind: HelmChart, name: b}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.yaml"),
        "kind: Bad\nrelease:\n  chartRef: [unclosed\n",
    )
    .unwrap();
    let out = cozy(&["kinds", "list", "--kinds", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("b.yaml:"), "{stderr}");
}

/// `kinds list --kinds` loads as `serve` does: a CEL rule that does not
/// compile fails the list with serve's message (file, JSON pointer, the
/// compiler's line and column), and load warnings show at -v 0.
#[test]
fn list_loads_kinds_as_serve_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("queue.yaml"),
        "kind: Queue
openAPISchema:
  type: object
  properties:
    replicas:
      type: integer
      x-kubernetes-validations:
      - rule: self >
        message: broken
release: {chartRef: {kind: HelmChart, name: b}}
",
    )
    .unwrap();
    let out = cozy(&["kinds", "list", "--kinds", dir.path().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        // The rule's own line, not the document's first.
        stderr.contains("queue.yaml:8: openAPISchema: /properties/replicas/x-kubernetes-validations/0/rule: compilation failed: ERROR: <input>:1:7: Syntax error"),
        "{stderr}"
    );

    // Two kinds sharing a release prefix: listed, and the warning shows
    // without -v.
    let dir = tempfile::tempdir().unwrap();
    for kind in ["Queue", "Topic"] {
        std::fs::write(
            dir.path().join(format!("{}.yaml", kind.to_lowercase())),
            format!(
                "kind: {kind}
openAPISchema: {{type: object}}
release:
  prefix: msg-
  chartRef: {{kind: HelmChart, name: b}}
"
            ),
        )
        .unwrap();
    }
    let out = cozy(&["kinds", "list", "--kinds", dir.path().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(text(&out.stdout).contains("Topic"), "{}", text(&out.stdout));
    assert!(
        stderr.contains("Warning: release prefix \"msg-\" is shared by Queue"),
        "{stderr}"
    );
}

#[test]
fn scaffold_writes_files_and_formats() {
    let dir = tempfile::tempdir().unwrap();
    let out = cozy(&[
        "kinds",
        "scaffold",
        "examples/charts/redis",
        "--category",
        "all",
        "--category",
        "cozy",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(dir.path().join("redis.yaml")).unwrap();
    assert_eq!(
        written,
        std::fs::read_to_string(manifest_dir().join("examples/kinds/redis.yaml")).unwrap()
    );

    let out = cozy(&[
        "kinds",
        "scaffold",
        "examples/charts/redis",
        "--format",
        "cozystack",
        "-o",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // What an ApplicationDefinition cannot hold is named, field by field.
    let stderr = text(&out.stderr);
    for dropped in [
        "Warning: --format cozystack: description: ",
        "Warning: --format cozystack: release.chart.version 0.2.1: ",
        "Warning: --format cozystack: release.chart.sourceRef HelmRepository/cozystack-apps: ",
    ] {
        assert!(stderr.contains(dropped), "{dropped}: {stderr}");
    }
    let appdef: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(appdef["kind"], "ApplicationDefinition");
    let schema: serde_json::Value = serde_json::from_str(
        appdef["spec"]["application"]["openAPISchema"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    // "yes"/"no" are Redis settings and must stay strings.
    assert_eq!(schema["properties"]["appendonly"]["default"], "no");

    // A prefix that leaves app names little room is written, with a warning.
    let prefix = "redis-for-the-payments-team-in-eu-";
    let out = cozy(&[
        "kinds",
        "scaffold",
        "examples/charts/redis",
        "--prefix",
        prefix,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "Warning: release prefix {prefix:?} of Redis (chart directory examples/charts/redis) is 34 characters and leaves \
             names of redises only 19: "
        )),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains(&format!("prefix: {prefix}")));

    // The emitted ApplicationDefinition loads back as the same kind.
    let file = dir.path().join("redis-appdef.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let out = cozy(&[
        "kinds",
        "list",
        "--kinds",
        file.to_str().unwrap(),
        "-o",
        "name",
    ]);
    assert_eq!(
        text(&out.stdout),
        "redises.apps.cozystack.io\n",
        "{}",
        text(&out.stderr)
    );
}

/// Every example chart scaffolded in both formats loads back without a
/// warning as the same kind: the kind format's schema and the
/// ApplicationDefinition's, read through the JSON Schema converter, give
/// the same spec schema (a quantity's `[string, number]` stays any value
/// in both, not a string in one).
#[test]
fn both_scaffold_formats_load_back_as_the_same_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let charts = manifest_dir().join("examples/charts");
    let mut names: Vec<_> = std::fs::read_dir(&charts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Chart.yaml").is_file())
        .collect();
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    let (kind_dir, appdef_dir) = (dir.path().join("kind"), dir.path().join("cozystack"));
    for chart in &names {
        for (out, format) in [(&kind_dir, "kind"), (&appdef_dir, "cozystack")] {
            let out = cozy(&[
                "kinds",
                "scaffold",
                chart.to_str().unwrap(),
                "--format",
                format,
                "--out",
                out.to_str().unwrap(),
            ]);
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
    }
    // Each loads back without a warning.
    for dir in [&kind_dir, &appdef_dir] {
        let out = cozy(&["kinds", "list", "--kinds", dir.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            "",
            "no warning loading {}",
            dir.display()
        );
    }
    // The schemas served, as the server validates by them.
    let served = |dir: &Path| -> Vec<(String, serde_json::Value)> {
        let registry = kubectl_cozy::kinds::Registry::from_path(dir).expect("kinds load");
        let mut kinds: Vec<_> = registry
            .snapshot()
            .kinds()
            .iter()
            .map(|k| {
                let d = &k.resolved.definition;
                (d.kind.clone(), d.open_api_schema.clone())
            })
            .collect();
        kinds.sort_by(|a, b| a.0.cmp(&b.0));
        kinds
    };
    let (kinds, appdefs) = (served(&kind_dir), served(&appdef_dir));
    assert_eq!(kinds.len(), names.len());
    for ((kind, a), (_, b)) in kinds.iter().zip(&appdefs) {
        assert_eq!(a, b, "{kind}: the two formats serve different schemas");
    }
    let postgres = &kinds.iter().find(|(k, _)| k == "Postgres").unwrap().1;
    assert_eq!(
        postgres["properties"]["resources"]["properties"]["cpu"]["x-kubernetes-preserve-unknown-fields"],
        true,
        "{postgres}"
    );
}

/// A chart written for a test: `Chart.yaml` and a Cozystack-style
/// `values.yaml`.
fn write_chart(dir: &Path, name: &str, description: &str) -> PathBuf {
    let chart = dir.join(name);
    std::fs::create_dir_all(&chart).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\ndescription: {description}\nversion: 0.2.0\n"),
    )
    .unwrap();
    std::fs::write(
        chart.join("values.yaml"),
        "## @param replicas Number of replicas\nreplicas: 2\n## @param size Persistent volume size\nsize: 10Gi\n",
    )
    .unwrap();
    chart
}

/// Kinds scaffold refuses names it could not serve or load back, and
/// says how to choose another when the name came from the chart.
#[test]
fn scaffold_refuses_kind_names_it_cannot_serve() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out_path = out_dir.to_str().unwrap();
    let todo = write_chart(dir.path(), "todo", "A to-do list service");
    let out = cozy(&[
        "kinds",
        "scaffold",
        todo.to_str().unwrap(),
        "--kind",
        "List",
        "--out",
        out_path,
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("kind: \"List\" is the kind of lists of objects"),
        "{stderr}"
    );
    assert!(!stderr.contains("--kind, or with"), "{stderr}");

    // Named from the chart: the hint says where the name came from.
    let list = write_chart(dir.path(), "list", "Shopping lists");
    let out = cozy(&[
        "kinds",
        "scaffold",
        list.to_str().unwrap(),
        "--out",
        out_path,
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "kind: \"List\" is the kind of lists of objects (`kind: List` documents, as `kubectl get -o yaml` \
             prints them), which kubectl and these loaders read as a list, not as one object: choose another kind; \
             the kind comes from the chart (the chart name with each word capitalized): name it with --kind, or \
             with the kubectl-cozy.io/kind annotation in Chart.yaml"
        ),
        "{stderr}"
    );
    let lives = write_chart(dir.path(), "9lives", "Cats");
    let out = cozy(&[
        "kinds",
        "scaffold",
        lives.to_str().unwrap(),
        "--out",
        out_path,
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "kind: \"9lives\" must be UpperCamelCase letters and digits (e.g. Postgres); the kind comes from \
             the chart (the chart name with each word capitalized): name it with --kind"
        ),
        "{stderr}"
    );
    assert!(!out_dir.exists(), "refused scaffolds wrote files");
}

/// A directory of charts given to scaffold is named as such, with its
/// charts and `serve --charts`.
#[test]
fn scaffold_of_a_directory_of_charts_names_them() {
    let dir = tempfile::tempdir().unwrap();
    write_chart(dir.path(), "queue", "A message queue");
    write_chart(dir.path(), "cache", "A cache");
    let out = cozy(&["kinds", "scaffold", dir.path().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Chart.yaml not found"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "hint: it holds charts (cache, queue): scaffold one of them, or serve them all with \
             `kubectl cozy serve --charts {}`",
            dir.path().display()
        )),
        "{stderr}"
    );
}

/// `scaffold --out` leaves a file with hand edits alone unless --force,
/// and says what it did.
#[test]
fn scaffold_out_keeps_hand_edits_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let chart = write_chart(dir.path(), "queue", "A message queue");
    let out_dir = dir.path().join("kinds");
    let out_path = out_dir.to_str().unwrap();
    let file = out_dir.join("queue.yaml");
    let scaffold = |extra: &[&str]| {
        let mut args = vec![
            "kinds",
            "scaffold",
            chart.to_str().unwrap(),
            "--out",
            out_path,
        ];
        args.extend_from_slice(extra);
        cozy(&args)
    };
    let out = scaffold(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("wrote {}", file.display())));
    let out = scaffold(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("{} unchanged", file.display())),
        "{}",
        text(&out.stderr)
    );
    // The same chart by another path (its header names the path as
    // given): the same definition, left as it is.
    let written = std::fs::read_to_string(&file).unwrap();
    let other_path = format!("{}/", chart.display());
    let out = cozy(&["kinds", "scaffold", &other_path, "--out", out_path]);
    assert!(
        text(&out.stderr).contains(&format!("{} unchanged", file.display())),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), written);
    let edited = format!("{}# a hand edit\n", std::fs::read_to_string(&file).unwrap());
    std::fs::write(&file, &edited).unwrap();
    let out = scaffold(&[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the file exists and differs from the scaffolded definition (hand edits would be lost): \
                         pass --force to overwrite it"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    let out = scaffold(&["--force"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("overwrote {}", file.display())));
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains("hand edit")
    );
    // --force means something only with --out.
    let out = cozy(&["kinds", "scaffold", chart.to_str().unwrap(), "--force"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // --out names a directory: a file there is a usage error, and stays.
    let out = cozy(&[
        "kinds",
        "scaffold",
        chart.to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not a directory (--out names the directory"),
        "{stderr}"
    );
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("kind: Queue")
    );
    // The same kind as JSON beside its YAML would define it twice: refused,
    // and nothing is written.
    let out = scaffold(&["-o", "json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} is there already: the kind would be defined twice",
            file.display()
        )) && stderr.contains("scaffold with -o yaml"),
        "{stderr}"
    );
    assert!(!out_dir.join("queue.json").exists());
}

/// `serve --charts` names a sub-directory it skips for want of a
/// Chart.yaml, and counts its kinds in words.
#[test]
fn serve_charts_warns_of_a_directory_that_is_no_chart() {
    let dir = tempfile::tempdir().unwrap();
    let charts = dir.path().join("charts");
    write_chart(&charts, "queue", "A message queue");
    std::fs::create_dir_all(charts.join("topic")).unwrap();
    std::fs::write(
        charts.join("topic/Chart.yml"),
        "apiVersion: v2\nname: topic\nversion: 0.1.0\n",
    )
    .unwrap();
    let mut child = Command::new(crate::support::bins::kubectl_cozy())
        .args([
            "serve",
            "--standalone",
            "--listen",
            "127.0.0.1:0",
            "--charts",
        ])
        .arg(&charts)
        .arg("--data")
        .arg(dir.path().join("store.sqlite"))
        .arg("--write-kubeconfig")
        .arg(dir.path().join("kubeconfig"))
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start serve --standalone");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut seen = String::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !seen.contains("Serving ") && std::time::Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push_str(&line);
            seen.push('\n');
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen.contains("Serving 1 kind (queues)"), "{seen}");
    assert!(
        seen.contains(&format!(
            "{}: not a chart (no Chart.yaml); skipped",
            charts.join("topic").display()
        )),
        "{seen}"
    );
}

#[test]
fn scaffold_from_packaged_chart_and_repo_index() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("postgres-0.1.0.tgz");
    package(
        &manifest_dir().join("examples/charts/postgres"),
        "postgres",
        &archive,
    );
    let out = cozy(&["kinds", "scaffold", archive.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let from_tgz = text(&out.stdout);
    assert!(from_tgz.contains("kind: Postgres"), "{from_tgz}");

    let digest = sha256_hex(&std::fs::read(&archive).unwrap());
    let version = chart_version("postgres");
    std::fs::write(
        dir.path().join("index.yaml"),
        format!(
            "apiVersion: v1\nentries:\n  postgres:\n  - name: postgres\n    version: {version}\n    urls: [postgres-0.1.0.tgz]\n    digest: {digest}\n"
        ),
    )
    .unwrap();
    let index = dir.path().join("index.yaml");
    let out = cozy(&[
        "kinds",
        "scaffold",
        "--repo-index",
        index.to_str().unwrap(),
        "--chart",
        "postgres",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("kind: Postgres"));
    let out = cozy(&[
        "kinds",
        "scaffold",
        "--repo-index",
        index.to_str().unwrap(),
        "--chart",
        "postgres@9.9.9",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

/// Charts shaped like Cozystack's own apps: cozyvalues-gen annotations in
/// `values.yaml` (`http-cache`) and a JSON schema with quantities behind a
/// `$ref`, `x-cozystack-options` and a free-form object (`clickhouse`).
#[test]
fn scaffold_cozystack_shaped_charts() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let out = cozy(&[
        "kinds",
        "scaffold",
        "examples/charts/http-cache",
        "-o",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("Note: kind HTTPCache (capitals as Chart.yaml's description writes the name); choose another with --kind"),
        "{stderr}"
    );
    assert!(!stderr.contains("x-cozystack-options"), "{stderr}");
    let def: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(def["kind"], "HTTPCache");
    assert_eq!(def["plural"], "httpcaches");
    let p = &def["openAPISchema"]["properties"];
    assert_eq!(p["size"]["x-kubernetes-int-or-string"], true);
    assert_eq!(
        p["resourcesPreset"]["enum"],
        serde_json::json!(["nano", "micro", "small", "medium"])
    );
    assert_eq!(p["compression"]["enum"][0], "off");
    assert_eq!(
        p["endpoints"]["items"]["required"],
        serde_json::json!(["host"])
    );
    assert_eq!(
        p["perZone"]["additionalProperties"]["properties"]["cpu"]["x-kubernetes-int-or-string"],
        true
    );

    let out = cozy(&[
        "kinds",
        "scaffold",
        "examples/charts/clickhouse",
        "-o",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Note: kind ClickHouse ("), "{stderr}");
    assert!(!stderr.contains("x-cozystack-options"), "{stderr}");
    assert!(
        stderr.contains(
            "Warning: values.schema.json:33: /properties/settings: type object without properties"
        ),
        "{stderr}"
    );
    // Only the free-form object is worth a warning.
    assert_eq!(stderr.matches("Warning:").count(), 1, "{stderr}");
    let def: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &def["openAPISchema"]["properties"];
    assert_eq!(p["size"]["x-kubernetes-int-or-string"], true);
    assert_eq!(p["size"]["default"], "10Gi");
    assert!(p["size"]["pattern"].is_string(), "{}", p["size"]);
    assert_eq!(
        p["resources"]["properties"]["cpu"]["pattern"],
        p["size"]["pattern"]
    );

    // --kind overrides the proposal, and both load as definitions.
    let out = cozy(&[
        "kinds",
        "scaffold",
        "examples/charts/clickhouse",
        "--kind",
        "Clickhouse",
        "--out",
        out_dir,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("Note: kind"),
        "{}",
        text(&out.stderr)
    );
    let out = cozy(&[
        "kinds",
        "scaffold",
        "examples/charts/http-cache",
        "--out",
        out_dir,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cozy(&["kinds", "list", "--kinds", out_dir, "-o", "name"]);
    assert_eq!(
        text(&out.stdout),
        "clickhouses.apps.cozystack.io\nhttpcaches.apps.cozystack.io\n",
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn scaffold_bad_input_writes_nothing() {
    let out_dir = tempfile::tempdir().unwrap();
    let out_path = out_dir.path().to_str().unwrap().to_owned();
    let work = tempfile::tempdir().unwrap();

    // A directory without Chart.yaml.
    let out = cozy(&[
        "kinds",
        "scaffold",
        work.path().to_str().unwrap(),
        "--out",
        &out_path,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("Chart.yaml"),
        "{}",
        text(&out.stderr)
    );

    // --chart belongs to --repo-index: beside a chart path it is a usage
    // error, not silently ignored.
    let out = cozy(&[
        "kinds",
        "scaffold",
        work.path().to_str().unwrap(),
        "--chart",
        "postgres",
        "--out",
        &out_path,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--chart names a chart of --repo-index"),
        "{}",
        text(&out.stderr)
    );

    // A .tgz escaping its directory.
    let evil = work.path().join("evil.tgz");
    {
        let file = std::fs::File::create(&evil).unwrap();
        let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        let body = b"apiVersion: v2\nname: evil\nversion: 0.1.0\n";
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        {
            let name = b"evil/../../etc/Chart.yaml";
            let gnu = header.as_gnu_mut().unwrap();
            gnu.name[..name.len()].copy_from_slice(name);
        }
        header.set_cksum();
        tar.append(&header, &body[..]).unwrap();
        tar.into_inner().unwrap().finish().unwrap();
    }
    let out = cozy(&[
        "kinds",
        "scaffold",
        evil.to_str().unwrap(),
        "--out",
        &out_path,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(".."), "{}", text(&out.stderr));

    // Malformed Chart.yaml names the line.
    let broken = work.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(
        broken.join("Chart.yaml"),
        "apiVersion: v2\nname: broken\nversion: [0.1\n",
    )
    .unwrap();
    let out = cozy(&[
        "kinds",
        "scaffold",
        broken.to_str().unwrap(),
        "--out",
        &out_path,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("Chart.yaml:"),
        "{}",
        text(&out.stderr)
    );

    // Invalid JSON schema names the line.
    let bad_schema = work.path().join("badschema");
    std::fs::create_dir(&bad_schema).unwrap();
    std::fs::write(
        bad_schema.join("Chart.yaml"),
        "apiVersion: v2\nname: thing\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        bad_schema.join("values.schema.json"),
        "{\n  \"type\": \"object\",\n  oops\n}\n",
    )
    .unwrap();
    let out = cozy(&[
        "kinds",
        "scaffold",
        bad_schema.to_str().unwrap(),
        "--out",
        &out_path,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("values.schema.json:3:3: invalid JSON: key must be a string")
            && !text(&out.stderr).contains(" at line "),
        "{}",
        text(&out.stderr)
    );
    // Cut short: the parser knows the line, not a column.
    std::fs::write(
        bad_schema.join("values.schema.json"),
        "{\n  \"type\": \"object\",\n",
    )
    .unwrap();
    let out = cozy(&["kinds", "scaffold", bad_schema.to_str().unwrap()]);
    assert!(
        text(&out.stderr).contains("values.schema.json:3: invalid JSON: EOF while parsing"),
        "{}",
        text(&out.stderr)
    );

    // A CEL rule that does not compile: serve would refuse the kind.
    let bad_rule = work.path().join("badrule");
    std::fs::create_dir(&bad_rule).unwrap();
    std::fs::write(
        bad_rule.join("Chart.yaml"),
        "apiVersion: v2\nname: queue\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        bad_rule.join("values.schema.json"),
        r#"{"type": "object", "properties": {"replicas": {"type": "integer",
  "x-kubernetes-validations": [{"rule": "self %", "message": "broken"}]}}}"#,
    )
    .unwrap();
    let out = cozy(&[
        "kinds",
        "scaffold",
        bad_rule.to_str().unwrap(),
        "--out",
        &out_path,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "values.schema.json:2: /properties/replicas/x-kubernetes-validations/0/rule: compilation failed"
        ),
        "{}",
        text(&out.stderr)
    );

    assert_eq!(
        std::fs::read_dir(out_dir.path()).unwrap().count(),
        0,
        "bad input wrote files"
    );
}

#[tokio::test]
async fn application_definitions_in_the_cluster_reload_live() {
    use kubectl_cozy::kinds::{Registry, Snapshot, application_definitions, load};
    let plane = plane();
    let client = plane.client().await;
    install_application_definition_crd(plane);

    let registry = Registry::new(
        Snapshot::build(load::from_resolved(Vec::new(), Vec::new()).unwrap()).unwrap(),
    );
    let mut changes = registry.subscribe();
    let task = application_definitions::watch(client.clone(), registry.clone());

    let api: Api<DynamicObject> = Api::all_with(client, &application_definitions::api_resource());
    let appdef = |kind: &str, plural: &str| -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "cozystack.io/v1alpha1", "kind": "ApplicationDefinition",
            "metadata": {"name": format!("{plural}-{}", std::process::id())},
            "spec": {"application": {"kind": kind, "singular": kind.to_lowercase(), "plural": plural,
                        "openAPISchema": "{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\"}}}"},
                     "release": {"prefix": format!("{}-", kind.to_lowercase()),
                                 "chartRef": {"kind": "ExternalArtifact", "name": kind.to_lowercase(), "namespace": "cozy-system"}}}
        }))
        .unwrap()
    };
    let wait_for = |n: usize| {
        let registry = registry.clone();
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while registry.snapshot().kinds().len() != n {
                assert!(
                    std::time::Instant::now() < deadline,
                    "registry never reached {n} kinds"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    let name = format!("clickhouses-{}", std::process::id());
    api.create(&PostParams::default(), &appdef("ClickHouse", "clickhouses"))
        .await
        .expect("create");
    wait_for(1).await;
    tokio::time::timeout(Duration::from_secs(5), changes.changed())
        .await
        .ok();
    assert!(
        registry
            .snapshot()
            .get("apps.cozystack.io", "v1alpha1", "clickhouses")
            .is_some()
    );

    // A broken edit is refused and the last good set keeps serving.
    let patch = serde_json::json!({"spec": {"application": {"kind": "not-a-kind"}}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while registry.last_error().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "broken change was not refused"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        registry
            .snapshot()
            .get("apps.cozystack.io", "v1alpha1", "clickhouses")
            .is_some()
    );

    // A valid edit is picked up without restarting anything.
    let patch =
        serde_json::json!({"spec": {"application": {"kind": "ClickHouse", "plural": "clickhice"}}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while registry
        .snapshot()
        .get("apps.cozystack.io", "v1alpha1", "clickhice")
        .is_none()
    {
        assert!(std::time::Instant::now() < deadline, "rename not picked up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    task.abort();
    api.delete(&name, &Default::default())
        .await
        .expect("delete");
}

#[test]
fn list_from_a_live_cluster_uses_discovery() {
    let plane = plane();
    // A CRD in the group makes it discoverable, the same way an APIService does.
    let crd = format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {{name: widgets.discovery-{pid}.example.com}}\n\
         spec:\n  group: discovery-{pid}.example.com\n  scope: Namespaced\n  names: {{kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}}\n  \
         versions:\n  - name: v1alpha1\n    served: true\n    storage: true\n    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}\n",
        pid = std::process::id()
    );
    kubectl_apply(plane, &crd);
    // A second kind whose plural sorts after the first's, so that discovery's
    // order (by resource name) is not the list's (by kind).
    kubectl_apply(
        plane,
        &crd.replace("widgets.discovery", "zgadgets.discovery")
            .replace(
                "kind: Widget, plural: widgets, singular: widget, shortNames: [wd]",
                "kind: Gadget, plural: zgadgets, singular: zgadget",
            ),
    );
    let kubeconfig = plane.kubeconfig.to_str().unwrap().to_owned();
    let group = format!("discovery-{}.example.com", std::process::id());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let out = cozy(&[
            "kinds",
            "list",
            "--kubeconfig",
            &kubeconfig,
            "--group",
            &group,
        ]);
        if out.status.success() {
            let stdout = text(&out.stdout);
            assert!(
                stdout.contains("Widget") && stdout.contains("widgets") && stdout.contains("wd"),
                "{stdout}"
            );
            assert!(
                stdout.contains(&format!("cluster {group}/v1alpha1")),
                "{stdout}"
            );
            if !stdout.contains("Gadget") {
                std::thread::sleep(Duration::from_millis(250));
                continue;
            }
            let kinds: Vec<&str> = stdout
                .lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().next())
                .collect();
            assert_eq!(kinds, ["Gadget", "Widget"], "{stdout}");
            // -o wide: SOURCE does not repeat APIVERSION.
            let out = cozy(&[
                "kinds",
                "list",
                "--kubeconfig",
                &kubeconfig,
                "--group",
                &group,
                "-o",
                "wide",
            ]);
            let wide = text(&out.stdout);
            assert_eq!(
                wide.matches(&format!("{group}/v1alpha1")).count(),
                2,
                "{wide}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            text(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let out = cozy(&[
        "kinds",
        "list",
        "--kubeconfig",
        &kubeconfig,
        "--group",
        "nothing.example.com",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("serves no API group nothing.example.com"),
        "{}",
        text(&out.stderr)
    );
}

fn install_application_definition_crd(plane: &plane::Plane) {
    // A minimal stand-in for Cozystack's CRD: same group, kind and scope.
    kubectl_apply(
        plane,
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: applicationdefinitions.cozystack.io}\n\
         spec:\n  group: cozystack.io\n  scope: Cluster\n  names: {kind: ApplicationDefinition, plural: applicationdefinitions, singular: applicationdefinition}\n  \
         versions:\n  - name: v1alpha1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n",
    );
    let out = plane
        .kubectl()
        .args([
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/applicationdefinitions.cozystack.io",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

fn kubectl_apply(plane: &plane::Plane, manifest: &str) {
    use std::io::Write;
    let mut child = plane
        .kubectl()
        .args(["apply", "--server-side", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(manifest.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "kubectl apply: {}", text(&out.stderr));
}

fn package(chart_dir: &Path, name: &str, archive: &Path) {
    let file = std::fs::File::create(archive).unwrap();
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.append_dir_all(name, chart_dir).unwrap();
    tar.into_inner().unwrap().finish().unwrap();
}

fn chart_version(chart: &str) -> String {
    let text =
        std::fs::read_to_string(manifest_dir().join(format!("examples/charts/{chart}/Chart.yaml")))
            .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("version:"))
        .unwrap()
        .trim()
        .trim_matches('"')
        .to_owned()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A `serve --standalone` over scaffolded Cozystack-shaped kinds and two
/// kinds sharing a release prefix, driven by the real kubectl: a quantity
/// takes `10`, an enum refuses what it does not list, a HelmRelease name
/// taken by another kind names its owner, and a broken edit then its fix
/// are logged in the user's terms.
#[test]
fn scaffolded_kinds_are_served_and_reloaded() {
    let dir = tempfile::tempdir().unwrap();
    let kinds = dir.path().join("kinds");
    for chart in ["http-cache", "clickhouse"] {
        let chart = format!("examples/charts/{chart}");
        let out = cozy(&[
            "kinds",
            "scaffold",
            &chart,
            "--out",
            kinds.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    for (kind, chart) in [("Tenant", "tenant"), ("Etcd", "etcd")] {
        std::fs::write(
            kinds.join(format!("{chart}.yaml")),
            format!(
                "kind: {kind}\nopenAPISchema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}\n\
                 release: {{prefix: \"\", chartRef: {{kind: ExternalArtifact, name: {chart}}}}}\n"
            ),
        )
        .unwrap();
    }
    let log = dir.path().join("serve.log");
    let kubeconfig = dir.path().join("kubeconfig");
    let child = Command::new(bins::kubectl_cozy())
        .args([
            "serve",
            "--standalone",
            "--listen",
            "127.0.0.1:0",
            "--kinds",
        ])
        .arg(&kinds)
        .arg("--data")
        .arg(dir.path().join("store.sqlite"))
        .arg("--write-kubeconfig")
        .arg(&kubeconfig)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start serve --standalone");
    /// Stops the server however the test ends.
    struct Stop(std::process::Child);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _stop = Stop(child);
    let wait_for = |what: &dyn Fn() -> bool, why: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !what() {
            assert!(
                std::time::Instant::now() < deadline,
                "{why}: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for(&|| kubeconfig.exists(), "no kubeconfig");
    let kubectl = |args: &[&str], stdin: Option<&str>| -> Output {
        let mut cmd = Command::new(plane::binaries().expect("binaries").join("kubectl"));
        cmd.arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .env("HOME", std::env::temp_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let Some(input) = stdin else {
            return cmd.stdin(Stdio::null()).output().expect("kubectl");
        };
        let mut running = cmd.stdin(Stdio::piped()).spawn().expect("kubectl");
        use std::io::Write as _;
        running
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        running.wait_with_output().expect("kubectl")
    };
    let app = |kind: &str, name: &str, spec: &str| {
        format!(
            "apiVersion: apps.cozystack.io/v1alpha1\nkind: {kind}\nmetadata: {{name: {name}, namespace: default}}\nspec: {spec}\n"
        )
    };

    // A quantity takes an integer and a string; defaults come from values.yaml.
    let out = kubectl(
        &["create", "-f", "-"],
        Some(&app(
            "HTTPCache",
            "edge",
            "{size: 10, resources: {cpu: 2, memory: 512Mi}}",
        )),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = kubectl(&["get", "httpcache", "edge", "-o", "json"], None);
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["spec"]["size"], 10, "{got}");
    assert_eq!(got["spec"]["resources"]["cpu"], 2, "{got}");
    assert_eq!(got["spec"]["resourcesPreset"], "micro", "{got}");
    assert_eq!(got["spec"]["compression"], "off", "{got}");
    let out = kubectl(
        &["create", "-f", "-"],
        Some(&app(
            "HTTPCache",
            "bad",
            "{resourcesPreset: huge, size: 10 GB}",
        )),
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("spec.resourcesPreset") && stderr.contains("spec.size"),
        "{stderr}"
    );

    // Two kinds with prefix "": the second "demo" is refused, naming the first.
    let out = kubectl(&["create", "-f", "-"], Some(&app("Tenant", "demo", "{}")));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = kubectl(&["create", "-f", "-"], Some(&app("Etcd", "demo", "{}")));
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(
            "its HelmRelease default/demo already belongs to Tenant.apps.cozystack.io \"demo\""
        ),
        "{}",
        text(&out.stderr)
    );

    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("release prefix \"\" is shared by Etcd"),
        "{logged}"
    );
    assert!(!logged.contains("x-cozystack-options"), "{logged}");

    // A broken edit is refused in the user's terms; its fix is logged.
    let broken = kinds.join("broken.yaml");
    std::fs::write(&broken, "kind: Broken\nkind: Again\n").unwrap();
    wait_for(
        &|| {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("Kinds: change refused")
        },
        "broken edit not reported",
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("appears twice in the same mapping"),
        "{logged}"
    );
    assert!(!logged.contains("DuplicateKeyPolicy"), "{logged}");
    std::fs::remove_file(&broken).unwrap();
    wait_for(
        &|| {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("Kinds: the definitions are valid again")
        },
        "recovery not logged",
    );

    // A new kind is served at once, and serve says so.
    std::fs::write(
        kinds.join("vault.yaml"),
        "kind: Vault\nopenAPISchema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n\
         release: {prefix: vault-, chartRef: {kind: ExternalArtifact, name: vault}}\n",
    )
    .unwrap();
    wait_for(
        &|| {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .any(|l| {
                    l.starts_with("Kinds: reloaded (vaults added), serving 5 (")
                        && l.contains("vaults")
                })
        },
        "the new kind's reload not reported",
    );
    let out = kubectl(&["get", "vaults"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));

    // A new release prefix for a kind with a stored app is refused: the app
    // would vanish from reads, and created again be a second Helm release.
    let out = kubectl(
        &["apply", "-f", "-"],
        Some(
            "apiVersion: apps.cozystack.io/v1alpha1\nkind: Vault\nmetadata: {name: v1, namespace: default}\nspec: {}\n",
        ),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let refusals = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("Kinds: change refused")
            .count()
    };
    let refused_before = refusals();
    std::fs::write(
        kinds.join("vault.yaml"),
        "kind: Vault\nopenAPISchema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n\
         release: {prefix: vlt-, chartRef: {kind: ExternalArtifact, name: vault}}\n",
    )
    .unwrap();
    wait_for(
        &|| refusals() > refused_before,
        "the new prefix not refused",
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains(
            "kind Vault: release prefix \"vlt-\" (it was \"vault-\") would leave 1 stored app \
             (HelmRelease default/vault-v1) unserved"
        ),
        "{logged}"
    );
    let out = kubectl(&["get", "vaults", "-o", "name"], None);
    assert_eq!(
        text(&out.stdout).trim(),
        "vault.apps.cozystack.io/v1",
        "{}",
        text(&out.stderr)
    );
    // Dropping the kind is a choice: served without it, its app named.
    std::fs::remove_file(kinds.join("vault.yaml")).unwrap();
    wait_for(
        &|| {
            std::fs::read_to_string(&log).unwrap_or_default().contains(
                "kind Vault in apps.cozystack.io is no longer defined: 1 stored app (HelmRelease \
                 default/vault-v1) is not served any more",
            )
        },
        "the dropped kind's app not named",
    );
    wait_for(
        &|| {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("Kinds: reloaded (vaults removed)")
        },
        "the dropped kind not served",
    );
}

/// A chart with a `values.schema.json` and readme-generator comments in its
/// `values.yaml`: the comments describe what the schema leaves undescribed
/// (the schema's own descriptions stay), and a `## @skip` key gets no
/// default from `values.yaml` (its type stays; a default the schema itself
/// gives stays too).
#[test]
fn scaffold_reads_values_comments_beside_a_schema() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("cache");
    std::fs::create_dir_all(&chart).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: cache\nversion: 0.3.0\ndescription: An in-memory cache\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("values.schema.json"),
        r##"{
  "$schema": "https://json-schema.org/draft-07/schema#",
  "type": "object",
  "$defs": {"quantity": {"type": "string", "pattern": "^[0-9]+(m|Mi|Gi)?$"}},
  "properties": {
    "replicas": {"type": "integer", "minimum": 1, "description": "Replicas, from the schema"},
    "memory": {"$ref": "#/$defs/quantity"},
    "image": {"type": "object", "properties": {
      "repository": {"type": "string"},
      "tag": {"type": "string"},
      "pullPolicy": {"type": "string", "default": "IfNotPresent"}
    }}
  }
}
"##,
    )
    .unwrap();
    std::fs::write(
        chart.join("values.yaml"),
        "## @section Cache\n\
         ## @param replicas Number of cache replicas\n\
         replicas: 2\n\
         ## @param memory Memory limit of each replica\n\
         memory: 512Mi\n\
         image:\n  \
           ## @param image.repository Image repository\n  \
           repository: example.org/cache\n  \
           ## @skip image.tag\n  \
           tag: \"1.6.21\"\n  \
           ## @skip image.pullPolicy\n  \
           pullPolicy: Always\n",
    )
    .unwrap();
    let out = cozy(&["kinds", "scaffold", chart.to_str().unwrap(), "-o", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let kind: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let props = &kind["openAPISchema"]["properties"];
    assert_eq!(
        props["replicas"]["description"],
        "Replicas, from the schema"
    );
    assert_eq!(props["replicas"]["default"], 2);
    assert_eq!(
        props["memory"]["description"],
        "Memory limit of each replica"
    );
    assert_eq!(props["memory"]["default"], "512Mi");
    let image = &props["image"]["properties"];
    assert_eq!(image["repository"]["description"], "Image repository");
    assert_eq!(image["repository"]["default"], "example.org/cache");
    assert_eq!(
        image["tag"],
        serde_json::json!({"type": "string"}),
        "a skipped key keeps its type, no default"
    );
    assert_eq!(image["pullPolicy"]["default"], "IfNotPresent");
}

/// `-o jsonpath=TEMPLATE` renders kubectl's JSONPath template over what
/// `-o json` prints; a template that does not parse, or a format no command
/// prints, is a usage error saying what `-o` takes.
#[test]
fn kinds_list_prints_a_jsonpath_template() {
    let listed = |output: &str| cozy(&["kinds", "list", "--kinds", "examples/kinds", "-o", output]);
    let out = listed(r#"jsonpath={range .items[*]}{.kind}{"\t"}{.plural}{"\n"}{end}"#);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Bucket\tbuckets\nPostgres\tpostgreses\nRedis\tredises\n"
    );
    let out = listed("jsonpath={.items[?(@.kind==\"Postgres\")].shortNames[0]}");
    assert_eq!(text(&out.stdout), "pg", "{}", text(&out.stderr));
    // Each refused with its exit code (2: usage) and what it says.
    let refused = |args: &[&str], code: i32, says: &str| {
        let out = cozy(args);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    };
    let list = ["kinds", "list", "--kinds", "examples/kinds", "-o"];
    refused(
        &[&list[..], &["jsonpath={.items["]].concat(),
        2,
        "error parsing jsonpath {.items[",
    );
    refused(
        &[&list[..], &["jsonpath={.items[7]}"]].concat(),
        1,
        "array index out of bounds: index 7, length 3",
    );
    refused(
        &["kinds", "list", "-o", "jsonpath="],
        2,
        "template format specified but no template given",
    );
    refused(
        &["kinds", "list", "-o", "go-json"],
        2,
        "one of table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, \
         jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, \
         custom-columns=SPEC or custom-columns-file=FILE",
    );
    refused(
        &["kinds", "list", "-o", "jsonpath"],
        2,
        "-o jsonpath needs a template: -o jsonpath='{.items[*].plural}', or \
         --template='{.items[*].plural}'",
    );
    refused(
        &[
            "kinds",
            "scaffold",
            "examples/charts/redis",
            "-o",
            "jsonpath={.kind}",
        ],
        2,
        "-o jsonpath: kinds scaffold prints -o yaml or -o json",
    );
}

/// `-o go-template=TEMPLATE` (or `template=`, or `--template` alone) runs a Go
/// template over what `-o json` prints, and the file formats read theirs
/// from a file; `-o jsonpath-as-json` prints what a JSONPath selects as JSON
/// arrays (`go_text` holds both to kubectl's output). An error in a Go
/// template prints what rendered before it, then the error.
#[test]
fn kinds_list_prints_go_templates_and_template_files() {
    let listed = |extra: &[&str]| {
        cozy(&[&["kinds", "list", "--kinds", "examples/kinds"][..], extra].concat())
    };
    let lines = "{{range .items}}{{.kind}} {{.plural}} {{.shortNames}}\n{{end}}";
    let want = "Bucket buckets []\nPostgres postgreses [pg]\nRedis redises []\n";
    for args in [
        vec!["-o".to_owned(), format!("go-template={lines}")],
        vec!["-o".to_owned(), format!("template={lines}")],
        vec![format!("--template={lines}")],
        vec![
            "-o".to_owned(),
            "go-template".to_owned(),
            "--template".to_owned(),
            lines.to_owned(),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = listed(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), want, "{args:?}");
    }

    let dir = tempfile::tempdir().expect("temp dir");
    let go_file = dir.path().join("kinds.tmpl");
    std::fs::write(&go_file, lines).expect("write the template");
    let out = listed(&["-o", &format!("go-template-file={}", go_file.display())]);
    assert_eq!(text(&out.stdout), want, "{}", text(&out.stderr));
    let out = listed(&[
        "-o",
        "templatefile",
        "--template",
        go_file.to_str().unwrap(),
    ]);
    assert_eq!(text(&out.stdout), want, "{}", text(&out.stderr));
    let jsonpath_file = dir.path().join("plurals.jsonpath");
    std::fs::write(&jsonpath_file, "{.items[*].plural}").expect("write the template");
    let out = listed(&["-o", &format!("jsonpath-file={}", jsonpath_file.display())]);
    assert_eq!(
        text(&out.stdout),
        "buckets postgreses redises",
        "{}",
        text(&out.stderr)
    );

    let out = listed(&[
        "-o",
        "jsonpath-as-json={.items[1].shortNames}{.items[*].kind}",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "[\n    [\n        \"pg\"\n    ]\n]\n[\n    \"Bucket\",\n    \"Postgres\",\n    \"Redis\"\n]\n"
    );

    // Refused before anything prints: exit 2.
    for (args, says) in [
        (
            vec!["-o", "go-template={{.kind"],
            "error parsing template {{.kind, template: output:1:",
        ),
        (
            vec!["-o", "go-template="],
            "template format specified but no template given",
        ),
        (vec!["-o", "go-template"], "-o go-template needs a template"),
        (
            vec!["-o", "go-template-file=/nonexistent/kinds.tmpl"],
            "error reading template /nonexistent/kinds.tmpl",
        ),
        (
            vec!["-o", "go-template={{.kind}}", "--template", "{{.kind}}"],
            "both give a template",
        ),
    ] {
        let out = listed(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // Fails while rendering: what rendered first, then the error (exit 1).
    let out = listed(&[
        "-o",
        "go-template={{range .items}}{{.kind}} {{.shortNames | base64decode}}{{end}}",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Bucket ");
    assert!(
        text(&out.stderr).contains("wrong type for value; expected string; got []interface {}"),
        "{}",
        text(&out.stderr)
    );
}

/// `-o custom-columns=HEADER:PATH,…` prints a row per listed kind, as
/// `kubectl get -o custom-columns` does (kubectl 1.36 printed the same
/// columns over the same shapes: headers as written, `%v` of each value,
/// `<none>` where a path selects nothing); `custom-columns-file=FILE` reads
/// them from a file; a spec or file kubectl refuses is refused in its words.
#[test]
fn kinds_list_prints_custom_columns() {
    let listed = |output: &str| cozy(&["kinds", "list", "--kinds", "examples/kinds", "-o", output]);
    let out =
        listed("custom-columns=Kind:.kind,SHORT:.shortNames[*],PREFIX:{releasePrefix},X:.nope");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Kind       SHORT    PREFIX      X\n\
         Bucket     <none>   bucket-     <none>\n\
         Postgres   pg       postgres-   <none>\n\
         Redis      <none>   redis-      <none>\n"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("columns.txt");
    std::fs::write(&file, "KIND  PLURAL\n.kind {.plural}\n").expect("write columns");
    let out = listed(&format!("custom-columns-file={}", file.display()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "KIND       PLURAL\nBucket     buckets\nPostgres   postgreses\nRedis      redises\n"
    );
    for (output, says) in [
        (
            "custom-columns=KIND",
            "unexpected custom-columns spec: KIND, expected <header>:<json-path-expr>",
        ),
        (
            "custom-columns=",
            "custom-columns format specified but no custom columns given",
        ),
        (
            "custom-columns-file=/nonexistent/columns.txt",
            "error reading template /nonexistent/columns.txt",
        ),
    ] {
        let out = listed(output);
        assert_eq!(out.status.code(), Some(2), "{output}");
        assert!(
            text(&out.stderr).contains(says),
            "{output}: {}",
            text(&out.stderr)
        );
    }
    // A row that cannot be printed ends the table there, after the headers
    // and the rows before it, as kubectl prints them (Postgres has a short
    // name, Redis none).
    for kind in ["postgres.yaml", "redis.yaml"] {
        std::fs::copy(
            Path::new("examples/kinds").join(kind),
            dir.path().join(kind),
        )
        .expect("copy a kind");
    }
    let out = cozy(&[
        "kinds",
        "list",
        "--kinds",
        dir.path().to_str().unwrap(),
        "-o",
        "custom-columns=K:.kind,S:.shortNames[0]",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "K          S\nPostgres   pg\n");
    assert!(
        text(&out.stderr).contains("array index out of bounds: index 0, length 0"),
        "{}",
        text(&out.stderr)
    );
}

/// `kinds list` of a cluster: the kinds its `apps.cozystack.io` serves
/// (here, through the aggregator, a kubectl-cozy server with the example
/// kinds), with their charts and release prefixes from its OpenAPI, which
/// discovery does not carry.
#[test]
fn kinds_list_reads_a_clusters_kinds_and_their_charts() {
    let plane = crate::support::plane::plane();
    crate::support::aggregated::aggregated();
    let kubeconfig = plane.kubeconfig.to_str().unwrap();
    // The aggregator gathers its APIServices' OpenAPI on its own time.
    let started = std::time::Instant::now();
    while !plane
        .kubectl()
        .args([
            "get",
            "--raw",
            "/openapi/v3/apis/apps.cozystack.io/v1alpha1",
        ])
        .output()
        .expect("kubectl")
        .status
        .success()
    {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(90),
            "the aggregator never published the group's OpenAPI"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let out = cozy(&["kinds", "list", "--kubeconfig", kubeconfig, "-o", "wide"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let row = |kind: &str| -> Vec<String> {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{kind} ")))
            .unwrap_or_else(|| panic!("no {kind}: {table}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    // KIND PLURAL SHORTNAMES CHART CHART-VERSION SOURCE… APIVERSION SINGULAR
    // CATEGORIES RELEASE-PREFIX
    let postgres = row("Postgres");
    assert_eq!(
        postgres[..4],
        ["Postgres", "postgreses", "pg", "postgres"],
        "{table}"
    );
    assert!(postgres.contains(&"0.4.0".to_owned()), "{table}");
    assert_eq!(
        postgres.last().map(String::as_str),
        Some("postgres-"),
        "{table}"
    );
    let out = cozy(&[
        "kinds",
        "list",
        "--kubeconfig",
        kubeconfig,
        "-o",
        r#"jsonpath={range .items[*]}{.kind}={.chart}@{.chartVersion}/{.releasePrefix}{"\n"}{end}"#,
    ]);
    assert_eq!(
        text(&out.stdout),
        "Bucket=bucket@0.1.0/bucket-\nPostgres=postgres@0.4.0/postgres-\nRedis=redis@0.2.1/redis-\n",
        "{}",
        text(&out.stderr)
    );
}
