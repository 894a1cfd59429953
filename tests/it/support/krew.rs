//! Helpers of the tests that drive krew (`kubectl krew`, built by
//! `tests/tools/build.sh`): a loopback HTTP server for plugin archives, and
//! a listing of what a `KREW_ROOT` holds.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

/// Serves `file` at `/<its name>` on a loopback port (404 for anything
/// else), for a bounded number of requests; returns the base URL.
pub fn serve_file(file: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let name = format!("/{}", file.file_name().expect("name").to_string_lossy());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            let Ok(mut stream) = stream else { continue };
            let mut request_line = String::new();
            let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or_default();
            let response = if path == name {
                let body = std::fs::read(&file).expect("read served file");
                let mut r = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                r.extend(body);
                r
            } else {
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
            };
            let _ = stream.write_all(&response);
        }
    });
    base
}

/// Every path under `root` with its kind (`d` directory, `f` file, `l`
/// symlink, `L` dangling symlink).
pub fn tree(root: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            let meta = path.symlink_metadata().expect("metadata");
            if meta.is_dir() {
                out.insert(format!("d {rel}"));
                walk(root, &path, out);
            } else if meta.file_type().is_symlink() {
                let kind = if path.exists() { 'l' } else { 'L' };
                out.insert(format!("{kind} {rel}"));
            } else {
                out.insert(format!("f {rel}"));
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

/// Commits `index`'s `plugins/` as a krew index (the git repository
/// `kubectl krew update` clones), with `message`, as user `test`, with
/// `home` as HOME and no system git config.
pub fn commit_index(index: &Path, home: &Path, message: &str) {
    for args in [
        &["init", "-q"][..],
        &["add", "plugins"],
        &[
            "-c",
            "user.name=test",
            "-c",
            "user.email=test@example.invalid",
            "commit",
            "-qm",
            message,
        ],
    ] {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(index)
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
