//! Kubeconfig resolution the way kubectl does it: `--kubeconfig`, else every
//! file of the `KUBECONFIG` list merged in order (first value wins, missing
//! files skipped), else `~/.kube/config`; then `--context`, `--cluster`,
//! `--user`, `-n` and `--request-timeout` applied on top.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

/// Kubeconfig problems, phrased for the user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Neither `--kubeconfig`, `KUBECONFIG` nor `~/.kube/config` gave a file.
    #[error("no kubeconfig found: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config")]
    NotFound,
    /// `KUBECONFIG` is set, and none of its files exists.
    #[error("no kubeconfig found: KUBECONFIG names {} and none of them exists", list_paths(.0))]
    NoneOfTheList(Vec<PathBuf>),
    /// `--kubeconfig` names a file that does not exist.
    #[error("kubeconfig {0} does not exist")]
    Missing(PathBuf),
    /// `--context`, `--cluster` or `--user` names an entry the kubeconfig
    /// does not have.
    #[error("{what} {name:?} does not exist in the kubeconfig ({})", known_names(what, .known))]
    NoSuchEntry {
        /// `context`, `cluster` or `user`.
        what: &'static str,
        /// The name asked for.
        name: String,
        /// The names the kubeconfig has.
        known: Vec<String>,
    },
    /// A kubeconfig file could not be read or parsed.
    #[error("read kubeconfig {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Merging the `KUBECONFIG` list failed.
    #[error("merge kubeconfig {path} into the KUBECONFIG list")]
    Merge {
        /// The file being merged in.
        path: PathBuf,
        /// Why.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// The selected context, cluster or user does not work.
    #[error("use kubeconfig context {context}")]
    Context {
        /// The context name, or `(current-context)`.
        context: String,
        /// Why.
        #[source]
        source: kube::config::KubeconfigError,
    },
}

/// Which kubeconfig entries to use: the kubectl global flags.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`.
    pub context: Option<String>,
    /// `--cluster`.
    pub cluster: Option<String>,
    /// `--user`.
    pub user: Option<String>,
    /// `-n/--namespace`.
    pub namespace: Option<String>,
    /// `--request-timeout` (zero means no limit).
    pub request_timeout: Option<Duration>,
}

/// The `KUBECONFIG` list as the user wrote it.
fn list_paths(paths: &[PathBuf]) -> String {
    let joined: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    joined.join(", ")
}

/// Reads the kubeconfig files the selection points at and merges them.
pub fn read(selection: &Selection) -> Result<Kubeconfig, Error> {
    if let Some(path) = &selection.kubeconfig {
        return read_file(path);
    }
    let from_env: Vec<PathBuf> = std::env::var_os("KUBECONFIG")
        .map(|list| {
            std::env::split_paths(&list)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    if !from_env.is_empty() {
        let mut merged: Option<Kubeconfig> = None;
        for path in from_env.iter().filter(|p| p.exists()) {
            let next = read_file(path)?;
            merged = Some(match merged {
                None => next,
                Some(acc) => acc.merge(next).map_err(|source| Error::Merge {
                    path: path.clone(),
                    source,
                })?,
            });
        }
        return merged.ok_or(Error::NoneOfTheList(from_env));
    }
    let default = home_dir().map(|h| h.join(".kube").join("config"));
    match default {
        Some(path) if path.exists() => read_file(&path),
        _ => Err(Error::NotFound),
    }
}

/// `contexts: a, b` or `it has no contexts`, for [`Error::NoSuchEntry`].
fn known_names(what: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!("it has no {what}s")
    } else {
        format!("{what}s: {}", known.join(", "))
    }
}

/// Refuses a `--context`, `--cluster` or `--user` the kubeconfig lacks,
/// naming the ones it has (kube's loader only says it failed to load it).
fn check_names(kubeconfig: &Kubeconfig, selection: &Selection) -> Result<(), Error> {
    let asked = [
        (
            "context",
            &selection.context,
            kubeconfig
                .contexts
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>(),
        ),
        (
            "cluster",
            &selection.cluster,
            kubeconfig.clusters.iter().map(|c| c.name.clone()).collect(),
        ),
        (
            "user",
            &selection.user,
            kubeconfig
                .auth_infos
                .iter()
                .map(|c| c.name.clone())
                .collect(),
        ),
    ];
    for (what, name, known) in asked {
        if let Some(name) = name
            && !known.contains(name)
        {
            return Err(Error::NoSuchEntry {
                what,
                name: name.clone(),
                known,
            });
        }
    }
    Ok(())
}

/// Loads the client configuration for the selection.
pub async fn load(selection: &Selection) -> Result<kube::Config, Error> {
    let kubeconfig = read(selection)?;
    check_names(&kubeconfig, selection)?;
    let options = KubeConfigOptions {
        context: selection.context.clone(),
        cluster: selection.cluster.clone(),
        user: selection.user.clone(),
    };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|source| Error::Context {
            context: selection
                .context
                .clone()
                .unwrap_or_else(|| "(current-context)".into()),
            source,
        })?;
    if let Some(ns) = &selection.namespace {
        config.default_namespace = ns.clone();
    }
    if let Some(timeout) = selection.request_timeout {
        let limit = (!timeout.is_zero()).then_some(timeout);
        config.read_timeout = limit;
        config.write_timeout = limit;
        config.connect_timeout = limit.or(config.connect_timeout);
    }
    Ok(config)
}

/// The `current-context` of the selected kubeconfig, if it names one.
pub fn current_context(selection: &Selection) -> Option<String> {
    read(selection)
        .ok()?
        .current_context
        .filter(|c| !c.is_empty())
}

/// Context names of the selected kubeconfig, for completion.
pub fn context_names(selection: &Selection) -> Vec<String> {
    read(selection)
        .map(|kc| kc.contexts.into_iter().map(|c| c.name).collect())
        .unwrap_or_default()
}

/// Cluster names of the selected kubeconfig, for completion.
pub fn cluster_names(selection: &Selection) -> Vec<String> {
    read(selection)
        .map(|kc| kc.clusters.into_iter().map(|c| c.name).collect())
        .unwrap_or_default()
}

/// User names of the selected kubeconfig, for completion.
pub fn user_names(selection: &Selection) -> Vec<String> {
    read(selection)
        .map(|kc| kc.auth_infos.into_iter().map(|c| c.name).collect())
        .unwrap_or_default()
}

fn read_file(path: &Path) -> Result<Kubeconfig, Error> {
    if !path.exists() {
        return Err(Error::Missing(path.to_owned()));
    }
    let read_error = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    refuse_truncated_utf16(path).map_err(|e| {
        read_error(kube::config::KubeconfigError::ReadConfig(
            e,
            path.to_owned(),
        ))
    })?;
    Kubeconfig::read_from(path).map_err(read_error)
}

/// kube 5.0's `Kubeconfig::read_from` decodes a file starting with a UTF-16
/// byte-order mark in two-byte chunks and panics (index out of bounds) when
/// an odd number of bytes follows it; such a file is refused here first, as
/// invalid UTF-16. Found by the `kubeconfig` fuzz target.
fn refuse_truncated_utf16(path: &Path) -> std::io::Result<()> {
    use std::io::Read;
    let mut bom = [0u8; 2];
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len >= 2 && file.read_exact(&mut bom).is_ok() {
        let utf16 = matches!(bom, [0xFF, 0xFE] | [0xFE, 0xFF]);
        if utf16 && (len - 2) % 2 == 1 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "UTF-16 text (byte-order mark) with an odd number of bytes",
            ));
        }
    }
    Ok(())
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(ctx: &str, ns: &str, server: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: {ctx}\nclusters:\n- name: {ctx}\n  cluster:\n    server: {server}\n\
             contexts:\n- name: {ctx}\n  context:\n    cluster: {ctx}\n    user: {ctx}\n    namespace: {ns}\n\
             users:\n- name: {ctx}\n  user:\n    token: t-{ctx}\n"
        )
    }

    #[tokio::test]
    async fn explicit_file_context_and_namespace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, kubeconfig("one", "team-a", "https://127.0.0.1:1")).unwrap();
        let mut sel = Selection {
            kubeconfig: Some(path),
            ..Default::default()
        };
        let config = load(&sel).await.unwrap();
        assert_eq!(config.default_namespace, "team-a");
        sel.namespace = Some("other".into());
        sel.request_timeout = Some(Duration::from_secs(3));
        let config = load(&sel).await.unwrap();
        assert_eq!(config.default_namespace, "other");
        assert_eq!(config.read_timeout, Some(Duration::from_secs(3)));
        sel.context = Some("missing".into());
        let err = load(&sel).await.unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
    }

    #[test]
    fn truncated_utf16_is_a_read_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        for bytes in [&[0xFF, 0xFE, b'a', 0, b'b'][..], &[0xFE, 0xFF, 0]] {
            std::fs::write(&path, bytes).unwrap();
            let sel = Selection {
                kubeconfig: Some(path.clone()),
                ..Default::default()
            };
            let err = read(&sel).unwrap_err();
            assert!(matches!(err, Error::Read { .. }), "{err}");
        }
        // Whole UTF-16 is still read (and here found to be no kubeconfig).
        let text: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("clusters: []\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        std::fs::write(&path, text).unwrap();
        let sel = Selection {
            kubeconfig: Some(path),
            ..Default::default()
        };
        read(&sel).unwrap();
    }

    #[test]
    fn missing_explicit_file_is_a_read_error() {
        let sel = Selection {
            kubeconfig: Some("/nonexistent/kubeconfig".into()),
            ..Default::default()
        };
        let err = read(&sel).unwrap_err();
        assert_eq!(
            err.to_string(),
            "kubeconfig /nonexistent/kubeconfig does not exist"
        );
    }

    #[test]
    fn unknown_context_cluster_or_user_names_the_known_ones() {
        let kubeconfig = Kubeconfig::from_yaml(
            "apiVersion: v1\nkind: Config\nclusters: [{name: dev, cluster: {server: 'https://127.0.0.1:6443'}}]\n\
             users: [{name: admin, user: {token: x}}]\n\
             contexts: [{name: dev, context: {cluster: dev, user: admin}}, {name: prod, context: {cluster: dev, user: admin}}]\n",
        )
        .unwrap();
        let sel = |context: Option<&str>, user: Option<&str>| Selection {
            context: context.map(str::to_owned),
            user: user.map(str::to_owned),
            ..Default::default()
        };
        assert!(check_names(&kubeconfig, &sel(Some("prod"), Some("admin"))).is_ok());
        assert_eq!(
            check_names(&kubeconfig, &sel(Some("nope"), None))
                .unwrap_err()
                .to_string(),
            "context \"nope\" does not exist in the kubeconfig (contexts: dev, prod)"
        );
        assert_eq!(
            check_names(&kubeconfig, &sel(None, Some("root")))
                .unwrap_err()
                .to_string(),
            "user \"root\" does not exist in the kubeconfig (users: admin)"
        );
    }
}
