//! A cluster without Flux's HelmRelease CRD: `serve` used to register its
//! APIService and then wait for ever for a watch cache that could not
//! fill (every list through the APIService timing out, namespace deletions
//! stalled, signals ignored). It is refused before anything is registered,
//! naming what is missing.

use std::process::Stdio;

use crate::support::bins;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_without_helmreleases_is_refused_before_it_registers() {
    let private = super::private_plane("no-flux");
    let plane = &private.plane;
    let out = plane
        .kubectl()
        .args([
            "delete",
            "crd",
            "helmreleases.helm.toolkit.fluxcd.io",
            "--wait",
        ])
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kinds = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/kinds");
    let state = tempfile::tempdir().expect("tempdir");
    let out = tokio::process::Command::new(bins::kubectl_cozy())
        .args(["serve", "--kinds", kinds, "--route", "external-name"])
        .args(["--host", "127.0.0.1", "--timeout", "20s", "--kubeconfig"])
        .arg(&plane.kubeconfig)
        .arg("--state-dir")
        .arg(state.path())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("run kubectl-cozy serve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the cluster serves no HelmReleases: install Flux"),
        "{stderr}"
    );
    // Nothing was registered.
    let out = plane
        .kubectl()
        .args([
            "get",
            "apiservices",
            "-l",
            "kubectl-cozy.io/session",
            "-o",
            "name",
        ])
        .output()
        .expect("run kubectl");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{stderr}");
    let out = plane
        .kubectl()
        .args(["get", "namespace", "kubectl-cozy-system"])
        .output()
        .expect("run kubectl");
    assert!(!out.status.success(), "the session namespace was created");
}
