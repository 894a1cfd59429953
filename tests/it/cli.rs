//! The CLI as users run it: through kubectl's plugin discovery, with
//! kubeconfig lists, exit codes and broken pipes.

use std::process::{Command, Output, Stdio};

use crate::support::{bins, plane};

fn cozy(args: &[&str]) -> Command {
    let mut cmd = Command::new(bins::kubectl_cozy());
    cmd.args(args)
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .stdin(Stdio::null());
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run kubectl-cozy")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_through_kubectl_plugin_discovery_says_kubectl_cozy() {
    let bin_dir = plane::binaries().expect("control plane binaries");
    let out = Command::new(bin_dir.join("kubectl"))
        .args(["cozy", "--help"])
        .env("PATH", bins::plugin_path(&[]))
        .output()
        .expect("run kubectl cozy --help");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("Usage: kubectl cozy [OPTIONS] <COMMAND>"),
        "{stdout}"
    );
    for sub in ["serve", "doctor", "kinds", "completion", "version"] {
        assert!(stdout.contains(sub), "{sub} missing from help:\n{stdout}");
    }
    let out = Command::new(bin_dir.join("kubectl"))
        .args(["plugin", "list"])
        .env("PATH", bins::plugin_path(&[]))
        .output()
        .expect("kubectl plugin list");
    assert!(
        text(&out.stdout).contains("kubectl-cozy"),
        "{}",
        text(&out.stdout)
    );
}

/// `--no-color` turns off clap's colours (errors, usage, help) as NO_COLOR
/// does; `CLICOLOR_FORCE=1` makes clap colour even into a pipe.
#[test]
fn no_color_turns_off_claps_colours_too() {
    let escape = |out: &Output| out.stdout.contains(&0x1b) || out.stderr.contains(&0x1b);
    for args in [&["version", "--bogus"][..], &["version", "--help"]] {
        let out = run(cozy(args).env("CLICOLOR_FORCE", "1"));
        assert!(escape(&out), "{args:?} is coloured by default: {out:?}");
        let mut with = args.to_vec();
        with.push("--no-color");
        let out = run(cozy(&with).env("CLICOLOR_FORCE", "1"));
        assert!(
            !escape(&out),
            "{with:?}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let out = run(cozy(args).env("CLICOLOR_FORCE", "1").env("NO_COLOR", "1"));
        assert!(!escape(&out), "{args:?} with NO_COLOR");
    }
    // -V/--version is the root's alone.
    let out = run(&mut cozy(&["version", "--version"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let out = run(&mut cozy(&["--version"]));
    assert_eq!(
        text(&out.stdout),
        format!("kubectl cozy {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn subcommand_help_names_the_plugin_too() {
    let out = run(&mut cozy(&["kinds", "list", "--help"]));
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Usage: kubectl cozy kinds list"),
        "{stdout}"
    );
    // Global flags are left to `kubectl cozy options`, as kubectl does.
    assert!(
        !stdout.contains("--kubeconfig <PATH>") && stdout.contains("kubectl cozy options"),
        "{stdout}"
    );
    let out = run(&mut cozy(&["options"]));
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("--kubeconfig") && stdout.contains("--namespace"),
        "{stdout}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let out = run(&mut cozy(&["frobnicate"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unrecognized subcommand"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&mut cozy(&["version", "-o", "xml"]));
    assert_eq!(out.status.code(), Some(2));
    // Formats version cannot print are refused, not ignored.
    for format in ["wide", "name"] {
        let out = run(&mut cozy(&["version", "--client", "-o", format]));
        assert_eq!(out.status.code(), Some(2), "-o {format}");
        assert!(
            text(&out.stderr).contains(&format!("-o {format}: version prints")),
            "{}",
            text(&out.stderr)
        );
    }
    let out = run(&mut cozy(&["version", "--request-timeout", "soon"]));
    assert_eq!(out.status.code(), Some(2));

    // kubectl's -n and -o where serve has no use for them: refused, not ignored.
    let kinds = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/kinds");
    for (args, says) in [
        (
            &["serve", "--kinds", kinds, "--dry-run", "-n", "team-a"][..],
            "serve takes no -n/--namespace",
        ),
        (
            &["serve", "--kinds", kinds, "-o", "json"],
            "-o applies to --dry-run and --print-rbac only",
        ),
        (
            &["serve", "--kinds", kinds, "--print-rbac", "-o", "wide"],
            "print -o yaml, -o json or -o name",
        ),
    ] {
        let out = run(&mut cozy(args));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    // ... and where it has: --print-rbac as a List, or names kubectl takes.
    let out = run(&mut cozy(&[
        "serve",
        "--kinds",
        kinds,
        "--print-rbac",
        "-o",
        "json",
    ]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON List");
    assert_eq!(list["kind"], "List");
    let out = run(&mut cozy(&[
        "serve",
        "--kinds",
        kinds,
        "--print-rbac",
        "-o",
        "name",
    ]));
    assert!(
        text(&out.stdout)
            .lines()
            .all(|l| l.contains(".rbac.authorization.k8s.io/kubectl-cozy:")),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_context_or_kubeconfig_that_does_not_exist_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("config");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: dev\nclusters: [{name: dev, cluster: {server: 'https://127.0.0.1:9'}}]\n\
         users: [{name: dev, user: {token: x}}]\ncontexts: [{name: dev, context: {cluster: dev, user: dev}}]\n",
    )
    .unwrap();
    let kubeconfig = kubeconfig.to_str().unwrap();
    let out = run(&mut cozy(&[
        "version",
        "--kubeconfig",
        kubeconfig,
        "--context",
        "prod",
    ]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("error: context \"prod\" does not exist in the kubeconfig (contexts: dev)"),
        "{}",
        text(&out.stderr)
    );
    let missing = dir.path().join("missing");
    let out = run(&mut cozy(&[
        "version",
        "--kubeconfig",
        missing.to_str().unwrap(),
    ]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("error: kubeconfig {} does not exist\n", missing.display())
    );
}

#[test]
fn version_without_kubeconfig_prints_client_then_fails_clearly() {
    let out = run(&mut cozy(&["version"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).starts_with("Client Version: v"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("no kubeconfig found"),
        "{}",
        text(&out.stderr)
    );
    // KUBECONFIG set to files that do not exist: the error names them.
    let out = run(cozy(&["version"]).env("KUBECONFIG", "/nonexistent/a:/nonexistent/b"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("KUBECONFIG names /nonexistent/a, /nonexistent/b and none of them exists"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&mut cozy(&["version", "--client", "-o", "json"]));
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        v["clientVersion"]["gitVersion"],
        format!("v{}", env!("CARGO_PKG_VERSION"))
    );
    assert!(v.get("serverVersion").is_none());
}

#[test]
fn version_reports_the_server_and_unreachable_clusters() {
    let plane = plane();
    let kubeconfig = plane.kubeconfig.to_string_lossy().into_owned();
    let out = run(&mut cozy(&["version", "--kubeconfig", &kubeconfig]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Server Version: v1."),
        "{}",
        text(&out.stdout)
    );

    // KUBECONFIG lists merge in order: the first file's current-context wins.
    let dead = plane.dir.join("dead.kubeconfig");
    std::fs::write(
        &dead,
        "apiVersion: v1\nkind: Config\ncurrent-context: dead\nclusters:\n- name: dead\n  cluster: {server: 'https://127.0.0.1:9'}\n\
         contexts:\n- name: dead\n  context: {cluster: dead, user: dead}\nusers:\n- name: dead\n  user: {token: x}\n",
    )
    .unwrap();
    let list = std::env::join_paths([dead.as_path(), plane.kubeconfig.as_path()]).unwrap();
    let out = run(cozy(&["version", "--request-timeout", "3s"]).env("KUBECONFIG", &list));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cannot reach the cluster at https://127.0.0.1:9"),
        "{}",
        text(&out.stderr)
    );
    // ... and --context picks the plane's context from the second file.
    let out = run(cozy(&["version", "--context", "test", "-o", "yaml"]).env("KUBECONFIG", &list));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("serverVersion:"),
        "{}",
        text(&out.stdout)
    );
}

/// A server that takes the TCP connection and never answers the TLS
/// handshake (a port-forward whose far end is gone) fails at client-go's
/// 10 s handshake deadline, as kubectl does, not at the 30 s dial timeout,
/// and is named as such.
#[test]
fn a_server_that_never_answers_the_handshake_fails_in_ten_seconds() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for socket in listener.incoming() {
            held.push(socket);
        }
    });
    let plane = plane();
    let kubeconfig = plane.dir.join("silent.kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: s\nclusters:\n- name: s\n  cluster: {{server: 'https://{addr}', insecure-skip-tls-verify: true}}\n\
             contexts:\n- name: s\n  context: {{cluster: s, user: s}}\nusers:\n- name: s\n  user: {{token: x}}\n"
        ),
    )
    .unwrap();
    let out = run(&mut cozy(&[
        "version",
        "--kubeconfig",
        &kubeconfig.to_string_lossy(),
    ]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    // Only the handshake's deadline says this; the 30 s dial timeout would
    // say that the server did not answer in time.
    assert!(
        stderr.contains("never answered the TLS handshake (10 s)"),
        "{stderr}"
    );
}

/// The admin kubeconfig of the plane with its cluster or user changed by `edit`.
fn edited_kubeconfig(name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let plane = plane();
    let admin = kube::config::Kubeconfig::read_from(&plane.kubeconfig).expect("read kubeconfig");
    let mut doc = serde_json::to_value(&admin).expect("kubeconfig as JSON");
    edit(&mut doc);
    let path = plane.dir.join(name);
    std::fs::write(&path, doc.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

/// The plane's admin kubeconfig with a server address under kube-apiserver
/// that is not an API server: kube-apiserver answers its /version with 404,
/// as a web server or a wrong proxy path would.
fn not_kubernetes_kubeconfig(name: &str) -> String {
    edited_kubeconfig(name, |doc| {
        let server = doc["clusters"][0]["cluster"]["server"].as_str().unwrap();
        let server = format!("{}/not-kubernetes", server.trim_end_matches('/'));
        doc["clusters"][0]["cluster"]["server"] = server.into();
    })
}

#[test]
fn a_wrong_address_or_refused_credentials_are_named_with_a_hint() {
    let wrong_path = not_kubernetes_kubeconfig("wrong-path.kubeconfig");
    for args in [&["version"][..], &["doctor"], &["kinds", "list"]] {
        let out = run(cozy(args).args(["--kubeconfig", &wrong_path]));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {stderr}");
        assert!(
            stderr.contains("not a Kubernetes API server (GET /")
                && stderr.contains("HTTP 404")
                && stderr.contains("hint: the context's server address leads somewhere else"),
            "{args:?}: {stderr}"
        );
    }

    // A token the cluster does not know: 401 on the first request.
    let bad_token = edited_kubeconfig("bad-token.kubeconfig", |doc| {
        doc["users"][0]["user"] = serde_json::json!({"token": "not-a-token-of-this-cluster"});
    });
    for args in [
        &["version"][..],
        &["doctor"],
        &["serve", "--kinds", "examples/kinds"],
    ] {
        let out = run(cozy(args)
            .args(["--kubeconfig", &bad_token])
            .current_dir(env!("CARGO_MANIFEST_DIR")));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("refused the credentials (GET /version: HTTP 401")
                && stderr
                    .contains("hint: the kubeconfig's credentials are missing, wrong or expired"),
            "{args:?}: {stderr}"
        );
    }
}

/// A server that answers every request 200 with a web page (a proxy's
/// sign-in page, a wrong port) is named as no Kubernetes API server, with
/// the hint, and the page itself is not logged.
#[test]
fn a_server_answering_a_web_page_is_named_with_a_hint() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let page = "<html><body>Sign in</body></html>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    let kubeconfig = edited_kubeconfig("web-page.kubeconfig", |doc| {
        doc["clusters"][0]["cluster"] = serde_json::json!({"server": format!("http://{addr}")});
    });
    for args in [&["version"][..], &["doctor"], &["kinds", "list"]] {
        let out = run(cozy(args).args(["--kubeconfig", &kubeconfig]));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {stderr}");
        assert!(
            stderr.contains("not a Kubernetes API server (GET /")
                && stderr.contains("an answer that is not Kubernetes' JSON")
                && stderr.contains("hint: the context's server address leads somewhere else"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("Sign in"), "{args:?}: {stderr}");
    }
}

/// `-v 6` logs every request as kubectl's `-v 6` does, one line each, and
/// keeps the client library's dumps of expected failures out, as `-v 4`
/// (debug) does; `-v 8` shows them, as kubectl shows bodies there.
#[test]
fn requests_are_logged_at_v6_and_failed_answers_bodies_at_v8() {
    let wrong_path = not_kubernetes_kubeconfig("wrong-path-v.kubeconfig");
    let debug = run(&mut cozy(&[
        "version",
        "-v",
        "4",
        "--kubeconfig",
        &wrong_path,
    ]));
    let stderr = text(&debug.stderr);
    assert_eq!(debug.status.code(), Some(4), "{stderr}");
    assert!(!stderr.contains("Unsuccessful"), "{stderr}");
    assert!(!stderr.contains("kubectl_cozy::http"), "{stderr}");

    let requests = run(&mut cozy(&[
        "version",
        "-v",
        "6",
        "--kubeconfig",
        &wrong_path,
    ]));
    let stderr = text(&requests.stderr);
    assert!(
        stderr.contains("kubectl_cozy::http: GET https://127.0.0.1:")
            && stderr.contains("/not-kubernetes/version 404 Not Found in "),
        "{stderr}"
    );
    assert!(!stderr.contains("Unsuccessful"), "{stderr}");
    let bodies = run(&mut cozy(&[
        "version",
        "-v",
        "8",
        "--kubeconfig",
        &wrong_path,
    ]));
    let stderr = text(&bodies.stderr);
    assert!(stderr.contains("Unsuccessful"), "{stderr}");

    let plane = plane();
    let kubeconfig = plane.kubeconfig.to_string_lossy().into_owned();
    let out = run(&mut cozy(&[
        "version",
        "-v",
        "6",
        "--kubeconfig",
        &kubeconfig,
    ]));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines = stderr
        .lines()
        .filter(|l| l.contains("kubectl_cozy::http: GET ") && l.contains("/version 200 OK in "))
        .count();
    assert_eq!(lines, 1, "one line per request: {stderr}");
}

#[test]
fn broken_pipe_exits_zero() {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let status = cozy(&["completion", "zsh"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .status()
        .expect("run");
    assert!(status.success(), "exit status {status:?}");
}

/// Runs `cmd` for at most `limit`: its output, or `None` (killed) if it was
/// still running (a serve that started instead of refusing its flags).
fn run_for(cmd: &mut Command, limit: std::time::Duration) -> Option<Output> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kubectl-cozy");
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Some(child.wait_with_output().expect("output"))
}

/// Serve's flags for a mode other than the one chosen are usage errors that
/// name them, as `--route` with `--standalone` always was: standalone's
/// cluster flags (and the kubeconfig's, which it never reads),
/// `--exit-on-disconnect` without a tunnel, standalone's files in cluster mode.
#[test]
fn serve_refuses_the_flags_its_mode_ignores() {
    let kinds = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/kinds");
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("store.sqlite");
    let kubeconfig = dir.path().join("kubeconfig");
    let state = dir.path().join("state");
    let standalone = |extra: &[&str]| {
        let args = [
            "serve",
            "--standalone",
            "--kinds",
            kinds,
            "--listen",
            "127.0.0.1:0",
        ];
        let mut cmd = cozy(&args);
        cmd.arg("--data")
            .arg(&data)
            .arg("--write-kubeconfig")
            .arg(&kubeconfig)
            .arg("--state-dir")
            .arg(&state)
            .args(extra);
        cmd
    };
    for (extra, says) in [
        (
            &[
                "--takeover",
                "--session-namespace",
                "foo",
                "--exit-on-disconnect",
            ][..],
            "--session-namespace, --takeover and --exit-on-disconnect apply to cluster mode, not --standalone",
        ),
        (
            &[
                "--agent-image",
                "foo",
                "--lease-duration",
                "3s",
                "--timeout",
                "5s",
            ],
            "--timeout, --lease-duration and --agent-image apply to cluster mode, not --standalone",
        ),
        (
            &["--context", "nosuch"],
            "--context applies to cluster mode, not --standalone (it reads no kubeconfig",
        ),
        (
            &["--route", "tunnel"],
            "--route applies to cluster mode, not --standalone",
        ),
    ] {
        let out = run_for(&mut standalone(extra), std::time::Duration::from_secs(20))
            .unwrap_or_else(|| panic!("{extra:?}: serve --standalone started instead of refusing"));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
    }
    for (args, says) in [
        (
            &[
                "serve",
                "--kinds",
                kinds,
                "--route",
                "external-name",
                "--host",
                "127.0.0.1",
                "--exit-on-disconnect",
            ][..],
            "--exit-on-disconnect applies to --route tunnel, not --route external-name",
        ),
        (
            &["serve", "--kinds", kinds, "--data", "x.sqlite"],
            "--data applies to --standalone, not cluster mode",
        ),
        (
            &[
                "serve",
                "--kinds",
                kinds,
                "--route",
                "none",
                "--no-session-guard",
            ],
            "--no-session-guard applies to a registered session (--route tunnel or external-name), not --route none",
        ),
    ] {
        let out = run_for(&mut cozy(args), std::time::Duration::from_secs(20))
            .unwrap_or_else(|| panic!("{args:?}: still running"));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// Standalone on a port another server holds: the error says how to choose
/// another, or any free one, and nothing was made for it (no store, lock,
/// certificates or kubeconfig left behind).
#[test]
fn standalone_on_a_taken_port_says_how_to_choose_another() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("address").to_string();
    let kinds = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/kinds");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = cozy(&["serve", "--standalone", "--kinds", kinds, "--listen", &addr]);
    cmd.arg("--data")
        .arg(dir.path().join("store.sqlite"))
        .arg("--write-kubeconfig")
        .arg(dir.path().join("kubeconfig"))
        .arg("--state-dir")
        .arg(dir.path().join("state"));
    let out = run_for(&mut cmd, std::time::Duration::from_secs(30)).expect("serve exits");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("caused by: listen on {addr}"))
            && stderr.contains(&format!(
                "hint: another server holds {addr} (kube-apiserver, k3s, another `kubectl cozy serve`)"
            ))
            && stderr.contains("--listen 127.0.0.1:0 for any free one"),
        "{stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("read the directory")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    drop(taken);
}

/// With neither HOME nor the XDG directory set (a service, `env -i`), the
/// standalone server put its CA and kubeconfig under the shared temporary
/// directory, trusting a CA another user could have left there. It asks
/// for the flag instead; and a state directory others may write to is
/// refused before anything is written into it.
#[test]
fn standalone_needs_a_home_and_a_state_directory_of_its_own() {
    let kinds = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/kinds");
    let serve = |extra: &[&str]| {
        let mut cmd = Command::new(bins::kubectl_cozy());
        cmd.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .args([
                "serve",
                "--standalone",
                "--listen",
                "127.0.0.1:0",
                "--kinds",
                kinds,
            ])
            .args(extra)
            .stdin(Stdio::null());
        run(&mut cmd)
    };
    let out = serve(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("neither HOME nor XDG_STATE_HOME is set: pass --state-dir DIR"),
        "{}",
        text(&out.stderr)
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("shared");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let out = serve(&[
        "--state-dir",
        &state.display().to_string(),
        "--write-kubeconfig",
        &dir.path().join("k").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("writable by other users (mode 0777)"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(&state).unwrap().count(),
        0,
        "nothing written"
    );
    assert!(!dir.path().join("k").exists());
}
