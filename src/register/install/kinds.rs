//! The kind definitions as a ConfigMap ([`CONFIG_MAP`]), one key per
//! definition file ([`files`]): the same files `--kinds` loads
//! ([`crate::kinds::load::definition_files`]), keyed by their path under the
//! directory (`/` as `_`, since a key is a single file name in the mounted
//! volume). The pods mount it and reload on change.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::ConfigMap;

use super::{InstallSpec, metadata};
use crate::kinds::load::{LoadError, definition_files};

/// The ConfigMap's name.
pub const CONFIG_MAP: &str = "kubectl-cozy-kinds";
/// The most a ConfigMap may hold (kube-apiserver refuses more than 1 MiB).
pub const MAX_BYTES: usize = 1024 * 1024;

/// Why the kind files cannot become a ConfigMap.
#[derive(Debug, thiserror::Error)]
pub enum KindsError {
    /// Listing the files failed.
    #[error("list the kind definitions")]
    List(#[source] LoadError),
    /// Reading a file failed.
    #[error("read {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Two files map to one key.
    #[error("{first} and {second} would both be ConfigMap key {key}; rename one")]
    Collision {
        /// The key.
        key: String,
        /// The first file.
        first: PathBuf,
        /// The second file.
        second: PathBuf,
    },
    /// Too much for one ConfigMap.
    #[error("the kind definitions take {bytes} bytes, more than a ConfigMap holds ({MAX_BYTES})")]
    TooLarge {
        /// Their size.
        bytes: usize,
    },
}

/// The definition files under `path` (a file or a directory), keyed for the
/// ConfigMap.
pub fn files(path: &Path) -> Result<BTreeMap<String, String>, KindsError> {
    let list = definition_files(path).map_err(KindsError::List)?;
    let root = if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(path)
    };
    let mut out = BTreeMap::new();
    let mut origin: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut bytes = 0;
    for file in list {
        let relative = file.strip_prefix(root).unwrap_or(&file);
        let key = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("_");
        let text = std::fs::read_to_string(&file).map_err(|source| KindsError::Read {
            path: file.clone(),
            source,
        })?;
        bytes += key.len() + text.len();
        if let Some(first) = origin.insert(key.clone(), file.clone()) {
            return Err(KindsError::Collision {
                key,
                first,
                second: file,
            });
        }
        out.insert(key, text);
    }
    if bytes > MAX_BYTES {
        return Err(KindsError::TooLarge { bytes });
    }
    Ok(out)
}

/// The ConfigMap of the kind definitions.
pub fn config_map(spec: &InstallSpec) -> ConfigMap {
    ConfigMap {
        metadata: metadata(CONFIG_MAP, Some(&spec.namespace)),
        data: Some(spec.kind_files.clone()),
        ..ConfigMap::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_keyed_by_their_path_and_load_back() {
        let tmp = tempfile::tempdir().unwrap();
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
        let keyed = files(&examples).unwrap();
        assert!(!keyed.is_empty());
        // Written back flat (as the volume does), they load as the same kinds.
        for (key, text) in &keyed {
            assert!(!key.contains('/'), "{key}");
            std::fs::write(tmp.path().join(key), text).unwrap();
        }
        let a = crate::kinds::Registry::from_path(&examples).unwrap();
        let b = crate::kinds::Registry::from_path(tmp.path()).unwrap();
        assert_eq!(a.snapshot().kinds().len(), b.snapshot().kinds().len());

        let nested = tempfile::tempdir().unwrap();
        std::fs::create_dir(nested.path().join("a")).unwrap();
        std::fs::write(nested.path().join("a/x.yaml"), "{}").unwrap();
        std::fs::write(nested.path().join("a_x.yaml"), "{}").unwrap();
        let err = files(nested.path()).unwrap_err().to_string();
        assert!(
            err.contains("would both be ConfigMap key a_x.yaml"),
            "{err}"
        );
    }
}
