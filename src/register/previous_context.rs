//! The context a kubeconfig had current before standalone made its own
//! current, kept in the state directory (`previous-contexts.json`: the
//! kubeconfig's path to that context's name) from a server's start to its
//! clean stop. A server killed before it could make that context current
//! again leaves the record for the next server on the same file, which
//! finds its own context already current and restores the recorded one
//! when it stops. Each change of the record is made under its
//! `<file>.lock` ([`FileLock::acquire_own`]: one a crashed server left is
//! taken over after a while): servers with their own kubeconfigs may share
//! one state directory, and one's start must not drop another's record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::cert_files::{CertFilesError, write_private};
use super::file_lock::FileLock;

/// The record's file name in the state directory.
const FILE: &str = "previous-contexts.json";

/// The record of one kubeconfig in one state directory.
#[derive(Debug, Clone)]
pub struct PreviousContext {
    file: PathBuf,
    key: String,
}

impl PreviousContext {
    /// The record of `kubeconfig` (named alike by every server: the file's
    /// real path) kept in `state_dir`.
    pub fn of(state_dir: &Path, kubeconfig: &Path) -> PreviousContext {
        PreviousContext {
            file: state_dir.join(FILE),
            key: kubeconfig.display().to_string(),
        }
    }

    /// Records `context` as the one the kubeconfig had current before.
    pub fn remember(&self, context: &str) -> Result<(), CertFilesError> {
        let _lock = FileLock::acquire_own(&self.file)?;
        let mut records = self.read();
        records.insert(self.key.clone(), context.to_owned());
        self.write(&records)
    }

    /// The context recorded, if any.
    pub fn recall(&self) -> Option<String> {
        self.read().remove(&self.key)
    }

    /// Drops the record (restored, or no longer ours to restore).
    pub fn forget(&self) -> Result<(), CertFilesError> {
        let _lock = FileLock::acquire_own(&self.file)?;
        let mut records = self.read();
        if records.remove(&self.key).is_none() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_lives_from_remember_to_forget_per_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        let record = |name: &str| PreviousContext::of(dir.path(), &dir.path().join(name));
        let (a, b) = (record("a"), record("b"));
        assert_eq!(a.recall(), None);
        a.remember("work").unwrap();
        b.remember("home").unwrap();
        // Another process (the next server) reads the same records.
        assert_eq!(record("a").recall().as_deref(), Some("work"));
        assert_eq!(record("b").recall().as_deref(), Some("home"));
        record("a").forget().unwrap();
        assert_eq!(a.recall(), None);
        assert_eq!(b.recall().as_deref(), Some("home"));
        // A damaged file is no record, and is replaced by the next one.
        std::fs::write(dir.path().join(FILE), "{not json").unwrap();
        assert_eq!(b.recall(), None);
        b.remember("home").unwrap();
        assert_eq!(b.recall().as_deref(), Some("home"));
    }

    #[test]
    fn servers_sharing_a_state_directory_keep_each_others_records() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().to_owned();
        // Each thread stands for a server with a kubeconfig of its own,
        // starting and stopping over and over; one keeps its record.
        let kept = PreviousContext::of(&state, &state.join("kept"));
        kept.remember("work").unwrap();
        let servers: Vec<_> = (0..4)
            .map(|i| {
                let state = state.clone();
                std::thread::spawn(move || {
                    let record = PreviousContext::of(&state, &state.join(format!("config-{i}")));
                    for round in 0..10 {
                        record.remember(&format!("ctx-{round}")).unwrap();
                        assert_eq!(record.recall(), Some(format!("ctx-{round}")));
                        record.forget().unwrap();
                    }
                    record.remember("last").unwrap();
                })
            })
            .collect();
        for server in servers {
            server.join().unwrap();
        }
        assert_eq!(kept.recall().as_deref(), Some("work"));
        for i in 0..4 {
            let record = PreviousContext::of(&state, &state.join(format!("config-{i}")));
            assert_eq!(record.recall().as_deref(), Some("last"), "config-{i}");
        }
        assert!(!state.join("previous-contexts.json.lock").exists());
    }
}
