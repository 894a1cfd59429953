//! Reading kind definitions from files: our own format, Cozystack's
//! `ApplicationDefinition` objects (`cozystack.io/v1alpha1`, also inside a
//! `List` as `kubectl get -o yaml` prints them) and Cozystack's legacy
//! `config.yaml` (`resources: [{application, release}]`). A path is a file
//! with one or more YAML/JSON documents, or a directory of such files (its
//! subdirectories too; one that holds a Helm chart is refused, by name).
//!
//! Errors name the file and line; every file is read to the end, so every
//! problem (syntax errors too) is reported, and a set that fails any check
//! loads nothing.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::cozystack;
use super::definition::{
    KindDefinition, ResolvedKind, name_room_warning, release_name_overlaps, validate_set,
};
use super::yaml_lines::split_documents;

/// Largest definition file accepted (a chart schema is rarely over 1 MiB).
pub(crate) const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Why a set of definitions could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The path could not be read.
    #[error("read {path}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file is larger than `MAX_FILE_BYTES` (8 MiB).
    #[error("{path} is {size} bytes; definition files are limited to {MAX_FILE_BYTES} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// A document is not valid YAML, or does not match the format.
    #[error("{location}: {message}")]
    Syntax {
        /// `file:line:column`.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// Definitions parsed but are invalid; every problem is listed.
    #[error("invalid kind definitions:\n  {}", problems.join("\n  "))]
    Invalid {
        /// `source: field: problem` sentences.
        problems: Vec<String>,
    },
    /// The path is, or holds, Helm charts (a `Chart.yaml`): their files are
    /// no definitions (every template would be reported as one).
    #[error(
        "{path} holds Helm charts, not kind definitions ({}{}): `kubectl cozy serve --charts {path}` serves \
         charts as they are, and `kubectl cozy kinds scaffold CHART` turns one into a kind definition",
        charts[0].join("Chart.yaml").display(),
        match charts.len() { 1 => String::new(), n => format!(" and {} more", n - 1) },
        path = path.display()
    )]
    Charts {
        /// The path given.
        path: PathBuf,
        /// The chart directories under it, sorted.
        charts: Vec<PathBuf>,
    },
    /// The path holds no definition at all.
    #[error("{path} holds no kind definitions: {found}")]
    Empty {
        /// The file or directory.
        path: PathBuf,
        /// What it holds instead (`no .yaml, .yml or .json files`, `…:1:
        /// a List with no items`).
        found: String,
    },
}

/// Definitions loaded from a path, with non-fatal warnings (e.g. schema
/// constructs a Cozystack definition used that structural schemas cannot say).
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The kinds, in file order.
    pub kinds: Vec<ResolvedKind>,
    /// Warnings, each naming its source.
    pub warnings: Vec<String>,
    /// Every file read, for hashing and watching.
    pub files: Vec<PathBuf>,
}

/// Loads every definition under `path` and validates the whole set.
pub(crate) fn load_path(path: &Path) -> Result<Loaded, LoadError> {
    let files = definition_files(path)?;
    let mut loaded = Loaded::default();
    let mut problems = Vec::new();
    let mut syntax = Vec::new();
    let mut found = Vec::new();
    for file in &files {
        let text = read_limited(file)?;
        parse_text(
            &text,
            &file.display().to_string(),
            &mut loaded,
            &mut problems,
            &mut syntax,
            &mut found,
        );
    }
    loaded.files = files;
    if loaded.kinds.is_empty() && problems.is_empty() && syntax.is_empty() {
        let found = if loaded.files.is_empty() {
            "no .yaml, .yml or .json files".to_owned()
        } else if found.is_empty() {
            "no YAML documents, only blanks and comments".to_owned()
        } else {
            found.join("; ")
        };
        return Err(LoadError::Empty {
            path: path.to_owned(),
            found,
        });
    }
    conclude(loaded, problems, syntax)
}

/// Parses definitions from text (every supported format), naming `source` in
/// messages, and validates the set. Only tests (here and in the modules that
/// consume definitions) and the fuzz targets ([`crate::fuzzing`]) load
/// definitions from a string.
pub(crate) fn load_text(text: &str, source: &str) -> Result<Loaded, LoadError> {
    let mut loaded = Loaded::default();
    let mut problems = Vec::new();
    let mut syntax = Vec::new();
    parse_text(
        text,
        source,
        &mut loaded,
        &mut problems,
        &mut syntax,
        &mut Vec::new(),
    );
    conclude(loaded, problems, syntax)
}

/// Every problem found: one syntax error alone is itself, anything more is
/// the list of them all (syntax errors first), as files are read to the end
/// whatever they hold.
fn conclude(
    loaded: Loaded,
    mut problems: Vec<String>,
    mut syntax: Vec<LoadError>,
) -> Result<Loaded, LoadError> {
    if syntax.is_empty() {
        return finish(loaded, problems);
    }
    if syntax.len() == 1 && problems.is_empty() {
        return Err(syntax.remove(0));
    }
    let mut all: Vec<String> = syntax.iter().map(ToString::to_string).collect();
    all.append(&mut problems);
    Err(LoadError::Invalid { problems: all })
}

/// Validates a set of already-resolved kinds (e.g. ApplicationDefinitions
/// read from a cluster) and wraps them.
pub fn from_resolved(kinds: Vec<ResolvedKind>, warnings: Vec<String>) -> Result<Loaded, LoadError> {
    finish(
        Loaded {
            kinds,
            warnings,
            files: Vec::new(),
        },
        Vec::new(),
    )
}

fn finish(mut loaded: Loaded, mut problems: Vec<String>) -> Result<Loaded, LoadError> {
    problems.extend(validate_set(&loaded.kinds));
    let overlaps = release_name_overlaps(&loaded.kinds);
    loaded.warnings.extend(overlaps);
    // Once per kind: its versions share the prefix.
    let mut seen = std::collections::HashSet::new();
    let cramped: Vec<String> = loaded
        .kinds
        .iter()
        .filter(|k| seen.insert((&k.definition.group, &k.definition.kind, &k.release_prefix)))
        .filter_map(name_room_warning)
        .collect();
    loaded.warnings.extend(cramped);
    if problems.is_empty() {
        Ok(loaded)
    } else {
        Err(LoadError::Invalid { problems })
    }
}

fn parse_text(
    text: &str,
    source: &str,
    loaded: &mut Loaded,
    problems: &mut Vec<String>,
    syntax: &mut Vec<LoadError>,
    empty: &mut Vec<String>,
) {
    for (start_line, doc_text) in split_documents(text) {
        let document: Value = match serde_saphyr::from_str(doc_text) {
            Ok(document) => document,
            Err(e) => {
                syntax.push(syntax_error(source, &e, start_line - 1));
                continue;
            }
        };
        if document.is_null() {
            continue;
        }
        let here = format!("{source}:{start_line}");
        match classify(&document) {
            Format::ApplicationDefinition => {
                match cozystack::from_application_definition(&document) {
                    Ok(converted) => accept(converted, &here, loaded, problems),
                    Err(why) => problems.push(format!("{here}: {why}")),
                }
            }
            Format::List => {
                let kind = document["kind"].as_str().unwrap_or("List");
                if document["items"].as_array().is_none_or(Vec::is_empty) {
                    empty.push(format!("{here}: a {kind} with no items"));
                }
                let lines = item_lines(doc_text, start_line, "items");
                for (i, item) in document["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let line = lines.get(i).copied().unwrap_or(start_line);
                    let here = format!("{source}:{line} (items[{i}])");
                    match cozystack::from_application_definition(item) {
                        Ok(converted) => accept(converted, &here, loaded, problems),
                        Err(why) => problems.push(format!("{here}: {why}")),
                    }
                }
            }
            Format::LegacyConfig => match cozystack::from_legacy_config(&document) {
                Ok(converted) => {
                    let lines = item_lines(doc_text, start_line, "resources");
                    for (i, one) in converted.into_iter().enumerate() {
                        let line = lines.get(i).copied().unwrap_or(start_line);
                        accept(one, &format!("{source}:{line}"), loaded, problems);
                    }
                }
                Err(why) => problems.push(format!("{here}: {why}")),
            },
            Format::Other => {
                let object = format!(
                    "{} {}",
                    document["apiVersion"].as_str().unwrap_or_default(),
                    document["kind"].as_str().unwrap_or_default()
                );
                const WHY: &str = "kind definitions have no apiVersion; Cozystack's ApplicationDefinitions are \
                                   cozystack.io/v1alpha1";
                loaded.warnings.push(format!(
                    "{here}: skipped {object}: not a kind definition ({WHY})"
                ));
                // Said if nothing else is found: an app's manifest given
                // for `--kinds` is an easy slip.
                empty.push(format!(
                    "{here}: {object}, an object to create (`kubectl apply -f`), not a kind definition ({WHY})"
                ));
            }
            Format::Own => {
                // Parsed again into the typed form so errors carry exact lines.
                let definition = match serde_saphyr::from_str::<KindDefinition>(doc_text) {
                    Ok(definition) => definition,
                    Err(e) => {
                        syntax.push(syntax_error(source, &e, start_line - 1));
                        continue;
                    }
                };
                match definition.resolve(here.clone()) {
                    Ok(kind) => loaded.kinds.push(kind),
                    Err(found) => problems.extend(found.into_iter().map(|p| {
                        let line = super::yaml_lines::field_line(doc_text, start_line, &p);
                        format!("{source}:{line}: {p}")
                    })),
                }
            }
        }
    }
}

fn accept(
    converted: cozystack::Converted,
    here: &str,
    loaded: &mut Loaded,
    problems: &mut Vec<String>,
) {
    let kind_name = converted.definition.kind.clone();
    loaded.warnings.extend(
        converted
            .warnings
            .into_iter()
            .map(|w| format!("{here} ({kind_name}): {w}")),
    );
    match converted
        .definition
        .resolve(format!("{here} ({})", converted.origin))
    {
        Ok(kind) => loaded.kinds.push(kind),
        Err(found) => problems.extend(
            found
                .into_iter()
                .map(|p| format!("{here} ({kind_name}): {p}")),
        ),
    }
}

/// The line (in the whole file) where each element of the top-level list
/// `key` of a document starts; empty when it cannot be told.
fn item_lines(doc_text: &str, start_line: usize, key: &str) -> Vec<usize> {
    use serde::de::IgnoredAny;
    use serde_saphyr::Spanned;
    /// Where the elements of the lists that hold definitions start.
    #[derive(serde::Deserialize)]
    struct Lines {
        #[serde(default)]
        items: Vec<Spanned<IgnoredAny>>,
        #[serde(default)]
        resources: Vec<Spanned<IgnoredAny>>,
    }
    let Ok(lines) = serde_saphyr::from_str::<Lines>(doc_text) else {
        return Vec::new();
    };
    let list = if key == "items" {
        lines.items
    } else {
        lines.resources
    };
    list.iter()
        .map(|item| item.referenced.line() as usize + start_line - 1)
        .collect()
}

enum Format {
    Own,
    ApplicationDefinition,
    List,
    LegacyConfig,
    /// Another Kubernetes object (a `Kustomization` beside the kinds in a
    /// GitOps repository): skipped, with a warning.
    Other,
}

fn classify(document: &Value) -> Format {
    let api_version = document
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = document.get("kind").and_then(Value::as_str).unwrap_or("");
    if api_version.starts_with("cozystack.io/")
        && matches!(
            kind,
            "ApplicationDefinition" | "CozystackResourceDefinition"
        )
    {
        Format::ApplicationDefinition
    } else if kind == "List" && document.get("items").is_none() && is_own_format(document) {
        // Our own format naming the kind `List`, which `resolve` refuses
        // with its line rather than reading it as an empty list.
        Format::Own
    } else if kind == "List" || kind.ends_with("List") && document.get("items").is_some() {
        Format::List
    } else if document.get("resources").is_some_and(Value::is_array)
        && document.get("kind").is_none()
    {
        Format::LegacyConfig
    } else if !api_version.is_empty()
        && !kind.is_empty()
        && !["openAPISchema", "release", "plural"]
            .iter()
            .any(|k| document.get(*k).is_some())
    {
        // (One with our fields is ours, and its apiVersion is refused
        // with its line.)
        Format::Other
    } else {
        Format::Own
    }
}

/// A document with our format's own fields beside `kind`.
fn is_own_format(document: &Value) -> bool {
    document.get("apiVersion").is_none()
        && [
            "openAPISchema",
            "release",
            "plural",
            "singular",
            "group",
            "version",
        ]
        .iter()
        .any(|k| document.get(*k).is_some())
}

fn syntax_error(source: &str, err: &serde_saphyr::Error, line_offset: usize) -> LoadError {
    let location = match err.location() {
        Some(loc) => format!(
            "{source}:{}:{}",
            loc.line() as usize + line_offset,
            loc.column()
        ),
        None => source.to_owned(),
    };
    let message = super::yaml_message::yaml_message(err);
    LoadError::Syntax { location, message }
}

/// The definition files under `path` (itself, when a file; its
/// subdirectories too), sorted; hidden entries (ConfigMap volumes' `..data`)
/// skipped. A directory holding a Helm chart is refused ([`LoadError::Charts`]).
pub fn definition_files(path: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let meta = std::fs::metadata(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    if meta.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let mut files = Vec::new();
    let mut charts = Vec::new();
    let mut dirs = vec![path.to_owned()];
    while let Some(dir) = dirs.pop() {
        if dir.join("Chart.yaml").is_file() {
            charts.push(dir);
            continue;
        }
        let entries = std::fs::read_dir(&dir).map_err(|source| LoadError::Read {
            path: dir.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| LoadError::Read {
                path: dir.clone(),
                source,
            })?;
            let p = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if p.is_dir() {
                dirs.push(p);
            } else if name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json") {
                files.push(p);
            }
        }
    }
    if !charts.is_empty() {
        charts.sort();
        return Err(LoadError::Charts {
            path: path.to_owned(),
            charts,
        });
    }
    files.sort();
    Ok(files)
}

fn read_limited(path: &Path) -> Result<String, LoadError> {
    let meta = std::fs::metadata(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(LoadError::TooLarge {
            path: path.to_owned(),
            size: meta.len(),
        });
    }
    std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "kind: Postgres\nshortNames: [pg]\nopenAPISchema:\n  type: object\n  properties:\n    replicas: {type: integer, default: 2}\nrelease:\n  chartRef: {kind: ExternalArtifact, name: pg}\n---\nkind: Redis\nrelease:\n  chartRef: {kind: ExternalArtifact, name: redis}\n";

    #[test]
    fn multi_document_own_format() {
        let loaded = load_text(TWO, "kinds.yaml").unwrap();
        let kinds: Vec<_> = loaded
            .kinds
            .iter()
            .map(|k| k.definition.kind.as_str())
            .collect();
        assert_eq!(kinds, ["Postgres", "Redis"]);
        assert_eq!(loaded.kinds[1].source, "kinds.yaml:10");
    }

    #[test]
    fn syntax_errors_name_file_and_line() {
        let err = load_text("kind: A\nrelease: [1, 2\nx: 3\n", "bad.yaml").unwrap_err();
        assert!(err.to_string().starts_with("bad.yaml:3:"), "{err}");
        let text = format!("{TWO}---\nkind: Bad\nrelase: {{}}\n");
        let err = load_text(&text, "typo.yaml").unwrap_err();
        assert!(err.to_string().starts_with("typo.yaml:15:"), "{err}");
        assert!(err.to_string().contains("unknown field `relase`"), "{err}");
    }

    /// Every file is read: each syntax error is reported, with the other
    /// problems, not only the first.
    #[test]
    fn every_syntax_error_of_a_directory_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "kind: A\nrelease: [1, 2\nx: 3\n").unwrap();
        std::fs::write(
            dir.path().join("b.yaml"),
            "kind: Bbb\nrelease: {chartRef: {kind: HelmChart, name: b}}\n---\nkind: Ccc\nrelase: {}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("c.yaml"),
            "kind: lower\nrelease: {chartRef: {kind: HelmChart, name: c}}\n",
        )
        .unwrap();
        let err = load_path(dir.path()).unwrap_err().to_string();
        let at = |file: &str| format!("{}", dir.path().join(file).display());
        assert!(err.starts_with("invalid kind definitions:\n"), "{err}");
        assert!(err.contains(&format!("{}:3:", at("a.yaml"))), "{err}");
        assert!(err.contains(&format!("{}:5:", at("b.yaml"))), "{err}");
        assert!(err.contains("unknown field `relase`"), "{err}");
        assert!(err.contains(&format!("{}:1: kind:", at("c.yaml"))), "{err}");
    }

    #[test]
    fn invalid_definitions_are_all_reported() {
        let err = load_text("kind: lower\nrelease: {}\n---\nkind: Ok\nplural: BAD\nrelease: {chartRef: {kind: HelmChart, name: b}}\n", "x.yaml")
            .unwrap_err();
        let text = err.to_string();
        // Each at its field's line, from the text (no file named x.yaml).
        assert!(
            text.contains("x.yaml:1: kind:") && text.contains("x.yaml:2: release:"),
            "{text}"
        );
        assert!(text.contains("x.yaml:5: plural:"), "{text}");
    }

    #[test]
    fn directory_of_files_sorted_and_hidden_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("b.yaml"),
            "kind: Bbb\nrelease: {chartRef: {kind: HelmChart, name: b}}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("a.yml"),
            "kind: Aaa\nrelease: {chartRef: {kind: HelmChart, name: a}}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(".hidden.yaml"), "garbage: [").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let loaded = load_path(dir.path()).unwrap();
        let kinds: Vec<_> = loaded
            .kinds
            .iter()
            .map(|k| k.definition.kind.as_str())
            .collect();
        assert_eq!(kinds, ["Aaa", "Bbb"]);
        assert_eq!(loaded.files.len(), 2);
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            load_path(empty.path()),
            Err(LoadError::Empty { .. })
        ));
    }

    /// A definition of kind `List` is ours, refused with its line, not read
    /// as an empty list of definitions; an empty list says so.
    #[test]
    fn a_kind_named_list_is_refused_and_empty_lists_named() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("list.yaml");
        std::fs::write(
            &own,
            "# Generated by `kubectl cozy kinds scaffold` from chart directory charts/list.\n\
             kind: List\nsingular: list\nplural: lists\nopenAPISchema: {type: object}\n\
             release: {chartRef: {kind: HelmChart, name: b}}\n",
        )
        .unwrap();
        let err = load_path(&own).unwrap_err().to_string();
        // The line of its `kind` (under the comment).
        assert!(
            err.contains(&format!(
                "{}:2: kind: \"List\" is the kind of lists",
                own.display()
            )),
            "{err}"
        );
        // Beside other kinds in a directory, it is not silently dropped.
        std::fs::write(
            dir.path().join("queue.yaml"),
            "kind: Queue\nrelease: {chartRef: {kind: HelmChart, name: q}}\n",
        )
        .unwrap();
        let err = load_path(dir.path()).unwrap_err().to_string();
        assert!(err.contains("kind: \"List\" is the kind of lists"), "{err}");

        let empty_list = dir.path().join("empty.yaml");
        std::fs::write(&empty_list, "apiVersion: v1\nkind: List\nitems: []\n").unwrap();
        // Another object beside the kinds (a GitOps repository's
        // Kustomization) is skipped, said; a kind definition that carries an
        // apiVersion is still refused.
        let other = load_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
            "kustomization.yaml",
        )
        .unwrap();
        assert!(other.kinds.is_empty());
        assert_eq!(
            other.warnings,
            [
                "kustomization.yaml:1: skipped kustomize.config.k8s.io/v1beta1 Kustomization: not a kind definition \
              (kind definitions have no apiVersion; Cozystack's ApplicationDefinitions are cozystack.io/v1alpha1)"
            ]
        );
        assert!(load_text(&format!("apiVersion: v1\n{TWO}"), "pg.yaml").is_err());
        let err = load_path(&empty_list).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{0} holds no kind definitions: {0}:1: a List with no items",
                empty_list.display()
            )
        );
        let app = dir.path().join("pg1.yaml");
        std::fs::write(
            &app,
            "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: db1\nspec:\n  replicas: 2\n",
        )
        .unwrap();
        assert_eq!(
            load_path(&app).unwrap_err().to_string(),
            format!(
                "{0} holds no kind definitions: {0}:1: apps.cozystack.io/v1alpha1 Postgres, an object to create \
                 (`kubectl apply -f`), not a kind definition (kind definitions have no apiVersion; Cozystack's \
                 ApplicationDefinitions are cozystack.io/v1alpha1)",
                app.display()
            )
        );
        let comments = dir.path().join("comments.yaml");
        std::fs::write(&comments, "# nothing yet\n---\n").unwrap();
        assert_eq!(
            load_path(&comments).unwrap_err().to_string(),
            format!(
                "{} holds no kind definitions: no YAML documents, only blanks and comments",
                comments.display()
            )
        );
        let none = tempfile::tempdir().unwrap();
        assert_eq!(
            load_path(none.path()).unwrap_err().to_string(),
            format!(
                "{} holds no kind definitions: no .yaml, .yml or .json files",
                none.path().display()
            )
        );
    }

    /// Charts given for definitions (`--kinds examples/charts`, easy to do
    /// beside `serve --charts`) were read file by file: 29 errors, one per
    /// template. Now one sentence naming the charts and what takes them.
    #[test]
    fn charts_given_for_definitions_are_named_once() {
        let charts = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/charts");
        let err = load_path(Path::new(charts)).unwrap_err().to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "{charts} holds Helm charts, not kind definitions ({charts}/bucket/Chart.yaml and 4 more): \
                 `kubectl cozy serve --charts {charts}`"
            )),
            "{err}"
        );
        let one = format!("{charts}/postgres");
        let err = load_path(Path::new(&one)).unwrap_err().to_string();
        assert!(err.contains(&format!("({one}/Chart.yaml): ")), "{err}");
    }

    #[test]
    fn list_items_and_legacy_entries_report_their_own_line() {
        let item = |name: &str, kind: &str| {
            format!(
                "- apiVersion: cozystack.io/v1alpha1\n  kind: ApplicationDefinition\n  metadata:\n    name: {name}\n  spec:\n    application:\n      kind: {kind}\n      plural: {name}s\n      singular: {name}\n    release:\n      prefix: {name}-\n      chartRef: {{kind: ExternalArtifact, name: {name}}}\n"
            )
        };
        let list = format!(
            "# a List as kubectl prints it\n---\napiVersion: v1\nkind: List\nitems:\n{}{}",
            item("alpha", "Alpha"),
            item("beta", "bad kind")
        );
        let err = load_text(&list, "list.yaml").unwrap_err().to_string();
        // items[1] starts on line 18 (the first item spans lines 6-17).
        assert!(
            err.contains("list.yaml:18 (items[1]) (bad kind): kind:"),
            "{err}"
        );
        let ok = list.replace("bad kind", "Beta");
        let loaded = load_text(&ok, "list.yaml").unwrap();
        assert!(
            loaded.kinds[0].source.starts_with("list.yaml:6 (items[0])"),
            "{}",
            loaded.kinds[0].source
        );
        assert!(
            loaded.kinds[1]
                .source
                .starts_with("list.yaml:18 (items[1])"),
            "{}",
            loaded.kinds[1].source
        );

        // The same List as `kubectl get -o json` prints it.
        let value: serde_json::Value = serde_saphyr::from_str(&ok).unwrap();
        let json = serde_json::to_string_pretty(&value).unwrap();
        let loaded = load_text(&json, "list.json").unwrap();
        let second_item = json
            .lines()
            .position(|l| l.contains("\"beta\""))
            .and_then(|named| {
                json.lines()
                    .take(named)
                    .collect::<Vec<_>>()
                    .iter()
                    .rposition(|l| l.trim() == "{")
            })
            .map(|i| i + 1)
            .unwrap();
        assert!(
            loaded.kinds[1]
                .source
                .starts_with(&format!("list.json:{second_item} (items[1])")),
            "{} vs line {second_item}",
            loaded.kinds[1].source
        );

        let legacy = "resources:\n- application:\n    kind: Alpha\n    plural: alphas\n    singular: alpha\n  release:\n    prefix: alpha-\n    chart: {name: alpha, sourceRef: {kind: HelmRepository, name: apps, namespace: cozy-public}}\n- application:\n    kind: beta\n    plural: betas\n    singular: beta\n  release:\n    prefix: beta-\n    chart: {name: beta, sourceRef: {kind: HelmRepository, name: apps, namespace: cozy-public}}\n";
        let err = load_text(legacy, "config.yaml").unwrap_err().to_string();
        assert!(err.contains("config.yaml:9 (beta): kind:"), "{err}");
    }
}
