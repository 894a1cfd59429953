//! A third-party client: client-go's informer machinery (tests/tools/informer,
//! a dynamic and a metadata-only shared informer, WatchList on) against the
//! extension server through the real aggregator. The informers must sync from
//! the WatchList stream (initial ADDED events ended by the
//! `k8s.io/initial-events-end` bookmark, no fallback list) and then see every
//! create, update and delete.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::aggregated::aggregated;
use crate::support::plane::{Plane, plane};
use crate::support::tools;

/// How long one step may take; events arrive in well under a second, this
/// allows for a loaded machine.
const STEP: Duration = Duration::from_secs(30);
const INFORMERS: [&str; 2] = ["dynamic", "metadata"];

fn postgres(name: &str) -> String {
    format!(
        "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: {name}\n  labels: {{team: a}}\nspec:\n  replicas: 3\n"
    )
}

fn kubectl(plane: &Plane, ns: &str, args: &[&str], stdin: Option<&str>) -> String {
    let mut cmd = plane.kubectl();
    cmd.args(["-n", ns])
        .args(args)
        .env("HOME", std::env::temp_dir())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("kubectl");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write kubectl stdin");
    }
    let out = child.wait_with_output().expect("kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The running informer tool: its JSON lines, and what it logged on stderr.
struct Informer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    seen: Vec<Value>,
    stderr: PathBuf,
    _dir: tempfile::TempDir,
}

impl Informer {
    fn start(plane: &Plane, ns: &str) -> Informer {
        let dir = tempfile::tempdir().expect("tempdir");
        let stderr = dir.path().join("informer.stderr");
        let mut child = Command::new(tools::informer())
            .arg("--kubeconfig")
            .arg(&plane.kubeconfig)
            .args([
                "--namespace",
                ns,
                "--resource",
                "postgreses",
                "--timeout",
                "10m",
            ])
            // client-go's default since 1.35; explicit so the test means it.
            .env("KUBE_FEATURE_WatchListClient", "true")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("start the informer tool");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|_| serde_json::json!({"unparsed": line}));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Informer {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
            stderr,
            _dir: dir,
        }
    }

    /// Waits up to [`STEP`] for a line matching `pred` (looking at lines
    /// already seen first) and returns it with how long the wait took.
    fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> (Value, Duration) {
        let start = Instant::now();
        if let Some(v) = self.seen.iter().find(|v| pred(v)) {
            return (v.clone(), Duration::ZERO);
        }
        let deadline = start + STEP;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    self.seen.push(v.clone());
                    if pred(&v) {
                        return (v, start.elapsed());
                    }
                }
                Err(_) => panic!(
                    "the informer did not report {what} within {STEP:?}\n--- stdout:\n{}\n--- stderr:\n{}",
                    self.seen
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join("\n"),
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                ),
            }
        }
    }

    /// Waits for `event` of `name` in both informers; returns the dynamic
    /// informer's line and the slower latency.
    fn wait_event(&mut self, event: &str, name: &str) -> (Value, Duration) {
        let mut dynamic = Value::Null;
        let mut slowest = Duration::ZERO;
        for informer in INFORMERS {
            let (v, took) = self.wait_for(&format!("{informer} {event} of {name}"), |v| {
                v["informer"] == informer && v["type"] == event && v["name"] == name
            });
            slowest = slowest.max(took);
            if informer == "dynamic" {
                dynamic = v;
            }
        }
        eprintln!("informer: {event} of {name} seen by both informers after {slowest:?}");
        (dynamic, slowest)
    }

    /// Closes stdin, waits for the tool to exit on its own and returns every
    /// line it printed.
    fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let deadline = Instant::now() + STEP;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the informer") {
                assert!(
                    status.success(),
                    "the informer exited with {status}\n{}",
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                );
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the informer did not exit on stdin EOF"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        while let Ok(v) = self.lines.try_recv() {
            self.seen.push(v);
        }
        let errors: Vec<&Value> = self
            .seen
            .iter()
            .filter(|v| v.get("watchError").is_some() || v.get("unparsed").is_some())
            .collect();
        assert!(errors.is_empty(), "the informer reported {errors:?}");
        // What the informers reported and the requests client-go made
        // (visible with --nocapture).
        for v in &self.seen {
            eprintln!("informer: {v}");
        }
        eprint!(
            "{}",
            std::fs::read_to_string(&self.stderr).unwrap_or_default()
        );
        std::mem::take(&mut self.seen)
    }
}

impl Drop for Informer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn client_go_informers_with_watchlist_see_changes() {
    // A cold build of the tool takes minutes: do it before any timed step.
    let _ = tools::informer();
    let plane = plane();
    let _aggregated = aggregated();
    let ns = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(plane.namespace("informer"));

    kubectl(plane, &ns, &["apply", "-f", "-"], Some(&postgres("before")));
    let mut informer = Informer::start(plane, &ns);

    // Synced, from WatchList: the initial state came as ADDED events (marked
    // as the initial list) on a watch with sendInitialEvents=true, and no
    // informer fell back to a plain list.
    informer.wait_for("synced", |v| v["synced"] == true);
    for name in INFORMERS {
        let (summary, _) = informer.wait_for(&format!("{name} request summary"), |v| {
            v["informer"] == name && v.get("watchlistRequests").is_some()
        });
        assert!(
            summary["watchlistOK"].as_u64() >= Some(1),
            "{name}: no accepted sendInitialEvents=true watch: {summary}"
        );
        assert_eq!(
            summary["listRequests"], 0,
            "{name} fell back to a list: {summary}"
        );
    }
    informer.wait_for("the watchlist verdict", |v| v.get("watchlist").is_some());
    assert!(
        informer.seen.iter().any(|v| v["watchlist"] == true),
        "WatchList was not used: {:?}",
        informer.seen
    );
    let (initial, _) = informer.wait_event("add", "before");
    assert_eq!(initial["initial"], true, "{initial}");
    assert!(
        informer
            .seen
            .iter()
            .filter(|v| v["type"] == "add" && v["name"] == "before")
            .all(|v| v["initial"] == true),
        "the initial add was not part of the initial list: {:?}",
        informer.seen
    );

    // Create.
    kubectl(plane, &ns, &["apply", "-f", "-"], Some(&postgres("db1")));
    let (added, _) = informer.wait_event("add", "db1");
    assert_ne!(added["initial"], true, "{added}");
    let created_rv = added["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();

    // Update: spec, then a label.
    kubectl(
        plane,
        &ns,
        &[
            "patch",
            "postgreses",
            "db1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"replicas":5}}"#,
        ],
        None,
    );
    let (updated, _) = informer.wait_event("update", "db1");
    let updated_rv = updated["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_ne!(updated_rv, created_rv, "{updated}");
    kubectl(
        plane,
        &ns,
        &[
            "patch",
            "postgreses",
            "db1",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"labels":{"team":"b"}}}"#,
        ],
        None,
    );
    let rv = updated_rv.clone();
    for name in INFORMERS {
        informer.wait_for(&format!("{name} update of db1 after {rv}"), |v| {
            v["informer"] == name
                && v["type"] == "update"
                && v["name"] == "db1"
                && v["resourceVersion"] != rv.as_str()
        });
    }

    // Delete, and the app that was there before the informer started.
    kubectl(plane, &ns, &["delete", "postgreses", "db1"], None);
    informer.wait_event("delete", "db1");
    kubectl(plane, &ns, &["delete", "postgreses", "before"], None);
    informer.wait_event("delete", "before");

    // A second app created and deleted quickly is still seen as both.
    kubectl(plane, &ns, &["apply", "-f", "-"], Some(&postgres("db2")));
    kubectl(plane, &ns, &["delete", "postgreses", "db2"], None);
    informer.wait_event("add", "db2");
    informer.wait_event("delete", "db2");

    // Nothing else touched the namespace: each informer saw exactly these
    // events, in this order (no duplicate, spurious or missing one).
    let seen = informer.finish();
    let expected = [
        ("add", "before"),
        ("add", "db1"),
        ("update", "db1"),
        ("update", "db1"),
        ("delete", "db1"),
        ("delete", "before"),
        ("add", "db2"),
        ("delete", "db2"),
    ];
    for name in INFORMERS {
        let events: Vec<(&str, &str)> = seen
            .iter()
            .filter(|v| v["informer"] == name && v.get("type").is_some())
            .map(|v| {
                (
                    v["type"].as_str().unwrap_or_default(),
                    v["name"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(events, expected, "{name} informer's events");
    }
}
