//! The context a kubeconfig had current before standalone made its own
//! current, kept in the state directory (`previous-contexts.json`: the
//! kubeconfig's path to that context's name) from a server's start to its
//! clean stop. A server killed before it could make that context current
//! again leaves the record for the next server on the same file, which
//! finds its own context already current and restores the recorded one
//! when it stops.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::cert_files::{CertFilesError, write_private};

/// The record's file name in the state directory.
const FILE: &str = "previous-contexts.json";

/// The records of one state directory.
#[derive(Debug, Clone)]
pub struct PreviousContexts {
    file: PathBuf,
}

impl PreviousContexts {
    /// The records kept in `state_dir`.
    pub fn in_dir(state_dir: &Path) -> PreviousContexts {
        PreviousContexts {
            file: state_dir.join(FILE),
        }
    }

    /// Records `context` as the one `kubeconfig` had current before.
    pub fn remember(&self, kubeconfig: &Path, context: &str) -> Result<(), CertFilesError> {
        let mut records = self.read();
        records.insert(key(kubeconfig), context.to_owned());
        self.write(&records)
    }

    /// The context recorded for `kubeconfig`, if any.
    pub fn recall(&self, kubeconfig: &Path) -> Option<String> {
        self.read().remove(&key(kubeconfig))
    }

    /// Drops the record of `kubeconfig` (restored, or no longer ours to
    /// restore).
    pub fn forget(&self, kubeconfig: &Path) -> Result<(), CertFilesError> {
        let mut records = self.read();
        if records.remove(&key(kubeconfig)).is_none() {
            return Ok(());
        }
        self.write(&records)
    }

    /// The records; none when the file is missing or unreadable (a record
    /// is a convenience, never a reason to refuse a start).
    fn read(&self) -> BTreeMap<String, String> {
        std::fs::read(&self.file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn write(&self, records: &BTreeMap<String, String>) -> Result<(), CertFilesError> {
        let text = serde_json::to_string_pretty(records).unwrap_or_else(|_| "{}".to_owned());
        write_private(&self.file, &text)
    }
}

/// A kubeconfig's record key: its path as the caller gives it (the real
/// path, resolved once while the file exists, so that every call of one
/// server, and the next server's, names it alike).
fn key(kubeconfig: &Path) -> String {
    kubeconfig.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_lives_from_remember_to_forget_per_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        let records = PreviousContexts::in_dir(dir.path());
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        assert_eq!(records.recall(&a), None);
        records.remember(&a, "work").unwrap();
        records.remember(&b, "home").unwrap();
        // Another process (the next server) reads the same records.
        let next = PreviousContexts::in_dir(dir.path());
        assert_eq!(next.recall(&a).as_deref(), Some("work"));
        assert_eq!(next.recall(&b).as_deref(), Some("home"));
        next.forget(&a).unwrap();
        assert_eq!(records.recall(&a), None);
        assert_eq!(records.recall(&b).as_deref(), Some("home"));
        // A damaged file is no record, and is replaced by the next one.
        std::fs::write(dir.path().join(FILE), "{not json").unwrap();
        assert_eq!(records.recall(&b), None);
        records.remember(&b, "home").unwrap();
        assert_eq!(records.recall(&b).as_deref(), Some("home"));
    }
}
