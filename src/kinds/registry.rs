//! The kinds registry: an immutable [`Snapshot`] of the loaded definitions
//! (with compiled schemas and a content hash), swapped atomically when the
//! definition files, the charts they are scaffolded from ([`KindSource`]) or
//! a cluster's ApplicationDefinitions change. A broken
//! change is refused with a clear error and the last good snapshot keeps
//! serving; readers never see a half-applied set.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::{broadcast, watch};

use super::definition::ResolvedKind;
use super::load::{self, LoadError, Loaded};
use super::schema::CompiledSchema;

/// One served kind: its resolved definition and compiled schema.
#[derive(Debug)]
pub struct ServedKind {
    /// The definition with defaults applied.
    pub resolved: ResolvedKind,
    /// The `spec` schema, compiled for validation and defaulting.
    pub schema: CompiledSchema,
    /// Unique to this definition as served: what the cache's per-object
    /// app views are keyed by, and what open watches of the kind follow. A
    /// reload that changes the definition gives it a new stamp (the views
    /// are made anew, the watches end); one that leaves it as it was keeps
    /// the stamp, as kube-apiserver keeps a CRD's storage when its spec is
    /// unchanged.
    pub stamp: u64,
}

impl ServedKind {
    /// Serves `resolved` with its compiled `schema`, under a new stamp.
    pub(crate) fn new(resolved: ResolvedKind, schema: CompiledSchema) -> ServedKind {
        static STAMPS: AtomicU64 = AtomicU64::new(1);
        ServedKind {
            resolved,
            schema,
            stamp: STAMPS.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Whether `other` serves what this serves: the same definition and
    /// release prefix (where it was read from aside).
    fn serves_as(&self, other: &ResolvedKind) -> bool {
        self.resolved.definition == other.definition
            && self.resolved.release_prefix == other.release_prefix
    }
}

/// An immutable set of served kinds.
#[derive(Debug, Default)]
pub struct Snapshot {
    kinds: Vec<Arc<ServedKind>>,
    by_resource: HashMap<(String, String, String), usize>,
    hash: String,
    warnings: Vec<String>,
}

impl Snapshot {
    /// Builds a snapshot from loaded definitions, compiling every schema.
    pub fn build(loaded: Loaded) -> Result<Snapshot, LoadError> {
        Snapshot::build_after(loaded, &Snapshot::default())
    }

    /// [`Snapshot::build`] replacing `previous`: a kind served there with
    /// the same definition keeps its stamp ([`ServedKind::stamp`]).
    fn build_after(loaded: Loaded, previous: &Snapshot) -> Result<Snapshot, LoadError> {
        let mut kinds = Vec::with_capacity(loaded.kinds.len());
        let mut problems = Vec::new();
        for resolved in loaded.kinds {
            let d = &resolved.definition;
            let kept = previous
                .get(&d.group, &d.version, &d.plural)
                .filter(|before| before.serves_as(&resolved))
                .map(|before| before.stamp);
            match CompiledSchema::new_saying_all(&resolved.definition.open_api_schema) {
                Ok(schema) => {
                    let mut kind = ServedKind::new(resolved, schema);
                    if let Some(stamp) = kept {
                        kind.stamp = stamp;
                    }
                    kinds.push(Arc::new(kind));
                }
                Err(errors) => problems.extend(errors.iter().map(|e| {
                    super::yaml_lines::at_field(&format!("{}: openAPISchema: {e}", resolved.source))
                })),
            }
        }
        if !problems.is_empty() {
            return Err(LoadError::Invalid { problems });
        }
        let mut by_resource = HashMap::new();
        for (i, kind) in kinds.iter().enumerate() {
            let d = &kind.resolved.definition;
            by_resource.insert((d.group.clone(), d.version.clone(), d.plural.clone()), i);
        }
        let hash = content_hash(kinds.iter().map(|k| &k.resolved));
        Ok(Snapshot {
            kinds,
            by_resource,
            hash,
            warnings: loaded.warnings,
        })
    }

    /// Every kind, in definition order.
    pub fn kinds(&self) -> &[Arc<ServedKind>] {
        &self.kinds
    }

    /// The served kinds' plurals, in [`Snapshot::kinds`] order (what serve
    /// prints when it starts and when the kinds change).
    pub fn plurals(&self) -> Vec<&str> {
        self.kinds()
            .iter()
            .map(|k| k.resolved.definition.plural.as_str())
            .collect()
    }

    /// The kind served at `group/version/plural`.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<ServedKind>> {
        self.by_resource
            .get(&(group.to_owned(), version.to_owned(), plural.to_owned()))
            .map(|i| &self.kinds[*i])
    }

    /// Whether `kind` is served here as it was when taken (same stamp): what
    /// an open watch of it checks when the kinds change.
    pub(crate) fn still_serves(&self, kind: &ServedKind) -> bool {
        let d = &kind.resolved.definition;
        self.get(&d.group, &d.version, &d.plural)
            .is_some_and(|served| served.stamp == kind.stamp)
    }

    /// What changed from `previous` to this set, for the line serve prints
    /// on a reload: `postgreses changed, caches added, redises removed`
    /// (plurals, in definition order; a kind whose definition is as it was
    /// is not named).
    pub fn changes_since(&self, previous: &Snapshot) -> String {
        let mut said = Vec::new();
        for kind in &self.kinds {
            let d = &kind.resolved.definition;
            match previous.get(&d.group, &d.version, &d.plural) {
                None => said.push(format!("{} added", d.plural)),
                Some(before) if before.stamp != kind.stamp => {
                    said.push(format!("{} changed", d.plural));
                }
                Some(_) => {}
            }
        }
        for kind in &previous.kinds {
            let d = &kind.resolved.definition;
            if self.get(&d.group, &d.version, &d.plural).is_none() {
                said.push(format!("{} removed", d.plural));
            }
        }
        if said.is_empty() {
            "no kind changed".to_owned()
        } else {
            said.join(", ")
        }
    }

    /// What the line serve prints on a reload adds when the change ends
    /// open watches (a kind changed or removed: `kubectl get -w` of it
    /// exits, as when a CRD changes), else nothing.
    pub fn watches_ended_since(&self, previous: &Snapshot) -> &'static str {
        let ends = previous.kinds.iter().any(|kind| !self.still_serves(kind));
        if ends {
            "; their open watches ended (kubectl get -w exits; informers watch again)"
        } else {
            ""
        }
    }

    /// SHA-256 (hex) of the definition set; ETags follow it.
    pub(crate) fn hash(&self) -> &str {
        &self.hash
    }

    /// Non-fatal warnings from loading.
    pub(crate) fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

fn content_hash<'a>(kinds: impl Iterator<Item = &'a ResolvedKind>) -> String {
    let mut sorted: Vec<&ResolvedKind> = kinds.collect();
    sorted.sort_by(|a, b| {
        let key = |k: &ResolvedKind| {
            (
                k.definition.group.clone(),
                k.definition.version.clone(),
                k.definition.plural.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    let mut hasher = Sha256::new();
    for kind in sorted {
        // The definition alone: moving a file does not change what is served.
        hasher.update(serde_json::to_vec(&kind.definition).unwrap_or_default());
        hasher.update(kind.release_prefix.as_bytes());
        hasher.update([0]);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where kinds on disk come from: definition files, or Helm charts
/// scaffolded in memory (`serve --charts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KindSource {
    /// A definition file or a directory of them.
    Definitions(PathBuf),
    /// A chart directory, or a directory of charts and packaged charts.
    Charts(PathBuf),
}

impl KindSource {
    /// The file or directory to read (and watch).
    pub fn path(&self) -> &Path {
        match self {
            KindSource::Definitions(p) | KindSource::Charts(p) => p,
        }
    }

    /// Reads and validates every kind of this source.
    pub(crate) fn load(&self) -> Result<Loaded, LoadError> {
        match self {
            KindSource::Definitions(path) => load::load_path(path),
            KindSource::Charts(dir) => super::from_charts::load_charts(dir),
        }
    }
}

/// What the store says of a changed set of kinds before it is served:
/// problems refuse the change (the previous set keeps serving), warnings
/// are logged.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ChangeVerdict {
    /// Why the change may not be served.
    pub problems: Vec<String>,
    /// What serving it does that the user should hear of.
    pub warnings: Vec<String>,
}

/// Judges a change from the snapshot served (first) to the next (second):
/// the store's [`crate::storage::app_store::AppStore::kind_change_check`].
pub type ChangeCheck = Arc<dyn Fn(&Snapshot, &Snapshot) -> ChangeVerdict + Send + Sync>;

/// What became of a change of the definitions that is news beyond the
/// snapshot served: refused, or accepted after a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Refused (why); the previous set keeps serving.
    Refused(String),
    /// Accepted after a refusal; `changed`: what is served changed (the
    /// fix may restore exactly what was served).
    ValidAgain {
        /// Whether the snapshot served changed.
        changed: bool,
    },
}

impl Verdict {
    /// The verdict as serve says it, beside its `Kinds: reloaded` lines.
    pub fn line(&self) -> String {
        match self {
            Verdict::Refused(why) => format!(
                "Kinds: change refused, still serving the previous set until the files are fixed: {why}"
            ),
            Verdict::ValidAgain { changed: true } => {
                "Kinds: the definitions are valid again".to_owned()
            }
            Verdict::ValidAgain { changed: false } => {
                "Kinds: the definitions are valid again; the kinds served are unchanged".to_owned()
            }
        }
    }
}

/// What a console hears of the kinds as they change ([`Registry::follow`]).
#[derive(Debug)]
pub enum News {
    /// A new snapshot is served.
    Reloaded {
        /// The one served before.
        previous: Arc<Snapshot>,
        /// The one served now.
        now: Arc<Snapshot>,
    },
    /// A change refused, or the fix after one.
    Verdict(Verdict),
    /// Verdicts that came too fast to keep.
    Missed {
        /// How many.
        count: u64,
        /// What refuses the latest change, if it is refused.
        refused: Option<String>,
    },
}

impl News {
    /// A verdict's line ([`Verdict::line`]), or the line for verdicts
    /// missed; `None` for a reload, which each console says its own way.
    pub fn verdict_line(&self) -> Option<String> {
        match self {
            News::Reloaded { .. } => None,
            News::Verdict(verdict) => Some(verdict.line()),
            News::Missed { count, refused } => Some(format!(
                "Kinds: {count} changes of the definitions came too fast to say each; {}",
                match refused {
                    Some(why) =>
                        format!("the latest is refused, still serving the previous set: {why}"),
                    None => "the latest is served".to_owned(),
                }
            )),
        }
    }
}

/// A console's view of the registry's changes, in the order they happened
/// as far as it can tell: a snapshot already swapped in is told before a
/// verdict that came with or after it.
#[derive(Debug)]
pub struct Following {
    changes: watch::Receiver<Arc<Snapshot>>,
    verdicts: broadcast::Receiver<Verdict>,
    previous: Arc<Snapshot>,
    last_error: Arc<Mutex<Option<String>>>,
}

impl Following {
    /// The next news; `None` once the registry is gone.
    pub async fn next(&mut self) -> Option<News> {
        tokio::select! {
            biased;
            changed = self.changes.changed() => {
                changed.ok()?;
                let now = self.changes.borrow_and_update().clone();
                let previous = std::mem::replace(&mut self.previous, now.clone());
                Some(News::Reloaded { previous, now })
            }
            verdict = self.verdicts.recv() => match verdict {
                Ok(verdict) => Some(News::Verdict(verdict)),
                Err(broadcast::error::RecvError::Lagged(count)) => Some(News::Missed {
                    count,
                    refused: self.last_error.lock().map(|e| e.clone()).unwrap_or(None),
                }),
                Err(broadcast::error::RecvError::Closed) => None,
            },
        }
    }
}

/// Holds the current snapshot and publishes replacements.
#[derive(Clone)]
pub struct Registry {
    tx: Arc<watch::Sender<Arc<Snapshot>>>,
    last_error: Arc<Mutex<Option<String>>>,
    /// Verdicts, to whoever says them ([`Registry::verdicts`]); with no one
    /// listening, the registry logs them itself.
    verdicts: broadcast::Sender<Verdict>,
    /// The warnings of the latest accepted load (said once each).
    warned: Arc<Mutex<Vec<String>>>,
    /// What judges a change before it is served, once a store is there.
    check: Arc<Mutex<Option<ChangeCheck>>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("snapshot", &self.tx.borrow().hash)
            .field("last_error", &self.last_error)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry serving `initial`.
    pub fn new(initial: Snapshot) -> Registry {
        let warned = initial.warnings.clone();
        let (tx, _rx) = watch::channel(Arc::new(initial));
        Registry {
            tx: Arc::new(tx),
            last_error: Arc::new(Mutex::new(None)),
            verdicts: broadcast::channel(16).0,
            warned: Arc::new(Mutex::new(warned)),
            check: Arc::new(Mutex::new(None)),
        }
    }

    /// Judges every later change with `check` before serving it.
    pub fn check_changes_with(&self, check: ChangeCheck) {
        if let Ok(mut slot) = self.check.lock() {
            *slot = Some(check);
        }
    }

    /// `next` if the change check (if any) lets it be served after
    /// `previous`; its warnings are logged.
    fn checked(&self, next: Snapshot, previous: &Snapshot) -> Result<Snapshot, LoadError> {
        if next.hash == previous.hash {
            return Ok(next);
        }
        let check = self.check.lock().ok().and_then(|c| c.clone());
        let Some(check) = check else {
            return Ok(next);
        };
        let verdict = check(previous, &next);
        if !verdict.problems.is_empty() {
            return Err(LoadError::Invalid {
                problems: verdict.problems,
            });
        }
        for warning in &verdict.warnings {
            tracing::warn!("{warning}");
        }
        Ok(next)
    }

    /// Loads `path` into a new registry; fails if the definitions are invalid.
    pub fn from_path(path: &Path) -> Result<Registry, LoadError> {
        Registry::from_source(&KindSource::Definitions(path.to_owned()))
    }

    /// Loads `source` into a new registry; fails if any kind is invalid.
    pub fn from_source(source: &KindSource) -> Result<Registry, LoadError> {
        Ok(Registry::new(Snapshot::build(source.load()?)?))
    }

    /// The current snapshot (cheap: an `Arc` clone).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.tx.borrow().clone()
    }

    /// A receiver notified on every swap.
    pub fn subscribe(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.tx.subscribe()
    }

    /// The verdicts of later changes, to say as lines of one's own
    /// ([`Verdict::line`]): while any such receiver lives, the registry no
    /// longer logs them.
    pub fn verdicts(&self) -> broadcast::Receiver<Verdict> {
        self.verdicts.subscribe()
    }

    /// Later snapshots and verdicts, for a console to say; from now on the
    /// registry leaves verdicts to it (they wait for it while it is busy).
    pub fn follow(&self) -> Following {
        let mut changes = self.subscribe();
        let previous = changes.borrow_and_update().clone();
        Following {
            changes,
            verdicts: self.verdicts(),
            previous,
            last_error: self.last_error.clone(),
        }
    }

    /// Hands `verdict` to its receivers, or logs it when there are none.
    fn say(&self, verdict: Verdict) {
        if self.verdicts.send(verdict.clone()).is_ok() {
            return;
        }
        match verdict {
            Verdict::Refused(text) => tracing::error!(
                "kind definitions change refused, still serving the previous set until the files are fixed: {text}"
            ),
            // The level that showed the error (info is hidden by default).
            Verdict::ValidAgain { changed } => tracing::warn!(
                "kind definitions are valid again and accepted{}",
                if changed {
                    ""
                } else {
                    "; the kinds served are unchanged"
                }
            ),
        }
    }

    /// The error that refused the latest change, if the latest change was refused.
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().map(|e| e.clone()).unwrap_or(None)
    }

    /// Tries to replace the snapshot with `next`. A failure is recorded and
    /// logged and the current snapshot stays.
    pub(crate) fn apply(&self, next: Result<Loaded, LoadError>) -> bool {
        let previous = self.snapshot();
        match next
            .and_then(|loaded| Snapshot::build_after(loaded, &previous))
            .and_then(|snapshot| self.checked(snapshot, &previous))
        {
            Ok(snapshot) => {
                let changed = snapshot.hash != self.tx.borrow().hash;
                // As at the start (a chart scaffolded again says what it
                // made of its values): each warning once, when it appears.
                if let Ok(mut warned) = self.warned.lock() {
                    for warning in snapshot.warnings().iter().filter(|w| !warned.contains(w)) {
                        tracing::warn!("{warning}");
                    }
                    warned.clone_from(&snapshot.warnings);
                }
                let recovered = self
                    .last_error
                    .lock()
                    .map(|mut e| e.take().is_some())
                    .unwrap_or(false);
                if recovered {
                    // Also when the fix restores exactly what was served:
                    // the user needs to hear that the error is gone.
                    self.say(Verdict::ValidAgain { changed });
                }
                if changed {
                    tracing::info!(kinds = snapshot.kinds.len(), hash = %&snapshot.hash[..12], "kind definitions reloaded");
                    self.tx.send_replace(Arc::new(snapshot));
                }
                changed
            }
            Err(err) => {
                let text = err.to_string();
                self.say(Verdict::Refused(text.clone()));
                if let Ok(mut e) = self.last_error.lock() {
                    *e = Some(text);
                }
                false
            }
        }
    }

    /// Reloads from `source` whenever a file under its path changes
    /// (debounced), until the returned watcher is dropped.
    pub(crate) fn watch_source(&self, source: KindSource) -> Result<FileWatch, notify::Error> {
        use notify::{RecursiveMode, Watcher};
        let (events_tx, mut events_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.is_ok_and(|e| !e.kind.is_access()) {
                    let _ = events_tx.send(());
                }
            })?;
        watcher.watch(source.path(), RecursiveMode::Recursive)?;
        let registry = self.clone();
        let task = tokio::spawn(async move {
            while events_rx.recv().await.is_some() {
                // Editors write files in several steps; wait for quiet.
                loop {
                    match tokio::time::timeout(Duration::from_millis(150), events_rx.recv()).await {
                        Ok(Some(())) => continue,
                        Ok(None) => return,
                        Err(_) => break,
                    }
                }
                let source = source.clone();
                let loaded = tokio::task::spawn_blocking(move || source.load()).await;
                if let Ok(loaded) = loaded {
                    registry.apply(loaded);
                }
            }
        });
        Ok(FileWatch {
            _watcher: watcher,
            task,
        })
    }
}

/// A running file watch; dropping it stops reloading.
pub(crate) struct FileWatch {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FileWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PG: &str = "kind: Postgres\nopenAPISchema: {type: object, properties: {replicas: {type: integer}}}\nrelease: {chartRef: {kind: ExternalArtifact, name: pg}}\n";
    const REDIS: &str = "kind: Redis\nrelease: {chartRef: {kind: ExternalArtifact, name: redis}}\n";

    #[test]
    fn lookup_and_stable_hash() {
        let a =
            Snapshot::build(load::load_text(&format!("{PG}---\n{REDIS}"), "a").unwrap()).unwrap();
        let b =
            Snapshot::build(load::load_text(&format!("{REDIS}---\n{PG}"), "b").unwrap()).unwrap();
        assert_eq!(
            a.hash(),
            b.hash(),
            "order and source must not change the hash"
        );
        assert!(
            a.get("apps.cozystack.io", "v1alpha1", "postgreses")
                .is_some()
        );
        assert!(a.get("apps.cozystack.io", "v1alpha1", "mysqls").is_none());
        let c = Snapshot::build(load::load_text(PG, "c").unwrap()).unwrap();
        assert_ne!(a.hash(), c.hash());
    }

    #[test]
    fn broken_change_keeps_last_good_snapshot() {
        let registry = Registry::new(Snapshot::build(load::load_text(PG, "a").unwrap()).unwrap());
        let before = registry.snapshot().hash().to_owned();
        assert!(!registry.apply(load::load_text("kind: lower\nrelease: {}\n", "bad")));
        assert_eq!(registry.snapshot().hash(), before);
        assert!(registry.last_error().unwrap().contains("bad:1: kind"));
        assert!(registry.apply(load::load_text(&format!("{PG}---\n{REDIS}"), "good")));
        assert_eq!(registry.snapshot().kinds().len(), 2);
        assert!(registry.last_error().is_none());
    }

    #[test]
    fn a_reload_keeps_the_stamps_of_unchanged_kinds() {
        let registry = Registry::new(
            Snapshot::build(load::load_text(&format!("{PG}---\n{REDIS}"), "a").unwrap()).unwrap(),
        );
        let before = registry.snapshot();
        let changed_pg = PG.replace("integer", "string");
        assert!(registry.apply(load::load_text(&format!("{changed_pg}---\n{REDIS}"), "b")));
        let after = registry.snapshot();
        let [pg, redis] = [&before.kinds()[0], &before.kinds()[1]];
        assert!(!after.still_serves(pg), "a changed kind gets a new stamp");
        assert!(
            after.still_serves(redis),
            "an unchanged kind keeps its stamp"
        );
        assert!(registry.apply(load::load_text(&changed_pg, "c")));
        assert!(
            !registry.snapshot().still_serves(redis),
            "a removed kind is not served"
        );
    }

    /// What serve prints on a reload names the kinds that changed, came
    /// and went, and no other.
    #[test]
    fn a_reload_names_what_changed() {
        let registry = Registry::new(
            Snapshot::build(load::load_text(&format!("{PG}---\n{REDIS}"), "a").unwrap()).unwrap(),
        );
        let before = registry.snapshot();
        let changed_pg = PG.replace("integer", "string");
        const BUCKET: &str =
            "kind: Bucket\nrelease: {chartRef: {kind: ExternalArtifact, name: b}}\n";
        assert!(registry.apply(load::load_text(&format!("{changed_pg}---\n{REDIS}"), "b")));
        let changed = registry.snapshot();
        assert_eq!(changed.changes_since(&before), "postgreses changed");
        assert!(registry.apply(load::load_text(&format!("{BUCKET}---\n{changed_pg}"), "c")));
        assert_eq!(
            registry.snapshot().changes_since(&changed),
            "buckets added, redises removed"
        );
        assert_eq!(changed.changes_since(&changed), "no kind changed");
        assert!(
            changed
                .watches_ended_since(&before)
                .contains("watches ended")
        );
        let added = Snapshot::build_after(
            load::load_text(&format!("{changed_pg}---\n{REDIS}---\n{BUCKET}"), "d").unwrap(),
            &changed,
        )
        .unwrap();
        assert_eq!(added.changes_since(&changed), "buckets added");
        assert_eq!(added.watches_ended_since(&changed), "", "nothing ended");
    }

    #[test]
    fn a_reload_says_its_new_warnings_once() {
        let (subscriber, logs) = crate::test_log::subscriber(None);
        tracing::subscriber::with_default(subscriber, || {
            let first = load::load_text(PG, "a").unwrap();
            let registry = Registry::new(Snapshot::build(first).unwrap());
            let with_warning = || {
                let mut loaded = load::load_text(PG, "a").unwrap();
                loaded.warnings.push(
                    "values.yaml /badParam: the value \"x\" does not fit the @param type int"
                        .into(),
                );
                Ok(loaded)
            };
            registry.apply(with_warning());
            registry.apply(with_warning());
        });
        let text = logs.text();
        assert_eq!(
            text.matches("does not fit the @param type int").count(),
            1,
            "{text}"
        );
    }

    #[test]
    fn every_rule_that_does_not_compile_is_a_problem_of_its_own() {
        let text = "kind: Widget\nopenAPISchema:\n  type: object\n  properties:\n    a:\n      type: integer\n      \
                    x-kubernetes-validations: [{rule: 'self >'}]\n    c:\n      type: integer\n      \
                    x-kubernetes-validations: [{rule: 'self < oldSelff'}]\n\
                    release: {chartRef: {kind: ExternalArtifact, name: w}}\n";
        let Err(LoadError::Invalid { problems }) =
            Snapshot::build(load::load_text(text, "w.yaml").unwrap())
        else {
            panic!("not refused")
        };
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0]
                .contains("/properties/a/x-kubernetes-validations/0/rule: compilation failed")
                && problems[1]
                    .contains("/properties/c/x-kubernetes-validations/0/rule: compilation failed"),
            "{problems:?}"
        );
    }

    #[test]
    fn recovery_is_logged_even_when_nothing_changes() {
        let (subscriber, logs) = crate::test_log::subscriber(None);
        tracing::subscriber::with_default(subscriber, || {
            let registry =
                Registry::new(Snapshot::build(load::load_text(PG, "a").unwrap()).unwrap());
            assert!(!registry.apply(load::load_text("kind: A\nkind: B\n", "dup.yaml")));
            // The fix restores what was served: no swap, but a word.
            assert!(!registry.apply(load::load_text(PG, "a")));
            assert!(registry.last_error().is_none());
        });
        let text = logs.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].contains("still serving the previous set until the files are fixed: dup.yaml:2:1: the key `kind` appears twice in the same mapping"),
            "{text}"
        );
        assert!(!text.contains("DuplicateKeyPolicy"), "{text}");
        assert!(
            lines[1].contains(
                "kind definitions are valid again and accepted; the kinds served are unchanged"
            ),
            "{text}"
        );
    }

    #[test]
    fn verdicts_go_to_whoever_says_them_and_are_then_not_logged() {
        let (subscriber, logs) = crate::test_log::subscriber(None);
        let said = tracing::subscriber::with_default(subscriber, || {
            let registry =
                Registry::new(Snapshot::build(load::load_text(PG, "a").unwrap()).unwrap());
            let mut verdicts = registry.verdicts();
            assert!(!registry.apply(load::load_text("kind: A\nkind: B\n", "dup.yaml")));
            assert!(!registry.apply(load::load_text(PG, "a")));
            assert!(registry.apply(load::load_text(&PG.replace("pg", "pq"), "a")));
            std::iter::from_fn(|| verdicts.try_recv().ok())
                .map(|v| v.line())
                .collect::<Vec<_>>()
        });
        let logged = logs.text();
        assert!(
            !logged.contains("refused") && !logged.contains("valid again"),
            "{logged}"
        );
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said[0].starts_with("Kinds: change refused, still serving the previous set until the files are fixed: dup.yaml:2:1: "),
            "{said:?}"
        );
        assert_eq!(
            said[1],
            "Kinds: the definitions are valid again; the kinds served are unchanged"
        );
    }

    #[tokio::test]
    async fn file_changes_reload_without_restart() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pg.yaml"), PG).unwrap();
        let registry = Registry::from_path(dir.path()).unwrap();
        let mut changes = registry.subscribe();
        let _watch = registry
            .watch_source(KindSource::Definitions(dir.path().to_owned()))
            .unwrap();

        std::fs::write(dir.path().join("redis.yaml"), REDIS).unwrap();
        tokio::time::timeout(Duration::from_secs(10), changes.changed())
            .await
            .expect("reload")
            .unwrap();
        assert_eq!(registry.snapshot().kinds().len(), 2);

        // A broken edit is refused; the two kinds keep serving.
        std::fs::write(dir.path().join("redis.yaml"), "kind: Redis\nrelease: [").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while registry.last_error().is_none() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            registry.last_error().unwrap().contains("redis.yaml:2"),
            "{:?}",
            registry.last_error()
        );
        assert_eq!(registry.snapshot().kinds().len(), 2);
    }

    #[tokio::test]
    async fn chart_changes_are_rescaffolded_without_restart() {
        let dir = tempfile::tempdir().unwrap();
        let chart = dir.path().join("cache");
        std::fs::create_dir_all(&chart).unwrap();
        std::fs::write(
            chart.join("Chart.yaml"),
            "apiVersion: v2\nname: cache\nversion: 0.1.0\n",
        )
        .unwrap();
        std::fs::write(
            chart.join("values.yaml"),
            "## @param size Volume size\nsize: 1Gi\n",
        )
        .unwrap();
        let source = KindSource::Charts(dir.path().to_owned());
        let registry = Registry::from_source(&source).unwrap();
        let field = |registry: &Registry, name: &str| {
            registry.snapshot().kinds()[0]
                .resolved
                .definition
                .open_api_schema["properties"]
                .get(name)
                .is_some()
        };
        assert!(field(&registry, "size") && !field(&registry, "replicas"));
        let mut changes = registry.subscribe();
        let _watch = registry.watch_source(source).unwrap();

        // The chart author adds a value: the kind follows.
        std::fs::write(
            chart.join("values.yaml"),
            "## @param size Volume size\nsize: 1Gi\n## @param replicas Replicas\nreplicas: 2\n",
        )
        .unwrap();
        tokio::time::timeout(Duration::from_secs(10), changes.changed())
            .await
            .expect("re-scaffold")
            .unwrap();
        assert!(field(&registry, "replicas"));

        // A schema that does not parse is refused, naming the chart; the
        // kind keeps serving.
        std::fs::write(chart.join("values.schema.json"), "{\"type\": ").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while registry.last_error().is_none() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let error = registry.last_error().expect("the broken chart is refused");
        assert!(
            error.contains("cache") && error.contains("values.schema.json"),
            "{error}"
        );
        assert!(field(&registry, "replicas"));
    }
}
